"""The one way to ask for advice: :func:`advise` (``feudo_ai.advise``), its options and its answer.

    import feudo_ai
    from engine import new_fast_game
    state = new_fast_game(players=4, seed=7)
    ...                                                  # play to a decision of seat 2
    advice = feudo_ai.advise(state, seat=2, options=feudo_ai.SearchOptions(iterations=20000, seed=1))
    print(advice)                                        # the whole decision, alternatives, beliefs, stats

Every caller (bots, CLI, the Advisor service, the arena, benchmarks) goes through :func:`advise`, so there is
one options vocabulary (:class:`SearchOptions`, validated in one place) and one answer (:class:`Advice`) whichever
search runs it: the C MO-ISMCTS / PIMC (``backend="c"``, :mod:`feudo_ai.fast_search`) or the readable Python
reference (``backend="python"``, :mod:`feudo_ai.ismcts`). The backend is an explicit option, never a global, and
so is the engine of the Python reference's worlds (``engine``). Each backend's ``search`` runs one search from a
position where the seat is to act and returns an :class:`Advice` built by :func:`search_advice`; the clock
(:func:`now`), the seeds (:func:`derive_seed`), the limits (:func:`deadline_of`, :func:`split_budget`) and the
labelled beliefs (:func:`belief_list`) are defined here once for both. Design and measured figures:
``docs/search.md``.

Honesty (R22, R25): the search is handed the seat's observation only. A full state is projected to
``state.observation(seat)`` before anything else looks at it, so two states that differ only in cards hidden from
the seat give the same advice.

Whole decisions. In the Strategy phase the answer is the seat's complete secret selection (R6: three Army Cards
and one Trading Card, :attr:`Advice.plan` holds the four picks); elsewhere it is the seat's planned sequence of
decisions until new information arrives (another player acts, or chance), e.g. a reveal, the token's move, the
marches of a Trading Card, an attack with its joiners. The selection is simultaneous in the real game but
sequential in the engine, so a seat whose selection is pending may ask while another seat is "to act": the
players before it in seat order who have not finished are treated as having selected (their picks are then drawn
by the determinization like any hidden selection), which changes nothing they could see.
"""

from __future__ import annotations

import math
import threading
import time
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any, Mapping, Union

from engine.errors import StateError
from engine.serialize import state_from_dict
from engine.state import CHANCE, TERMINAL, Game, Phase, State

__all__ = [
    "ALGORITHMS", "BACKENDS", "ENGINES", "EVALUATIONS", "PLAYOUTS", "SAMPLERS", "DEFAULT_ITERATIONS", "MAX_SEARCH_BYTES",
    "GREEDY_PLAYOUTS", "GREEDY_PLAYOUTS_2P", "greedy_playouts", "WIDE_MARGIN", "WIDE_MARGIN_PLAYERS",
    "product_options",
    "SearchOptions", "Alternative",
    "PlannedAction", "CardBelief", "SearchStats", "Advice", "ObservedPosition", "NotToAct", "decision_root",
    "advise",
]

