"""The C backend of :func:`feudo_ai.advise` (``SearchOptions(backend="c")``, the default): MO-ISMCTS and the
determinized PIMC baseline of :mod:`feudo_ai._search` on Feudo (:mod:`feudo_ai._feudo_game`), root-parallel over
threads.

    import feudo_ai
    advice = feudo_ai.advise(state, options=feudo_ai.SearchOptions(iterations=20000, threads=2, seed=1))

Callers go through :func:`feudo_ai.advise` (which completes a whole selection and answers out of turn);
:func:`search` is one search from a position where the seat is to act, with the same options and the same
:class:`~feudo_ai.advice.Advice`.

``algorithm="ismcts"`` is the algorithm of :mod:`feudo_ai.ismcts` (one tree per player, EXP3 at a secret
selection while another player still selects after the chooser, UCB1 with availability counts elsewhere,
including the last selector's picks; the same evaluation), with the trees in a C node pool and the loop running
with the GIL released, so ``threads=N`` workers (own trees, own RNG seeded by
:func:`~feudo_ai.advice.derive_seed`) run at once; their root statistics are summed. ``algorithm="pimc"``
samples ``worlds`` worlds per worker and runs plain UCT on each as a perfect-information game (every selection
visible to every player), iteration i in world i mod ``worlds``; the worlds' root visits are summed (votes), and
its principal variation is read from the first world's tree. It shares the playouts and evaluation, so pairing
the two measures the algorithms alone.

Honesty: the C search is given a state rebuilt from ``state.observation(seat)`` (opponents' unrevealed
selections removed), and the game's ``hide`` blanks those fields again in the root the search keeps, and its
``determinize`` overwrites them before every world is drawn, so the result depends only on what the seat may
know, the options and the seed. ``sampler="weighted"`` draws the opponents' cards with the prior of
:class:`feudo_ai.sampler.WeightedSampler` instead of uniformly; the public constraints hold exactly either way.

Default evaluation: ``playout="truncated"`` with ``playout_turns=0``: playout actions to the end of the current
turn (attacks excepted: only winnable ones are launched), then the softmax of
:func:`feudo_ai.evaluate.position_score` (in C). Evaluating the leaf directly (``"eval"``) cannot tell secret
selections apart early in a turn (nothing has happened yet when the leaf is evaluated), while a random rest of
the turn resolves the reveals, moves and attacks they lead to. ``"random"`` plays to the end of the game (R19
returns). Why these defaults, and the measured speed and strength: ``docs/search.md``.

The node pool holds ``max_nodes`` nodes per worker (64 bytes each); the trees grow by about 4 nodes an
iteration, and the default pool is sized to the budget (8 per iteration, or :data:`TIMED_MAX_NODES` for a
timed search). A full pool stops the trees growing, never the search; ``advice.stats.pool_full`` says whether
that happened.
"""

from __future__ import annotations

import os
import sys
import threading

from engine.state import Phase

from .advice import (GREEDY_PLAYOUTS, MAX_ITERATIONS, MAX_NODES, MAX_SEARCH_BYTES, MAX_SECONDS, NODE_BYTES,
                     WIDE_MARGIN, Advice, SearchOptions, deadline_of, derive_seed, now, product_options, public_root,
                     search_advice, split_budget)
from .bots import AdviceBot
from .cancel import forward_cancel

try:
    from . import _feudo_game, _search
except ImportError as _e:  # pragma: no cover - depends on the build
    _search = _feudo_game = None
    _IMPORT_ERROR: ImportError | None = _e
else:
    _IMPORT_ERROR = None

TIMED_MAX_NODES = 8_000_000  # node pool of a worker of a timed search (64 bytes a node: 512 MB)


def available() -> bool:
    return _search is not None


def _require() -> None:
    if _search is None:
        raise ImportError(f"feudo_ai._search is not built ({_IMPORT_ERROR}); run "
                          f"`python setup.py build_ext --inplace` in the repository root")


