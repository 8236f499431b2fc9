"""Conversions between the wire messages of ``feudo.v1`` and the engine / advice objects.

Server side: :func:`game_from_setup` (a ``GameSetup`` -> :class:`engine.Game`), :func:`observed_position` (any of the
three ``Position`` forms -> the asking seat's :class:`feudo_ai.ObservedPosition`), :func:`advice_to_proto`,
:func:`describe_game`. Client side: :func:`position_from` (an engine state, an ``ObservedPosition``, a state JSON
or a ``Position`` -> ``Position``) and :func:`advice_from_proto`. Matches: :func:`setup_from_request` (a
``CreateMatchRequest`` -> :class:`feudo_ai.matches.MatchSetup`) and back, :func:`event_to_proto` (a match's event).

Every problem with a message raises :class:`PositionError` whose text starts with the field path of the message
(``position.observation.players[1].tokens[2].territory: expected ...``). The engine's loader has the last word on
consistency (:meth:`feudo_ai.ObservedPosition.to_state`); its field names are translated back to the message's.

Honesty (R22): the structured observation has one place for hidden cards, ``own_selection``, and it is applied
to the asking seat only; an opponent's selection can only be the cards it has revealed. A full state is projected
to the seat's observation before anything else reads it, and the client projects an engine state itself so that
hidden cards never leave the caller's process.
"""

from __future__ import annotations

import functools
import json
import math
import re
from typing import TYPE_CHECKING, Any, Iterable, Mapping

from engine import CASTLE, CHANCE, DEAD, DataFileError, Game, GameMap, Phase, StateError, load_map, load_ruleset
from engine import outcomes as eo
from engine.actions import ActionInfo, action_info
from engine.board import MAPS_DIR, assemble, castle_site_cells, castle_site_labels, grid_size, territory_labels
from engine.state import TERMINAL
from engine.ruleset import ruleset_from_dict
from engine.serialize import state_from_dict, state_from_json
from feudo.v1 import advisor_pb2 as apb
from feudo.v1 import game_pb2 as gpb
from feudo.v1 import matches_pb2 as mpb

from engine.core import core_available
from feudo_ai.search import (Advice, Alternative, CardBelief, NotToAct, ObservedPosition, PlannedAction,
                             PreparedPosition, SearchStats, decision_root, prepare_root)

if TYPE_CHECKING:
    from ..matches.spec import MatchSetup

MAX_TURNS = 100  # a longer game is no Feudo (R20 plays 15 or 20)
MAX_LIST = 4096  # no list of a position is longer (the plague history is the longest: a few per turn)
_ENGINE_TO_PHASE = {int(p): int(p) + 1 for p in Phase}  # proto enums start at 1 (0 is UNSPECIFIED)


class PositionError(ValueError):
    """A message that does not describe a valid game or position; the text starts with the field path."""


# ------------------------------------------------------------------------------------------------ games
@functools.lru_cache(maxsize=1)
def _packaged_boards() -> tuple[list[dict], str, str]:
    spec = json.loads((MAPS_DIR / "default.json").read_text(encoding="utf-8"))
    boards = [json.loads((MAPS_DIR / f).read_text(encoding="utf-8")) for f in spec["boards"]]
    return boards, spec["name"], spec["plague_start_near"]


@functools.lru_cache(maxsize=24)
def _assembled(order: tuple[int, ...]) -> GameMap:
    boards, name, near = _packaged_boards()
    return assemble(boards, list(order), name, near, str(MAPS_DIR / "default.json"))


def _default_order(game_map: GameMap) -> tuple[int, ...] | None:
    """The board order of the packaged default assembly that gives ``game_map``, or None. The packaged boards
    name their cells "A3-0", "B1-2", ... (board letter first), which gives the candidate order; one assembly in
    that order confirms it."""
    boards, name, _ = _packaged_boards()
    if game_map.name != name:
        return None
    letters: dict[int, str] = {}
    for t in game_map.territories:
        if 0 <= t.board < 4 and re.fullmatch(r"[A-Z]\d-\d", t.name):
            letters.setdefault(t.board, t.name[0])
    order = tuple("ABCD".find(letters.get(q, "?")) for q in range(4))
    if sorted(order) != [0, 1, 2, 3] or _assembled(order) != game_map:
        return None
    return order


@functools.lru_cache(maxsize=1)
def _basic():
    return load_ruleset()


@functools.lru_cache(maxsize=64)
def _game_cached(key: bytes) -> Game:
    setup = gpb.GameSetup.FromString(key)
    return _build_game(setup, "position.setup")


def game_from_setup(setup: gpb.GameSetup, path: str = "position.setup") -> Game:
    """The :class:`engine.Game` of a ``GameSetup`` (cached: the same setup gives the same object)."""
    try:
        return _game_cached(setup.SerializeToString(deterministic=True))
    except PositionError as e:
        if path != "position.setup":
            raise PositionError(str(e).replace("position.setup", path, 1)) from None
        raise


def _build_game(setup: gpb.GameSetup, path: str) -> Game:
    which = setup.WhichOneof("ruleset")
    try:
        if which == "ruleset_json":
            ruleset = ruleset_from_dict(_json(setup.ruleset_json, f"{path}.ruleset_json"),
                                        source=f"{path}.ruleset_json")
        else:
            o = setup.options
            if o.HasField("turns") and not 1 <= o.turns <= MAX_TURNS:
                raise PositionError(f"{path}.options.turns: expected 1..{MAX_TURNS}, got {o.turns}")
            ruleset = _basic().with_options(turns=o.turns if o.HasField("turns") else None,
                                            virulent_plague=o.virulent_plague or None,
                                            strategy_only=o.strategy_only or None)
        which = setup.WhichOneof("map")
        if which == "map_json":
            game_map = GameMap.from_dict(_json(setup.map_json, f"{path}.map_json"), source=f"{path}.map_json")
        elif which == "board_order":
            order = tuple(setup.board_order.boards)
            if sorted(order) != [0, 1, 2, 3]:
                raise PositionError(f"{path}.board_order.boards: expected a permutation of 0, 1, 2, 3, got "
                                    f"{list(order)[:8]}")
            game_map = _assembled(order)
        else:
            game_map = load_map(None, seed=setup.map_seed)
    except DataFileError as e:
        raise PositionError(str(e)) from None
    if not ruleset.min_players <= setup.players <= ruleset.max_players:
        raise PositionError(f"{path}.players: expected {ruleset.min_players}..{ruleset.max_players}, "
                            f"got {setup.players}")
    try:
        return Game(ruleset, game_map, setup.players)
    except StateError as e:
        raise PositionError(f"{path}: {e}") from None


def _json(text: str, path: str) -> Any:
    try:
        return json.loads(text)
    except (json.JSONDecodeError, RecursionError) as e:
        raise PositionError(f"{path}: not JSON ({e})") from None


def setup_from_game(game: Game) -> gpb.GameSetup:
    """The most compact ``GameSetup`` of a game: ruleset options and board order when they are the packaged ones,
    whole JSON otherwise."""
    setup = gpb.GameSetup(players=game.num_players)
    r = game.ruleset
    basic = _basic()
    if r == basic.with_options(turns=r.turns, virulent_plague=r.virulent_plague, strategy_only=r.strategy_only):
        setup.options.virulent_plague = r.virulent_plague
        setup.options.strategy_only = r.strategy_only
        if r.turns != basic.turns:
            setup.options.turns = r.turns
    else:
        setup.ruleset_json = json.dumps(r.to_dict())
    order = _default_order(game.map)
    if order is not None:
        setup.board_order.boards.extend(order)
    else:
        setup.map_json = json.dumps(game.map.to_dict())
    return setup