ALGORITHMS = ("ismcts", "pimc")
BACKENDS = ("c", "python")
PLAYOUTS = ("truncated", "eval", "random", "mixed")  # "mixed": the Python reference's default only
SAMPLERS = ("uniform", "weighted")
EVALUATIONS = ("handmade", "learned")  # the leaves' evaluation (feudo_ai.evaluate / feudo_ai.value)
ENGINES = ("core", "reference")  # the rules implementation of the Python reference search's worlds
DEFAULT_ITERATIONS = 5000
MAX_PLAYOUT_TURNS = 200  # the longest game: 100 regular turns + 100 tie-break turns
# The playouts the product plays with (issue 14, docs/search.md "Greedy playouts to the end of a 2-player game"): the
# Moves, Marches, Advances and Milady decisions the greedy player's (C only), played out to the end of the game in
# 2 players (every leaf scored by the exact R19 returns, not the hand-made evaluation) and one more turn in 3 or 4
# (played to the end there, they lose at equal time). SearchOptions keeps the plain playouts as its own defaults,
# which the Python reference shares (it has no greedy playouts). The "ismcts" bot, the Advisor service, `feudo
# advise` and the hints of `feudo play` and `feudo companion` search with product_options(players): these
# playouts and the wide margin below.
GREEDY_PLAYOUTS: dict = {"playout_greedy": 1.0, "playout_turns": 1}  # 3 or 4 players
GREEDY_PLAYOUTS_2P: dict = {"playout_greedy": 1.0, "playout_turns": MAX_PLAYOUT_TURNS}  # 2 players: to the end
# The evaluation the product plays with in 4 players (issue 14, docs/search.md "Four players: the wide margin"):
# the hand-made softmax with a wide one of the same position scores mixed in, because there the sharp one
# saturates worst (a seat a few points behind sees every move as lost); against three ismcts-v1 it is the largest
# 4-player gain measured. 3 players keep the sharp one (one screen there showed no gain); in 2 players every
# playout ends the game (GREEDY_PLAYOUTS_2P), so no leaf is evaluated and a margin would change nothing.
WIDE_MARGIN: dict = {"margin_weight": 0.5, "margin_temperature": 4.0}
WIDE_MARGIN_PLAYERS = 4  # the players of the games whose product evaluation has it


def greedy_playouts(players: int) -> dict:
    """The product's playout options (SearchOptions fields) for a game of ``players``: :data:`GREEDY_PLAYOUTS_2P`
    in 2 players, :data:`GREEDY_PLAYOUTS` otherwise (a new dict each call).

    :raises ValueError: if ``players`` is not an integer of at least 1."""
    if not _is_int(players) or players < 1:
        raise ValueError(f"players: expected a positive integer, got {players!r}")
    return dict(GREEDY_PLAYOUTS_2P if players == 2 else GREEDY_PLAYOUTS)


def product_options(players: int) -> dict:
    """The product's search options (SearchOptions fields) for a game of ``players``: the greedy playouts of
    :func:`greedy_playouts` and, in 4 players, the wide margin of the hand-made evaluation, :data:`WIDE_MARGIN`
    (a new dict each call). What the ``ismcts`` bot, the Advisor service's MO-ISMCTS, ``feudo advise`` and the
    hints search with.

    :raises ValueError: if ``players`` is not an integer of at least 1."""
    options = greedy_playouts(players)
    if players == WIDE_MARGIN_PLAYERS:
        options.update(WIDE_MARGIN)
    return options


