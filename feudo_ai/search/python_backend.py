"""Information-set Monte Carlo tree search (ISMCTS) and the determinized PIMC baseline, for 2-4 players.

Honesty. A search is given one seat's observation (``state.observation(seat)``, rulings.md R22) and nothing
else. Every iteration draws a world from a :mod:`feudo_ai.sampler` built from that observation, and every
chance event (plague card, tied decider) is drawn by the search's own seeded generator; so the advice depends
only on (observation, parameters, seed).

Which ISMCTS. Feudo's only hidden moves are the secret selections of the Strategy phase (R6): each player's
picks are seen by nobody else until revealed; every other action and every chance outcome is public. We use
**MO-ISMCTS** (multiple-observer ISMCTS, Cowling, Powley & Whitehouse, "Information Set Monte Carlo Tree
Search", IEEE TCIAIG 4(2), 2012, section IV.C) rather than SO-ISMCTS with partially observable moves: with
SO-ISMCTS+POM the opponents' selections would be chosen from the searching seat's tree, where they are merged
into one "?" move, i.e. opponents would select at random; MO-ISMCTS gives each player a tree of its own
information sets, so each opponent chooses its selection with statistics conditioned on what *it* knows (its
own hand) and no player's choice is visible to another inside the search.

Trees as tables. Player i's tree is a table keyed by i's information set: a 64-bit hash of the sequence of
i's observations since the root (every public action and chance outcome as itself, another player's secret
pick as the single symbol "?", and the Trading Cards turned over without an action of their own (R9) as a
public signature). As in Cowling et al.'s MO-ISMCTS the trees start at the searching seat's root, so a move
hidden before the root is in no tree: every player's root node is what the seat's observation shows of that
player (the seat's own selection, an opponent's revealed cards). An opponent therefore chooses its reveals
with statistics merged over the hands it may hold (availability counts keep them consistent); keying its root
by its sampled hand instead splits its nodes over every hand and starves the tree (measured, then removed:
``docs/search-history.md``). A node
is created only for the player to act (the other trees would only record "?"/public edges that never drive a
choice), and a walk leaves the tree right after the first untried action it takes (as the C search does: at
most one new node per iteration; plus a node cap for bounded memory). Nodes hold per-action visits,
reward sums and **availability counts** ("the number of times the parent was visited while this child was
available", Cowling et al. 2012), which replace the parent visit count in UCB because an action may exist in
only some of the worlds that share an information set. Rewards are per-player vectors; each node is scored
with its acting player's component.

Simultaneous secret selection. The Strategy phase is a simultaneous move (R6) serialized by the engine. Inside
the tree no one sees another's picks (they are "?" in every other tree), and at selection nodes where another
player still selects after the chooser we use **EXP3** (decoupled: each player runs its own bandit in its own
tree) instead of UCB, since a deterministic UCB choice in a simultaneous move is exploitable and need not
converge to an equilibrium, whereas the empirical frequencies of regret minimizers do (cf. Lanctot et al. on
simultaneous-move MCTS). The last to select faces selections already made (fixed in each world, hidden in
its tree), a one-player choice: UCB1 there, its picks still "?" to everyone else. The final choice at a
selection root is the most visited action (EXP3's average strategy's mode).

Playouts. ``playout="random"``: uniformly random actions to the end of the game, reward = R19 returns.
``playout="truncated"``: random actions until ``playout_turns`` turns after the root's turn have ended (0: the
end of the root's turn), then an evaluation. ``playout="eval"``: no random actions, the leaf itself is
evaluated. ``playout="mixed"`` (this reference only; the default of its bots): "truncated" when the leaf is
before the turn's moves (Diplomacy, Strategy, Plague: an evaluation there cannot tell one secret selection from
another, nothing has happened yet), "eval" otherwise. The evaluation is a softmax over the players of (VP + a small positional term,
:func:`feudo_ai.evaluate.position_score`) divided by a temperature that shrinks as the end nears, read as win
probabilities. "mixed" is the cheapest way to value a selection at the root; the measurements behind these choices
are in ``docs/search.md``. The exploration constant is small because evaluated rewards differ by a few
hundredths between moves; use c≈0.7 with random playouts (0/1 rewards).

PIMC (``algorithm="pimc"``): the classic determinized baseline: sample ``worlds`` worlds, run plain UCT on each
as a perfect-information game (all actions visible to all players), sum the root visits (votes) across worlds.
It suffers strategy fusion and lets opponents "see" selections; that is what it is for (a baseline).

Limits (options): ``iterations``, ``seconds``, ``deadline`` (a ``time.monotonic()`` value), a ``cancel``
``threading.Event`` polled between iterations and inside playouts (so it stops within a few ms), and
``max_nodes``. Same seed and same iteration budget give the same advice. ``threads > 1`` runs root-parallel
searches (threads or processes, seeds derived from the seed) and merges their root statistics and beliefs;
the Python tree code holds the GIL, so threads gain only while the core runs a random playout in C (GIL
released); ``parallel="process"`` scales on free cores (the principal variation is then only the best action).

Engines. Worlds are built as reference :class:`engine.State` objects (validated by ``state_from_dict``) and,
with ``SearchOptions(engine="core")`` (the default), converted to the Cython core's ``CoreState``; a world the
core cannot take is an error, never a silent fall back to the reference. ``engine="reference"`` keeps them on
the reference engine. The search only uses the OpenSpiel-style API plus the public fields the evaluation
reads, so it runs on either, and with "eval" or "truncated" playouts gives the same advice on both (tested).
Random playouts use the core's ``random_playout`` (C, GIL released) on the core.

Options: :class:`feudo_ai.settings.SearchOptions`, the vocabulary of the C search too (:func:`search`, reached
through :func:`feudo_ai.advise` with ``backend="python"``); both return the same
:class:`feudo_ai.advice.Advice`, and ``tests/test_search_agreement.py`` checks that they agree.
"""

