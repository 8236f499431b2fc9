"""The fast searches: MO-ISMCTS and the determinized PIMC baseline in C (:mod:`feudo_ai._search`), root-parallel
over threads.

    from feudo_ai.fast_search import search
    advice = search(state, iterations=20000, threads=2, seed=1)   # or seconds=1.0
    advice.best, advice.alternatives[:3], advice.stats["iterations_per_s"]

``algorithm="ismcts"`` (the default, bot "ismcts") is the algorithm of :mod:`feudo_ai.ismcts` (one tree per
player, EXP3 at a secret selection while another player still selects after the chooser, UCB1 with
availability counts elsewhere, including the last selector's picks; the same evaluation), with the
trees in a C node pool and the loop running with the GIL released, so ``threads=N`` workers (own trees, own
RNG seeded from ``seed`` and the worker index) run at once; their root statistics are summed.
``algorithm="pimc"`` (bot "pimc") samples ``worlds`` worlds per worker and runs plain UCT on each as a
perfect-information game (every selection visible to every player), iteration i in world i mod ``worlds``;
the worlds' root visits are summed (votes), and its principal variation is read from the first world's tree.
It shares the playouts and evaluation, so pairing the two measures the algorithms alone.

Honesty: the C search is given a state rebuilt from ``state.observation(seat)`` (opponents' unrevealed
selections removed), and it blanks those fields again itself before every determinization, so the result
depends only on what the seat may know, the parameters and the seed. ``sampler="weighted"`` draws the
opponents' cards with the prior of :class:`feudo_ai.sampler.WeightedSampler` (cards of tokens that can move,
stronger tokens, shilling cards when tokens are on the map) instead of uniformly; the public constraints hold
exactly either way.

Default evaluation: ``playout="truncated"`` with ``playout_turns=0``: random actions to the end of the
current turn (attacks excepted: only winnable ones are launched, see ``_search._playout_action``), then the
softmax of :func:`feudo_ai.evaluate.position_score` (in C). Evaluating the leaf directly (``"eval"``, the
Python search's default, chosen there because Python playouts are slow) cannot tell secret selections apart
early in a turn (nothing has happened yet when the leaf is evaluated), while a random rest of the turn
resolves the reveals, moves and attacks they lead to; in C that costs a few microseconds. ``"random"`` plays
to the end of the game (R19 returns; ~8x slower per iteration). Measured (``benchmarks/strength.py --suite
playouts``, 2 players, 2,000 iterations each, 200 games a pairing), the default against: ``"eval"`` 0.85,
``"random"`` 0.44 [0.38, 0.51], one more turn (``playout_turns=1``) 0.49, the weighted sampler 0.46 [0.39,
0.53]; none of the others is better beyond noise at equal iterations, and ``"random"`` costs 8x the time,
so the default stays. The strength figures are in
``benchmarks/strength.py``'s output (2,000 iterations; 2 players: 0.983 against random, 0.84 against greedy,
0.59 against "pimc"; 4 players: 0.83 against three greedy bots, 0.34 against three "pimc").

Speed (``benchmarks/fast_search_speed.py``, 4 players, turn 1, 2-core machine): 103,000-138,000 iterations/s
on one thread with the default, 1.94-2.08x that on two threads, about 12,500/s with "random"; PIMC
128,000-173,000/s. The node pool holds ``max_nodes`` nodes per worker (64 bytes each); the trees grow by about
4 nodes an iteration, and the default pool is sized to the budget (8 per iteration, or 8M nodes = 512 MB for a
timed search, about 18 s of one thread). A full pool stops the trees growing, never the search; the advice's
``stats["pool_full"]`` says whether that happened.
"""

from __future__ import annotations

import threading
import time
from dataclasses import asdict, dataclass
from typing import Any

from engine.serialize import state_from_dict

from .bots import Bot
from .cancel import forward_cancel
from .sampler import observation_fields

try:
    from . import _feudo_game, _search
except ImportError as _e:  # pragma: no cover - depends on the build
    _search = None
    _IMPORT_ERROR: ImportError | None = _e
else:
    _IMPORT_ERROR = None

try:
    from .ismcts import Advice, Alternative
except ImportError:  # pragma: no cover - the Python search is part of the package; kept for robustness
    @dataclass
    class Alternative:  # type: ignore[no-redef]
        action: int
        text: str
        visits: int
        mean: float

    @dataclass
    class Advice:  # type: ignore[no-redef]
        best: int
        best_text: str
        alternatives: list
        pv: list
        beliefs: dict
        stats: dict

        def to_dict(self) -> dict:
            return asdict(self)


