"""A position as the search takes it: one seat's view, validated and prepared once per call.

Honesty (R22, R25): the search is handed the seat's observation only. A full state is projected to
``state.observation(seat)`` before anything else looks at it, so two states that differ only in cards hidden from
the seat give the same advice.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Union

from engine.errors import StateError
from engine.serialize import state_from_dict
from engine.state import CHANCE, TERMINAL, Game, Phase, State

from feudo_ai.sampler import observation_fields

__all__ = ["ObservedPosition", "Position", "PreparedPosition", "prepare", "prepare_root", "check_to_act", "NotToAct",
           "decision_root", "seat_view"]


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


class SeatObservation:
    """What a seat's observed position has whatever its game (:class:`ObservedPosition`, Fief 2's
    ``ObservedFief2Position``): a frozen dataclass of ``game`` and ``observation`` (``state.observation(seat)``)."""

    def _checked_seat(self) -> int:
        """The observation's seat, the observation an object (:raises StateError: naming the field)."""
        obs, n = self.observation, self.game.num_players
        if not isinstance(obs, Mapping):
            raise StateError(f"observation: expected an object, got {type(obs).__name__}")
        seat = obs.get("seat")
        if not _is_int(seat) or not 0 <= seat < n:
            raise StateError(f"observation.seat: expected an integer in [0, {n}), got {seat!r}")
        return seat

    @classmethod
    def from_state(cls, state: Any, seat: int):
        """``seat``'s view of a full state of the game (for Feudo a :class:`engine.State` or ``CoreState``)."""
        return cls(state.game, state.observation(seat))

    @property
    def seat(self) -> int:
        return int(self.observation["seat"])


@dataclass(frozen=True)
class ObservedPosition(SeatObservation):
    """A position as one seat sees it: the game and ``state.observation(seat)`` (R22).

    What a front-end that referees its own game, or a player at a real table, can give: it holds no card hidden
    from ``observation["seat"]``. :meth:`to_state` validates it through the engine's loader.
    """

    game: Game
    observation: Mapping[str, Any]

    def __post_init__(self) -> None:
        self._checked_seat()
        obs, n = self.observation, self.game.num_players
        count = obs.get("selected_count")
        if (not isinstance(count, list) or len(count) != n
                or not all(_is_int(c) and 0 <= c <= self.game.num_tokens for c in count)):
            raise StateError(f"observation.selected_count: expected {n} integers in [0, {self.game.num_tokens}], "
                             f"got {count!r:.80}")

    def to_state(self) -> State:
        """A reference state holding only this seat's knowledge. :raises StateError: if inconsistent."""
        return state_from_dict(self.game, observation_fields(dict(self.observation)))


Position = Union[State, ObservedPosition, Any]  # Any: engine._core.CoreState


# ---------------------------------------------------------------------------------------------------------------
def seat_view(position: Position, seat: int | None) -> ObservedPosition:
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


@dataclass(frozen=True, eq=False)
class PreparedPosition:
    """One seat's pending decision, validated and built once per call (:func:`prepare`): what both backends
    search from, so no layer rebuilds the position.

    ``root`` is the reference state of the seat's view (opponents' hidden cards blank) with the seat to act
    (:func:`decision_root`); ``observation`` is the seat's observation of that root, ``selected`` its count of
    cards each player has selected (the beliefs are about those); :meth:`core` is the compiled core's copy of the
    root, made on first use and kept, so the C search and a caller's legality check share it.
    """

    seat: int
    root: State
    observation: Mapping[str, Any]
    _core: list = field(default_factory=list, repr=False)

    @property
    def game(self) -> Game:
        return self.root.game

    @property
    def selected(self) -> list[int]:
        return list(self.observation["selected_count"])

    @property
    def decision(self) -> str:
        """"selection" (the Strategy phase, R6: the whole secret selection) or "plan" (any other decision)."""
        return "selection" if self.root.phase == Phase.SELECT else "plan"

    def core(self):
        """The root on the compiled core (:class:`engine.core.CoreState`), built once.

        :raises StateError: the position breaks the core's bounds. :raises ImportError: the core is not built."""
        if not self._core:
            from engine.core import CoreState  # the compiled core is optional: only the C backend needs it

            self._core.append(CoreState.from_reference(self.root))
        return self._core[0]

    def after(self, actions) -> "PreparedPosition":
        """The seat's next decision after playing ``actions`` (its own picks, known to it) from the root, still
        the seat to act. :raises ValueError: if it is not."""
        state = self.root.clone()
        for a in actions:
            state.apply_action(a)
        return prepare_root(state, self.seat)


def check_to_act(position: Any, seat: int | None) -> int:
    """The seat of a search that must be the player to act in ``position`` (a State, CoreState or prepared
    root; default: the player to act). :raises ValueError: a chance node, the game's end, or another seat."""
    if isinstance(position, PreparedPosition):
        position = position.root
    if not hasattr(position, "current_player"):
        raise ValueError(f"position: expected an engine State or CoreState, got {type(position).__name__}")
    actor = position.current_player()
    if actor == TERMINAL:
        raise ValueError("position: the game is over, there is nothing to search")
    if actor == CHANCE:
        raise ValueError("position: a chance node (no player decides here)")
    if seat is None:
        return actor
    if not _is_int(seat) or not 0 <= seat < position.num_players:
        raise ValueError(f"seat: expected an integer in [0, {position.num_players}), got {seat!r}")
    if actor != seat:
        raise ValueError(f"seat: one search advises the player to act ({actor}), got {seat} (feudo_ai.advise "
                         f"also answers a seat whose secret selection is pending)")
    return seat


def prepare_root(root: State, seat: int) -> PreparedPosition:
    """A prepared position from ``root``, a seat's view where the seat is to act (e.g. :func:`decision_root`'s
    answer, already checked by its caller). :raises ValueError: if the seat is not to act."""
    check_to_act(root, seat)
    return PreparedPosition(seat, root, root.observation(seat))


def prepare(position: "Position | PreparedPosition", seat: int | None = None) -> PreparedPosition:
    """``seat``'s pending decision in ``position``, validated and built once: a full :class:`engine.State` or
    ``CoreState`` is projected to the seat's observation first (R22), an :class:`ObservedPosition` is loaded
    through the engine's validation; a :class:`PreparedPosition` is returned as it is.

    :param seat: the seat asking (default: the player to act): the player to act, or in the Strategy phase any
        seat that has not finished its secret selection (R6).
    :raises ValueError: a bad seat; :class:`NotToAct` (a ValueError) when the seat has no decision pending.
    :raises StateError: an inconsistent position."""
    if isinstance(position, PreparedPosition):
        if seat is not None and seat != position.seat:
            raise ValueError(f"seat: the prepared position is seat {position.seat}'s, got {seat!r}")
        return position
    observed = seat_view(position, seat)
    seat = observed.seat
    return prepare_root(decision_root(observed.to_state(), seat), seat)