from __future__ import annotations

import math
import random
import threading
import time
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass, replace

from engine.record import sample_chance
from engine.serialize import state_from_dict
from engine.state import Phase

from feudo_ai.evaluate import position_score
from feudo_ai.sampler import make_sampler, observation_fields
from feudo_ai.settings import SearchOptions

from .answer import (Advice, deadline_of, derive_seed, now, search_advice,
                     split_budget)
from .cancel import forward_cancel
from .games.feudo import belief_list
from .position import PreparedPosition, check_to_act, prepare

PLAYOUTS = ("truncated", "random", "eval", "mixed")
_BEFORE_MOVES = (int(Phase.SELECT), int(Phase.CHANCE_PLAGUE), int(Phase.CHOOSE_ORDER), int(Phase.CHANCE_DECIDER))
HIDDEN = -1  # the observation of another player's secret pick ("?")
DEFAULT_MAX_NODES = 100_000  # node cap of this reference when SearchOptions.max_nodes is None
_SELECT = int(Phase.SELECT)


@dataclass
class SearchConfig:
    """The internal configuration of one run (built from :class:`~feudo_ai.settings.SearchOptions` by
    :func:`search`; ``parallel`` chooses the workers' kind, threads or processes, see the module docstring)."""

    iterations: int | None = 1000  # None: no iteration limit (then a time limit or deadline is needed)
    seconds: float | None = None  # seconds of wall time
    deadline: float | None = None  # absolute time.monotonic() value
    c: float = 0.2  # UCB exploration constant (rewards in [0, 1]; ~0.7 suits 0/1 rewards of random playouts)
    exp3_gamma: float = 0.15  # EXP3 exploration at secret selection nodes
    playout: str = "mixed"  # "mixed", "eval" (evaluate the leaf), "truncated" (random to a turn's end), "random"
    playout_turns: int = 0  # truncated playouts: turns played after the root's turn ends (0: stop at its end)
    temperature: float = 1.0  # eval/truncated playouts: softmax temperature of scores at the start of the game
    margin_weight: float = 0.0  # weight of the wide softmax mixed into the evaluation (SearchOptions.margin_weight)
    margin_temperature: float = 4.0  # its constant temperature (VP)
    sampler: str = "uniform"  # "uniform" or "weighted"
    max_nodes: int = DEFAULT_MAX_NODES  # node cap (bounded memory): no node is created beyond it
    threads: int = 1  # root-parallel searches
    parallel: str = "process"  # "process" or "thread"
    worlds: int = 8  # PIMC only: number of determinizations
    seed: int = 0
    engine: str = "core"  # worlds on the Cython core ("core") or the reference engine ("reference")

    def validate(self) -> "SearchConfig":
        if self.iterations is None and self.seconds is None and self.deadline is None:
            raise ValueError("search: give iterations, seconds or deadline")
        if self.iterations is not None and self.iterations < 1:
            raise ValueError("iterations: expected a positive integer")
        if self.playout not in PLAYOUTS:
            raise ValueError(f"playout: expected one of {', '.join(PLAYOUTS)}, got {self.playout!r}")
        if self.parallel not in ("process", "thread"):
            raise ValueError(f"parallel: expected 'process' or 'thread', got {self.parallel!r}")
        if self.threads < 1 or self.max_nodes < 1 or self.worlds < 1:
            raise ValueError("threads, max_nodes and worlds must be positive")
        if self.engine not in ("core", "reference"):
            raise ValueError(f"engine: expected 'core' or 'reference', got {self.engine!r}")
        return self


