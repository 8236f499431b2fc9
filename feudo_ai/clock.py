"""A per-game clock for the search bots: ``ismcts:game_seconds=600`` (issue 14).

The seat has ``game_seconds`` of thinking time for the whole game. Before each searched decision
:meth:`GameClock.options_for` gives the search a slice of what is left, in proportion to the decision's weight
(:func:`decision_weight`) over the weight of the decisions still expected this game (:meth:`GameClock.expected_units`):

- a secret selection (R6: three Army Cards and a Trading Card, the turn's plan) weighs :data:`W_SELECTION`;
- a decision of the attack phase (R11: declaring, joining, advancing) weighs :data:`W_ATTACK`: a battle lost or
  won moves Victory Points at once;
- a decision with two legal actions weighs :data:`W_NARROW`; one legal action is never searched (weight 0);
- anything else (castle, order, reveal, move, march, Milady) weighs 1.

The decisions still expected are counted from the turns left (the ruleset's ``turns``; at least the current one
during the R19 tie-break) and the seat's own running average of searched weight per turn in this game (a prior
of :data:`PRIOR_UNITS_PER_TURN` before it has one). A slice is at most :data:`MAX_SHARE` of what is left, at least
:data:`MIN_SLICE` seconds.

Never over the total: :data:`RESERVE` of the total (at most 1 s) is kept back for what happens outside the
search loop (projection of the observation, setup), every search is given a deadline within what is left
(so a search never runs past the clock, whatever the weights), and once less than :data:`MIN_SLICE` is left the
clock says so (:meth:`GameClock.exhausted`) and the bot plays its fallback without a search. Time is measured by
the injected ``clock`` (default :func:`feudo_ai.advice.now`), so tests drive it with a fake clock.
"""

from __future__ import annotations

import math
from typing import Callable

from engine.state import Phase

from .advice import SearchOptions, now

W_SELECTION = 4.0
W_ATTACK = 2.0
W_NARROW = 0.5
PRIOR_UNITS_PER_TURN = 10.0  # ~8 searched decisions a seat a turn in 2 players, the selection weighing 4
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
        self.reserve = min(RESERVE * self.total, 1.0)
        self.used = 0.0  # seconds spent in searched decisions so far
        self.slices: list[float] = []  # the slice given to each search (statistics, tests)
        self._started: float | None = None
        self._turn = -1  # the turn of the last decision (a turn that goes back: a new game)
        self._turns_seen = 0
        self._units_done = 0.0  # weight searched in the finished turns
        self._units_turn = 0.0  # weight searched in the current turn

    @property
    def left(self) -> float:
        """Seconds left for searches (the reserve excluded)."""
        return max(0.0, self.total - self.reserve - self.used)

    def _observe_turn(self, state) -> None:
        turn = int(state.turn) + (int(getattr(state, "tiebreak", 0) or 0))
        if turn < self._turn:  # a new game with the same bot: a fresh clock
            self.used = 0.0
            self._turns_seen = 0
            self._units_done = self._units_turn = 0.0
            self.slices.clear()
            self._turn = -1
        if turn != self._turn:
            if self._turn >= 0:
                self._units_done += self._units_turn
                self._turns_seen += 1
            self._units_turn = 0.0
            self._turn = turn

    def expected_units(self, state, weight: float) -> float:
        """The weight of the searched decisions still expected this game, this one included."""
        per_turn = self._units_done / self._turns_seen if self._turns_seen else PRIOR_UNITS_PER_TURN
        per_turn = max(per_turn, 1.0)
        turns = max(1, int(state.game.ruleset.turns) - max(int(state.turn), 1) + 1)
        if getattr(state, "tiebreak", 0):
            turns = 1
        # this turn's rest (at least this decision) and the turns after it
        this_turn = max(weight, per_turn - self._units_turn)
        return this_turn + (turns - 1) * per_turn

    def slice_for(self, state) -> float:
        """Seconds for the search of the decision in ``state`` (0.0: none left, play without a search)."""
        self._observe_turn(state)
        w = decision_weight(state)
        left = self.left
        if w <= 0 or left < MIN_SLICE:
            return 0.0
        share = min(MAX_SHARE, w / self.expected_units(state, w))
        return min(left, max(MIN_SLICE, left * share))

    def exhausted(self, state) -> bool:
        return self.slice_for(state) <= 0.0

    def options_for(self, state, base: SearchOptions) -> SearchOptions:
        """``base`` with this decision's time limit; starts the clock (:meth:`stop` stops it)."""
        sec = self.slice_for(state)
        if sec <= 0.0:
            raise RuntimeError("game clock: no time left (ask exhausted() first)")
        self.slices.append(sec)
        self._units_turn += decision_weight(state)
        self._started = self.clock()
        return base.replace(iterations=None, seconds=sec, deadline=None)

    def stop(self) -> float:
        """Stop the clock after a search; returns the seconds it took."""
        if self._started is None:
            return 0.0
        spent = max(0.0, self.clock() - self._started)
        self._started = None
        self.used += spent
        return spent
