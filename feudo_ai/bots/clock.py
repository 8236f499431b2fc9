"""A per-game clock for the search bots: ``ismcts:game_seconds=600``.

The seat has ``game_seconds`` of thinking time for the whole game. Before each searched decision
:meth:`GameClock.options_for` gives the search a slice of what is left, in proportion to the decision's weight
(:func:`decision_weight`) over the weight of the decisions still expected this game (:meth:`GameClock.expected_units`):

- a secret selection (R6: three Army Cards and a Trading Card, the turn's plan) weighs :data:`W_SELECTION`;
- a decision of the attack phase (R11: declaring, joining, advancing) weighs :data:`W_ATTACK`: a battle lost or
  won moves Victory Points at once;
- a decision with two legal actions weighs :data:`W_NARROW`; one legal action is never searched (weight 0);
- anything else (castle, order, reveal, move, march, Milady) weighs 1.

The decisions still expected are counted from the turns left (the ruleset's ``turns``; at least the current one
during the R19 tie-break) and the seat's own running averages over its turns so far in this game (turn 0, the
Castles and the order, excluded; blended with a prior of :data:`PRIOR_UNITS_PER_TURN` and
:data:`PRIOR_DECISIONS_PER_TURN`). A slice is at most :data:`MAX_SHARE` of what is left, at least
:data:`MIN_SLICE` seconds.

The clock is charged the whole of each of the seat's decisions (:meth:`GameClock.begin` to :meth:`GameClock.end`:
the search, and what the bot does around it: the observation, following a plan, a fallback move). What is not
search time is the bot's overhead; its running mean times the decisions still expected (and at least
:data:`RESERVE` of the total, at most 1 s) is kept back, so the searches leave room for the rest of the game. Each
search is given a deadline within what is left, and once less than :data:`MIN_SLICE` is left the clock says so
(:meth:`GameClock.exhausted`) and the bot plays its fallback without a search. Time is read from the injected
``clock`` (default :func:`feudo_ai.advice.now`), so tests drive it with a fake clock.
"""

from __future__ import annotations

import math
from typing import Callable

from engine.state import Phase

from feudo_ai.search.answer import now
from feudo_ai.settings import SearchOptions

W_SELECTION = 4.0
W_ATTACK = 2.0
W_NARROW = 0.5
PRIOR_UNITS_PER_TURN = 8.0  # ~6 searched decisions a seat a turn (2 players, plans followed), a selection weighing 4
PRIOR_DECISIONS_PER_TURN = 10.0  # decisions with two or more legal actions a seat a turn (searched or not)
PRIOR_WEIGHT = 2.0  # the priors count as this many turns in the running averages
MAX_SHARE = 0.25  # at most this share of the time left on one decision
MIN_SLICE = 0.005  # seconds: below this a search is not worth starting
RESERVE = 0.02  # share of the total kept back for work outside the search loops
MAX_GAME_SECONDS = 86_400.0

_ATTACK_PHASES = (Phase.ATTACK, Phase.ATTACK_JOIN, Phase.ADVANCE)


def decision_weight(state, legal: int | None = None) -> float:
    """The weight of the decision of the player to act in ``state`` (see the module docstring)."""
    n = len(state.legal_actions()) if legal is None else legal
    if n <= 1:
        return 0.0
    if state.phase == Phase.SELECT:
        return W_SELECTION
    if state.phase in _ATTACK_PHASES:
        return W_ATTACK
    if n == 2:
        return W_NARROW
    return 1.0