class Node:
    """Statistics of one information set of the acting player (see module docstring)."""

    __slots__ = ("player", "exp3", "visits", "total", "avail", "gain", "n")

    def __init__(self, player: int, exp3: bool):
        self.player = player
        self.exp3 = exp3
        self.visits: dict[int, int] = {}
        self.total: dict[int, float] = {}
        self.avail: dict[int, int] = {}
        self.gain: dict[int, float] = {}  # EXP3 cumulative importance-weighted rewards
        self.n = 0


def _selects_later(state, p: int) -> bool:
    """Whether another active player will still select after p this turn (R6; seat order is public)."""
    return any(q != p and state.active[q] and not state.sel_done[q] for q in range(state.num_players))


def _key(k: int, obs: int) -> int:
    """Extend an information-set key by one observation (ints only: hashing is the same in every process)."""
    return hash((k, obs))


def _private_key(q: int, sel_army: list, sel_trade: int) -> int:
    """Root key of player q: its private knowledge at the root (its own current selection)."""
    return hash((-7, q, tuple(bool(x) for x in sel_army), sel_trade))


_REVEALING = (int(Phase.REVEAL), int(Phase.MOVE), int(Phase.MILADY), int(Phase.MARCH))


def _trade_signature(state) -> int:
    """The public facts revealed without an action of their own: Trading Cards are turned over automatically
    (R9) after the last Army Card reveal and between marches. Observed by every player."""
    shown = state.trade_revealed
    sel = state.sel_trade
    return hash((-11, tuple(sel[q] if shown[q] else -1 for q in range(len(shown))),
                 tuple(tuple(h) for h in state.trade_held)))


def _softmax(scores: dict, temp: float, n: int) -> list[float]:
    """Softmax over the players in ``scores`` of score / temp, 0 for the others (the C search's _evaluate)."""
    top = max(v / temp for v in scores.values())
    ex = {p: math.exp(v / temp - top) for p, v in scores.items()}
    total = sum(ex.values())
    return [ex.get(p, 0.0) / total for p in range(n)]