# ------------------------------------------------------------------------------------------ observations
def _count(path: str, items: Any, n: int, what: str) -> None:
    if len(items) != n:
        raise PositionError(f"{path}: expected {n} {what}, got {len(items)}")


def _opt(msg: Any, name: str, none: int = -1) -> int:
    return int(getattr(msg, name)) if msg.HasField(name) else none


def observation_dict(game: Game, obs: gpb.Observation, seat: int, path: str = "position.observation") -> dict:
    """``state.observation(seat)``'s dict form of a structured observation (structure checked here, consistency
    by the engine's loader in :meth:`ObservedPosition.to_state`)."""
    n, k, T = game.num_players, game.num_tokens, game.num_territories
    nt = len(game.ruleset.trading_cards)
    if obs.HasField("seat") and obs.seat != seat:
        raise PositionError(f"{path}.seat: the observation is seat {obs.seat}'s, but the request asks for seat "
                            f"{seat} (the request's seat must be the observation's)")
    if obs.phase not in _ENGINE_TO_PHASE.values():
        raise PositionError(f"{path}.phase: expected a phase other than PHASE_UNSPECIFIED, got {obs.phase}")
    _count(f"{path}.players", obs.players, n, "players (one per seat)")
    for name, seq in (("order", obs.order), ("placed", obs.placed), ("winners", obs.winners),
                      ("plague.history", obs.plague.history), ("context.joiners", obs.context.joiners),
                      ("context.advanced", obs.context.advanced), ("context.won", obs.context.won),
                      ("city_owners", obs.city_owners), ("own_selection.army_cards", obs.own_selection.army_cards)):
        if len(seq) > MAX_LIST:
            raise PositionError(f"{path}.{name}: at most {MAX_LIST} items, got {len(seq)}")
    d: dict[str, Any] = {
        "turn": obs.turn, "phase": obs.phase - 1, "tiebreak": obs.tiebreak, "order": list(obs.order),
        "placed": list(obs.placed), "decider": _opt(obs.context, "decider"), "winners": list(obs.winners),
        "king": obs.king_intervened,
    }
    per_player: dict[str, list] = {key: [] for key in (
        "active", "castle", "vp", "loc", "stricken", "entered", "rest_until", "army_held", "trade_held", "sel_army",
        "sel_trade", "sel_done", "revealed", "trade_revealed", "charmed", "merc_moved", "march_over", "attacked")}
    selected = []
    own = obs.own_selection
    for p, pv in enumerate(obs.players):
        pp = f"{path}.players[{p}]"
        _count(f"{pp}.tokens", pv.tokens, k, "tokens (one per Army Card of the roster)")
        _count(f"{pp}.trading_cards_held", pv.trading_cards_held, nt, "flags (one per Trading Card)")
        loc = []
        for t, tv in enumerate(pv.tokens):
            if tv.place == gpb.PLACE_MAP:
                loc.append(int(tv.territory))
            elif tv.place == gpb.PLACE_CASTLE:
                loc.append(CASTLE)
            elif tv.place == gpb.PLACE_DEAD:
                loc.append(DEAD)
            else:
                raise PositionError(f"{pp}.tokens[{t}].place: expected PLACE_MAP, PLACE_CASTLE or PLACE_DEAD, "
                                    f"got {tv.place}")
        revealed = [bool(tv.card_revealed) for tv in pv.tokens]
        per_player["active"].append(pv.active)
        per_player["castle"].append(_opt(pv, "castle_site"))
        per_player["vp"].append(pv.vp)
        per_player["loc"].append(loc)
        per_player["stricken"].append([tv.stricken for tv in pv.tokens])
        per_player["entered"].append([tv.entered for tv in pv.tokens])
        per_player["rest_until"].append([int(tv.rests_until_turn) for tv in pv.tokens])
        per_player["army_held"].append([tv.card_held for tv in pv.tokens])
        per_player["march_over"].append([tv.marched_into_wood for tv in pv.tokens])
        per_player["attacked"].append([tv.attacked_this_turn for tv in pv.tokens])
        per_player["revealed"].append(revealed)
        per_player["trade_held"].append(list(pv.trading_cards_held))
        per_player["sel_done"].append(pv.selection_done)
        per_player["charmed"].append(pv.charmed)
        per_player["merc_moved"].append(int(pv.mercenaries_moved))
        per_player["trade_revealed"].append(pv.HasField("revealed_trading_card"))
        shown = _opt(pv, "revealed_trading_card")
        if p == seat:
            cards = list(own.army_cards)
            bad = [t for t in cards if not 0 <= t < k]
            if bad or len(set(cards)) != len(cards):
                raise PositionError(f"{path}.own_selection.army_cards: expected distinct token indices in "
                                    f"0..{k - 1}, got {cards[:16]}")
            sel = [t in cards for t in range(k)]
            missing = [t for t in range(k) if revealed[t] and not sel[t]]
            if missing:
                raise PositionError(f"{path}.own_selection.army_cards: the seat revealed {missing} this turn, "
                                    f"which must be among its selected cards")
            if pv.selected_army_cards not in (0, len(cards)):
                raise PositionError(f"{pp}.selected_army_cards: the seat's own selection has {len(cards)} cards, "
                                    f"got {pv.selected_army_cards}")
            trade = _opt(own, "trading_card")
            if shown >= 0 and trade != shown:
                raise PositionError(f"{path}.own_selection.trading_card: the seat turned over Trading Card "
                                    f"{shown}, got {trade if trade >= 0 else 'none'}")
            per_player["sel_army"].append(sel)
            per_player["sel_trade"].append(trade)
            selected.append(len(cards))
        else:
            if pv.selected_army_cards < sum(revealed):
                raise PositionError(f"{pp}.selected_army_cards: {sum(revealed)} cards are revealed, got "
                                    f"{pv.selected_army_cards}")
            # R22: an opponent's selection is exactly what it has revealed
            per_player["sel_army"].append(list(revealed))
            per_player["sel_trade"].append(shown)
            selected.append(int(pv.selected_army_cards))
    d.update(per_player)
    owner = [-1] * T
    for i, co in enumerate(obs.city_owners):
        if not 0 <= co.territory < T:
            raise PositionError(f"{path}.city_owners[{i}].territory: expected 0..{T - 1}, got {co.territory}")
        if owner[co.territory] != -1:
            raise PositionError(f"{path}.city_owners[{i}].territory: territory {co.territory} listed twice")
        owner[co.territory] = int(co.player)
    d["owner"] = owner
    pl = obs.plague
    d["plague_village"] = _opt(pl, "village")
    kinds = len(game.ruleset.plague_cards)
    drawn = list(pl.drawn_since_reshuffle) or [0] * kinds
    _count(f"{path}.plague.drawn_since_reshuffle", drawn, kinds, "counts (one per plague card kind)")
    d["plague_drawn"] = drawn
    d["plague_history"] = list(pl.history)
    d["plague_card"] = _opt(pl, "card_this_turn")
    c = obs.context
    d.update(cursor=c.cursor, round=c.round, token=_opt(c, "token"), shillings=c.shillings,
             target=_opt(c, "target"), joiners=list(c.joiners), advanced=list(c.advanced),
             won=[[w.player, w.territory, list(w.tokens), w.baron_took_part] for w in c.won])
    d["selected_count"] = selected
    d["seat"] = seat
    return d


