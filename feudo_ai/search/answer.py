"""The answer of a search (:class:`Advice` and its parts) and what both backends share to build it: the clock,
the seeds, the budget split and one search's :class:`Advice` (:func:`search_advice`). It knows no game: the
labelled beliefs come from the game's adapter (:mod:`feudo_ai.search.games`)."""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from typing import Any, Mapping

from feudo_ai.settings import SearchOptions

__all__ = ["Alternative", "PlannedAction", "CardBelief", "SearchStats", "Advice", "now", "derive_seed",
           "deadline_of", "split_budget", "search_advice"]


@dataclass(frozen=True)
class Alternative:
    """One candidate for the decision now, as the search ranked it."""

    action: int
    text: str
    visits: int
    # the seat's mean reward through this action (R19 returns or evaluated ones); in 3-4 players mostly the
    # hand-made evaluation, overconfident there (docs/search.md, the evaluation's calibration): a ranking, not a
    # calibrated probability
    win_probability: float

    def __str__(self) -> str:
        return f"{self.text} ({self.visits} visits, {self.win_probability:.1%})"


@dataclass(frozen=True)
class PlannedAction:
    """One decision of the seat's plan (:attr:`Advice.plan`)."""

    action: int
    text: str

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True)
class CardBelief:
    """The searching seat's belief that ``player`` holds ``card`` hidden: in its current secret selection (Feudo)
    or in its hand (Fief 2)."""

    player: int
    kind: str  # "army" or "trading" (Feudo), "hand" (Fief 2)
    index: int  # the Army Card's token index, the Trading Card's index in the ruleset, or Fief 2's card index
    card: str  # its name: "Knight 2", "4 shillings", "12 famine"
    probability: float

    def __str__(self) -> str:
        return f"P{self.player} {self.card}: {self.probability:.0%}"


@dataclass(frozen=True)
class SearchStats:
    """What the search did."""

    algorithm: str
    backend: str
    iterations: int
    nodes: int
    threads: int
    elapsed: float  # seconds of wall time of the whole call
    iterations_per_s: float | None
    # "iterations", "time", "cancelled", "decided" (early_stop: the answer could no longer change) (None: not
    # reached, e.g. a forced decision)
    stopped_by: str | None
    limited: bool  # a time limit, deadline or cancel cut the search (not the iteration budget)
    pool_full: bool  # a worker's node pool filled up (then recycled, or the trees stopped growing; the search went on)
    max_depth: int
    worlds_sampled: int
    seed: int
    searches: int  # searches run for this answer (a selection may need more than one to complete)
    search_seconds: float = 0.0  # wall time inside the search loops (the slowest worker), setup excluded
    worker_iterations: tuple[int, ...] = ()  # iterations of each root-parallel worker (of the first search)
    recycled: int = 0  # C: times a full node pool was recycled (its least-travelled half freed, growth went on)
    reused_nodes: int = 0  # C, reuse_tree: nodes of the seat's previous tree the search started from


@dataclass(frozen=True)
class Advice:
    """The answer to :func:`advise`: the whole decision and what the search knows about it."""

    seat: int
    decision: str  # "selection" (the Strategy phase, R6) or "plan" (any other decision)
    best: int  # the action to play now (== plan[0].action)
    best_text: str
    plan: tuple[PlannedAction, ...]  # the selection's picks, or the actions until new information arrives
    alternatives: tuple[Alternative, ...]  # for the decision now, most visited first
    beliefs: tuple[CardBelief, ...]  # per opponent and card still hidden from the seat
    stats: SearchStats

    def to_dict(self) -> dict:
        return asdict(self)

    def belief(self, player: int, card: str) -> float:
        """P(``player`` selected ``card``), 0.0 for a card not in the beliefs. :raises KeyError: never."""
        return next((b.probability for b in self.beliefs if b.player == player and b.card == card), 0.0)

    def __str__(self) -> str:
        head = "selection" if self.decision == "selection" else "plan"
        lines = [f"seat {self.seat} {head}: " + ", then ".join(p.text for p in self.plan)]
        for a in self.alternatives[:5]:
            lines.append(f"  {a}")
        by_player: dict[int, list[CardBelief]] = {}
        for b in self.beliefs:
            by_player.setdefault(b.player, []).append(b)
        for q, bs in sorted(by_player.items()):
            lines.append(f"  beliefs P{q}: " + ", ".join(f"{b.card} {b.probability:.0%}" for b in bs))
        s = self.stats
        lines.append(f"  {s.iterations} iterations, {s.nodes} nodes, {s.elapsed:.2f} s ({s.algorithm}, {s.backend}"
                     f"{', cut by ' + s.stopped_by if s.limited and s.stopped_by else ''})")
        return "\n".join(lines)