PLAYOUTS = ("truncated", "eval", "random")
ALGORITHMS = ("ismcts", "pimc")
SAMPLERS = ("uniform", "weighted")
DEFAULT_ITERATIONS = 5000
TIMED_MAX_NODES = 8_000_000  # node pool of a worker of a timed search (64 bytes a node: 512 MB)
MAX_NODES_LIMIT = 100_000_000


def available() -> bool:
    return _search is not None


def _require() -> None:
    if _search is None:
        raise ImportError(f"feudo_ai._search is not built ({_IMPORT_ERROR}); run "
                          f"`python setup.py build_ext --inplace` in the repository root")


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _derive(seed: int, i: int) -> int:
    return (int(seed) * 1_000_003 + 7919 * (i + 1)) & 0xFFFFFFFFFFFFFFFF


def _public_core_state(state, seat: int):
    """A CoreState holding only what ``seat`` may know: opponents' unrevealed selections removed."""
    from engine.core import CoreState

    ref = state.to_reference() if isinstance(state, CoreState) else state
    probe = state_from_dict(ref.game, observation_fields(ref.observation(seat)))
    return probe, CoreState.from_reference(probe)


def check_options(iterations: int | None = None, seconds: float | None = None, threads: int = 1, seed: int = 0,
                  max_nodes: int | None = None, playout: str = "truncated", playout_turns: int = 0, c: float = 0.2,
                  exp3_gamma: float = 0.15, temperature: float = 1.0, sampler: str = "uniform",
                  algorithm: str = "ismcts", worlds: int = 8, cancel=None) -> int | None:
    """Validate :func:`search`'s options (ValueError naming the first bad one); returns the iteration budget
    (``DEFAULT_ITERATIONS`` when neither iterations nor seconds is given)."""
    if iterations is not None and (not _is_int(iterations) or iterations < 1):
        raise ValueError(f"iterations: expected a positive integer or None, got {iterations!r}")
    if seconds is not None and (not _is_num(seconds) or not seconds > 0):
        raise ValueError(f"seconds: expected a positive number or None, got {seconds!r}")
    if iterations is None and seconds is None:
        iterations = DEFAULT_ITERATIONS
    if not _is_int(threads) or not 1 <= threads <= 64:
        raise ValueError(f"threads: expected an integer in [1, 64], got {threads!r}")
    if iterations is not None and iterations < threads:
        raise ValueError(f"iterations: expected at least one per thread ({threads}), got {iterations}")
    if not _is_int(seed):
        raise ValueError(f"seed: expected an integer, got {seed!r}")
    if max_nodes is not None and (not _is_int(max_nodes) or not 16 <= max_nodes <= MAX_NODES_LIMIT):
        raise ValueError(f"max_nodes: expected an integer in [16, {MAX_NODES_LIMIT}] or None, got {max_nodes!r}")
    if algorithm not in ALGORITHMS:
        raise ValueError(f"algorithm: expected one of {', '.join(ALGORITHMS)}, got {algorithm!r}")
    if sampler not in SAMPLERS:
        raise ValueError(f"sampler: expected one of {', '.join(SAMPLERS)}, got {sampler!r}")
    if not _is_int(worlds) or not 1 <= worlds <= 4096:
        raise ValueError(f"worlds: expected an integer in [1, 4096], got {worlds!r}")
    if algorithm == "pimc" and max_nodes is not None and max_nodes < worlds + 1:
        raise ValueError(f"max_nodes: expected at least worlds + 1 = {worlds + 1} for pimc, got {max_nodes}")
    if playout not in PLAYOUTS:
        raise ValueError(f"playout: expected one of {', '.join(PLAYOUTS)}, got {playout!r}")
    if not _is_int(playout_turns) or playout_turns < 0:
        raise ValueError(f"playout_turns: expected a non-negative integer, got {playout_turns!r}")
    if not _is_num(c) or c < 0:
        raise ValueError(f"c: expected a non-negative number, got {c!r}")
    if not _is_num(exp3_gamma) or not 0 < exp3_gamma <= 1:
        raise ValueError(f"exp3_gamma: expected a number in (0, 1], got {exp3_gamma!r}")
    if not _is_num(temperature) or not temperature > 0:
        raise ValueError(f"temperature: expected a positive number, got {temperature!r}")
    if cancel is not None and not isinstance(cancel, (_search.CancelFlag, threading.Event)):
        raise ValueError(f"cancel: expected a CancelFlag or threading.Event, got {type(cancel).__name__}")

    return iterations