def observation_from_dict(game: Game, obs: Mapping[str, Any]) -> gpb.Observation:
    """The structured message of ``state.observation(seat)`` (client side)."""
    seat = int(obs["seat"])
    n, k = game.num_players, game.num_tokens
    msg = gpb.Observation(turn=obs["turn"], phase=_ENGINE_TO_PHASE[int(obs["phase"])], tiebreak=obs["tiebreak"],
                          order=obs["order"], placed=obs["placed"], winners=obs["winners"],
                          king_intervened=obs["king"])
    for p in range(n):
        pv = msg.players.add(active=obs["active"][p], vp=obs["vp"][p], selection_done=obs["sel_done"][p],
                             selected_army_cards=obs["selected_count"][p], charmed=obs["charmed"][p],
                             mercenaries_moved=obs["merc_moved"][p], trading_cards_held=obs["trade_held"][p])
        if obs["castle"][p] >= 0:
            pv.castle_site = obs["castle"][p]
        if obs["trade_revealed"][p] and obs["sel_trade"][p] >= 0:
            pv.revealed_trading_card = obs["sel_trade"][p]
        for t in range(k):
            x = obs["loc"][p][t]
            pv.tokens.add(place=gpb.PLACE_CASTLE if x == CASTLE else gpb.PLACE_DEAD if x == DEAD else gpb.PLACE_MAP,
                          territory=max(x, 0), stricken=obs["stricken"][p][t], entered=obs["entered"][p][t],
                          rests_until_turn=obs["rest_until"][p][t], card_held=obs["army_held"][p][t],
                          card_revealed=obs["revealed"][p][t], marched_into_wood=obs["march_over"][p][t],
                          attacked_this_turn=obs["attacked"][p][t])
    msg.own_selection.army_cards.extend(t for t in range(k) if obs["sel_army"][seat][t])
    if obs["sel_trade"][seat] >= 0:
        msg.own_selection.trading_card = obs["sel_trade"][seat]
    for x, q in enumerate(obs["owner"]):
        if q >= 0:
            msg.city_owners.add(territory=x, player=q)
    if obs["plague_village"] >= 0:
        msg.plague.village = obs["plague_village"]
    msg.plague.drawn_since_reshuffle.extend(obs["plague_drawn"])
    msg.plague.history.extend(obs["plague_history"])
    if obs["plague_card"] >= 0:
        msg.plague.card_this_turn = obs["plague_card"]
    c = msg.context
    c.cursor, c.round, c.shillings = obs["cursor"], obs["round"], obs["shillings"]
    for name in ("token", "target", "decider"):
        if obs[name] >= 0:
            setattr(c, name, obs[name])
    c.joiners.extend(obs["joiners"])
    c.advanced.extend(obs["advanced"])
    for p, x, toks, baron in obs["won"]:
        c.won.add(player=p, territory=x, tokens=toks, baron_took_part=baron)
    describe_observation(msg, obs)
    return msg


_STAGE = {name: i + 1 for i, name in enumerate(eo.STAGES)}  # proto Stage: 0 is UNSPECIFIED, then eo.STAGES


def stage_to_proto(phase: int) -> int:
    """The ``feudo.v1.Stage`` of an engine phase."""
    return _STAGE[eo.stage_of(phase)]


def actor_fields(current_player: int) -> tuple[int | None, int]:
    """(to_act or None, ``feudo.v1.Actor``) of the engine's current_player (a seat, CHANCE -1, TERMINAL -4)."""
    if current_player >= 0:
        return current_player, gpb.ACTOR_PLAYER
    if current_player == CHANCE:
        return None, gpb.ACTOR_CHANCE
    return None, gpb.ACTOR_NOBODY


def describe_observation(msg: gpb.Observation, obs: Mapping[str, Any]) -> None:
    """Fill the self-describing fields of an observation message (seat, to_act, actor, stage, and the context's
    unambiguous army_card_round / advancing) from ``state.observation(seat)``'s dict."""
    phase = int(obs["phase"])
    msg.seat = int(obs["seat"])
    msg.stage = stage_to_proto(phase)
    cp = obs.get("current_player")
    if cp is None:
        cp = _current_player(obs)
    to_act, actor = actor_fields(int(cp))
    msg.actor = actor
    if to_act is not None:
        msg.to_act = to_act
    if phase in (Phase.REVEAL, Phase.MOVE, Phase.MILADY):
        msg.context.army_card_round = obs["round"]
    elif phase == Phase.ADVANCE:
        msg.context.advancing = obs["round"]


def _current_player(obs: Mapping[str, Any]) -> int:
    """The engine's current_player of an observation dict (as State.current_player, public fields only)."""
    ph = Phase(int(obs["phase"]))
    if ph == Phase.TERMINAL:
        return TERMINAL
    if ph in (Phase.CHANCE_PLACER, Phase.CHANCE_DECIDER, Phase.CHANCE_PLAGUE):
        return CHANCE
    if ph in (Phase.PLACE_CASTLE, Phase.SELECT):
        return int(obs["cursor"])
    if ph == Phase.CHOOSE_ORDER:
        return int(obs["decider"])
    if ph == Phase.ADVANCE:
        return int(obs["won"][obs["round"]][0])
    return int(obs["order"][obs["cursor"]])


# The engine loader names its own fields; a client knows the message's. One table translates the first.
_PLAYER_FIELDS = {
    "active": "players[{0}].active", "castle": "players[{0}].castle_site", "vp": "players[{0}].vp",
    "loc": "players[{0}].tokens[{1}].territory", "stricken": "players[{0}].tokens[{1}].stricken",
    "entered": "players[{0}].tokens[{1}].entered", "rest_until": "players[{0}].tokens[{1}].rests_until_turn",
    "army_held": "players[{0}].tokens[{1}].card_held", "revealed": "players[{0}].tokens[{1}].card_revealed",
    "march_over": "players[{0}].tokens[{1}].marched_into_wood",
    "attacked": "players[{0}].tokens[{1}].attacked_this_turn", "sel_army": "players[{0}].tokens[{1}].card_revealed",
    "trade_held": "players[{0}].trading_cards_held[{1}]", "sel_trade": "players[{0}].revealed_trading_card",
    "sel_done": "players[{0}].selection_done", "trade_revealed": "players[{0}].revealed_trading_card",
    "charmed": "players[{0}].charmed", "merc_moved": "players[{0}].mercenaries_moved",
}
_OTHER_FIELDS = {
    "owner": "city_owners", "plague_village": "plague.village", "plague_drawn": "plague.drawn_since_reshuffle",
    "plague_history": "plague.history", "plague_card": "plague.card_this_turn", "king": "king_intervened",
    "decider": "context.decider", "cursor": "context.cursor", "round": "context.round", "token": "context.token",
    "shillings": "context.shillings", "target": "context.target", "joiners": "context.joiners",
    "advanced": "context.advanced", "won": "context.won",
}
_ENGINE_PATH = re.compile(r"^state\.(\w+)((?:\[\d+\])*)")


