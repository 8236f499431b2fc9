"""Hostile input to the Advisor: random-but-valid messages (hypothesis), random bytes as requests and on the port,
oversized messages, absurd budgets. The server answers INVALID_ARGUMENT / RESOURCE_EXHAUSTED (or closes the
connection) and keeps serving; it never answers INTERNAL or UNKNOWN, and never dies."""

from __future__ import annotations

import os
import random
import socket

import grpc
import pytest
from engine import Phase
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from service_helpers import positions_by_phase

from feudo.v1 import advisor_pb2 as apb
from feudo.v1 import game_pb2 as gpb
from feudo_ai.client import AdvisorError
from feudo_ai.wire.convert import position_from

# OK, a bad position, or a fine position asked by a seat that is not to act (FAILED_PRECONDITION)
ANSWERS = {grpc.StatusCode.OK, grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.FAILED_PRECONDITION}


def _alive(client) -> None:
    state = positions_by_phase(2)[Phase.REVEAL]
    assert client.health() == "SERVING"
    assert client.suggest(state, state.current_player(), iterations=50).best in state.legal_actions()


def _code(fn) -> grpc.StatusCode:
    try:
        fn()
    except AdvisorError as e:
        return e.code
    return grpc.StatusCode.OK


# One mutation: a path into the observation message and a new value of the field's type.
_U32 = st.one_of(st.integers(0, 12), st.integers(0, 2**32 - 1))
_I32 = st.one_of(st.integers(-3, 12), st.integers(-(2**31), 2**31 - 1))


@st.composite
def mutations(draw):
    kind = draw(st.sampled_from(["token", "player", "context", "plague", "top", "own", "list"]))
    return kind, draw(st.integers(0, 3)), draw(st.integers(0, 9)), draw(st.integers(0, 40)), \
        draw(_U32), draw(_I32), draw(st.booleans())


def _mutate(obs: gpb.Observation, m) -> None:
    kind, p, t, which, u, i, b = m
    players = obs.players
    pv = players[p % len(players)]
    tv = pv.tokens[t % len(pv.tokens)]
    if kind == "token":
        name = ["place", "territory", "stricken", "entered", "rests_until_turn", "card_held", "card_revealed",
                "marched_into_wood", "attacked_this_turn"][which % 9]
        setattr(tv, name, (u % 5) if name == "place" else (b if isinstance(getattr(tv, name), bool) else u))
    elif kind == "player":
        name = ["active", "castle_site", "vp", "selection_done", "selected_army_cards", "revealed_trading_card",
                "charmed", "mercenaries_moved"][which % 8]
        value = b if name in ("active", "selection_done", "charmed") else (i if name == "vp" else u)
        setattr(pv, name, value)
    elif kind == "context":
        name = ["cursor", "round", "token", "shillings", "target", "decider"][which % 6]
        setattr(obs.context, name, i if name in ("cursor", "round") else u)
    elif kind == "plague":
        name = ["village", "card_this_turn"][which % 2]
        setattr(obs.plague, name, u)
        if which % 3 == 0:
            obs.plague.history.append(u)
    elif kind == "top":
        name = ["turn", "phase", "tiebreak", "king_intervened"][which % 4]
        setattr(obs, name, b if name == "king_intervened" else (u % 16 if name == "phase" else u))
    elif kind == "own":
        if which % 2:
            obs.own_selection.army_cards.append(u % 12)
        else:
            obs.own_selection.trading_card = u % 7
    else:
        target = [obs.order, obs.placed, obs.winners, obs.context.joiners, obs.context.advanced][which % 5]
        if b and len(target):
            del target[-1]
        else:
            target.append(u % 6)
        if which % 7 == 0:
            obs.context.won.add(player=u % 5, territory=u % 100, tokens=[t], baron_took_part=b)
        if which % 11 == 0:
            obs.city_owners.add(territory=u % 100, player=p)