class GameClock:
    """Thinking time of one seat over one game (see the module docstring).

    :param total: seconds for the game, in (0, :data:`MAX_GAME_SECONDS`].
    :param clock: a function returning seconds (monotonic); default :func:`feudo_ai.advice.now`.
    :raises ValueError: naming ``game_seconds`` or ``clock``.
    """

    def __init__(self, total: float, clock: Callable[[], float] | None = None):
        if isinstance(total, bool) or not isinstance(total, (int, float)) or not math.isfinite(total) \
                or not 0 < total <= MAX_GAME_SECONDS:
            raise ValueError(f"game_seconds: expected a number of seconds in (0, {MAX_GAME_SECONDS:g}], "
                             f"got {total!r}")
        if clock is not None and not callable(clock):
            raise ValueError(f"clock: expected a function returning seconds, got {type(clock).__name__}")
        self.total = float(total)
        self.clock = clock or now
        self._reset()

    def _reset(self) -> None:
        self.used = 0.0  # seconds charged so far (whole decisions)
        self.searching = 0.0  # of which in searches
        self.slices: list[float] = []  # the slice given to each search (statistics, tests)
        self._begun: float | None = None
        self._search_started: float | None = None
        self._search_spent = 0.0
        self._decisions = 0  # decisions charged (searched or not)
        self._turn = -1  # the turn of the last decision (a turn that goes back: a new game)
        self._turns_seen = 0  # finished turns >= 1
        self._units_done = 0.0  # weight searched in the finished turns >= 1
        self._count_done = 0  # decisions in the finished turns >= 1
        self._units_turn = 0.0  # weight searched in the current turn
        self._count_turn = 0  # decisions in the current turn

    @property
    def overhead(self) -> float:
        """Mean seconds of a decision spent outside the search (0 before the first one)."""
        return (self.used - self.searching) / self._decisions if self._decisions else 0.0

    def reserve(self, state=None) -> float:
        """Seconds kept back for the overhead of the decisions still expected."""
        fixed = min(RESERVE * self.total, 1.0)
        if state is None:
            return fixed
        return max(fixed, self.overhead * self.expected_decisions(state))

    def left(self, state=None) -> float:
        """Seconds left for searches (the reserve excluded)."""
        return max(0.0, self.total - self.used - self.reserve(state))

    def _turns_left(self, state) -> int:
        if getattr(state, "tiebreak", 0):
            return 1
        return max(1, int(state.game.ruleset.turns) - max(int(state.turn), 1) + 1)

    def _observe_turn(self, state) -> None:
        turn = int(state.turn) + (int(getattr(state, "tiebreak", 0) or 0))
        if turn < self._turn:  # a new game with the same bot: a fresh clock
            self._reset()
        if turn != self._turn:
            if self._turn >= 1:  # turn 0 (Castles, order) is no sample of a turn
                self._units_done += self._units_turn
                self._count_done += self._count_turn
                self._turns_seen += 1
            self._units_turn = 0.0
            self._count_turn = 0
            self._turn = turn

    def _per_turn(self, done: float, prior: float) -> float:
        return (done + prior * PRIOR_WEIGHT) / (self._turns_seen + PRIOR_WEIGHT)

    def expected_units(self, state, weight: float) -> float:
        """The weight of the searched decisions still expected this game, this one included."""
        per_turn = max(1.0, self._per_turn(self._units_done, PRIOR_UNITS_PER_TURN))
        this_turn = max(weight, per_turn - self._units_turn)  # this turn's rest, at least this decision
        return this_turn + (self._turns_left(state) - 1) * per_turn

    def expected_decisions(self, state) -> float:
        """Decisions of the seat (searched or not) still expected this game, this one included."""
        per_turn = max(1.0, self._per_turn(self._count_done, PRIOR_DECISIONS_PER_TURN))
        return max(1.0, per_turn - self._count_turn) + (self._turns_left(state) - 1) * per_turn

    def slice_for(self, state) -> float:
        """Seconds for the search of the decision in ``state`` (0.0: none left, play without a search)."""
        self._observe_turn(state)
        w = decision_weight(state)
        left = self.left(state)
        if w <= 0 or left < MIN_SLICE:
            return 0.0
        share = min(MAX_SHARE, w / self.expected_units(state, w))
        return min(left, max(MIN_SLICE, left * share))

    def exhausted(self, state) -> bool:
        return self.slice_for(state) <= 0.0

    def begin(self, state) -> None:
        """A decision of the seat starts (its whole time is charged at :meth:`end`)."""
        self._observe_turn(state)
        self._begun = self.clock()
        self._search_spent = 0.0

    def options_for(self, state, base: SearchOptions) -> SearchOptions:
        """``base`` with this decision's time limit; starts the search's clock (:meth:`stop` stops it)."""
        sec = self.slice_for(state)
        if sec <= 0.0:
            raise RuntimeError("game clock: no time left (ask exhausted() first)")
        self.slices.append(sec)
        self._units_turn += decision_weight(state)
        self._search_started = self.clock()
        return base.replace(iterations=None, seconds=sec, deadline=None)

    def stop(self) -> float:
        """Stop the search's clock; returns the seconds the search took."""
        if self._search_started is None:
            return 0.0
        spent = max(0.0, self.clock() - self._search_started)
        self._search_started = None
        self._search_spent += spent
        return spent

    def end(self) -> float:
        """The decision is made: charge its whole time (search and overhead); returns it."""
        if self._begun is None:
            return 0.0
        spent = max(0.0, self.clock() - self._begun)
        self._begun = None
        self.used += spent
        self.searching += min(spent, self._search_spent)
        self._decisions += 1
        self._count_turn += 1
        return spent