# What the engine's integer ranges mean on the wire, by the message field's last name: the engine encodes "none"
# as -1 (and a dead token's place as -2), the wire as an unset optional field (or `place`). One table: every
# range error of the loader names the message's field with the wire's meaning (e.g. "expected a territory id in
# [0, 92] (with place PLACE_MAP), got 200", never "expected an integer in [-2, 92]").
_WIRE_MEANING = {
    "territory": ("a territory id", ""), "target": ("a territory id", ", or unset (no attack declared)"),
    "village": ("a Village's territory id", ", or unset (no Plague Token)"),
    "castle_site": ("a castle site id", ", or unset (no Castle yet)"),
    "token": ("a token index", ", or unset (no revealed token)"), "tokens": ("a token index", ""),
    "joiners": ("a token index", ""), "advanced": ("a token index", ""), "army_cards": ("a token index", ""),
    "decider": ("a player", ", or unset (none)"), "player": ("a player", ""), "order": ("a player", ""),
    "placed": ("a player", ""), "winners": ("a player", ""), "city_owners": ("a player", ""),
    "revealed_trading_card": ("a Trading Card index", ", or unset (not turned over)"),
    "trading_card": ("a Trading Card index", ", or unset (none selected)"),
    "history": ("a plague card kind", ""), "card_this_turn": ("a plague card kind", ", or unset (none drawn)"),
    "cursor": ("an index (see TurnContext.cursor)", ""), "rests_until_turn": ("a turn number", ""),
}
_WON_FIELDS = ("player", "territory", "tokens", "baron_took_part")
_RANGE = re.compile(r": expected an integer in \[(-?\d+), (-?\d+)\], got (?:number )?(.*)$")


def _wire_terms(field: str, rest: str) -> str:
    """The loader's words for a message field in the wire's terms (see _WIRE_MEANING)."""
    field = re.sub(r"won\[(\d+)\]\[(\d)\]", lambda m: f"won[{m.group(1)}].{_WON_FIELDS[int(m.group(2))]}", field)
    m = _RANGE.match(rest)
    if m:
        lo, hi, got = int(m.group(1)), int(m.group(2)), m.group(3)
        name = re.sub(r"\[\d+\]", "", field.rsplit(".", 1)[-1])
        what, unset = _WIRE_MEANING.get(name, ("a value", ""))
        if lo >= 0:
            unset = ""
        rest = f": expected {what} in [{max(lo, 0)}, {hi}]{unset}, got {got}"
        if name == "territory" and ".tokens[" in field:
            rest = f": expected {what} in [{max(lo, 0)}, {hi}] (with place PLACE_MAP), got {got}"
    return f"{field}{rest.replace('got number ', 'got ')}"


def _translate(message: str, path: str, seat: int) -> str:
    return _wire_terms(*_translate_path(message, path, seat))


def _translate_path(message: str, path: str, seat: int) -> tuple[str, str]:
    """(the message's field path, the rest of the loader's message) of a loader error."""
    m = _ENGINE_PATH.match(message)
    if not m:
        return path, f": {message.removeprefix('state: ')}"
    name, idx = m.group(1), [int(i) for i in re.findall(r"\d+", m.group(2))]
    rest = message[m.end():]
    if name in _PLAYER_FIELDS and idx:
        if name in ("sel_army", "sel_trade") and idx[0] == seat:
            field = "own_selection.army_cards" if name == "sel_army" else "own_selection.trading_card"
        else:
            template = _PLAYER_FIELDS[name]
            field = template.format(*idx, *([0] * 2)) if template.count("{") <= len(idx) else \
                template.split("[{1}]")[0].format(idx[0])
        return f"{path}.{field}", rest
    if name in _OTHER_FIELDS:
        return f"{path}.{_OTHER_FIELDS[name]}{m.group(2)}", rest
    return f"{path}.{name}{m.group(2)}", rest


MAX_TURN = 1000  # turn numbers (and rest_until, tie-break turns): a game has at most ~100 + the tie-break cap
MAX_SHILLINGS = 1000
MAX_WON = 64  # won attacks in one turn (the core's capacity)
MAX_HISTORY = 128  # plague cards drawn in a game (the core's capacity)


def check_ranges(game: Game, d: Mapping[str, Any]) -> None:
    """Bounds the engine's loader leaves open but the compiled core stores in fixed-size fields (int16 turns,
    arrays of one entry per token): checked here, before anything reaches C. :raises StateError: naming the
    engine field (translated to the message's by the caller)."""
    k = game.num_tokens

    def bad(field: str, expected: str, got: Any) -> StateError:
        return StateError(f"state.{field}: expected {expected}, got {repr(got)[:80]}")

    for name in ("turn", "tiebreak", "round", "shillings"):
        v = d.get(name)
        limit = MAX_SHILLINGS if name == "shillings" else MAX_TURN
        if isinstance(v, int) and v > limit:
            raise bad(name, f"at most {limit}", v)
    for p, row in enumerate(d.get("rest_until") or []):
        for t, v in enumerate(row or []):
            if isinstance(v, int) and v > MAX_TURN:
                raise bad(f"rest_until[{p}][{t}]", f"at most {MAX_TURN}", v)
    for name in ("joiners", "advanced"):
        v = d.get(name)
        if isinstance(v, list) and (len(v) > k or len(set(map(repr, v))) != len(v)):
            raise bad(name, f"distinct tokens (at most {k})", v)
    won = d.get("won")
    if isinstance(won, list):
        if len(won) > MAX_WON:
            raise bad("won", f"at most {MAX_WON} won attacks", len(won))
        for i, w in enumerate(won):
            if isinstance(w, list) and len(w) == 4 and isinstance(w[2], list) and (
                    len(w[2]) > k or len(set(map(repr, w[2]))) != len(w[2])):
                raise bad(f"won[{i}][2]", f"distinct tokens (at most {k})", w[2])
    history = d.get("plague_history")
    if isinstance(history, list) and len(history) > MAX_HISTORY:
        raise bad("plague_history", f"at most {MAX_HISTORY} cards", len(history))


def observed_from_observation(game: Game, obs: gpb.Observation, seat: int,
                              path: str = "position.observation", check: bool = True) -> ObservedPosition:
    """The seat's :class:`ObservedPosition` of a structured observation; with ``check``, through the engine's
    loader too (else the caller does it with :func:`load_view`, which gives the same errors)."""
    d = observation_dict(game, obs, seat, path)
    try:
        check_ranges(game, d)
        observed = ObservedPosition(game, d)
    except StateError as e:
        raise PositionError(_translate(str(e), path, seat)) from None
    if check:
        try:
            load_view(observed, path)  # the loader's consistency checks, with the message's field names
        except NotToAct:
            pass  # a waiting seat's view: consistent as far as the seat can know (see load_view)
    return observed


def not_to_act(seat: int, actor: int) -> NotToAct:
    """The service's answer to a seat asking for a decision it does not have (``FAILED_PRECONDITION``)."""
    if actor >= 0:
        return NotToAct(seat, actor, f"seat {seat} is not to act; seat {actor} is")
    if actor == CHANCE:
        return NotToAct(seat, actor, f"seat {seat} is not to act; a chance event comes first")
    return NotToAct(seat, actor, f"seat {seat} is not to act; the game is over")


def _waiting_for(observed: ObservedPosition) -> int | None:
    """The player to act in a view the loader refused, when the refusal comes only from cards hidden from the
    seat: the view loads with placeholders for them (public facts only) and another player (or chance) is to act
    there. None otherwise (the view is inconsistent, or the asking seat itself is to act)."""
    from ..sampler import placeholder_fields

    try:
        probe = state_from_dict(observed.game, placeholder_fields(observed.game, dict(observed.observation)))
    except (StateError, TypeError, ValueError, KeyError, IndexError):
        return None
    actor = probe.current_player()
    return None if actor == observed.seat else actor