MAX_ITERATIONS = 100_000_000
MAX_SECONDS = 3600.0
MAX_THREADS = 64
MAX_NICE = 19  # the largest nice increment (Linux: nice values run from -20 to 19)
MAX_C = 100.0  # UCB exploration constant (rewards are in [0, 1])
MAX_TEMPERATURE = 1e6
MAX_PRIOR_WEIGHT = 100.0  # progressive bias weight of the action prior (rewards are in [0, 1])
NODE_BYTES = 64  # one node of the C search (feudo_ai._search.node_bytes(), checked by the tests)
MAX_SEARCH_BYTES = 1 << 30  # memory of one C search: threads x node pool x NODE_BYTES at most 1 GiB
MAX_NODES = MAX_SEARCH_BYTES // NODE_BYTES  # node pool of one C worker (16,777,216: then one thread only)
MAX_PY_NODES = 1_000_000  # nodes of one Python search over its workers (a node with its dicts is ~1 kB: ~1 GiB)


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_real(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


@dataclass(frozen=True)
class SearchOptions:
    """How to search. Validated on construction (:raises ValueError: naming the first bad field).

    Limits: ``iterations`` (total over the threads), ``seconds`` of wall time, ``deadline`` (an absolute
    ``time.monotonic()`` value, e.g. a gRPC deadline); the search stops at the first one reached. With none of
    them, :data:`DEFAULT_ITERATIONS`. Same ``seed`` and ``iterations`` (no time limit): same advice.

    This is the one place options are checked (both backends and the bots rely on it): types, finiteness and the
    documented maxima (:data:`MAX_ITERATIONS`, :data:`MAX_SECONDS`, :data:`MAX_PLAYOUT_TURNS`, :data:`MAX_C`,
    :data:`MAX_TEMPERATURE`, and the memory of a search: ``threads x max_nodes x NODE_BYTES`` within
    :data:`MAX_SEARCH_BYTES` for the C search, ``threads x max_nodes`` within :data:`MAX_PY_NODES` for the Python
    one).
    """

    iterations: int | None = None  # total iterations over all threads; None: no iteration limit
    seconds: float | None = None  # wall time of the search
    deadline: float | None = None  # absolute time.monotonic() by which the search stops
    threads: int = 1  # root-parallel workers (C: threads with the GIL released; Python: processes)
    seed: int = 0  # every random choice of the search flows from it
    algorithm: str = "ismcts"  # "ismcts" (multiple-observer ISMCTS) or "pimc" (determinized UCT baseline)
    backend: str = "c"  # "c" (feudo_ai.fast_search) or "python" (feudo_ai.ismcts, the readable reference)
    playout: str = "truncated"  # "truncated", "eval", "random"; "mixed" for the Python backend only
    playout_turns: int = 0  # truncated playouts: turns played after the root's turn ends
    sampler: str = "uniform"  # determinization of hidden selections: "uniform" or "weighted" (opponent model)
    c: float = 0.2  # UCB1 exploration constant
    exp3_gamma: float = 0.15  # EXP3 exploration at simultaneous secret selections
    temperature: float = 1.0  # softmax temperature of the evaluation (handmade: at the start of the game)
    worlds: int = 8  # PIMC: determinizations per worker
    max_nodes: int | None = None  # node pool per worker; None: sized to the budget
    engine: str = "core"  # backend="python" only: worlds on the Cython core ("core") or the reference ("reference")
    # C backend, Linux: the search's worker threads run this much nicer (lower OS priority) than the caller, on
    # threads of their own; a server sets it so that its threads answering calls are served first and its
    # searches take the rest of the cores (0: the search runs on the calling thread, as usual)
    nice: int = 0
    evaluation: str = "handmade"  # leaves: "handmade" (evaluate.position_score softmax) or "learned" (C only)
    # the tree's action prior (C only, issue 14): UCB1 gets the progressive bias + prior_weight * P(a) / (1 + n_a),
    # P the softmax (temperature prior_temperature) of the game's one-ply scores of the legal actions, and a node
    # expands its untried actions in the order of P; 0: no prior (the search of before, bit for bit)
    prior_weight: float = 0.0
    prior_temperature: float = 1.0
    # handmade evaluation (issue 14's diagnosis, docs/search.md): the rewards are (1 - margin_weight) times the
    # sharp softmax plus margin_weight times a softmax of the position scores at the constant temperature
    # margin_temperature (VP), so a seat a few VP ahead or behind still sees what a VP is worth; 0: the v1 rewards
    margin_weight: float = 0.0
    margin_temperature: float = 4.0
    # C only (issue 14): the probability that a truncated playout plays a Move, March, Advance or Milady as the
    # greedy bot would (the mover's best one-ply position score) rather than uniformly; 0: the playouts of before
    playout_greedy: float = 0.0

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> "SearchOptions":
        """Check every field; :raises ValueError: naming the first bad one. Returns ``self``."""
        it, sec, dl = self.iterations, self.seconds, self.deadline
        if it is not None and (not _is_int(it) or not 1 <= it <= MAX_ITERATIONS):
            raise ValueError(f"iterations: expected an integer in [1, {MAX_ITERATIONS}] or None, got {it!r}")
        if sec is not None and (not _is_real(sec) or not 0 < sec <= MAX_SECONDS):
            raise ValueError(f"seconds: expected a number in (0, {MAX_SECONDS:g}] or None, got {sec!r}")
        if dl is not None and not _is_real(dl):
            raise ValueError(f"deadline: expected a time.monotonic() value or None, got {dl!r}")
        if not _is_int(self.threads) or not 1 <= self.threads <= MAX_THREADS:
            raise ValueError(f"threads: expected an integer in [1, {MAX_THREADS}], got {self.threads!r}")
        if it is not None and it < self.threads:
            raise ValueError(f"iterations: expected at least one per thread ({self.threads}), got {it}")
        if not _is_int(self.seed) or not -(2**63) <= self.seed < 2**64:
            raise ValueError(f"seed: expected a 64-bit integer, got {self.seed!r}")
        for name, allowed in (("algorithm", ALGORITHMS), ("backend", BACKENDS), ("playout", PLAYOUTS),
                              ("sampler", SAMPLERS), ("engine", ENGINES), ("evaluation", EVALUATIONS)):
            if getattr(self, name) not in allowed:
                raise ValueError(f"{name}: expected one of {', '.join(allowed)}, got {getattr(self, name)!r}")
        if self.playout == "mixed" and self.backend != "python":
            raise ValueError("playout: 'mixed' is only available with backend='python'")
        if self.engine != "core" and self.backend != "python":
            raise ValueError("engine: 'reference' is only available with backend='python' (the C search runs on "
                             "the core)")
        if self.evaluation != "handmade" and self.backend != "c":
            raise ValueError("evaluation: 'learned' is only available with backend='c' (the model runs in C)")
        if not _is_int(self.playout_turns) or not 0 <= self.playout_turns <= MAX_PLAYOUT_TURNS:
            raise ValueError(f"playout_turns: expected an integer in [0, {MAX_PLAYOUT_TURNS}], got "
                             f"{self.playout_turns!r}")
        if not _is_int(self.nice) or not 0 <= self.nice <= MAX_NICE:
            raise ValueError(f"nice: expected an integer in [0, {MAX_NICE}], got {self.nice!r}")
        if not _is_real(self.c) or not 0 <= self.c <= MAX_C:
            raise ValueError(f"c: expected a number in [0, {MAX_C:g}], got {self.c!r}")
        if not _is_real(self.exp3_gamma) or not 0 < self.exp3_gamma <= 1:
            raise ValueError(f"exp3_gamma: expected a number in (0, 1], got {self.exp3_gamma!r}")
        if not _is_real(self.prior_weight) or not 0 <= self.prior_weight <= MAX_PRIOR_WEIGHT:
            raise ValueError(f"prior_weight: expected a number in [0, {MAX_PRIOR_WEIGHT:g}] (0: no prior), got "
                             f"{self.prior_weight!r}")
        if self.prior_weight and self.backend != "c":
            raise ValueError("prior_weight: the action prior is only available with backend='c' (it runs in C)")
        if not _is_real(self.prior_temperature) or not 0 < self.prior_temperature <= MAX_TEMPERATURE:
            raise ValueError(f"prior_temperature: expected a number in (0, {MAX_TEMPERATURE:g}], got "
                             f"{self.prior_temperature!r}")
        if not _is_real(self.temperature) or not 0 < self.temperature <= MAX_TEMPERATURE:
            raise ValueError(f"temperature: expected a number in (0, {MAX_TEMPERATURE:g}], got {self.temperature!r}")
        if not _is_real(self.margin_weight) or not 0 <= self.margin_weight <= 1:
            raise ValueError(f"margin_weight: expected a number in [0, 1] (0: the sharp softmax alone), got "
                             f"{self.margin_weight!r}")
        if not _is_real(self.margin_temperature) or not 0 < self.margin_temperature <= MAX_TEMPERATURE:
            raise ValueError(f"margin_temperature: expected a number in (0, {MAX_TEMPERATURE:g}], got "
                             f"{self.margin_temperature!r}")
        if self.margin_weight and self.evaluation != "handmade":
            raise ValueError("margin_weight: mixes a wide softmax into the handmade evaluation only; use 0 with "
                             f"evaluation={self.evaluation!r}")
        if not _is_real(self.playout_greedy) or not 0 <= self.playout_greedy <= 1:
            raise ValueError(f"playout_greedy: expected a probability in [0, 1] (0: uniform playout moves), got "
                             f"{self.playout_greedy!r}")
        if self.playout_greedy and self.backend != "c":
            raise ValueError("playout_greedy: the greedy playout moves are only available with backend='c' (they "
                             "run in C)")
        if not _is_int(self.worlds) or not 1 <= self.worlds <= 4096:
            raise ValueError(f"worlds: expected an integer in [1, 4096], got {self.worlds!r}")
        if self.max_nodes is not None and (not _is_int(self.max_nodes) or not 16 <= self.max_nodes <= MAX_NODES):
            raise ValueError(f"max_nodes: expected an integer in [16, {MAX_NODES}] or None, got {self.max_nodes!r}")
        if self.max_nodes is not None and self.backend == "c" and \
                self.threads * self.max_nodes * NODE_BYTES > MAX_SEARCH_BYTES:
            raise ValueError(f"max_nodes: {self.threads} threads x {self.max_nodes:,} nodes x {NODE_BYTES} bytes "
                             f"exceeds the memory limit of a search ({MAX_SEARCH_BYTES / 2**30:g} GiB); at most "
                             f"{MAX_SEARCH_BYTES // NODE_BYTES // self.threads:,} nodes per thread")
        if self.max_nodes is not None and self.backend == "python" and self.threads * self.max_nodes > MAX_PY_NODES:
            raise ValueError(f"max_nodes: {self.threads} workers x {self.max_nodes:,} nodes exceeds the memory limit "
                             f"of a Python search ({MAX_PY_NODES:,} nodes of ~1 kB)")
        if self.algorithm == "pimc" and self.max_nodes is not None and self.max_nodes < self.worlds + 1:
            raise ValueError(f"max_nodes: expected at least worlds + 1 = {self.worlds + 1} for pimc, got "
                             f"{self.max_nodes}")
        return self

    @property
    def budget(self) -> int | None:
        """The iteration limit in force: ``iterations``, or :data:`DEFAULT_ITERATIONS` when no limit is given."""
        if self.iterations is None and self.seconds is None and self.deadline is None:
            return DEFAULT_ITERATIONS
        return self.iterations

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "SearchOptions":
        """Options from a mapping (e.g. a bot spec's parameters); :raises ValueError: on an unknown name."""
        known = [f.name for f in fields(cls)]
        bad = sorted(set(d) - set(known))
        if bad:
            raise ValueError(f"unknown search option(s) {', '.join(bad)}; known: {', '.join(known)}")
        return cls(**dict(d))

    def to_dict(self) -> dict:
        return asdict(self)

    def replace(self, **changes: Any) -> "SearchOptions":
        """A copy with some fields changed (validated again)."""
        return replace(self, **changes)


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
    """The searching seat's belief that ``player`` holds ``card`` in its current hidden selection."""

    player: int
    kind: str  # "army" or "trading"
    index: int  # the Army Card's token index, or the Trading Card's index in the ruleset
    card: str  # its name: "Knight 2", "4 shillings"
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
    stopped_by: str | None  # "iterations", "time", "cancelled" (None: not reached, e.g. a forced decision)
    limited: bool  # a time limit, deadline or cancel cut the search (not the iteration budget)
    pool_full: bool  # a worker's node pool filled up (trees stopped growing, the search went on)
    max_depth: int
    worlds_sampled: int
    seed: int
    searches: int  # searches run for this answer (a selection may need more than one to complete)
    search_seconds: float = 0.0  # wall time inside the search loops (the slowest worker), setup excluded
    worker_iterations: tuple[int, ...] = ()  # iterations of each root-parallel worker (of the first search)


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


@dataclass(frozen=True)
class ObservedPosition:
    """A position as one seat sees it: the game and ``state.observation(seat)`` (R22).

    What a front-end that referees its own game, or a player at a real table, can give: it holds no card hidden
    from ``observation["seat"]``. :meth:`to_state` validates it through the engine's loader.
    """

    game: Game
    observation: Mapping[str, Any]

    def __post_init__(self) -> None:
        obs, n = self.observation, self.game.num_players
        if not isinstance(obs, Mapping):
            raise StateError(f"observation: expected an object, got {type(obs).__name__}")
        seat = obs.get("seat")
        if not _is_int(seat) or not 0 <= seat < n:
            raise StateError(f"observation.seat: expected an integer in [0, {n}), got {seat!r}")
        count = obs.get("selected_count")
        if (not isinstance(count, list) or len(count) != n
                or not all(_is_int(c) and 0 <= c <= self.game.num_tokens for c in count)):
            raise StateError(f"observation.selected_count: expected {n} integers in [0, {self.game.num_tokens}], "
                             f"got {count!r:.80}")

    @classmethod
    def from_state(cls, state: Any, seat: int) -> "ObservedPosition":
        """``seat``'s view of a full state (a :class:`engine.State` or ``CoreState``)."""
        return cls(state.game, state.observation(seat))

    @property
    def seat(self) -> int:
        return int(self.observation["seat"])

    def to_state(self) -> State:
        """A reference state holding only this seat's knowledge. :raises StateError: if inconsistent."""
        from .sampler import observation_fields

        return state_from_dict(self.game, observation_fields(dict(self.observation)))


Position = Union[State, ObservedPosition, Any]  # Any: engine._core.CoreState


# ---------------------------------------------------------------------------------------------------------------
def _seat_view(position: Position, seat: int | None) -> ObservedPosition:
    """The seat's observation of ``position`` (opponents' hidden selections removed)."""
    if isinstance(position, ObservedPosition):
        if seat is not None and seat != position.seat:
            raise ValueError(f"seat: the observation is seat {position.seat}'s, got {seat!r}")
        return position
    if not hasattr(position, "observation") or not hasattr(position, "current_player"):
        raise ValueError(f"position: expected an engine State, CoreState or ObservedPosition, got "
                         f"{type(position).__name__}")
    if seat is None:
        seat = position.current_player()
        if seat < 0:
            raise ValueError("seat: no player decides here (chance node or game over); name the seat")
    if not _is_int(seat) or not 0 <= seat < position.num_players:
        raise ValueError(f"seat: expected an integer in [0, {position.num_players}), got {seat!r}")
    ref = position.to_reference() if hasattr(position, "to_reference") else position
    return ObservedPosition.from_state(ref, seat)


def _selection_pending(view: State, seat: int) -> bool:
    return view.phase == Phase.SELECT and view.active[seat] and not view.sel_done[seat]


class NotToAct(ValueError):
    """``seat`` has no decision pending in the position: ``actor`` is to act (a player, or ``engine.CHANCE`` /
    ``engine.TERMINAL``). A ``ValueError``, so callers of :func:`advise` need not tell it apart; the Advisor
    service answers it ``FAILED_PRECONDITION`` (the position is fine, the seat is not the one to ask)."""

    def __init__(self, seat: int, actor: int, message: str):
        super().__init__(message)
        self.seat = seat
        self.actor = actor


def decision_root(view: State, seat: int) -> State:
    """The state a search for ``seat``'s pending decision starts from: ``view`` (the seat's view, e.g.
    :meth:`ObservedPosition.to_state`) with ``seat`` the player to act.

    That is ``view`` itself when the seat is to act. Only the Strategy phase allows asking out of turn (the
    selection is simultaneous in the real game, R6): the players before the seat in seat order who have not
    finished selecting are marked done (their whole selection is then hidden and drawn by the determinization,
    which they could not see anyway). :func:`advise` goes through it; so do the Advisor's Suggest and
    LegalActions. :raises NotToAct: the seat has no decision pending (another player, chance or nobody is to act).
    """
    actor = view.current_player()
    if actor == seat:
        return view
    if actor == TERMINAL:
        raise NotToAct(seat, actor, "position: the game is over, there is nothing to advise")
    if _selection_pending(view, seat):
        d = view.to_dict()
        for p in range(view.num_players):
            if p < seat and d["active"][p] and not d["sel_done"][p]:
                d["sel_done"][p] = True
                d["sel_army"][p] = [False] * view.game.num_tokens
                d["sel_trade"][p] = -1
        d["cursor"] = seat
        try:
            return state_from_dict(view.game, d)
        except StateError as e:  # pragma: no cover - the fields are those of a validated state
            raise ValueError(f"position: cannot put seat {seat} to select ({e})") from None
    if actor == CHANCE:
        raise NotToAct(seat, actor, f"seat: no decision of seat {seat} is pending (a chance event comes first)")
    raise NotToAct(seat, actor, f"seat: no decision of seat {seat} is pending (player {actor} is to act)")


_seat_to_act = decision_root  # its former private name


def belief_list(game: Game, seat: int, raw: Mapping[int, Mapping[str, list[float]]], root: State,
                selected: list[int]) -> tuple[CardBelief, ...]:
    """Labelled beliefs of the opponents with a hidden selection in the searched root (``raw``: per opponent,
    P(Army Card t selected) and P(Trading Card c selected) over the worlds drawn; ``selected``: the root's
    observation's count of cards each player has selected)."""
    out = []
    army = game.ruleset.army
    trading = game.ruleset.trading_cards
    for q in sorted(raw):
        if q == seat or not (root.sel_done[q] or selected[q] > 0):
            continue  # nothing selected yet: nothing hidden to believe about
        for t, pr in enumerate(raw[q]["army"]):
            if root.army_held[q][t] and not root.revealed[q][t]:
                out.append(CardBelief(q, "army", t, army[t].name, float(pr)))
        seen = set()
        for c, pr in enumerate(raw[q]["trade"]):
            # cards of equal value are one choice (the sampler draws distinct values): merge them
            if root.trade_held[q][c] and not root.trade_revealed[q] and trading[c] not in seen:
                seen.add(trading[c])
                same = sum(float(raw[q]["trade"][d]) for d in range(len(trading)) if trading[d] == trading[c])
                out.append(CardBelief(q, "trading", c, f"{trading[c]} shillings", same))
    return tuple(out)


# ---------------------------------------------------------------------------------------------------------------
# What both backends share: the clock, the seeds, the budget split, the answer of one search
# ---------------------------------------------------------------------------------------------------------------
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


def search_advice(probe: State, seat: int, opts: SearchOptions, root_stats: Mapping[int, tuple[int, float]],
                  pv: list[tuple[int, str]], raw_beliefs: Mapping[int, Mapping[str, list[float]]],
                  selected: list[int], *, iterations: int, nodes: int, elapsed: float, search_seconds: float,
                  stopped_by: str | None, pool_full: bool, max_depth: int, worlds: int,
                  worker_iterations: tuple[int, ...]) -> Advice:
    """The :class:`Advice` of one search from ``probe`` (the seat's public root, the seat to act), whichever
    backend ran it: ``root_stats`` {action: (visits, reward sum of the seat)} merged over the workers, ``pv``
    the seat's most visited line (its first action is replaced by the best one when they differ)."""
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
        search_seconds=float(search_seconds), worker_iterations=tuple(int(x) for x in worker_iterations))
    return Advice(seat=seat, decision="selection" if probe.phase == Phase.SELECT else "plan", best=best,
                  best_text=probe.action_to_string(best), plan=tuple(PlannedAction(a, t) for a, t in plan),
                  alternatives=alternatives, beliefs=belief_list(probe.game, seat, raw_beliefs, probe, selected),
                  stats=stats)