class _Searcher:
    """One search tree set (one worker). ``perfect=True`` makes it the per-world UCT of PIMC."""

    def __init__(self, game, obs: dict, cfg: SearchConfig, cancel: threading.Event | None, perfect: bool = False):
        self.game = game
        self.obs = obs
        self.cfg = cfg
        self.cancel = cancel
        self.perfect = perfect
        self.seat = obs["seat"]
        self.n = game.num_players
        self.sampler = make_sampler(cfg.sampler, game, obs)
        self.tree: dict[tuple[int, int], Node] = {}
        self.nodes = 0
        self.iterations = 0
        self.worlds = 0
        self.max_depth = 0
        self.stop: str | None = None  # why the search stopped: iterations, time or cancelled
        self.elapsed = 0.0
        self._root_override: dict[int, tuple[int, float]] | None = None  # PIMC: votes summed over worlds
        self.root_turn = obs["turn"]
        self.turns = game.ruleset.turns
        self.first_fields: dict | None = None
        k, nt = game.num_tokens, len(game.ruleset.trading_cards)
        self.belief_army = [[0] * k for _ in range(self.n)]
        self.belief_trade = [[0] * nt for _ in range(self.n)]

    # -- worlds ----------------------------------------------------------------------------------------------
    def _world(self, rng: random.Random, fields_: dict | None = None):
        d = fields_ if fields_ is not None else self.sampler.sample_fields(rng)
        if self.first_fields is None:
            self.first_fields = d
        self.worlds += 1
        for q in range(self.n):
            if q == self.seat:
                continue
            for t, v in enumerate(d["sel_army"][q]):
                if v:
                    self.belief_army[q][t] += 1
            if d["sel_trade"][q] >= 0:
                self.belief_trade[q][d["sel_trade"][q]] += 1

        world = state_from_dict(self.game, d)
        if self.cfg.engine == "core":
            from engine.core import CoreState  # an ImportError (core not built) is an error, never a fallback

            world = CoreState.from_reference(world)
        return world, d

    def _root_keys(self, d: dict) -> list[int]:
        if self.perfect:
            return [0] * self.n
        # Cowling et al.'s MO-ISMCTS: the trees start at the searcher's root, so moves hidden before the root
        # are in no tree: every player's root is what the searching seat's observation shows of it.
        obs = self.obs
        return [_private_key(q, obs["sel_army"][q], obs["sel_trade"][q]) for q in range(self.n)]

    # -- one iteration -----------------------------------------------------------------------------------------
    def iterate(self, rng: random.Random, world=None, d: dict | None = None) -> None:
        if world is None:
            world, d = self._world(rng)
        state = world.clone() if self.perfect else world
        keys = self._root_keys(d)
        tree = self.tree
        path: list[tuple[Node, int, list[int], float]] = []
        created = False
        perfect = self.perfect
        depth = 0
        tsig = None
        while not state.is_terminal():
            if state.is_chance_node():
                a = sample_chance(state, rng)
                state.apply_action(a)
                keys = [_key(k, a) for k in keys]
                continue
            p = state.current_player()
            legal = state.legal_actions()
            phase = state.phase
            hidden = (not perfect) and phase == _SELECT
            expanded = False
            if len(legal) == 1:
                a = legal[0]
            else:
                node = tree.get((p, keys[p]))
                if node is None:
                    if created or self.nodes >= self.cfg.max_nodes:
                        break  # leave the tree: playout from here
                    # EXP3 where another player still selects after p (a simultaneous move inside the
                    # trees); the last selector faces selections already made: UCB1, its picks still "?"
                    node = Node(p, exp3=hidden and _selects_later(state, p))
                    tree[(p, keys[p])] = node
                    self.nodes += 1
                    created = True
                a, prob = self._select(node, legal, rng)
                expanded = a not in node.visits  # an untried action: the iteration leaves the tree after it
                path.append((node, a, legal, prob))
                depth += 1
            state.apply_action(a)
            if expanded:
                break  # (as the C search: the leaf is the position right after the expanded action)
            if hidden:
                keys = [_key(k, a if q == p else HIDDEN) for q, k in enumerate(keys)]
            else:
                keys = [_key(k, a) for k in keys]
                if not perfect and phase in _REVEALING:
                    sig = _trade_signature(state)
                    if sig != tsig:  # Trading Cards turned over: everyone sees them
                        keys = [_key(k, sig) for k in keys]
                        tsig = sig
        rewards = self._playout(state, rng)
        if depth > self.max_depth:
            self.max_depth = depth
        for node, a, legal, prob in path:
            r = rewards[node.player]
            node.n += 1
            av = node.avail
            for b in legal:
                av[b] = av.get(b, 0) + 1
            node.visits[a] = node.visits.get(a, 0) + 1
            node.total[a] = node.total.get(a, 0.0) + r
            if node.exp3:
                node.gain[a] = node.gain.get(a, 0.0) + r / prob
        self.iterations += 1

    def _select(self, node: Node, legal: list[int], rng: random.Random) -> tuple[int, float]:
        if node.exp3:
            K = len(legal)
            gamma = self.cfg.exp3_gamma
            eta = gamma / K
            gains = [node.gain.get(b, 0.0) for b in legal]
            top = max(gains)
            w = [math.exp(eta * (g - top)) for g in gains]
            s = sum(w)
            probs = [(1.0 - gamma) * x / s + gamma / K for x in w]
            r = rng.random()
            acc = 0.0
            for b, pr in zip(legal, probs):
                acc += pr
                if r < acc:
                    return b, pr
            return legal[-1], probs[-1]
        visits = node.visits
        untried = [b for b in legal if b not in visits]
        if untried:
            return untried[0] if len(untried) == 1 else rng.choice(untried), 1.0
        c = self.cfg.c
        total, avail = node.total, node.avail
        best, best_v = legal[0], -1e18
        for b in legal:
            v = visits[b]
            u = total[b] / v + c * math.sqrt(math.log(avail.get(b, 1)) / v)
            if u > best_v:
                best, best_v = b, u
        return best, 1.0

    # -- playouts --------------------------------------------------------------------------------------------
    def _playout(self, state, rng: random.Random) -> list[float]:
        mode = self.cfg.playout
        if mode == "mixed":
            # a leaf before the turn's moves cannot tell selections apart: play the turn out; else evaluate
            mode = "truncated" if state.phase in _BEFORE_MOVES else "eval"
        if mode == "eval":  # no random actions: evaluate the leaf itself
            return list(state.returns()) if state.is_terminal() else self._evaluate(state)
        if (self.cfg.playout == "random" and hasattr(state, "random_playout")
                and not state.is_terminal()):
            return list(state.random_playout(rng.getrandbits(63)))  # the core's playout in C (GIL released)
        truncated = mode == "truncated"
        stop_turn = self.root_turn + self.cfg.playout_turns
        cancel = self.cancel
        steps = 0
        choice = rng.choice
        while not state.is_terminal():
            if truncated and state.turn > stop_turn:
                break
            if state.is_chance_node():
                state.apply_action(sample_chance(state, rng))
            else:
                legal = state.legal_actions()
                a = legal[0] if len(legal) == 1 else choice(legal)
                state.apply_action(a)
            steps += 1
            if cancel is not None and (steps & 63) == 0 and cancel.is_set():
                break
        if state.is_terminal():
            return list(state.returns())
        return self._evaluate(state)

    def _evaluate(self, state) -> list[float]:
        n = self.n
        players = [p for p in range(n) if state.active[p]] if state.tiebreak else list(range(n))
        left = max(0, self.turns - state.turn + 1)
        temp = max(0.5, self.cfg.temperature * math.sqrt(left / max(1, self.turns)))
        raw = {p: position_score(state, p) for p in players}
        out = _softmax(raw, temp, n)
        m = self.cfg.margin_weight
        if m > 0:  # the wide softmax mixed in (SearchOptions.margin_weight; the C search's _evaluate)
            wide = _softmax(raw, self.cfg.margin_temperature, n)
            out = [(1.0 - m) * a + m * b for a, b in zip(out, wide)]
        return out

    # -- driving ---------------------------------------------------------------------------------------------
    def stop_reason(self, started: float, budget_iters: int | None, deadline: float | None) -> str | None:
        if self.cancel is not None and self.cancel.is_set():
            return "cancelled"
        if budget_iters is not None and self.iterations >= budget_iters:
            return "iterations"
        if deadline is not None and time.monotonic() >= deadline:
            return "time"
        return None

    def root_stats(self) -> dict[int, tuple[int, float]]:
        node = self.tree.get((self.seat, self._root_key()))
        if node is None:
            return {}
        return {a: (node.visits[a], node.total[a]) for a in node.visits}

    def _root_key(self) -> int:
        if self.perfect:
            return 0
        return _private_key(self.seat, self.obs["sel_army"][self.seat], self.obs["sel_trade"][self.seat])