def load_view(observed: ObservedPosition, path: str | None = None) -> Any:
    """The seat's view through the engine's loader (:meth:`ObservedPosition.to_state`), for a seat that may be
    waiting.

    The loader checks the whole position, including what the player to act must hold, which a waiting seat cannot
    see: in seat 0's view while seat 1 reveals, seat 1's unrevealed picks are blank, so the loader finds seat 1
    with no card left to reveal. Such a view is checked again with placeholders for the cards hidden from the
    seat (:func:`feudo_ai.sampler.placeholder_fields`); if it loads so, the answer is :class:`NotToAct` naming the
    player to act, and the placeholder state goes no further: it never reaches a search, where it could plan a
    reveal of a card the seat did not select.

    :param path: the field path of a structured observation (the loader's field names are translated to the
        message's in the error); None: the view of a state or history.
    :raises NotToAct: (:func:`not_to_act`) the seat waits for another player or chance.
    :raises PositionError: the position is inconsistent.
    """
    try:
        return observed.to_state()
    except StateError as e:
        actor = _waiting_for(observed)
        if actor is None:
            if path is not None:
                raise PositionError(_translate(str(e), path, observed.seat)) from None
            raise PositionError(f"position: inconsistent ({e})") from None
        raise not_to_act(observed.seat, actor) from None


def check_decision(observed: ObservedPosition, path: str | None = None) -> PreparedPosition:
    """The position the search will start from (the seat's pending decision), prepared once
    (:class:`~feudo_ai.search.PreparedPosition`, handed to :func:`feudo_ai.advise` as it is) and checked to be one
    the engine can search: the seat has a decision (:raises NotToAct: otherwise, see :func:`not_to_act`) and the
    reference rules and the compiled core agree on its legal actions, which are not empty (:raises PositionError:
    an inconsistent position, e.g. a token list that passes every field check but leaves the player to act
    without a move). The compiled root made for that check is the one the C search starts from."""
    view = load_view(observed, path)
    try:
        root = decision_root(view, observed.seat)
    except NotToAct as e:
        raise not_to_act(e.seat, e.actor) from None
    legal = root.legal_actions()
    phase = Phase(root.phase).name
    if not legal:
        raise PositionError(f"position: inconsistent: seat {observed.seat} has no legal action in phase {phase}")
    prepared = prepare_root(root, observed.seat)
    if core_available():
        try:
            core_legal = prepared.core().legal_actions()
        except (StateError, OverflowError, ValueError, IndexError) as e:
            raise PositionError(f"position: beyond the engine's range ({e})") from None
        if list(core_legal) != list(legal):
            raise PositionError(f"position: inconsistent: the rules disagree on the legal actions in phase {phase}")
    return prepared


# ------------------------------------------------------------------------------------------------ history
def observed_from_history(game: Game, history: gpb.History, seat: int, path: str = "position.history",
                          cache: Any = None, setup: gpb.GameSetup | None = None,
                          info: dict | None = None) -> ObservedPosition:
    """The seat's observation after replaying its log (other seats' picks hidden) through ``engine.history``.

    With ``cache`` (a :class:`~feudo_ai.wire.history_cache.HistoryCache`) and the position's ``setup``, the
    replay goes on from the longest prefix of this history the cache holds for this setup and seat, and is kept
    for the next call; ``info`` (a dict) then gets ``cached`` (entries taken from the cache) and ``replayed``
    (entries replayed by this call)."""
    from engine import history as eh
    from engine import new_game

    from .history_cache import replay as cached_replay

    if len(history.entries) > 100_000:
        raise PositionError(f"{path}.entries: at most 100000 entries, got {len(history.entries)}")
    castles = list(history.castle_sites) or None

    def start():
        try:
            return new_game(game.ruleset, game.num_players, game_map=game.map, castles=castles)
        except StateError as e:
            raise PositionError(f"{path}.castle_sites: {str(e).removeprefix('castles')}") from None

    if cache is None or setup is None:
        start_state = start()  # the Castle sites are checked before the entries, as they always were
        start = lambda: start_state  # noqa: E731
        cache = None
    entries = []
    for i, e in enumerate(history.entries):
        what = e.WhichOneof("what")
        if what is None:
            raise PositionError(f"{path}.entries[{i}]: expected an action or a hidden_pick")
        entries.append(eh.Entry(player=int(e.player) if e.HasField("player") else -1,
                                action=int(e.action) if what == "action" else None,
                                trades=tuple((int(t.player), int(t.card)) for t in e.trading_cards_revealed),
                                pick=bool(e.pick or what == "hidden_pick")))
    base = b"" if cache is None else setup.SerializeToString(deterministic=True) + \
        b"|" + ",".join(map(str, castles or ())).encode()
    try:
        replay, cached, replayed = cached_replay(cache, base, start, seat, entries)
    except (eh.HistoryError, StateError, ValueError) as e:
        if isinstance(e, PositionError):
            raise
        raise PositionError(f"{path}: {e}") from None
    if info is not None:  # the replay too: its position (placeholders and all) stays on the server
        info.update(cached=cached, replayed=replayed, replay=replay)
    return ObservedPosition.from_state(replay.state, seat)


def history_from_entries(entries: Iterable[Any], castle_sites: Iterable[int] = ()) -> gpb.History:
    """The ``History`` message of a seat's log (``engine.history.seat_log``'s entries; client side)."""
    msg = gpb.History(castle_sites=list(castle_sites))
    for e in entries:
        item = msg.entries.add(pick=bool(e.pick))
        if e.player >= 0:
            item.player = e.player
        if e.action is None:
            item.hidden_pick.SetInParent()
        else:
            item.action = e.action
        for q, c in e.trades:
            item.trading_cards_revealed.add(player=q, card=c)
    return msg


# ------------------------------------------------------------------------------------------------ positions
def observed_position(position: gpb.Position, seat: int, path: str = "position", check: bool = True,
                      history_cache: Any = None, matches: Any = None, info: dict | None = None) -> ObservedPosition:
    """The asking ``seat``'s view of a ``Position`` in any form. :raises PositionError: naming the field.
    ``check=False`` leaves the engine loader's check of a structured observation to the caller's
    :func:`load_view` / :func:`check_decision` with :func:`loader_path` (the service: one load, not two).

    ``history_cache``: the server's :class:`~feudo_ai.wire.history_cache.HistoryCache` for the history form
    (``info`` gets what it did). ``matches``: the :class:`~feudo_ai.matches.MatchService` of the matches this
    server hosts, for the match form (without it that form is refused); its errors (NotFound, Unauthenticated,
    PermissionDenied) go through as they are."""
    form = position.WhichOneof("form")
    if form is None:
        raise PositionError(f"{path}: expected one of observation, history, state_json or match")
    if form == "match":
        return observed_from_match(position, seat, matches, path)
    if form == "state_json":
        if position.HasField("setup"):
            raise PositionError(f"{path}.setup: must be unset with state_json (the state carries its own game)")
        try:
            state = state_from_json(position.state_json)
            check_ranges(state.game, state.to_dict())
        except RecursionError:
            raise PositionError(f"{path}.state_json: nested too deeply") from None
        except (StateError, DataFileError) as e:
            raise PositionError(f"{path}.state_json: {e}") from None
        if not 0 <= seat < state.num_players:
            raise PositionError(f"seat: expected 0..{state.num_players - 1}, got {seat}")
        return ObservedPosition.from_state(state, seat)  # R22: projected before anything else reads it
    if not position.HasField("setup"):
        raise PositionError(f"{path}.setup: required with the {form} form")
    game = game_from_setup(position.setup, f"{path}.setup")
    if not 0 <= seat < game.num_players:
        raise PositionError(f"seat: expected 0..{game.num_players - 1}, got {seat}")
    if form == "observation":
        return observed_from_observation(game, position.observation, seat, f"{path}.observation", check)
    return observed_from_history(game, position.history, seat, f"{path}.history", cache=history_cache,
                                 setup=position.setup, info=info)


