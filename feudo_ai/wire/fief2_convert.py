"""Fief 2 between ``fief2.v1``/``tabletop.v1`` messages and the rules (fief2/): the game's description, setups,
positions, a seat's view, observations and events. Every field a client sends is checked here before it reaches the
rules, with errors naming its path (``position.state_json: ...``)."""

from __future__ import annotations

import functools
import json
from typing import Any

import grpc

from fief2.v1 import game_pb2 as fpb
from tabletop.v1 import tabletop_pb2 as tpb

from ..bounded import quoted
from ..matches.errors import InvalidArgument, MatchError
from ..matches.fief2_service import check_setup, new_state
from .plumbing import Abort

MAX_STATE_CHARS = 512 * 1024  # a Fief 2 state is about 10 KB of JSON; anything much bigger is not one
CARD_KINDS = {n: i + 1 for i, n in enumerate(("lord", "lady", "darc", "bishop", "tithe", "tax", "escape", "plague",
                                              "assassin", "justice", "bad_weather", "good_weather", "famine",
                                              "good_harvest", "peasant_revolt"))}
RANKS = {"baron": fpb.FIEF_RANK_BARON, "count": fpb.FIEF_RANK_COUNT, "duke": fpb.FIEF_RANK_DUKE}


def invalid(message: str) -> Abort:
    return Abort(grpc.StatusCode.INVALID_ARGUMENT, message)


def setup_of(msg: fpb.GameSetup, where: str = "setup") -> dict:
    """A checked setup dict from the message (:raises InvalidArgument: naming the field)."""
    return check_setup({"players": msg.players,
                        "turn_limit": msg.turn_limit if msg.HasField("turn_limit") else None,
                        "scored_turns": msg.scored_turns if msg.HasField("scored_turns") else None}, where)


def setup_to_proto(setup: dict) -> fpb.GameSetup:
    out = fpb.GameSetup(players=setup["players"])
    if setup.get("turn_limit") is not None:
        out.turn_limit = setup["turn_limit"]
    if setup.get("scored_turns") is not None:
        out.scored_turns = setup["scored_turns"]
    return out


@functools.lru_cache(maxsize=64)
def _description(players: int, turn_limit: int | None, scored_turns: int | None) -> bytes:
    setup = {"players": players, "turn_limit": turn_limit, "scored_turns": scored_turns}
    g = new_state(setup).game
    m, rs = g.map, g.ruleset
    out = fpb.GameDescription(setup=setup_to_proto(setup), num_actions=g.num_distinct_actions())
    roads = {tuple(sorted(r)) for r in m.roads}
    out.map.name = m.name
    for v in range(m.num_villages):
        out.map.villages.add(index=v, code=m.village_ids[v], name=m.village_names[v], x=m.xy[v][0], y=m.xy[v][1],
                             fief=m.village_fief[v], bishopric=m.village_bishopric[v], neighbours=list(m.adj[v]))
    for a, b in sorted(roads):
        out.map.roads.add(a=a, b=b)
    for y in range(len(m.fief_ids)):
        out.map.fiefs.add(index=y, code=m.fief_ids[y], name=m.fief_names[y], rank=RANKS[m.fief_rank[y]],
                          villages=list(m.fief_villages[y]), colour=m.fief_colour[y])
    for b in range(len(m.bishopric_ids)):
        out.map.bishoprics.add(index=b, code=m.bishopric_ids[b], name=m.bishopric_names[b],
                               villages=list(m.bishopric_villages[b]))
    out.map.json = json.dumps(m.to_dict(), separators=(",", ":"))
    out.ruleset.name = rs.name
    for p in range(len(rs.person_ids)):
        out.ruleset.persons.add(index=p, code=rs.person_ids[p], name=rs.person_names[p],
                                initial=rs.person_initials[p], male=bool(rs.person_male[p]))
    for c in rs.cards:
        card = out.ruleset.cards.add(index=c.index, code=c.id, kind=CARD_KINDS[c.kind], text=g.card_name(c.index))
        if c.person >= 0:
            card.person = c.person
        if c.bishopric >= 0:
            card.bishopric = c.bishopric
    out.ruleset.hand_size, out.ruleset.start_cash, out.ruleset.money_unit = rs.hand_size, rs.start_cash, rs.money_unit
    out.ruleset.turn_limit, out.ruleset.scored_turns = rs.turn_limit, rs.scored_turns
    out.ruleset.json = json.dumps(rs.to_dict(), separators=(",", ":"))
    for name, first, count in g.layout.kinds:
        out.action_ranges.add(kind=name, first=first, count=count)
    return out.SerializeToString()


def description(setup: dict) -> fpb.GameDescription:
    return fpb.GameDescription.FromString(_description(setup["players"], setup["turn_limit"], setup["scored_turns"]))


def check_seat(seat: int, players: int, where: str = "seat") -> int:
    if not 0 <= seat < players:
        raise invalid(f"{where}: expected an integer in [0, {players}), got {seat}")
    return seat


def state_of(position: fpb.Position, seat: int, matches: Any) -> Any:
    """The whole state a request's position names, ``seat`` checked against it. Only :func:`seat_view`,
    :func:`legal_actions` and the search read it, each only what ``seat`` may know."""
    form = position.WhichOneof("form")
    if form is None:
        raise invalid("position: expected one of state_json, match or observation_json")
    if form == "match":
        ref = position.match
        if ref.seat != seat:
            raise invalid(f"position.match.seat: {ref.seat} is not the request's seat {seat}")
        if matches is None:
            raise Abort(grpc.StatusCode.FAILED_PRECONDITION, "position.match: this server hosts no Fief 2 matches")
        try:
            return matches.seat_state(ref.match_id, ref.seat, ref.token)
        except MatchError as e:
            raise type(e)(f"position.match.{e}") from None
    if form == "observation_json":
        return _state_from_observation(position, seat)
    return _state_from_json(position, seat)