def search(position, seat: int | None = None, options: SearchOptions | None = None, *,
           cancel: threading.Event | None = None) -> Advice:
    """One C search for ``seat`` (default: the player to act, who must be ``seat``) in ``position`` (a reference
    :class:`engine.State` or an :class:`engine.core.CoreState`): its :class:`~feudo_ai.advice.Advice`, whose plan
    is the seat's principal variation. ``options.backend`` is ignored (this is the C backend).

    :param cancel: a :class:`threading.Event` or a :class:`feudo_ai._search.CancelFlag`; the search stops within
        a few milliseconds of it being set.
    :raises ValueError: a bad option or seat. :raises ImportError: the extensions are not built.
    """
    _require()
    started = now()
    opts = SearchOptions() if options is None else options
    if not isinstance(opts, SearchOptions):
        raise ValueError(f"options: expected SearchOptions, got {type(opts).__name__}")
    opts.validate()
    if cancel is not None and not isinstance(cancel, (_search.CancelFlag, threading.Event)):
        raise ValueError(f"cancel: expected a threading.Event, got {type(cancel).__name__}")
    if seat is None and hasattr(position, "current_player"):
        seat = position.current_player()
    probe, selected = public_root(position, seat)
    from engine.core import CoreState

    value = None
    if opts.evaluation == "learned":
        from .value import c_model

        value = c_model()  # the shipped model (feudo_ai/data/value_v1.json), validated once per process
    game = _feudo_game.FeudoGame(CoreState.from_reference(probe), seat, opts.sampler, float(opts.temperature),
                                 opts.evaluation, value, float(opts.margin_weight), float(opts.margin_temperature),
                                 float(opts.playout_greedy))
    iterations = opts.budget
    deadline = deadline_of(opts, started)
    flag = cancel if isinstance(cancel, _search.CancelFlag) else _search.CancelFlag()
    workers = []
    for i in range(opts.threads):
        iters = split_budget(iterations, opts.threads, i) or 0
        pool = opts.max_nodes if opts.max_nodes is not None else _default_nodes(iters, deadline is not None,
                                                                                game.num_players, opts.worlds,
                                                                                opts.threads)
        workers.append(_search.SearchWorker(game, derive_seed(opts.seed, i), iters,
                                            deadline if deadline is not None else 0.0, pool, opts.playout,
                                            opts.playout_turns, float(opts.c), float(opts.exp3_gamma), flag,
                                            opts.algorithm == "pimc", opts.worlds, float(opts.prior_weight),
                                            float(opts.prior_temperature)))
    watched = cancel if isinstance(cancel, threading.Event) else None  # a CancelFlag is read by C directly
    with forward_cancel(watched, flag.set):
        if opts.threads == 1 and not opts.nice:
            workers[0].run()
        else:
            pool = [threading.Thread(target=_run_worker, args=(w, opts.nice)) for w in workers]
            for t in pool:
                t.start()
            for t in pool:
                t.join()
    root: dict[int, tuple[int, float]] = {}
    for w in workers:
        for a, (v, r) in w.root_stats().items():
            mv, mr = root.get(a, (0, 0.0))
            root[a] = (mv + v, mr + r)
    counts: list[int] | None = None
    worlds = 0
    for w in workers:
        c, nw = w.belief_counts()
        counts = c if counts is None else [x + y for x, y in zip(counts, c)]
        worlds += nw
    per = [w.stats() for w in workers]
    best = max(root, key=lambda a: (root[a][0], root[a][1] / root[a][0], -a)) if root else None
    return search_advice(
        probe, seat, opts, root, _pv(workers[0], probe, seat, best), game.beliefs(counts, worlds), selected,
        iterations=sum(s["iterations"] for s in per), nodes=sum(s["nodes"] for s in per),
        elapsed=now() - started, search_seconds=max(s["elapsed"] for s in per),
        stopped_by=per[0]["stopped_by"], pool_full=any(s["pool_full"] for s in per),
        max_depth=max(s["max_depth"] for s in per), worlds=worlds,
        worker_iterations=tuple(s["iterations"] for s in per))


def _run_worker(worker, nice: int) -> None:
    """Run one C worker on this (its own) thread, ``nice`` steps nicer than the thread that started it."""
    if nice:
        lower_thread_priority(nice)
    worker.run()