class NoMatches(PositionError):
    """The match form sent to an Advisor that hosts no matches (``FAILED_PRECONDITION``)."""


def observed_from_match(position: gpb.Position, seat: int, matches: Any, path: str = "position") -> ObservedPosition:
    """The seat's current view in a hosted match (``Position.match``), read from ``matches`` (the server's
    :class:`~feudo_ai.matches.MatchService`) after the seat's token is checked as ``SubmitAction`` checks it."""
    if position.HasField("setup"):
        raise PositionError(f"{path}.setup: must be unset with match (the match has its own game)")
    ref = position.match
    if ref.seat != seat:
        raise PositionError(f"{path}.match.seat: expected the request's seat {seat}, got {ref.seat}")
    if matches is None:
        raise NoMatches(f"{path}.match: this server hosts no matches; send the position in another form")
    o = matches.get_observation(ref.match_id, int(ref.seat), ref.token)  # NotFound, Unauthenticated, ...
    game = matches.game_of(ref.match_id)
    return ObservedPosition(game, o["observation"])


def loader_path(position: gpb.Position, path: str = "position") -> str | None:
    """The path :func:`load_view` names fields with for this position's form (None: not a structured one)."""
    return f"{path}.observation" if position.WhichOneof("form") == "observation" else None


def position_from(position: Any, seat: int) -> gpb.Position:
    """A ``Position`` message for ``seat`` from: a ``Position`` (as is), an :class:`ObservedPosition`, an engine
    ``State``/``CoreState`` (projected to the seat's observation here, so hidden cards never leave the caller),
    or a "feudo-state/1" JSON text/dict (sent whole: the server projects it)."""
    if isinstance(position, gpb.Position):
        return position
    if isinstance(position, (str, bytes, dict)):
        text = position if isinstance(position, str) else (
            position.decode() if isinstance(position, bytes) else json.dumps(position))
        return gpb.Position(state_json=text)
    if not isinstance(position, ObservedPosition):
        if not hasattr(position, "observation") or not hasattr(position, "game"):
            raise TypeError(f"position: expected a feudo.v1.Position, ObservedPosition, engine state or state "
                            f"JSON, got {type(position).__name__}")
        position = ObservedPosition.from_state(position, seat)
    if position.seat != seat:
        raise ValueError(f"seat: the observation is seat {position.seat}'s, got {seat}")
    return gpb.Position(setup=setup_from_game(position.game),
                        observation=observation_from_dict(position.game, position.observation))


# ------------------------------------------------------------------------------------------------ answers
def _action(a: int, text: str) -> gpb.Action:
    return gpb.Action(id=a, text=text)


def info_to_proto(a: int, text: str, info: ActionInfo) -> gpb.Action:
    """An ``Action`` with its structured fields (:class:`engine.actions.ActionInfo`)."""
    msg = gpb.Action(id=a, text=text, kind=gpb.ActionKind.Value("ACTION_KIND_" + info.kind),
                     from_castle=info.from_castle, order=list(info.order))
    for name in ("player", "token", "trading_card", "from_territory", "to_territory", "cost", "castle_site",
                 "target_player", "plague_card"):
        v = getattr(info, name)
        if v >= 0:
            setattr(msg, name, v)
    return msg


def action_to_proto(state: Any, a: int) -> gpb.Action:
    """A legal action of ``state`` with its text and structured fields (LegalActions, GetObservation)."""
    return info_to_proto(a, state.action_to_string(a), action_info(state, a))


def _advice_actions(advice: Advice, root: Any) -> tuple[list[gpb.Action], dict[int, gpb.Action]]:
    """The plan's actions and the alternatives' (by id), with their structured fields: each plan action read in the state the
    plan reaches before it (the seat's view: its own picks and the public facts, nothing hidden from it), each
    alternative in ``root``. An action the state does not allow any more (not expected: the plan is the seat's
    own line) keeps its id and text only."""
    ref = root.to_reference() if hasattr(root, "to_reference") else root
    legal = set(ref.legal_actions())
    wanted = {a.action for a in advice.alternatives} | {advice.best}
    at_root = {a: action_to_proto(ref, a) for a in wanted if a in legal}  # the ranked ones only: a march
    # phase has hundreds of legal actions, each costing a path search
    plan, state = [], ref.clone()
    for p in advice.plan:
        if state is not None and state.current_player() == advice.seat and p.action in state.legal_actions():
            plan.append(info_to_proto(p.action, p.text, action_info(state, p.action)))
            try:
                state.apply_action(p.action)
            except (StateError, ValueError):  # the view cannot play it on (a hidden card it would need): the
                state = None                  # later actions keep id and text, the answer is still given
        else:
            plan.append(_action(p.action, p.text))
            state = None
    return plan, at_root


def advice_to_proto(advice: Advice, root: Any = None) -> apb.Advice:
    """The wire form of ``advice``; with ``root`` (the decision's root state, :attr:`PreparedPosition.root`, the
    seat's view) its actions carry their structured fields as legal actions do."""
    s = advice.stats
    plan, at_root = ([_action(p.action, p.text) for p in advice.plan], {}) if root is None else \
        _advice_actions(advice, root)

    def known(a: int, text: str) -> gpb.Action:
        msg = at_root.get(a)
        if msg is None or msg.text != text:
            return _action(a, text)
        out = gpb.Action()
        out.CopyFrom(msg)
        return out

    return apb.Advice(
        seat=advice.seat,
        decision=apb.DECISION_KIND_SELECTION if advice.decision == "selection" else apb.DECISION_KIND_PLAN,
        best=known(advice.best, advice.best_text),
        plan=plan,
        alternatives=[apb.Alternative(action=known(a.action, a.text), visits=a.visits,
                                      win_probability=_finite(a.win_probability)) for a in advice.alternatives],
        beliefs=[apb.CardBelief(player=b.player, kind=b.kind, index=b.index, card=b.card,
                                probability=_finite(b.probability)) for b in advice.beliefs],
        stats=apb.SearchStats(algorithm=s.algorithm, iterations=s.iterations, nodes=s.nodes, threads=s.threads,
                              elapsed_seconds=s.elapsed, iterations_per_second=_finite(s.iterations_per_s or 0.0),
                              stopped_by=s.stopped_by or "", limited=s.limited, pool_full=s.pool_full,
                              max_depth=s.max_depth, worlds_sampled=s.worlds_sampled,
                              seed=s.seed & 0xFFFFFFFFFFFFFFFF, searches=s.searches))


def _finite(x: float) -> float:
    return float(x) if math.isfinite(x) else 0.0


def advice_from_proto(msg: apb.Advice) -> Advice:
    """The :class:`feudo_ai.Advice` of a wire message (``stats.backend`` is "remote")."""
    s = msg.stats
    return Advice(
        seat=msg.seat, decision="selection" if msg.decision == apb.DECISION_KIND_SELECTION else "plan",
        best=msg.best.id, best_text=msg.best.text, plan=tuple(PlannedAction(a.id, a.text) for a in msg.plan),
        alternatives=tuple(Alternative(a.action.id, a.action.text, a.visits, a.win_probability)
                           for a in msg.alternatives),
        beliefs=tuple(CardBelief(b.player, b.kind, b.index, b.card, b.probability) for b in msg.beliefs),
        stats=SearchStats(algorithm=s.algorithm, backend="remote", iterations=s.iterations, nodes=s.nodes,
                          threads=s.threads, elapsed=s.elapsed_seconds,
                          iterations_per_s=s.iterations_per_second or None, stopped_by=s.stopped_by or None,
                          limited=s.limited, pool_full=s.pool_full, max_depth=s.max_depth,
                          worlds_sampled=s.worlds_sampled, seed=s.seed, searches=s.searches,
                          search_seconds=s.search_seconds))


