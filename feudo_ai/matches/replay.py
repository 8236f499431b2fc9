"""A game record replayed to an action count and seen as one seat saw it then, or as a spectator (R22).

The record is a finished match's (its actions are public once it is over) or a "feudo-game/1" document a client
sends whole. Either way every action is replayed through the engine first, so a bad record is refused before
anything is shown, with the field or the action named; then only the viewer's projection of the position at the
asked count leaves this module: the seat's observation (its own picks only) or the public facts, and the action
that led there as the viewer saw it (another seat's pick hidden).
"""

from __future__ import annotations

from typing import Any

from engine.actions import action_info
from engine.checker import parse_json
from engine.errors import DataFileError, IllegalActionError, StateError
from engine.history import apply_logged
from engine.outcomes import outcomes
from engine.record import GameRecord

from .errors import InvalidArgument
from .match import event_as_seen, public_view

MAX_RECORD_CHARS = 1_000_000  # under the server's 1 MiB message cap; a 4-player game to turn 20 is ~60 kB
MAX_RECORD_ACTIONS = 100_000  # as a History's entries


def record_start(record_json: str, path: str = "record_json"):
    """The start position and actions of a "feudo-game/1" record. :raises InvalidArgument: naming the field."""
    if len(record_json) > MAX_RECORD_CHARS:
        raise InvalidArgument(f"{path}: at most {MAX_RECORD_CHARS} characters, got {len(record_json)}")
    try:
        doc = parse_json(record_json, path, InvalidArgument)
        record = GameRecord.from_dict(doc, source=path)
    except (DataFileError, StateError, TypeError, ValueError) as e:
        if isinstance(e, InvalidArgument):
            raise
        text = str(e)
        raise InvalidArgument(text if text.startswith(path) else f"{path}: {text}") from None
    if len(record.actions) > MAX_RECORD_ACTIONS:
        raise InvalidArgument(f"{path}: actions: at most {MAX_RECORD_ACTIONS}, got {len(record.actions)}")
    return record.initial_state(), list(record.actions)


def replay_view(start, actions: list[int], action_count: int, seat: int | None,
                path: str = "record_json") -> dict[str, Any]:
    """The position after ``action_count`` of ``actions`` from ``start`` as ``seat`` saw it (``None``: the public
    view), and the action that led there as that viewer saw it. Every action is checked, whatever the count."""
    n = start.num_players
    if seat is not None and not 0 <= seat < n:
        raise InvalidArgument(f"seat: expected 0..{n - 1} or unset (the public view), got {seat}")
    if action_count > len(actions):
        raise InvalidArgument(f"action_count: at most {len(actions)} (the record's actions), got {action_count}")
    state = start.clone()
    at = state.clone() if action_count == 0 else None
    event = None
    for i, a in enumerate(actions):
        if state.is_terminal():
            raise InvalidArgument(f"{path}: actions[{i}]: the game ended after {i} actions; {len(actions) - i} more")
        before = state.clone() if i == action_count - 1 else None
        try:
            entry = apply_logged(state, a)
        except (IllegalActionError, StateError, ValueError, TypeError, OverflowError, IndexError) as e:
            raise InvalidArgument(f"{path}: actions[{i}]: {e}") from None
        if before is not None:  # the event of the last action shown: its text, structured action and outcomes
            own = outcomes(before, a, state, viewer=entry.player) if entry.pick else None
            detail = (int(before.phase), before.turn, action_info(before, a), outcomes(before, a, state), own)
            event = event_as_seen(i, entry, before.action_to_string(a), detail, seat,
                                  state.game.ruleset.trading_cards)
        if i == action_count - 1:
            at = state.clone()
    obs = public_view(at) if seat is None else at.observation(seat)
    return {"action_count": action_count, "total_actions": len(actions), "observation": obs, "event": event,
            "finished": at.is_terminal(), "current_player": at.current_player(), "game": at.game}