@functools.lru_cache(maxsize=64)
def _game(players: int, turn_limit: int | None, scored_turns: int | None) -> Any:
    """The (immutable) game of a setup, shared by the positions that name it."""
    return new_state({"players": players, "turn_limit": turn_limit, "scored_turns": scored_turns}).game


def _read(position: fpb.Position, where: str, what: str) -> tuple[dict, Any]:
    """The JSON object of a position's text field, and its game (``position.setup``'s, checked)."""
    from engine.checker import parse_json

    text = getattr(position, where.rpartition(".")[2])
    if len(text) > MAX_STATE_CHARS:
        raise invalid(f"{where}: at most {MAX_STATE_CHARS} characters, got {len(text)}")
    try:
        d = parse_json(text, where, InvalidArgument)
    except InvalidArgument as e:
        raise invalid(str(e)) from None
    if not isinstance(d, dict):
        raise invalid(f"{where}: expected {what} JSON object")
    players = d.get("players")
    if not isinstance(players, int) or isinstance(players, bool) or not 3 <= players <= 6:
        raise invalid(f"{where}: players: expected an integer in [3, 6] (F1), got {quoted(players)}")
    if position.HasField("setup"):
        setup = setup_of(position.setup, "position.setup")
        if setup["players"] != players:
            raise invalid(f"position.setup.players: {setup['players']}, but the position is of {players} families")
    else:
        setup = {"players": players, "turn_limit": None, "scored_turns": None}
    return d, _game(setup["players"], setup["turn_limit"], setup["scored_turns"])


def _checked(st: Any, where: str) -> Any:
    """``st`` if the rules can play on from it: a well-typed state may still be one no game reaches (the rules
    would read out of their tables)."""
    from engine.errors import FeudoError
    from fief2.invariants import check_invariants

    try:
        check_invariants(st)
        st.current_player()
        st.legal_actions()
    except (AssertionError, IndexError, KeyError, ValueError, TypeError, FeudoError) as e:
        raise invalid(f"{where}: not a consistent Fief 2 position ({quoted(str(e), 200)})") from None
    return st


def _state_from_json(position: fpb.Position, seat: int) -> Any:
    from engine.errors import FeudoError
    from fief2.state import State

    where = "position.state_json"
    d, game = _read(position, where, 'a "fief2-state/1"')
    check_seat(seat, game.num_players)
    try:
        st = State.from_dict(d, game)
    except FeudoError as e:
        raise invalid(f"{where}: {e}") from None
    return _checked(st, where)


def _state_from_observation(position: fpb.Position, seat: int) -> Any:
    """The search's view of a seat's observation (:func:`feudo_ai.search.games.fief2.seat_view`): the public
    fields and the seat's cards as observed, the other hands a placeholder dealing that depends on the observation
    only. Its legal actions for the seat are the real ones (F47); nothing else of it is read but through
    :func:`seat_view` (which hides the placeholders again)."""
    from engine.errors import FeudoError
    from feudo_ai.search.games.fief2 import ObservedFief2Position, seat_view as search_view

    where = "position.observation_json"
    d, game = _read(position, where, "an observation's")
    check_seat(seat, game.num_players)
    if d.get("seat") != seat:
        raise invalid(f"{where}: seat: the observation is seat {quoted(d.get('seat'))}'s, not the request's seat "
                      f"{seat}")
    try:
        view = search_view(ObservedFief2Position(game, d))
    except FeudoError as e:
        raise invalid(f"{where}: {e}") from None
    return _checked(view, where)


def seat_view(st: Any, seat: int) -> Any:
    """A copy of ``st`` holding only what ``seat`` may know (F46): the other families' hands as placeholders
    (``-1``: their counts are public, their cards are not), their discards and seen cards emptied, a card offered
    in a gift to others hidden: the same projection as fief2's ``State.observation``. For pictures, not for
    rules: a placeholder is not a card."""
    from fief2.state import A_GIVE, FR_ANSWER

    v = st.clone()
    for q in range(st.num_players):
        if q != seat:
            v.hands[q] = [-1] * len(st.hands[q])
            v.discards_seen[q] = []
            v.seen_cards[q] = []
    for fr in v.stack:
        if fr[0] == FR_ANSWER and fr[3] == A_GIVE and seat not in (fr[1], fr[2]):
            fr[4] = -1
    return v


def to_act(st: Any) -> int | None:
    cp = st.current_player()
    return cp if cp >= 0 else None


def legal_actions(st: Any, seat: int) -> list[tpb.Action]:
    """The seat's legal actions: none unless it is to act (F47: its decisions depend only on what it knows)."""
    if to_act(st) != seat:
        return []
    return [tpb.Action(id=a, text=st.action_to_string(a)) for a in st.legal_actions()]


def observation_to_proto(obs: dict) -> fpb.Observation:
    from ..matches.fief2_service import observation_json

    seat = obs["seat"]
    out = fpb.Observation(seat=seat, turn=obs["turn"], phase=obs["phase"] + 1, hand=obs["hands"][seat],
                          hand_counts=obs["hand_counts"], deck_count=obs["deck_count"], cash=obs["cash"],
                          json=observation_json(obs))
    if obs["current_player"] >= 0:
        out.to_act = obs["current_player"]
    return out