# ------------------------------------------------------------------------------------------------ DescribeGame
ACTION_MEANINGS = {
    "PASS": "stay, decline, stop marching, launch the declared attack, done (offset 0)",
    "PLACE": "put my Castle on castle site <offset> (R21)",
    "ORDER": "the order of play is the <offset>-th permutation, in lexicographic order, of the active players (R5)",
    "SELECT": "add Army Card <offset> to my secret selection; cards are picked in ascending order (R6)",
    "TRADE": "select Trading Card <offset> (the first held card of a value) (R6)",
    "REVEAL": "reveal selected Army Card <offset> (R7)",
    "MOVE": "the revealed token ends its move on territory <offset> (R7, R8)",
    "CHARM": "my healthy Milady charms player <offset>'s Baron (R13)",
    "INFECT": "my plague-stricken Milady infects her neighbours (R13)",
    "MARCH": "spend shillings to march token <offset> // territories to territory <offset> % territories (R9)",
    "ATTACK": "declare an attack on territory <offset> (R11)",
    "JOIN": "token <offset> joins the declared attack; PASS launches it (R11)",
    "ADVANCE": "token <offset> advances into the won territory (R14)",
    "CHANCE_PLAYER": "chance: player <offset> (Castle placer, order decider) (R5, R21)",
    "PLAGUE": "chance: the plague card of kind <offset> is drawn (R18)",
}
ACTION_ENCODING = (
    "Every decision is one action id; large choices are sequences of small ones. The secret selection is three "
    "ascending SELECT actions (Army Cards) then one TRADE (R6). A reveal is REVEAL <card> then MOVE <territory> "
    "(or PASS to stay). Shillings are spent by MARCH actions (cost = path length) until PASS. An attack is "
    "ATTACK <territory>, then JOIN <token> one at a time, then PASS to launch it. An advance is ADVANCE <token>. "
    "Ids mean the same thing in every position of a game; LegalActions lists the legal ones with their text.")
_KIND = {0: gpb.TERRITORY_KIND_HILL, 1: gpb.TERRITORY_KIND_WOOD, 2: gpb.TERRITORY_KIND_MOUNTAIN,
         3: gpb.TERRITORY_KIND_VILLAGE, 4: gpb.TERRITORY_KIND_CITY, 5: gpb.TERRITORY_KIND_CENTRAL_HILL}


def describe_game(game: Game, setup: gpb.GameSetup) -> gpb.GameDescription:
    r, m = game.ruleset, game.map
    out = gpb.GameDescription(
        setup=setup, ruleset_name=r.name, turns=r.turns, army_cards_selected=r.army_cards_selected,
        army=[gpb.ArmyCard(index=t.index, name=t.name, kind=t.kind, red=t.red, black=t.black) for t in r.army],
        trading_cards=list(r.trading_cards),
        plague_cards=[gpb.PlagueCardKind(index=c.index, name=c.name, effect=c.effect, direction=c.direction,
                                         steps=c.steps, count=c.count) for c in r.plague_cards],
        map_name=m.name,
        territories=[gpb.Territory(id=t.id, name=t.name, kind=_KIND[int(t.kind)], neighbours=list(t.neighbors),
                                   board=t.board, outer_edge=t.outer_edge, joined_corner=t.joined_corner,
                                   cross=t.cross, cells=[x for cell in t.cells for x in cell], label=label)
                     for t, label in zip(m.territories, territory_labels(m))],
        castle_sites=[gpb.CastleSite(id=s.id, territory=s.territory, board=s.board, label=label,
                                     **({} if cell is None else {"row": cell[0], "column": cell[1]}))
                      for s, label, cell in zip(m.castle_sites, castle_site_labels(m), castle_site_cells(m))],
        grid_rows=grid_size(m)[0], grid_columns=grid_size(m)[1],
        plague_start=m.plague_start,
        plague_lattice=[gpb.PlagueLatticeNode(village=v, north=nx[0], east=nx[1], south=nx[2], west=nx[3])
                        for v, nx in m.village_next.items()],
        player_names=[game.player_name(p) for p in range(game.num_players)],
        action_ranges=[gpb.ActionRange(name=name, first=first, size=size, meaning=ACTION_MEANINGS[name])
                       for name, first, size in game.layout.ranges()],
        num_distinct_actions=game.num_distinct_actions, action_encoding=ACTION_ENCODING,
        ruleset_json=json.dumps(r.to_dict()), map_json=json.dumps(m.to_dict()))
    if game.central is not None:
        out.central_hill = game.central
    return out


def phase_to_proto(phase: int) -> int:
    return _ENGINE_TO_PHASE[int(phase)]


# ------------------------------------------------------------------------------------------------ matches
def setup_from_request(req: mpb.CreateMatchRequest) -> MatchSetup:
    """A validated :class:`MatchSetup` from a CreateMatchRequest (InvalidArgument naming the field)."""
    # imported here: the package's __init__ loads the match runner and its bots, which an Advisor client (it
    # imports this module) has no use for
    from ..matches.errors import InvalidArgument
    from ..matches.spec import EXTERNAL, MatchSetup

    g = req.setup
    if g.WhichOneof("ruleset") == "ruleset_json":
        raise InvalidArgument("setup.ruleset_json: a match plays a packaged ruleset; give setup.options")
    if g.WhichOneof("map") == "map_json":
        raise InvalidArgument("setup.map_json: a match plays the packaged map; give setup.board_order or map_seed")
    seats = []
    for i, s in enumerate(req.seats):
        which = s.WhichOneof("player")
        if which == "external" and s.external:
            seats.append(EXTERNAL)
        elif which == "bot" and s.bot.strip() and s.bot.strip() != EXTERNAL:
            seats.append(s.bot)
        else:
            raise InvalidArgument(f"seats[{i}]: expected external: true or a bot spec")
    d: dict[str, Any] = {"players": g.players, "seats": seats, "seed": req.seed}
    if g.WhichOneof("ruleset") == "options":
        o = g.options
        if o.HasField("turns"):
            d["turns"] = o.turns
        d["virulent_plague"] = o.virulent_plague
        d["strategy_only"] = o.strategy_only
    if g.WhichOneof("map") == "board_order":
        d["board_order"] = list(g.board_order.boards)
    else:
        d["board_seed"] = g.map_seed  # unset: seed 0, as GameSetup documents
    if req.castle_sites:
        d["castles"] = list(req.castle_sites)
    try:
        return MatchSetup.from_dict(d)
    except InvalidArgument as e:  # name the request's fields
        msg = str(e)
        for ours, theirs in (("players", "setup.players"), ("turns", "setup.options.turns"),
                             ("board_order", "setup.board_order.boards"), ("board_seed", "setup.map_seed"),
                             ("castles", "castle_sites")):
            if msg.startswith(ours):
                msg = theirs + msg[len(ours):]
                break
        raise InvalidArgument(msg) from None


