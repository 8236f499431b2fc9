"""Reading states back from JSON, with every field validated (bad input names the field, changes nothing)."""

from __future__ import annotations

import json
from typing import Any

from .board import GameMap
from .errors import DataFileError, StateError
from .ruleset import ruleset_from_dict
from .state import _FIELDS, DEAD, Game, Phase, State


class _Check:
    def __init__(self, n: int, k: int, terr: int, sites: int, trading: int, kinds: int):
        self.n, self.k, self.terr, self.sites, self.trading, self.kinds = n, k, terr, sites, trading, kinds

    @staticmethod
    def fail(field: str, expected: str, got: Any) -> StateError:
        text = repr(got)
        return StateError(f"state.{field}: expected {expected}, got {text[:80]}")

    def int_in(self, field: str, v: Any, lo: int, hi: int | None) -> int:
        if isinstance(v, bool) or not isinstance(v, int) or v < lo or (hi is not None and v > hi):
            raise self.fail(field, f"an integer in [{lo}, {'inf' if hi is None else hi}]", v)
        return v

    def boolean(self, field: str, v: Any) -> bool:
        if not isinstance(v, bool):
            raise self.fail(field, "true or false", v)
        return v

    def listof(self, field: str, v: Any, length: int | None, item) -> list:
        if not isinstance(v, list) or (length is not None and len(v) != length):
            raise self.fail(field, f"a list of {length if length is not None else 'any number of'} items", v)
        return [item(f"{field}[{i}]", x) for i, x in enumerate(v)]