def _deadline(cfg: SearchConfig, started: float) -> float | None:
    deadline = cfg.deadline
    if cfg.seconds is not None:
        t = started + cfg.seconds
        deadline = t if deadline is None else min(deadline, t)
    return deadline


def _run_ismcts(game, obs: dict, cfg: SearchConfig, cancel: threading.Event | None) -> _Searcher:
    started = time.monotonic()
    deadline = _deadline(cfg, started)
    s = _Searcher(game, obs, cfg, cancel)
    rng = random.Random(cfg.seed)
    while True:
        reason = s.stop_reason(started, cfg.iterations, deadline)
        if reason:
            s.stop = reason
            break
        s.iterate(rng)
    s.elapsed = time.monotonic() - started
    return s


def _run_pimc(game, obs: dict, cfg: SearchConfig, cancel: threading.Event | None) -> _Searcher:
    """Plain UCT on ``cfg.worlds`` sampled worlds; root visits summed (votes) across worlds."""
    started = time.monotonic()
    deadline = _deadline(cfg, started)
    rng = random.Random(cfg.seed)
    merged = _Searcher(game, obs, cfg, cancel, perfect=True)
    root_visits: dict[int, int] = {}
    root_total: dict[int, float] = {}
    W = cfg.worlds if cfg.iterations is None else min(cfg.worlds, cfg.iterations)
    for w in range(W):
        one = _Searcher(game, obs, cfg, cancel, perfect=True)
        world, d = merged._world(rng)
        per_world = None if cfg.iterations is None else cfg.iterations // W + (1 if w < cfg.iterations % W else 0)
        w_deadline = None
        if deadline is not None:
            now = time.monotonic()
            w_deadline = now + (deadline - now) / (W - w)
        while True:
            reason = one.stop_reason(started, per_world, w_deadline)
            if reason:
                break
            one.iterate(rng, world, d)
        for a, (v, t) in one.root_stats().items():
            root_visits[a] = root_visits.get(a, 0) + v
            root_total[a] = root_total.get(a, 0.0) + t
        merged.iterations += one.iterations
        merged.nodes += one.nodes
        merged.max_depth = max(merged.max_depth, one.max_depth)
        if w == 0:
            merged.tree = one.tree  # for the principal variation
        if cancel is not None and cancel.is_set():
            merged.stop = "cancelled"
            break
        if deadline is not None and time.monotonic() >= deadline:
            merged.stop = "time"
            break
    merged.stop = merged.stop or "iterations"
    merged._root_override = {a: (root_visits[a], root_total[a]) for a in root_visits}
    merged.elapsed = time.monotonic() - started
    return merged