def request_from_setup(setup: MatchSetup) -> mpb.CreateMatchRequest:
    from ..matches.spec import EXTERNAL

    req = mpb.CreateMatchRequest(seed=setup.seed)
    req.setup.players = setup.players
    req.setup.options.virulent_plague = setup.virulent_plague
    req.setup.options.strategy_only = setup.strategy_only
    if setup.turns is not None:
        req.setup.options.turns = setup.turns
    if setup.board_order is not None:
        req.setup.board_order.boards.extend(setup.board_order)
    else:
        req.setup.map_seed = setup.seed if setup.board_seed is None else setup.board_seed
    for s in setup.seats:
        req.seats.append(mpb.SeatSpec(external=True) if s == EXTERNAL else mpb.SeatSpec(bot=s))
    if setup.castles is not None:
        req.castle_sites.extend(setup.castles)
    return req


def entry_to_proto(ev: dict) -> gpb.HistoryEntry:
    e = gpb.HistoryEntry(pick=ev["pick"],
                         trading_cards_revealed=[gpb.TradingCardReveal(player=q, card=c) for q, c in ev["trades"]])
    if "phase" in ev:
        e.phase = phase_to_proto(ev["phase"])
    if ev["player"] >= 0:
        e.player = ev["player"]
    if ev["action"] is None:
        e.hidden_pick.SetInParent()
    else:
        e.action = ev["action"]
    return e


def event_to_proto(ev: dict) -> mpb.MatchEvent:
    if ev["kind"] == "end":
        return mpb.MatchEvent(action_count=ev["action_count"], end=mpb.MatchEnd(winners=ev["winners"], vp=ev["vp"]),
                              text="the match is over", phase=gpb.PHASE_TERMINAL, stage=gpb.STAGE_GAME_OVER,
                              turn=ev.get("turn", 0))
    msg = mpb.MatchEvent(action_count=ev["action_count"], entry=entry_to_proto(ev), text=ev["text"])
    if "phase" in ev:
        msg.phase = phase_to_proto(ev["phase"])
        msg.stage = stage_to_proto(ev["phase"])
        msg.turn = ev["turn"]
    if ev.get("info") is not None:
        msg.action.CopyFrom(info_to_proto(ev["action"], ev["action_text"], ev["info"]))
    msg.outcomes.extend(outcome_to_proto(o) for o in ev.get("outcomes", ()))
    return msg


def _set_opt(msg: Any, **fields: int) -> Any:
    for name, v in fields.items():
        if v >= 0:
            setattr(msg, name, v)
    return msg


_LOSS = {"eliminated": mpb.LOSS_KIND_ELIMINATED, "wounded": mpb.LOSS_KIND_WOUNDED, "stricken": mpb.LOSS_KIND_STRICKEN}
_VP_REASON = {"elimination": mpb.VP_REASON_ELIMINATION, "city_conquered": mpb.VP_REASON_CITY_CONQUERED,
              "city_lost": mpb.VP_REASON_CITY_LOST, "king_cowards": mpb.VP_REASON_KING_COWARDS}
_MOVE = {"move": mpb.MOVE_KIND_MOVE, "march": mpb.MOVE_KIND_MARCH, "advance": mpb.MOVE_KIND_ADVANCE}


def _loss(x: eo.Loss) -> mpb.TokenLoss:
    return _set_opt(mpb.TokenLoss(player=x.player, token=x.token, result=_LOSS[x.result]), territory=x.territory)


def _vp(v: eo.VpChange) -> mpb.VpChange:
    return mpb.VpChange(player=v.player, delta=v.delta, vp=v.vp, reason=_VP_REASON[v.reason], text=v.text)


def outcome_to_proto(o: Any) -> mpb.Outcome:
    """One :mod:`engine.outcomes` outcome as an ``Outcome`` message (its ``oneof`` names the kind)."""
    if isinstance(o, eo.Fight):
        f = _set_opt(mpb.FightOutcome(
            attacker=o.attacker, territory=o.territory,
            attackers=[mpb.Fighter(player=x.player, token=x.token, strength=x.strength) for x in o.attackers],
            defenders=[mpb.Fighter(player=x.player, token=x.token, strength=x.strength) for x in o.defenders],
            attack_strength=o.attack_strength, defence_strength=o.defence_strength, terrain_bonus=o.terrain_bonus,
            attacker_won=o.attacker_won, attackers_lost=[_loss(x) for x in o.attackers_lost],
            defenders_lost=[_loss(x) for x in o.defenders_lost], vp_changes=[_vp(v) for v in o.vp_changes]),
            winner=o.winner, city_owner_before=o.city_owner_before)
        return mpb.Outcome(fight=f)
    if isinstance(o, eo.Plague):
        return mpb.Outcome(plague=_set_opt(mpb.PlagueOutcome(
            card=o.card, name=o.name, effect=o.effect, territories_struck=list(o.struck),
            victims=[_loss(x) for x in o.victims]), village_before=o.village_before, village_after=o.village_after))
    if isinstance(o, eo.Reveal):
        return mpb.Outcome(reveal=_set_opt(mpb.RevealOutcome(player=o.player, token=o.token), territory=o.territory))
    if isinstance(o, eo.TradingCardReveal):
        return mpb.Outcome(trading_card=mpb.TradingCardOutcome(player=o.player, card=o.card, value=o.value,
                                                               shillings=o.shillings))
    if isinstance(o, eo.Move):
        return mpb.Outcome(move=_set_opt(mpb.MoveOutcome(
            player=o.player, token=o.token, kind=_MOVE[o.how], to_territory=o.destination, cost=max(o.cost, 0),
            shillings_left=o.shillings_left), from_territory=o.origin))
    if isinstance(o, eo.Milady):
        return mpb.Outcome(milady=_set_opt(mpb.MiladyOutcome(player=o.player, infected=[_loss(x) for x in o.infected]),
                                           territory=o.territory, charmed=o.charmed))
    if isinstance(o, eo.CastlePlaced):
        return mpb.Outcome(castle_placed=mpb.CastlePlacedOutcome(player=o.player, castle_site=o.site,
                                                                 territory=o.territory))
    if isinstance(o, eo.OrderChosen):
        return mpb.Outcome(order=mpb.OrderOutcome(decider=o.decider, order=list(o.order)))
    if isinstance(o, eo.Pick):
        return mpb.Outcome(pick=_set_opt(mpb.PickOutcome(player=o.player, selection_done=o.done), token=o.token,
                                         trading_card=o.trading_card))
    if isinstance(o, eo.ChanceDraw):
        purpose = (mpb.ChanceOutcome.PURPOSE_CASTLE_PLACER if o.purpose == "castle_placer"
                   else mpb.ChanceOutcome.PURPOSE_ORDER_DECIDER)
        return mpb.Outcome(chance=mpb.ChanceOutcome(purpose=purpose, player=o.player))
    if isinstance(o, eo.PhaseChange):
        return mpb.Outcome(phase_change=mpb.PhaseChangeOutcome(
            turn=o.turn, tiebreak=o.tiebreak, stage=_STAGE[o.stage], phase=phase_to_proto(o.phase),
            stage_before=_STAGE[o.stage_before], turn_before=o.turn_before))
    if isinstance(o, eo.TurnEnd):
        return mpb.Outcome(turn_end=mpb.TurnEndOutcome(turn=o.turn, vp=list(o.vp),
                                                       tiebreak_players=list(o.tiebreak_players)))
    if isinstance(o, eo.GameEnd):
        return mpb.Outcome(game_end=mpb.GameEndOutcome(winners=list(o.winners), vp=list(o.vp)))
    if isinstance(o, eo.VpChange):
        return mpb.Outcome(vp_change=_vp(o))
    raise TypeError(f"outcome: unknown kind {type(o).__name__}")