def state_from_dict(game: Game, d: Any) -> State:
    """Build a :class:`State` of ``game`` from :meth:`State.to_dict` output, validating every field."""
    if not isinstance(d, dict):
        raise StateError(f"state: expected an object, got {type(d).__name__}")
    missing = [f for f in _FIELDS if f not in d]
    if missing:
        raise StateError(f"state.{missing[0]}: missing")
    n, k, T = game.num_players, game.num_tokens, game.num_territories
    c = _Check(n, k, T, len(game.map.castle_sites), len(game.ruleset.trading_cards), len(game.ruleset.plague_cards))
    player = lambda f, v: c.int_in(f, v, 0, n - 1)  # noqa: E731
    token = lambda f, v: c.int_in(f, v, 0, k - 1)  # noqa: E731
    bools_k = lambda f, v: c.listof(f, v, k, c.boolean)  # noqa: E731
    out: dict[str, Any] = {}
    out["turn"] = c.int_in("turn", d["turn"], 0, None)
    out["phase"] = c.int_in("phase", d["phase"], 0, len(Phase) - 1)
    out["tiebreak"] = c.int_in("tiebreak", d["tiebreak"], 0, None)
    out["active"] = c.listof("active", d["active"], n, c.boolean)
    out["order"] = c.listof("order", d["order"], None, player)
    out["castle"] = c.listof("castle", d["castle"], n, lambda f, v: c.int_in(f, v, -1, c.sites - 1))
    out["placed"] = c.listof("placed", d["placed"], None, player)
    out["decider"] = c.int_in("decider", d["decider"], -1, n - 1)
    out["vp"] = c.listof("vp", d["vp"], n, lambda f, v: c.int_in(f, v, -10**6, 10**6))
    out["loc"] = c.listof("loc", d["loc"], n, lambda f, v: c.listof(f, v, k, lambda f2, x: c.int_in(f2, x, DEAD, T - 1)))
    for name in ("stricken", "entered", "army_held", "sel_army", "revealed", "march_over", "attacked"):
        out[name] = c.listof(name, d[name], n, bools_k)
    out["rest_until"] = c.listof("rest_until", d["rest_until"], n,
                                 lambda f, v: c.listof(f, v, k, lambda f2, x: c.int_in(f2, x, 0, None)))
    out["trade_held"] = c.listof("trade_held", d["trade_held"], n, lambda f, v: c.listof(f, v, c.trading, c.boolean))
    out["sel_trade"] = c.listof("sel_trade", d["sel_trade"], n, lambda f, v: c.int_in(f, v, -1, c.trading - 1))
    out["sel_done"] = c.listof("sel_done", d["sel_done"], n, c.boolean)
    out["trade_revealed"] = c.listof("trade_revealed", d["trade_revealed"], n, c.boolean)
    out["owner"] = c.listof("owner", d["owner"], T, lambda f, v: c.int_in(f, v, -1, n - 1))
    out["plague_village"] = c.int_in("plague_village", d["plague_village"], -1, T - 1)
    out["plague_drawn"] = c.listof("plague_drawn", d["plague_drawn"], c.kinds, lambda f, v: c.int_in(f, v, 0, None))
    out["plague_history"] = c.listof("plague_history", d["plague_history"], None,
                                     lambda f, v: c.int_in(f, v, 0, c.kinds - 1))
    out["plague_card"] = c.int_in("plague_card", d["plague_card"], -1, c.kinds - 1)
    out["king"] = c.boolean("king", d["king"])
    out["charmed"] = c.listof("charmed", d["charmed"], n, c.boolean)
    out["merc_moved"] = c.listof("merc_moved", d["merc_moved"], n, lambda f, v: c.int_in(f, v, 0, k))

    def won_item(f: str, v: Any) -> list:
        if not isinstance(v, list) or len(v) != 4:
            raise c.fail(f, "[player, territory, [tokens], baron_took_part]", v)
        return [player(f + "[0]", v[0]), c.int_in(f + "[1]", v[1], 0, T - 1),
                c.listof(f + "[2]", v[2], None, token), c.boolean(f + "[3]", v[3])]

    out["won"] = c.listof("won", d["won"], None, won_item)
    out["cursor"] = c.int_in("cursor", d["cursor"], -1, max(n, 1))
    out["round"] = c.int_in("round", d["round"], -1, None)
    out["token"] = c.int_in("token", d["token"], -1, k - 1)
    out["shillings"] = c.int_in("shillings", d["shillings"], 0, None)
    out["target"] = c.int_in("target", d["target"], -1, T - 1)
    out["joiners"] = c.listof("joiners", d["joiners"], None, token)
    out["advanced"] = c.listof("advanced", d["advanced"], None, token)
    out["winners"] = c.listof("winners", d["winners"], None, player)
    for name in ("order", "placed", "winners"):
        if len(set(out[name])) != len(out[name]):
            raise c.fail(name, "distinct players", out[name])
    for p in range(n):
        for kind, count in zip(game.ruleset.plague_cards, out["plague_drawn"]):
            if count > kind.count:
                raise c.fail(f"plague_drawn[{kind.index}]", f"at most {kind.count}", count)
    log = d.get("vp_log", [])
    # Every entry is checked (a raw int() on a malformed entry used to raise TypeError/ValueError).
    if not isinstance(log, list) or not all(
            isinstance(e, list) and len(e) == 3 and isinstance(e[0], int) and not isinstance(e[0], bool)
            and 0 <= e[0] < n and isinstance(e[1], int) and not isinstance(e[1], bool) and isinstance(e[2], str)
            for e in log):
        raise StateError("state.vp_log: expected a list of [player, delta, reason]")

    state = State(game)
    for name, value in out.items():
        setattr(state, name, value)
    state.vp_log = [(int(p), int(dv), str(r)) for p, dv, r in log]
    # A structurally valid state can still be inconsistent (e.g. a phase that needs an order of play with
    # none); asking it for its actor and legal actions exercises every index it would use.
    try:
        state.current_player()
        state.legal_actions()
    except (IndexError, KeyError, TypeError, ValueError, ZeroDivisionError) as e:
        raise StateError(f"state: inconsistent for phase {Phase(state.phase).name} ({type(e).__name__}: {e})") from None
    return state


def state_from_json(text: str | dict) -> State:
    """Read :meth:`State.to_json` output (a string or the parsed dict)."""
    if isinstance(text, (str, bytes)):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as e:
            raise StateError(f"state JSON: line {e.lineno}: {e.msg}") from None
    else:
        data = text
    if not isinstance(data, dict) or data.get("format") != "feudo-state/1":
        raise StateError('format: expected "feudo-state/1"')
    for key in ("ruleset", "map", "players", "state"):
        if key not in data:
            raise StateError(f"{key}: missing")
    try:
        ruleset = ruleset_from_dict(data["ruleset"], source="state.ruleset")
        game_map = GameMap.from_dict(data["map"], source="state.map")
    except DataFileError as e:
        raise StateError(str(e)) from None
    return state_from_dict(Game(ruleset, game_map, data["players"]), data["state"])