_BASES = [(players, phase) for players in (2, 3, 4) for phase in (Phase.SELECT, Phase.REVEAL, Phase.MOVE,
                                                                    Phase.MARCH, Phase.ATTACK, Phase.ADVANCE)]


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(base=st.sampled_from(_BASES), muts=st.lists(mutations(), min_size=1, max_size=4), seat=st.integers(0, 3))
def test_random_but_valid_observations_are_answered_or_rejected(client, base, muts, seat):
    players, phase = base
    found = positions_by_phase(players)
    state = found.get(phase) or found[Phase.REVEAL]  # a phase the seeded games did not reach: another base
    seat %= players
    position = position_from(state, seat)
    for m in muts:
        _mutate(position.observation, m)
    code = _code(lambda: client.suggest(position, seat, iterations=30, seed=1))
    assert code in ANSWERS
    code = _code(lambda: client.legal_actions(position, seat))
    assert code in ANSWERS


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.binary(max_size=600))
def test_random_bytes_as_requests_are_invalid_argument(server, data):
    with grpc.insecure_channel(server.address) as channel:
        for method in ("Suggest", "LegalActions", "DescribeGame"):
            call = channel.unary_unary(f"/feudo.v1.Advisor/{method}")  # bytes in, bytes out
            try:
                call(data, timeout=10)
            except grpc.RpcError as e:
                assert e.code() == grpc.StatusCode.INVALID_ARGUMENT, (method, e.code(), e.details())


def test_random_bytes_on_the_port_do_not_hurt_the_server(server, client):
    rng = random.Random(7)
    host, port = server.address.rsplit(":", 1)
    preface = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
    for i in range(30):
        with socket.create_connection((host, int(port)), timeout=5) as sock:
            payload = bytes(rng.getrandbits(8) for _ in range(rng.randint(1, 4000)))
            sock.sendall((preface if i % 2 else b"") + payload)
            sock.settimeout(0.2)
            try:
                sock.recv(1024)
            except (socket.timeout, ConnectionResetError):
                pass
    _alive(client)


def test_oversized_messages_are_refused(server, client):
    big = gpb.Position(state_json="x" * (2 << 20))
    request = apb.SuggestRequest(position=big, seat=0)
    options = [("grpc.max_send_message_length", 8 << 20), ("grpc.max_receive_message_length", 8 << 20)]
    with grpc.insecure_channel(server.address, options=options) as channel:
        call = channel.unary_unary("/feudo.v1.Advisor/Suggest", request_serializer=apb.SuggestRequest.SerializeToString,
                                   response_deserializer=apb.SuggestResponse.FromString)
        with pytest.raises(grpc.RpcError) as e:
            call(request, timeout=10)
        assert e.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    _alive(client)


@pytest.mark.parametrize("limits,code", [
    (dict(iterations=2**63), grpc.StatusCode.RESOURCE_EXHAUSTED),
    (dict(seconds=1e300), grpc.StatusCode.RESOURCE_EXHAUSTED),
    (dict(threads=2**31), grpc.StatusCode.RESOURCE_EXHAUSTED),
    (dict(seconds=1e-300), grpc.StatusCode.INVALID_ARGUMENT),  # below 1 ms: an absurd budget, refused
    (dict(seconds=0.001), grpc.StatusCode.OK),  # the smallest budget still answers a whole decision
    (dict(iterations=1, seed=2**64 - 1), grpc.StatusCode.OK),
])
def test_absurd_budgets(client, limits, code):
    state = positions_by_phase(3)[Phase.SELECT]
    seat = state.current_player()
    assert _code(lambda: client.suggest(state, seat, **limits)) == code
    if code == grpc.StatusCode.OK:
        advice = client.suggest(state, seat, **limits)
        assert advice.decision == "selection" and len(advice.plan) == 4


def test_analyze_with_absurd_interval_is_invalid_argument(client):
    state = positions_by_phase(2)[Phase.MOVE]
    seat = state.current_player()
    for interval in (-1.0, float("nan")):
        with pytest.raises(AdvisorError) as e:
            list(client.analyze(state, seat, iterations=100, interval=interval))
        assert e.value.code == grpc.StatusCode.INVALID_ARGUMENT and "interval_seconds" in e.value.details
    # a microscopic interval is raised to the server's minimum: a short stream, not a flood
    updates = list(client.analyze(state, seat, seconds=0.3, interval=1e-9))
    assert updates[-1].final and len(updates) <= 0.3 / 0.05 + 2


def test_hostile_json_in_state_and_setup(client):
    deep = "[" * 50_000 + "]" * 50_000
    for position in (gpb.Position(state_json=deep), gpb.Position(state_json="\x00\xff"),
                     gpb.Position(setup=gpb.GameSetup(players=2, map_json=deep), observation=gpb.Observation()),
                     gpb.Position(setup=gpb.GameSetup(players=2, ruleset_json='{"format": "feudo-ruleset/1"}'),
                                  observation=gpb.Observation())):
        assert _code(lambda: client.suggest(position, 0, iterations=10)) == grpc.StatusCode.INVALID_ARGUMENT
    _alive(client)
    assert os.getpid()  # the test process (and the in-process server) is alive
