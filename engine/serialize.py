"""Reading states back from JSON: every field validated by :mod:`engine.validate` (bad input names the field
path, e.g. ``state.won[3][2]: ...``, and changes nothing).

This module sits above :mod:`engine.state` (it builds and checks a :class:`State`); it installs
:func:`state_from_json` as :meth:`State.from_json` when imported (see :func:`engine.state.install_view`)."""

from __future__ import annotations

from typing import Any

from .board import GameMap
from .checker import Checker, parse_json
from .errors import DataFileError, StateError
from .ruleset import ruleset_from_dict
from .schema import STATE_FIELDS, STATE_FORMAT
from .state import Game, State, install_view
from .validate import check_playable, check_state_fields

_DOC_KEYS = ("format", "ruleset", "map", "players", "state")


def state_from_dict(game: Game, d: Any) -> State:
    """Build a :class:`State` of ``game`` from :meth:`State.to_dict` output, validating every field and the
    invariants of its phase (:func:`engine.validate.check_state_fields`)."""
    fields = check_state_fields(game, d)
    state = State(game)
    for name in STATE_FIELDS:
        setattr(state, name, fields[name])
    state.vp_log = fields["vp_log"]
    state._legal = None
    check_playable(state)
    return state


def state_from_json(text: str | bytes | dict) -> State:
    """Read :meth:`State.to_json` output (text, UTF-8 bytes or the parsed dict)."""
    data = parse_json(text, "state", StateError) if isinstance(text, (str, bytes, bytearray)) else text
    ck = Checker("", StateError, sep="")
    if not isinstance(data, dict):
        raise StateError(f'format: expected a "{STATE_FORMAT}" object, got {type(data).__name__}')
    if data.get("format") != STATE_FORMAT:
        raise StateError(f'format: expected "{STATE_FORMAT}"')
    ck.obj(data, "", _DOC_KEYS, required=_DOC_KEYS)
    try:
        ruleset = ruleset_from_dict(data["ruleset"], source="state.ruleset")
        game_map = GameMap.from_dict(data["map"], source="state.map")
    except DataFileError as e:
        raise StateError(str(e)) from None
    return state_from_dict(Game(ruleset, game_map, data["players"]), data["state"])


install_view("from_json", state_from_json)