def _worker(args) -> dict:
    kind, game, obs, cfg = args
    cancel = _PROCESS_CANCEL[0] if _PROCESS_CANCEL else None
    s = (_run_pimc if kind == "pimc" else _run_ismcts)(game, obs, cfg, cancel)
    return _summary(s)


_PROCESS_CANCEL: list = []


def _init_process(event) -> None:
    _PROCESS_CANCEL.clear()
    _PROCESS_CANCEL.append(event)


def _summary(s: _Searcher) -> dict:
    root = s._root_override if s._root_override is not None else s.root_stats()
    return {"root": root, "iterations": s.iterations, "worlds": s.worlds, "nodes": s.nodes,
            "max_depth": s.max_depth, "stop": s.stop, "belief_army": s.belief_army,
            "belief_trade": s.belief_trade, "searcher": s, "elapsed": s.elapsed}


def _run_all(kind: str, game, obs: dict, cfg: SearchConfig, cancel: threading.Event | None) -> list[dict]:
    """Run the search (root-parallel workers when ``cfg.threads > 1``): the workers' summaries."""
    cfg.validate()
    started = time.monotonic()
    if cfg.deadline is None and cfg.seconds is not None:
        cfg = replace(cfg, deadline=started + cfg.seconds, seconds=None)
    runner = _run_pimc if kind == "pimc" else _run_ismcts
    if cfg.threads == 1:
        summaries = [_summary(runner(game, obs, cfg, cancel))]
    else:
        subs = []
        for i in range(cfg.threads):
            iters = None
            if cfg.iterations is not None:
                iters = max(1, cfg.iterations // cfg.threads + (1 if i < cfg.iterations % cfg.threads else 0))
            subs.append(replace(cfg, threads=1, iterations=iters, seed=derive_seed(cfg.seed, i)))
        if cfg.parallel == "thread":
            with ThreadPoolExecutor(cfg.threads) as ex:
                summaries = list(ex.map(lambda c: _summary(runner(game, obs, c, cancel)), subs))
        else:
            import multiprocessing as mp

            ctx = mp.get_context("fork") if "fork" in mp.get_all_start_methods() else mp.get_context()
            event = ctx.Event()
            with ProcessPoolExecutor(cfg.threads, mp_context=ctx, initializer=_init_process,
                                     initargs=(event,)) as ex:
                futs = [ex.submit(_worker_noobj, (kind, game, obs, c)) for c in subs]
                with forward_cancel(cancel, event.set, period=0.005):
                    summaries = [f.result() for f in futs]
            # the PV needs a tree: rebuild it locally is too costly; use a short local search's tree instead
            summaries[0]["searcher"] = None
    return summaries


def _worker_noobj(args) -> dict:
    d = _worker(args)
    d.pop("searcher", None)
    return d


def _advice(kind: str, game, obs: dict, cfg: SearchConfig, summaries: list[dict], started: float,
            opts: SearchOptions) -> Advice:


    seat = obs["seat"]
    root: dict[int, tuple[int, float]] = {}
    for s in summaries:
        for a, (v, t) in s["root"].items():
            mv, mt = root.get(a, (0, 0.0))
            root[a] = (mv + v, mt + t)
    probe = state_from_dict(game, observation_fields(obs))
    legal = probe.legal_actions()
    ranked = sorted((a for a in root if a in legal), key=lambda a: (-root[a][0], -root[a][1] / root[a][0], a))
    best = ranked[0] if ranked else legal[0]
    worlds = sum(s["worlds"] for s in summaries)
    beliefs: dict[int, dict[str, list[float]]] = {}
    n, k = game.num_players, game.num_tokens
    for q in range(n):
        if q == seat:
            continue
        army = [sum(s["belief_army"][q][t] for s in summaries) / max(1, worlds) for t in range(k)]
        trade_counts = [sum(s["belief_trade"][q][c] for s in summaries)
                        for c in range(len(game.ruleset.trading_cards))]
        tt = sum(trade_counts)
        beliefs[q] = {"army": army, "trade": [x / tt if tt else 0.0 for x in trade_counts]}
    return search_advice(
        probe, seat, opts, root, _principal_variation(summaries[0].get("searcher"), probe, seat, best),
        belief_list(game, seat, beliefs, probe, list(obs["selected_count"])),
        "selection" if probe.phase == Phase.SELECT else "plan", iterations=sum(s["iterations"] for s in summaries),
        nodes=sum(s["nodes"] for s in summaries), elapsed=now() - started,
        search_seconds=max(s["elapsed"] for s in summaries), stopped_by=summaries[0]["stop"], pool_full=False,
        max_depth=max(s["max_depth"] for s in summaries), worlds=worlds,
        worker_iterations=tuple(s["iterations"] for s in summaries))


def _principal_variation(searcher: _Searcher | None, probe, seat: int, best: int) -> list[tuple[int, str]]:
    """The seat's most-visited actions while it keeps acting (in one sampled world: the first one)."""
    pv = [(best, probe.action_to_string(best))]
    if searcher is None or searcher.first_fields is None:
        return pv

    d = searcher.first_fields
    state = state_from_dict(searcher.game, d)
    keys = searcher._root_keys(d)
    a = best
    tsig = None
    for _ in range(40):
        p = state.current_player()
        phase = state.phase
        hidden = phase == _SELECT and not searcher.perfect
        state.apply_action(a)
        if hidden:
            keys = [_key(kk, a if q == p else HIDDEN) for q, kk in enumerate(keys)]
        else:
            keys = [_key(kk, a) for kk in keys]
            if not searcher.perfect and phase in _REVEALING:
                sig = _trade_signature(state)
                if sig != tsig:
                    keys = [_key(kk, sig) for kk in keys]
                    tsig = sig
        if state.is_terminal() or state.is_chance_node() or state.current_player() != seat:
            break
        legal = state.legal_actions()
        if len(legal) == 1:
            a = legal[0]
        else:
            node = searcher.tree.get((seat, keys[seat]))
            if node is None or not node.visits:
                break
            cands = [b for b in legal if b in node.visits]
            if not cands:
                break
            a = max(cands, key=lambda b: (node.visits[b], -b))
        pv.append((a, state.action_to_string(a)))
    return pv


# -- public API ------------------------------------------------------------------------------------------------
def config(opts: SearchOptions, *, parallel: str = "process") -> SearchConfig:
    """The run configuration of ``opts`` (plus the workers' kind, ``parallel``): the one mapping from the
    settings vocabulary to this module."""
    opts.validate()
    started = now()
    max_nodes = opts.max_nodes if opts.max_nodes is not None else DEFAULT_MAX_NODES
    return SearchConfig(iterations=opts.budget, deadline=deadline_of(opts, started), c=opts.c,
                        exp3_gamma=opts.exp3_gamma, playout=opts.playout, playout_turns=opts.playout_turns,
                        temperature=opts.temperature, margin_weight=opts.margin_weight,
                        margin_temperature=opts.margin_temperature, sampler=opts.sampler,
                        max_nodes=max_nodes, threads=opts.threads, parallel=parallel,
                        worlds=opts.worlds, seed=opts.seed, engine=opts.engine).validate()


def search(position, seat: int | None = None, options: SearchOptions | None = None, *,
           cancel: threading.Event | None = None, parallel: str = "process") -> Advice:
    """The Python reference backend of :func:`feudo_ai.advise` (``SearchOptions(backend="python")``): one search
    for ``seat`` (the player to act) in ``position`` from ``position.observation(seat)`` only; the same options
    and the same :class:`~feudo_ai.search.answer.Advice` as :func:`feudo_ai.search.c_backend.search`
    (``options.backend`` is ignored). ``parallel``: root-parallel workers as ``"process"`` (the default) or
    ``"thread"`` (module docstring).

    :raises ValueError: a bad option or seat.
    """
    seat = check_to_act(position, seat)
    return search_prepared(prepare(position, seat), options, cancel=cancel, parallel=parallel)


def search_prepared(prepared: PreparedPosition, options: SearchOptions | None = None, *,
                    cancel: threading.Event | None = None, parallel: str = "process") -> Advice:
    """One Python search from ``prepared`` (its seat to act): see :func:`search`."""
    started = now()
    opts = SearchOptions() if options is None else options
    if not isinstance(opts, SearchOptions):
        raise ValueError(f"options: expected SearchOptions, got {type(opts).__name__}")
    cfg = config(opts, parallel=parallel)
    obs = dict(prepared.observation)
    kind = "pimc" if opts.algorithm == "pimc" else "ismcts"
    summaries = _run_all(kind, prepared.game, obs, cfg, cancel)
    return _advice(kind, prepared.game, obs, cfg, summaries, started, opts)