def public_root(position: Any, seat: int) -> tuple[State, list[int]]:
    """(the seat's public root: a reference state rebuilt from its observation, the observation's selected
    counts) of a State/CoreState where ``seat`` is to act. :raises ValueError: if it is not."""
    if not hasattr(position, "observation") or not hasattr(position, "current_player"):
        raise ValueError(f"position: expected an engine State or CoreState, got {type(position).__name__}")
    actor = position.current_player()
    if actor == TERMINAL:
        raise ValueError("position: the game is over, there is nothing to search")
    if actor == CHANCE:
        raise ValueError("position: a chance node (no player decides here)")
    if not _is_int(seat) or not 0 <= seat < position.num_players:
        raise ValueError(f"seat: expected an integer in [0, {position.num_players}), got {seat!r}")
    if seat != actor:
        raise ValueError(f"seat: one search advises the player to act ({actor}), got {seat} (feudo_ai.advise "
                         f"also answers a seat whose secret selection is pending)")
    from .sampler import observation_fields

    ref = position.to_reference() if hasattr(position, "to_reference") else position
    obs = ref.observation(seat)
    return state_from_dict(ref.game, observation_fields(obs)), list(obs["selected_count"])


def _backend(opts: SearchOptions):
    if opts.backend == "c":
        from . import fast_search

        return fast_search.search
    from . import ismcts

    return ismcts.search