def search(state, seat: int | None = None, iterations: int | None = None, seconds: float | None = None,
           threads: int = 1, seed: int = 0, max_nodes: int | None = None, playout: str = "truncated",
           playout_turns: int = 0, c: float = 0.2, exp3_gamma: float = 0.15, temperature: float = 1.0,
           sampler: str = "uniform", algorithm: str = "ismcts", worlds: int = 8, cancel=None) -> Advice:
    """Fast MO-ISMCTS (or, ``algorithm="pimc"``, determinized UCT) advice for ``seat`` (default: the player to
    act, who must be ``seat``).

    ``state``: a reference :class:`engine.State` or an :class:`engine.core.CoreState`.
    ``iterations`` (total over the workers, split evenly) and/or ``seconds`` of wall time; neither given:
    ``DEFAULT_ITERATIONS``. ``threads``: root-parallel workers. ``max_nodes``: node pool of each worker
    (64 bytes a node; default: enough for the iteration budget, or :data:`TIMED_MAX_NODES` for a timed
    search; a full pool stops the trees growing, never the search). ``sampler``: "uniform" or "weighted"
    (the opponent model of :class:`feudo_ai.sampler.WeightedSampler`). ``worlds``: PIMC's determinizations
    per worker. ``cancel``: a :class:`feudo_ai._search.CancelFlag` or a :class:`threading.Event`; the search
    stops within a few milliseconds of it being set. Same seed and iterations (no ``seconds``) give the same
    advice.
    """
    _require()
    from engine.state import CHANCE, TERMINAL

    if not hasattr(state, "current_player") or not hasattr(state, "observation"):
        raise ValueError(f"state: expected an engine State or CoreState, got {type(state).__name__}")
    actor = state.current_player()
    if actor == TERMINAL:
        raise ValueError("state: the game is over, there is nothing to search")
    if actor == CHANCE:
        raise ValueError("state: a chance node (no player decides here)")
    if seat is None:
        seat = actor
    if not _is_int(seat) or not 0 <= seat < state.num_players:
        raise ValueError(f"seat: expected an integer in [0, {state.num_players}), got {seat!r}")
    if seat != actor:
        raise ValueError(f"seat: the search advises the player to act ({actor}), got {seat}")
    iterations = check_options(iterations=iterations, seconds=seconds, threads=threads, seed=seed,
                               max_nodes=max_nodes, playout=playout, playout_turns=playout_turns, c=c,
                               exp3_gamma=exp3_gamma, temperature=temperature, sampler=sampler,
                               algorithm=algorithm, worlds=worlds, cancel=cancel)

    started = time.monotonic()
    probe, root = _public_core_state(state, seat)
    game = _feudo_game.FeudoGame(root, seat, sampler, float(temperature))
    flag = cancel if isinstance(cancel, _search.CancelFlag) else _search.CancelFlag()
    deadline = _search.now() + seconds if seconds is not None else 0.0
    workers = []
    for i in range(threads):
        iters = 0
        if iterations is not None:
            iters = iterations // threads + (1 if i < iterations % threads else 0)
        pool = max_nodes if max_nodes is not None else _default_nodes(iters, seconds, root.num_players, worlds)
        workers.append(_search.SearchWorker(game, _derive(seed, i), iters, deadline, pool, playout, playout_turns,
                                            float(c), float(exp3_gamma), flag, algorithm == "pimc", worlds))
    watched = cancel if isinstance(cancel, threading.Event) else None  # a CancelFlag is read by C directly
    with forward_cancel(watched, flag.set):
        if threads == 1:
            workers[0].run()
        else:
            pool = [threading.Thread(target=w.run) for w in workers]
            for t in pool:
                t.start()
            for t in pool:
                t.join()
    return _advice(probe, seat, game, workers, time.monotonic() - started, playout, seed, algorithm, sampler)