def now() -> float:
    """The clock of every limit: ``time.monotonic()`` (CLOCK_MONOTONIC, also the C search's clock on Linux)."""
    return time.monotonic()


def derive_seed(seed: int, i: int) -> int:
    """The seed of sub-search or worker ``i`` derived from ``seed`` (64 bits; one derivation for everything)."""
    return (int(seed) * 1_000_003 + 7919 * (i + 1)) & 0xFFFFFFFFFFFFFFFF


def deadline_of(opts: SearchOptions, started: float) -> float | None:
    """The absolute :func:`now` deadline of a search started at ``started``: the earlier of ``seconds`` after
    the start and ``deadline``; None without a time limit."""
    limits = [t for t in (None if opts.seconds is None else started + opts.seconds, opts.deadline) if t is not None]
    return min(limits) if limits else None


def split_budget(iterations: int | None, workers: int, i: int) -> int | None:
    """Worker ``i``'s share of ``iterations`` (the first ones get one more when it does not divide)."""
    if iterations is None:
        return None
    return iterations // workers + (1 if i < iterations % workers else 0)


def search_advice(probe: Any, seat: int, opts: SearchOptions, root_stats: Mapping[int, tuple[int, float]],
                  pv: list[tuple[int, str]], beliefs: tuple[CardBelief, ...], decision: str, *, iterations: int,
                  nodes: int, elapsed: float, search_seconds: float, stopped_by: str | None, pool_full: bool,
                  max_depth: int, worlds: int, worker_iterations: tuple[int, ...], recycled: int = 0,
                  reused_nodes: int = 0) -> Advice:
    """The :class:`Advice` of one search from ``probe`` (the seat's public root, the seat to act), whichever
    backend and game ran it (``beliefs`` labelled and ``decision`` named by the game's adapter): ``root_stats``
    {action: (visits, reward sum of the seat)} merged over the workers, ``pv`` the seat's most visited line (its
    first action is replaced by the best one when they differ)."""
    legal = probe.legal_actions()
    visits = {a: v for a, (v, _) in root_stats.items() if a in legal and v > 0}
    ranked = sorted(visits, key=lambda a: (-visits[a], -root_stats[a][1] / visits[a], a))
    alternatives = tuple(Alternative(a, probe.action_to_string(a), int(visits[a]),
                                     float(root_stats[a][1] / visits[a])) for a in ranked)
    best = ranked[0] if ranked else legal[0]  # no iteration finished (cancelled at once): the first legal action
    plan = list(pv) if pv and pv[0][0] == best else [(best, probe.action_to_string(best))]
    stats = SearchStats(
        algorithm=opts.algorithm, backend=opts.backend, iterations=int(iterations), nodes=int(nodes),
        threads=opts.threads, elapsed=elapsed, iterations_per_s=iterations / elapsed if elapsed > 0 else None,
        stopped_by=stopped_by, limited=stopped_by in ("time", "cancelled"), pool_full=bool(pool_full),
        max_depth=int(max_depth), worlds_sampled=int(worlds), seed=opts.seed, searches=1,
        search_seconds=float(search_seconds), worker_iterations=tuple(int(x) for x in worker_iterations),
        recycled=int(recycled), reused_nodes=int(reused_nodes))
    return Advice(seat=seat, decision=decision, best=best, best_text=probe.action_to_string(best),
                  plan=tuple(PlannedAction(a, t) for a, t in plan), alternatives=alternatives, beliefs=beliefs,
                  stats=stats)