def advise(position: Position, seat: int | None = None, options: SearchOptions | None = None, *,
           cancel: threading.Event | None = None) -> Advice:
    """Advice for ``seat`` (default: the player to act) in ``position``.

    :param position: a full :class:`engine.State` or ``CoreState`` (projected to the seat's observation first), or
        an :class:`ObservedPosition` (a seat's observation).
    :param seat: a seat whose decision is pending: the player to act, or in the Strategy phase any seat that has
        not finished its secret selection.
    :param options: :class:`SearchOptions` (default: ``SearchOptions()``, 5,000 iterations of the C MO-ISMCTS).
    :param cancel: a :class:`threading.Event`; setting it stops the search within milliseconds (the answer is then
        the best found so far, ``stats.stopped_by == "cancelled"``).
    :raises ValueError: a bad option, seat or a position where the seat has nothing to decide.
    :raises StateError: an inconsistent position.
    :raises ImportError: ``backend="c"`` without the compiled extensions.
    """
    started = now()
    opts = SearchOptions() if options is None else options
    if not isinstance(opts, SearchOptions):
        raise ValueError(f"options: expected SearchOptions, got {type(opts).__name__}")
    opts.validate()
    if cancel is not None and not isinstance(cancel, threading.Event):
        raise ValueError(f"cancel: expected a threading.Event, got {type(cancel).__name__}")
    observed = _seat_view(position, seat)
    view, seat = observed.to_state(), observed.seat
    root = decision_root(view, seat)
    decision = "selection" if root.phase == Phase.SELECT else "plan"

    # The whole decision: the first search's principal variation; a selection cut short by a small budget is
    # completed by searching again after the picks found so far (the seat's own picks, known to it).
    run = _backend(opts)
    deadline = deadline_of(opts, started)
    plan: list[PlannedAction] = []
    first: Advice | None = None
    state = root
    searches = iterations = nodes = max_depth = worlds = 0
    stopped_by = None
    pool_full = False
    while True:
        it = opts.budget
        if searches and it is not None:
            it = max(opts.threads, it // 4)
        sub = opts.replace(iterations=it, seconds=None, deadline=deadline, seed=derive_seed(opts.seed, searches))
        one = run(state, seat, sub, cancel=cancel)
        searches += 1
        st = one.stats
        iterations += st.iterations
        nodes += st.nodes
        stopped_by = st.stopped_by
        pool_full = pool_full or st.pool_full
        max_depth = max(max_depth, st.max_depth)
        worlds += st.worlds_sampled
        if first is None:
            first = one
        plan.extend(one.plan)
        if decision != "selection":
            break
        state = state.clone()
        for p in one.plan:
            state.apply_action(p.action)
        if state.phase != Phase.SELECT or state.current_player() != seat:
            break
        if stopped_by == "cancelled" or (deadline is not None and now() >= deadline):
            break
    if decision == "selection":
        # a cancelled or out-of-time search still answers a whole selection: the most visited picks are completed
        # by the first legal pick (ascending, as the engine asks for them)
        while state.phase == Phase.SELECT and state.current_player() == seat:
            a = state.legal_actions()[0]
            plan.append(PlannedAction(a, state.action_to_string(a)))
            state = state.clone()
            state.apply_action(a)
    elapsed = now() - started
    assert first is not None
    stats = replace(first.stats, algorithm=opts.algorithm, backend=opts.backend, iterations=int(iterations),
                    nodes=int(nodes), elapsed=elapsed, iterations_per_s=iterations / elapsed if elapsed > 0 else None,
                    stopped_by=stopped_by, limited=stopped_by in ("time", "cancelled"), pool_full=pool_full,
                    max_depth=int(max_depth), worlds_sampled=int(worlds), seed=opts.seed, searches=searches)
    return replace(first, seat=seat, decision=decision, best=plan[0].action, best_text=plan[0].text,
                   plan=tuple(plan), stats=stats)