def _default_nodes(iterations: int, seconds: float | None, players: int, worlds: int) -> int:
    """A pool that does not fill within the budget: an iteration adds a few nodes (about 4 on average: the
    expanded edge, chance outcomes and the other trees' nodes of the edges walked), so an iteration budget
    gets 8 per iteration; a timed search gets :data:`TIMED_MAX_NODES` (bounded memory, 512 MB a worker, about
    18 s of one thread at the first decision)."""
    if seconds is None:
        return max(1024, 8 * iterations + players + worlds + 16)
    return TIMED_MAX_NODES if not iterations else min(TIMED_MAX_NODES, max(1024, 8 * iterations + 64))


def _advice(probe, seat: int, game_c, workers: list, elapsed: float, playout: str, seed: int, algorithm: str,
            sampler: str) -> Advice:
    visits: dict[int, int] = {}
    total: dict[int, float] = {}
    for w in workers:
        for a, (v, r) in w.root_stats().items():
            visits[a] = visits.get(a, 0) + v
            total[a] = total.get(a, 0.0) + r
    legal = probe.legal_actions()
    ranked = sorted((a for a in visits if a in legal), key=lambda a: (-visits[a], -total[a] / visits[a], a))
    alternatives = [Alternative(a, probe.action_to_string(a), visits[a], total[a] / visits[a]) for a in ranked]
    best = ranked[0] if ranked else legal[0]
    per = [w.stats() for w in workers]
    iterations = sum(s["iterations"] for s in per)
    counts = None
    worlds = 0
    for w in workers:
        c, nw = w.belief_counts()
        counts = c if counts is None else [x + y for x, y in zip(counts, c)]
        worlds += nw
    beliefs = game_c.beliefs(counts, worlds)
    stats = {
        "algorithm": "mo-ismcts" if algorithm == "ismcts" else "pimc",
        "sampler": sampler,
        "pool_full": any(s["pool_full"] for s in per),
        "iterations": iterations,
        "worker_iterations": [s["iterations"] for s in per],
        "worlds_sampled": worlds,
        "nodes": sum(s["nodes"] for s in per),
        "max_depth": max(s["max_depth"] for s in per),
        "elapsed": elapsed,
        "search_seconds": max(s["elapsed"] for s in per),
        "iterations_per_s": iterations / elapsed if elapsed > 0 else None,
        "stopped_by": per[0]["stopped_by"],
        "workers": len(workers),
        "playout": playout,
        "seed": seed,
    }
    return Advice(best, probe.action_to_string(best), alternatives, _pv(workers[0], probe, seat, best), beliefs,
                  stats)


def _pv(worker, probe, seat: int, best: int) -> list[tuple[int, str]]:
    """The seat's most visited actions while it keeps acting (worker 0's tree of the seat)."""
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


class ISMCTSBot(Bot):
    """Bot "ismcts": plays the fast MO-ISMCTS's best action (default 5000 iterations, 1 thread). Parameters
    are those of :func:`search` (``iterations``, ``seconds``, ``threads``, ``playout``, ``sampler``, ...)."""

    name = "ismcts"
    algorithm = "ismcts"
    defaults: dict = {}

    def __init__(self, seed: int = 0, **params):
        _require()
        super().__init__(seed)
        params.pop("seed", None)
        import inspect

        known = set(inspect.signature(search).parameters) - {"state", "seat", "seed", "cancel", "algorithm"}
        if self.algorithm != "pimc":
            known.discard("worlds")
        bad = sorted(set(params) - known)
        if bad:
            raise ValueError(f"unknown {self.name} parameter(s) {', '.join(bad)}; known: {', '.join(sorted(known))}")
        merged = {**self.defaults, **params}
        if "seconds" not in merged:
            merged.setdefault("iterations", DEFAULT_ITERATIONS)
        check_options(**merged, algorithm=self.algorithm)  # fail at construction, not at the first decision
        self.params = {**merged, "algorithm": self.algorithm}
        self.last_advice: Advice | None = None

    def choose(self, state) -> int:
        advice = search(state, seed=self.rng.getrandbits(31), **self.params)
        self.last_advice = advice
        return advice.best


class PIMCBot(ISMCTSBot):
    """Bot "pimc": determinized UCT in C, the classic baseline (default 5000 iterations over 8 worlds):
    ``worlds`` worlds sampled from the seat's observation, plain UCT on each as a perfect-information game
    (every selection visible to every player), root visits summed. Same playouts and evaluation as
    "ismcts", so a pairing of the two measures the algorithms only."""

    name = "pimc"
    algorithm = "pimc"