def lower_thread_priority(nice: int) -> bool:
    """Make the calling thread ``nice`` steps nicer (at most 19). Linux only, where a nice value belongs to a
    thread (``setpriority`` of its thread id); elsewhere it would slow the whole process, so nothing is done.
    Returns whether the priority was lowered. A thread cannot raise it back without privileges, hence the
    workers' own threads."""
    if not nice or not sys.platform.startswith("linux"):
        return False
    tid = threading.get_native_id()
    try:
        os.setpriority(os.PRIO_PROCESS, tid, min(19, os.getpriority(os.PRIO_PROCESS, tid) + nice))
    except OSError:
        return False
    return True


def _default_nodes(iterations: int, timed: bool, players: int, worlds: int, threads: int = 1) -> int:
    """A pool that does not fill within the budget: an iteration adds a few nodes (about 4 on average: the
    expanded edge, chance outcomes and the other trees' nodes of the edges walked), so an iteration budget
    gets 8 per iteration; a timed search gets :data:`TIMED_MAX_NODES` (512 MB a worker). Either way the
    threads' pools together stay within :data:`feudo_ai.advice.MAX_SEARCH_BYTES` (a full pool stops the trees
    growing, never the search)."""
    cap = min(TIMED_MAX_NODES if timed else MAX_NODES, MAX_SEARCH_BYTES // NODE_BYTES // threads)
    if not timed:
        return min(cap, max(1024, 8 * iterations + players + worlds + 16))
    return cap if not iterations else min(cap, max(1024, 8 * iterations + 64))


def _pv(worker, probe, seat: int, best: int | None) -> list[tuple[int, str]]:
    """The seat's most visited actions while it keeps acting (worker 0's tree of the seat)."""
    if best is None:
        return []
    pv = [(best, probe.action_to_string(best))]
    node = next((ch for a, _, _, ch in worker.children(worker.root_index(seat)) if a == best), None)
    state = probe.clone()
    a = best
    for _ in range(40):
        if node is None:
            break
        state.apply_action(a)
        if state.is_terminal() or state.is_chance_node() or state.current_player() != seat:
            break
        legal = state.legal_actions()
        kids = [(v, -b, b, ch) for b, v, _, ch in worker.children(node) if b in legal and v > 0]
        if len(legal) == 1:
            a = legal[0]
            node = next((ch for b, _, _, ch in worker.children(node) if b == a), None)
        elif kids:
            _, _, a, node = max(kids)
        else:
            break
        pv.append((a, state.action_to_string(a)))
    return pv


# SearchOptions' own defaults: the value of an option product_options leaves out in a game
_SEARCH_DEFAULTS: dict = SearchOptions().to_dict()
# Today's (issue 10's) search options, pinned: the frozen baselines "ismcts-v1" and "pimc" play with exactly these
# whatever the defaults of SearchOptions become (DEFAULT_ITERATIONS was 5,000 when no limit is given).
V1_OPTIONS: dict = {"c": 0.2, "exp3_gamma": 0.15, "playout": "truncated", "playout_turns": 0, "sampler": "uniform",
                    "temperature": 1.0, "worlds": 8, "max_nodes": None, "threads": 1, "evaluation": "handmade",
                    "prior_weight": 0.0, "prior_temperature": 1.0, "margin_weight": 0.0, "margin_temperature": 4.0,
                    "playout_greedy": 0.0}
V1_ITERATIONS = 5000
_LIMITS = ("iterations", "seconds", "deadline")
BANK_CAP = 4.0  # decisions' budgets added to one search at most (bank)


def _picks_left(state) -> int:
    """The cards the player to act still has to pick in its secret selection (R6: Army Cards, then one Trading
    Card), from its own observation."""
    seat = state.current_player()
    obs = state.observation(seat)
    army = state.game.ruleset.army_cards_selected
    return max(1, army + 1 - int(obs["selected_count"][seat]))


class ISMCTSBot(AdviceBot):
    """Bot "ismcts": plays :func:`feudo_ai.advise`'s answer with the C MO-ISMCTS (default 5000 iterations,
    1 thread). Parameters are :class:`~feudo_ai.advice.SearchOptions` fields (``iterations``, ``seconds``,
    ``threads``, ``playout``, ``sampler``, ...); the seed comes from the bot's own generator. Bot parameters
    besides (issue 14):

    - ``follow_plan`` (default true): play the rest of a planned turn (the advice's plan: the seat's actions
      until new information arrives) without searching again, while the seat's observation is the one the plan
      expected; false searches every decision afresh (as "ismcts-v1" does; a selection's picks are always
      followed);
    - ``bank`` (default true): the budget (``iterations`` or ``seconds``) of each decision played from the plan
      is added to the next search (at most :data:`BANK_CAP` decisions' worth at once), so over a game the bot
      thinks as long as one that searches every decision;
    - ``game_seconds``: a per-game clock, the seat's total thinking time in one game, spread over its decisions
      by :class:`feudo_ai.clock.GameClock` (instead of ``iterations``/``seconds``).

    It searches with :func:`feudo_ai.advice.product_options` for the game's number of players unless the spec
    says otherwise: the greedy playouts of :func:`feudo_ai.advice.greedy_playouts` (to the end of the game in 2
    players, one more turn in 3 or 4; ``ismcts:playout_greedy=0:playout_turns=0`` turns them off, and a
    ``playout_turns`` of the spec fixes the horizon in every game) and, in 4 players, the wide margin of the
    hand-made evaluation (:data:`feudo_ai.advice.WIDE_MARGIN`; a spec's ``margin_weight`` holds in every game,
    ``ismcts:margin_weight=0`` turns it off, and a spec's ``evaluation=learned`` goes without it).
    :attr:`options` holds the 4-player options; :meth:`options_for` gives a game's."""

    name = "ismcts"
    algorithm = "ismcts"
    defaults: dict = {**GREEDY_PLAYOUTS, **WIDE_MARGIN}
    follow_plan = True
    bank = True
    frozen = False  # a frozen baseline: no bot parameter beyond the search options

    def __init__(self, seed: int = 0, *, follow_plan: bool | None = None, bank: bool | None = None,
                 game_seconds: float | None = None, clock=None, **params):
        _require()
        super().__init__(seed)
        params.pop("seed", None)
        for fixed in ("algorithm", "backend"):
            if fixed in params:
                raise ValueError(f"unknown {self.name} parameter {fixed} (fixed by the bot)")
        if self.algorithm != "pimc" and "worlds" in params:
            raise ValueError(f"unknown {self.name} parameter worlds (pimc only)")
        if self.frozen and (follow_plan is not None or bank is not None or game_seconds is not None):
            raise ValueError(f"{self.name} is a frozen baseline: follow_plan, bank and game_seconds are not "
                             f"parameters of it")
        for name, value in (("follow_plan", follow_plan), ("bank", bank)):
            if value is not None:
                if not isinstance(value, bool):
                    raise ValueError(f"{name}: expected true or false, got {value!r}")
                setattr(self, name, value)
        self._bank = 0.0  # decisions' budgets saved by following the plan, not spent yet
        self._prepaid = 0  # picks of the current selection whose budget its search already had
        defaults = dict(self.defaults)
        if any(k in params for k in _LIMITS):
            defaults.pop("iterations", None)  # the caller's limit replaces the default budget
        # the product's wide margin follows the game's players unless the spec gave its weight; it is the
        # hand-made evaluation's, so another evaluation goes without it
        margin_by_players = "margin_weight" not in params and bool(defaults.get("margin_weight"))
        if margin_by_players and params.get("evaluation", "handmade") != "handmade":
            margin_by_players = False
            for k in WIDE_MARGIN:
                defaults.pop(k, None)
        # fail at construction, not at the first decision
        self.options = SearchOptions.from_dict({**defaults, **params, "algorithm": self.algorithm,
                                                "backend": "c"})
        # the product's playouts: their horizon follows the game's players, unless the spec fixed it
        # the options that follow the game's players (feudo_ai.advice.product_options), those the spec left alone
        self._by_players = tuple(
            ["playout_turns"] * ("playout_turns" not in params
                                 and self.options.playout_greedy == GREEDY_PLAYOUTS["playout_greedy"])
            + [k for k in WIDE_MARGIN if margin_by_players and k not in params])
        self.clock = None
        if game_seconds is not None:
            from .clock import GameClock

            if any(k in params for k in _LIMITS):
                raise ValueError("game_seconds: give either a per-game clock or a per-decision limit "
                                 "(iterations/seconds/deadline), not both")
            self.clock = GameClock(game_seconds, clock=clock)
        elif clock is not None:
            raise ValueError("clock: only with game_seconds")

    def choose(self, state) -> int:
        if self.clock is None:
            return super().choose(state)
        self.clock.begin(state)
        try:
            return super().choose(state)
        finally:
            self.clock.end()

    def options_for(self, players: int) -> SearchOptions:
        """The bot's search options in a game of ``players``: :attr:`options` with the values of
        :func:`feudo_ai.advice.product_options` for that game where the spec left them to the product (the playout
        horizon unless the spec gave ``playout_turns``, the wide margin unless it gave ``margin_weight``; no limit
        banked or clocked).

        :raises ValueError: if ``players`` is not a positive integer."""
        product = product_options(players)  # an option it leaves out is SearchOptions' default in that game
        changes = {k: product.get(k, _SEARCH_DEFAULTS[k]) for k in self._by_players}
        changes = {k: v for k, v in changes.items() if getattr(self.options, k) != v}
        return self.options.replace(**changes) if changes else self.options

    def search_options(self, state):
        base = self.options if state is None else self.options_for(state.num_players)
        if self.clock is None:
            return self._banked(base, state)
        if self.clock.exhausted(state):
            return None
        return self.clock.options_for(state, base)

    def searched(self, state, advice) -> None:
        if self.clock is not None:
            self.clock.stop()

    def on_followed(self, state) -> None:
        if self.bank and self.clock is None:
            if self._prepaid > 0:
                self._prepaid -= 1  # a selection's pick, already spent by the selection's search
            else:
                self._bank += 1.0

    def _banked(self, opts: SearchOptions, state=None) -> SearchOptions:
        """``bank``: the budget of the decisions played from a plan goes to the next search (at most
        :data:`BANK_CAP` decisions' worth at once), so the bot thinks as long in a game as one that searches every
        decision, spent where the plan ends (new information) rather than on the plan's continuation. A secret
        selection (R6: its picks are one decision, planned at once) is paid in advance: its search gets the
        budget of all its picks (the first Army Card's and one for each other card to pick)."""
        extra = 0.0
        self._prepaid = 0
        if self.bank and state is not None and getattr(state, "phase", None) == Phase.SELECT:
            self._prepaid = _picks_left(state) - 1
            extra = float(self._prepaid)
        if not self._bank and not extra:
            return opts
        extra = min(self._bank + extra, BANK_CAP)
        self._bank = max(0.0, self._bank - extra)
        if opts.seconds is not None:
            return opts.replace(seconds=min(opts.seconds * (1.0 + extra), MAX_SECONDS))
        if opts.budget is not None:
            return opts.replace(iterations=min(int(round(opts.budget * (1.0 + extra))), MAX_ITERATIONS))
        return opts  # a deadline only: nothing to bank


class ISMCTSV1Bot(ISMCTSBot):
    """Bot "ismcts-v1": the MO-ISMCTS bot as it was before issue 14, kept as a frozen baseline. Its options are
    pinned (:data:`V1_OPTIONS`, 5,000 iterations when no limit is given) so later changes of the defaults never
    alter it, and it searches every decision afresh (only a secret selection's picks follow its plan)."""

    name = "ismcts-v1"
    defaults = {**V1_OPTIONS, "iterations": V1_ITERATIONS}
    follow_plan = False
    bank = False
    frozen = True


class PIMCBot(ISMCTSBot):
    """Bot "pimc": determinized UCT in C, the classic baseline (default 5000 iterations over 8 worlds):
    ``worlds`` worlds sampled from the seat's observation, plain UCT on each as a perfect-information game
    (every selection visible to every player), root visits summed. Same playouts and evaluation as
    "ismcts", so a pairing of the two measures the algorithms only. Frozen like "ismcts-v1": its options are
    pinned (:data:`V1_OPTIONS`) and it searches every decision afresh."""

    name = "pimc"
    algorithm = "pimc"
    defaults = {**V1_OPTIONS, "iterations": V1_ITERATIONS}
    follow_plan = False
    bank = False
    frozen = True
