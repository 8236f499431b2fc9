"""The Advisor gRPC service end to end: a real server on a free loopback port, asked through the typed client.

Expected values are checked against the engine independently of the service: the advice's actions must be legal
in the real position, the selection must decode into three ascending SELECT ids and one TRADE id of the action
layout, and the wire answer must equal what :func:`feudo_ai.advise` gives in-process for the same seed.
"""

from __future__ import annotations

import json
import math
import random
import subprocess
import sys
import threading
import time
import urllib.request

import grpc
import pytest
from engine import Phase
from engine.serialize import state_from_dict
from search_helpers import hidden_position, with_other_selections
from service_helpers import ROOT, positions_by_phase, running_server

import feudo_ai
from feudo.v1 import advisor_pb2 as apb
from feudo.v1 import advisor_pb2_grpc as apb_grpc
from feudo.v1 import game_pb2 as gpb
from feudo_ai import ObservedPosition, SearchOptions
from feudo_ai.settings import MAX_PLAYOUT_TURNS
from feudo_ai.client import AdvisorClient, AdvisorError
from feudo_ai.wire.advisor import ServiceConfig
from feudo_ai.wire.convert import position_from


def _key(advice):
    """What a seed and an iteration budget fix (timings left out)."""
    s = advice.stats
    return (advice.seat, advice.decision, advice.best, advice.plan, advice.alternatives, advice.beliefs,
            (s.iterations, s.nodes, s.max_depth, s.worlds_sampled, s.searches))


def _code(excinfo) -> grpc.StatusCode:
    return excinfo.value.code


# ------------------------------------------------------------------------------------------------ DescribeGame
def test_describe_game_gives_map_ruleset_and_action_encoding(client):
    from engine import load_map, load_ruleset, new_game

    d = client.describe_game(players=3)
    m, r = load_map(None, seed=0), load_ruleset()  # unset map: the packaged assembly with seed 0
    assert [t.name for t in d.territories] == [t.name for t in m.territories]
    assert all(list(t.neighbours) == list(m.territories[t.id].neighbors) for t in d.territories)
    assert len(d.castle_sites) == len(m.castle_sites) and d.plague_start == m.plague_start
    assert [a.name for a in d.army] == [a.name for a in r.army] and list(d.trading_cards) == list(r.trading_cards)
    assert len(d.plague_lattice) == len(m.village_next) and d.player_names[:3] == ["Blue", "White", "Yellow"]
    # the ranges tile [0, num_distinct_actions) and agree with the engine's layout of a 3-player game
    layout = new_game(players=3, seed=0).game.layout
    assert [(x.name, x.first, x.size) for x in d.action_ranges] == layout.ranges()
    assert sum(x.size for x in d.action_ranges) == d.num_distinct_actions == layout.num_distinct_actions
    assert all(x.meaning for x in d.action_ranges) and "SELECT" in d.action_encoding


def test_describe_game_rejects_bad_setups_naming_the_field(client):
    for setup, field in ((gpb.GameSetup(players=7), "setup.players"),
                         (gpb.GameSetup(players=2, board_order=gpb.BoardOrder(boards=[0, 0, 1, 2])),
                          "setup.board_order.boards"),
                         (gpb.GameSetup(players=2, map_json="{nope"), "setup.map_json"),
                         (gpb.GameSetup(players=2, ruleset_json='{"format": "x"}'), "setup.ruleset_json")):
        with pytest.raises(AdvisorError) as e:
            client.describe_game(setup)
        assert _code(e) == grpc.StatusCode.INVALID_ARGUMENT and field in e.value.details, e.value.details


# ------------------------------------------------------------------------------------------------ Suggest
@pytest.mark.parametrize("players", [2, 3, 4])
def test_suggest_every_phase_observation_form_matches_in_process_advice(client, players):
    """Every decision phase: the wire answer (observation form, built by the client from the seat's view) equals
    feudo_ai.advise in-process with the same seed, budget and the product's options (greedy playouts: to the end
    of the game in 2 players, with the action prior, one more turn in 3 and 4; in 4 the wide margin), and its plan
    is legal in the real game."""
    playouts = {"playout_greedy": 1.0, "playout_turns": MAX_PLAYOUT_TURNS if players == 2 else 1,
                **({"prior_weight": 4.0, "prior_temperature": 0.25} if players == 2 else {}),
                **({"margin_weight": 0.5, "margin_temperature": 4.0} if players == 4 else {})}
    for phase, state in positions_by_phase(players).items():
        seat = state.current_player()
        advice = client.suggest(state, seat, iterations=300, seed=5)
        local = feudo_ai.advise(state, seat, SearchOptions(iterations=300, seed=5, max_nodes=None, **playouts))
        assert (advice.best, advice.plan, advice.alternatives, advice.beliefs) == \
               (local.best, local.plan, local.alternatives, local.beliefs), phase
        assert advice.stats.backend == "remote" and advice.stats.iterations == local.stats.iterations
        real = state.clone()
        for p in advice.plan:  # the plan is played by the seat, legal move after legal move, in the real game
            assert real.current_player() == seat and p.action in real.legal_actions(), (phase, p)
            assert real.action_to_string(p.action) == p.text
            real.apply_action(p.action)


def test_suggest_pimc_keeps_the_baselines_plain_playouts(client):
    """algorithm=pimc is the baseline: the service's answer is in-process pimc with SearchOptions' plain playouts
    (the greedy ones are the MO-ISMCTS's, above)."""
    state = next(iter(positions_by_phase(2).values()))
    seat = state.current_player()
    advice = client.suggest(state, seat, iterations=300, seed=5, algorithm="pimc")
    local = feudo_ai.advise(state, seat, SearchOptions(iterations=300, seed=5, max_nodes=None, algorithm="pimc"))
    assert (advice.best, advice.plan, advice.alternatives) == (local.best, local.plan, local.alternatives)


@pytest.mark.parametrize("players", [2, 4])
def test_suggest_state_json_form_equals_observation_form(client, players):
    for phase, state in positions_by_phase(players).items():
        seat = state.current_player()
        by_obs = client.suggest(state, seat, iterations=200, seed=9)
        by_json = client.suggest(state.to_json(), seat, iterations=200, seed=9)
        assert _key(by_obs) == _key(by_json), phase


def test_strategy_phase_gives_the_complete_selection(client):
    state = positions_by_phase(4)[Phase.SELECT]
    layout = state.game.layout
    for seat in range(4):  # every seat still selecting may ask, in turn or not (simultaneous in the real game)
        if state.sel_done[seat]:
            continue
        advice = client.suggest(state, seat, iterations=400, seed=1)
        assert advice.decision == "selection"
        ids = [p.action for p in advice.plan]
        picked = sum(state.sel_army[seat]) if seat == state.current_player() else 0
        army = [a - layout.SELECT for a in ids if layout.SELECT <= a < layout.TRADE]
        trade = [a - layout.TRADE for a in ids if layout.TRADE <= a < layout.REVEAL]
        assert len(army) == 3 - picked and army == sorted(army) and len(trade) == 1 and len(ids) == len(army) + 1
        assert all(state.army_held[seat][t] for t in army) and state.trade_held[seat][trade[0]]


def test_hidden_cards_do_not_change_the_advice(client):
    """R22: two full states differing only in the opponents' hidden cards get identical advice (state_json form,
    projected by the server), and the client never sends hidden cards (observation form)."""
    state = hidden_position(4)
    seat = state.current_player()
    other = with_other_selections(state, seat, random.Random(3))
    assert other.canonical() != state.canonical() and other.observation(seat) == state.observation(seat)
    a = client.suggest(state.to_json(), seat, iterations=500, seed=2)
    b = client.suggest(other.to_json(), seat, iterations=500, seed=2)
    assert _key(a) == _key(b)
    sent = position_from(state, seat)
    for q, pv in enumerate(sent.observation.players):
        if q != seat:  # an opponent's selection on the wire is exactly its revealed cards
            assert [t.card_revealed for t in pv.tokens] == state.revealed[q]
            assert pv.HasField("revealed_trading_card") == state.trade_revealed[q]


def test_schema_has_no_field_for_an_opponents_hidden_card():
    """The only hidden-card fields of a position are the asking seat's own selection."""
    def fields(desc, prefix=""):
        for f in desc.fields:
            yield prefix + f.name
            if f.message_type is not None and f.message_type.full_name.startswith("feudo.v1.") \
                    and f.message_type is not desc:
                yield from fields(f.message_type, prefix + f.name + ".")
    names = set(fields(gpb.Observation.DESCRIPTOR))
    secret = {n for n in names if "selection" in n or "selected" in n or "trading_card" in n}
    assert secret == {"own_selection", "own_selection.army_cards", "own_selection.trading_card",
                      "players.selection_done", "players.selected_army_cards", "players.revealed_trading_card",
                      "players.trading_cards_held"}  # the hand (public: cards are discarded face up)


# ------------------------------------------------------------------------------------------------ Analyze
def test_analyze_streams_updates_and_exactly_one_final_message(client):
    state = positions_by_phase(3)[Phase.MOVE]
    seat = state.current_player()
    updates = list(client.analyze(state, seat, seconds=0.8, interval=0.2, seed=4))
    assert len(updates) >= 2
    assert [u.final for u in updates] == [False] * (len(updates) - 1) + [True]
    assert [u.update for u in updates] == list(range(len(updates)))
    its = [u.advice.stats.iterations for u in updates]
    assert its == sorted(its) and its[0] > 0
    last = updates[-1].advice
    assert last.alternatives[0].visits >= last.alternatives[-1].visits and last.plan[0].action in state.legal_actions()
    assert sum(a.visits for a in last.alternatives) <= last.stats.iterations


def test_analyze_with_an_iteration_budget_ends_when_it_is_spent(client):
    state = positions_by_phase(2)[Phase.REVEAL]
    updates = list(client.analyze(state, state.current_player(), iterations=2000, interval=0.05, seed=1))
    assert updates[-1].final and sum(u.final for u in updates) == 1
    assert updates[-1].advice.stats.iterations >= 2000


# ------------------------------------------------------------------------------------------------ LegalActions
def test_legal_actions_are_the_engines(client):
    for phase, state in positions_by_phase(3).items():
        seat = state.current_player()
        got = client.legal_actions(state, seat)
        assert got == [(a, state.action_to_string(a)) for a in state.legal_actions()], phase
    state = positions_by_phase(3)[Phase.MOVE]
    waiting = next(q for q in range(3) if q != state.current_player())
    assert client.legal_actions(state, waiting) == []  # nothing to decide for that seat


# ------------------------------------------------------------------------------------------------ pressure
@pytest.mark.timing
def test_call_deadline_shorter_than_the_budget_answers_in_time(client):
    state = positions_by_phase(4)[Phase.SELECT]
    t = time.monotonic()
    advice = client.suggest(state, state.current_player(), seconds=30.0, timeout=0.6)
    assert time.monotonic() - t < 0.6
    assert advice.stats.limited and advice.decision == "selection" and len(advice.plan) >= 2


@pytest.mark.timing
def test_client_cancel_stops_the_search_quickly(server, client):
    state = positions_by_phase(4)[Phase.MOVE]
    seat = state.current_player()
    stub = apb_grpc.AdvisorStub(client.channel)
    request = apb.SuggestRequest(position=position_from(state, seat), seat=seat, limits=apb.Limits(seconds=20))
    future = stub.Suggest.future(request)
    t0 = time.monotonic()
    while server.servicer.in_flight == 0 and time.monotonic() - t0 < 5:
        time.sleep(0.005)
    assert server.servicer.in_flight == 1
    time.sleep(0.2)
    cancelled = time.monotonic()
    future.cancel()
    while server.servicer.in_flight and time.monotonic() - cancelled < 5:
        time.sleep(0.002)
    stopped = time.monotonic() - cancelled
    assert server.servicer.in_flight == 0
    assert stopped < 0.25, f"the search ran {stopped:.3f} s after the cancel"  # target 50 ms; slack for a busy CI
    assert client.suggest(state, seat, iterations=100).best in state.legal_actions()  # and it keeps serving


def test_limits_beyond_the_caps_are_resource_exhausted():
    cfg = ServiceConfig(max_iterations=10_000, max_seconds=2.0, max_threads=2, max_concurrent_searches=1)
    state = positions_by_phase(2)[Phase.REVEAL]
    seat = state.current_player()
    with running_server(config=cfg) as srv, AdvisorClient(srv.address) as c:
        for kwargs in (dict(iterations=10_001), dict(seconds=2.5), dict(threads=3)):
            with pytest.raises(AdvisorError) as e:
                c.suggest(state, seat, **kwargs)
            assert _code(e) == grpc.StatusCode.RESOURCE_EXHAUSTED, kwargs
            assert next(iter(kwargs)) in e.value.details
        # one search at a time: a second concurrent one is refused, not queued
        stub = apb_grpc.AdvisorStub(c.channel)
        long = stub.Suggest.future(apb.SuggestRequest(position=position_from(state, seat), seat=seat,
                                                      limits=apb.Limits(seconds=1.5)))
        t0 = time.monotonic()
        while srv.servicer.in_flight == 0 and time.monotonic() - t0 < 5:
            time.sleep(0.005)
        with pytest.raises(AdvisorError) as e:
            c.suggest(state, seat, iterations=100)
        assert _code(e) == grpc.StatusCode.RESOURCE_EXHAUSTED and "searches" in e.value.details
        assert c.legal_actions(state, seat)  # cheap calls still go through
        assert long.result(timeout=10).advice.best.id in state.legal_actions()
        assert c.suggest(state, seat, iterations=100).best in state.legal_actions()


@pytest.mark.timing
def test_server_answers_cheap_calls_while_searches_run(server, client):
    """The searches release the GIL and run on their own worker threads: health, DescribeGame and LegalActions are
    answered at once while several searches are running."""
    state = positions_by_phase(4)[Phase.MOVE]
    seat = state.current_player()
    stub = apb_grpc.AdvisorStub(client.channel)
    request = apb.SuggestRequest(position=position_from(state, seat), seat=seat, limits=apb.Limits(seconds=1.5))
    futures = [stub.Suggest.future(request) for _ in range(4)]
    t0 = time.monotonic()
    while server.servicer.in_flight < 4 and time.monotonic() - t0 < 5:
        time.sleep(0.005)
    assert server.servicer.in_flight == 4
    t = time.monotonic()
    assert client.health() == "SERVING"
    assert client.describe_game(players=4).num_distinct_actions > 0
    assert client.legal_actions(state, seat)
    took = time.monotonic() - t
    assert server.servicer.in_flight == 4  # the searches were still running meanwhile
    assert took < 0.5, took
    assert all(f.result(timeout=10).advice.best.id in state.legal_actions() for f in futures)


@pytest.mark.parametrize("limits,field", [
    (dict(iterations=0), "limits.iterations"), (dict(seconds=-1.0), "limits.seconds"),
    (dict(seconds=math.nan), "limits.seconds"), (dict(seconds=math.inf), "limits.seconds"),
    (dict(threads=0), "limits.threads"), (dict(iterations=1, threads=2), "limits.iterations")])
def test_bad_limits_are_invalid_argument(client, limits, field):
    state = positions_by_phase(2)[Phase.REVEAL]
    with pytest.raises(AdvisorError) as e:
        client.suggest(state, state.current_player(), **limits)
    assert _code(e) == grpc.StatusCode.INVALID_ARGUMENT and field in e.value.details


def test_memory_per_search_is_bounded_by_the_node_cap():
    """A long search on a server whose node pool cap is small fills its pool and goes on (R: bounded memory)."""
    state = positions_by_phase(2)[Phase.SELECT]
    with running_server(config=ServiceConfig(max_nodes=5000)) as srv, AdvisorClient(srv.address) as c:
        advice = c.suggest(state, state.current_player(), iterations=20_000, seed=1)
    assert advice.stats.pool_full and advice.stats.iterations >= 20_000 and advice.stats.nodes <= 4 * 5000


# ------------------------------------------------------------------------------------------------ invalid positions
def _obs_request(state, seat):
    return position_from(state, seat)


@pytest.mark.parametrize("edit,field", [
    (lambda p: p.observation.players.pop(), "position.observation.players"),
    (lambda p: setattr(p.observation.players[1].tokens[2], "territory", 999) or
     setattr(p.observation.players[1].tokens[2], "place", gpb.PLACE_MAP),
     "position.observation.players[1].tokens[2].territory"),
    (lambda p: setattr(p.observation, "phase", 0), "position.observation.phase"),
    (lambda p: p.observation.players[0].tokens[0].ClearField("place"), "position.observation.players[0].tokens[0].place"),
    (lambda p: p.observation.own_selection.army_cards.extend([3, 3]), "position.observation.own_selection.army_cards"),
    (lambda p: p.observation.plague.drawn_since_reshuffle.append(1),
     "position.observation.plague.drawn_since_reshuffle"),
    (lambda p: p.observation.city_owners.add(territory=5000, player=0), "position.observation.city_owners[0]"),
    (lambda p: setattr(p.setup, "players", 9), "position.setup.players"),
    (lambda p: p.ClearField("setup"), "position.setup"),
    (lambda p: setattr(p, "state_json", "{}"), "position.setup"),
    (lambda p: (p.ClearField("setup"), setattr(p, "state_json", '{"format": "feudo-state/1"}')),
     "position.state_json"),
    (lambda p: (p.ClearField("setup"), setattr(p, "state_json", "[" * 100_000)), "position.state_json"),
    (lambda p: p.ClearField("observation"), "position: expected one of"),
])
def test_invalid_positions_name_the_field(client, edit, field):
    state = positions_by_phase(3)[Phase.MOVE]
    seat = 1
    position = _obs_request(state, seat)
    edit(position)
    with pytest.raises(AdvisorError) as e:
        client.suggest(position, seat, iterations=50)
    assert _code(e) == grpc.StatusCode.INVALID_ARGUMENT and field in e.value.details, e.value.details


def test_seat_out_of_range_and_seat_without_decision(client):
    state = positions_by_phase(2)[Phase.MOVE]
    with pytest.raises(AdvisorError) as e:
        client.suggest(state.to_json(), 5, iterations=50)
    assert _code(e) == grpc.StatusCode.INVALID_ARGUMENT and "seat" in e.value.details
    waiting = 1 - state.current_player()
    with pytest.raises(AdvisorError) as e:
        client.suggest(state, waiting, iterations=50)
    # a fine position asked by the wrong seat: FAILED_PRECONDITION naming the seat to act (test_service_waiting.py)
    assert _code(e) == grpc.StatusCode.FAILED_PRECONDITION
    assert e.value.details == f"seat {waiting} is not to act; seat {state.current_player()} is"


@pytest.mark.parametrize("players", [2, 3, 4])
def test_history_form_equals_the_observation_form(client, players):
    """The history form (the seat's log, other seats' picks hidden) replays through engine.history to a position
    with the seat's observation: same advice as the observation form, at decisions of turns 1-3."""
    from engine import new_game, sample_chance
    from engine.history import seat_log

    from feudo_ai.wire.convert import history_from_entries

    rng = random.Random(players)
    start = new_game(players=players, seed=players)
    state, actions, pickers, asked = start.clone(), [], [], 0
    while state.turn <= 3 and asked < 4:
        if state.is_chance_node():
            a = sample_chance(state, rng)
        else:
            if len(state.legal_actions()) > 1 and state.turn >= 1 and rng.random() < 0.08:
                seat = state.current_player()
                history = history_from_entries(seat_log(actions, seat, start))
                hidden = sum(e.HasField("hidden_pick") for e in history.entries)
                assert hidden == sum(1 for q in pickers if q != seat) and len(history.entries) == len(actions)
                position = gpb.Position(setup=position_from(state, seat).setup, history=history)
                by_history = client.suggest(position, seat, iterations=150, seed=3)
                by_observation = client.suggest(state, seat, iterations=150, seed=3)
                assert _key(by_history) == _key(by_observation), Phase(state.phase).name
                asked += 1
            a = rng.choice(state.legal_actions())
            if state.phase == Phase.SELECT:
                pickers.append(state.current_player())
        actions.append(a)
        state.apply_action(a)
    assert asked >= 2


def test_bad_history_names_the_entry(client):
    position = gpb.Position(setup=gpb.GameSetup(players=2, map_seed=0))
    position.history.entries.add(player=0, action=999_999)
    with pytest.raises(AdvisorError) as e:
        client.suggest(position, 0, iterations=50)
    assert _code(e) == grpc.StatusCode.INVALID_ARGUMENT and "position.history" in e.value.details
    position.history.entries[0].ClearField("action")
    with pytest.raises(AdvisorError) as e:
        client.suggest(position, 0, iterations=50)
    assert _code(e) == grpc.StatusCode.INVALID_ARGUMENT and "position.history.entries[0]" in e.value.details
    position = gpb.Position(setup=gpb.GameSetup(players=2), history=gpb.History(castle_sites=[0, 0]))
    with pytest.raises(AdvisorError) as e:
        client.suggest(position, 0, iterations=50)
    assert _code(e) == grpc.StatusCode.INVALID_ARGUMENT and "position.history.castle_sites" in e.value.details


# ------------------------------------------------------------------------------------------------ security
def test_api_token_is_required_except_for_health():
    state = positions_by_phase(2)[Phase.REVEAL]
    seat = state.current_player()
    with running_server(token="s3cret") as srv:
        with AdvisorClient(srv.address) as anonymous:
            assert anonymous.health() == "SERVING"
            for call in (lambda: anonymous.suggest(state, seat, iterations=50),
                         lambda: anonymous.describe_game(players=2),
                         lambda: list(anonymous.analyze(state, seat, iterations=50))):
                with pytest.raises(AdvisorError) as e:
                    call()
                assert _code(e) == grpc.StatusCode.UNAUTHENTICATED
        with AdvisorClient(srv.address, token="wrong") as wrong, pytest.raises(AdvisorError) as e:
            wrong.suggest(state, seat, iterations=50)
        assert _code(e) == grpc.StatusCode.UNAUTHENTICATED
        with AdvisorClient(srv.address, token="s3cret") as good:
            assert good.suggest(state, seat, iterations=50).best in state.legal_actions()


def _self_signed(tmp_path):
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out",
                    str(cert), "-days", "1", "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost"],
                   check=True, capture_output=True)
    return key.read_bytes(), cert.read_bytes()


def test_tls(tmp_path):
    key, cert = _self_signed(tmp_path)
    state = positions_by_phase(2)[Phase.REVEAL]
    seat = state.current_player()
    with running_server(tls_cert=cert, tls_key=key) as srv:
        address = f"localhost:{srv.port}"
        with AdvisorClient(address, root_certificates=cert) as c:
            assert c.suggest(state, seat, iterations=50).best in state.legal_actions()
        with AdvisorClient(address) as plaintext, pytest.raises(AdvisorError) as e:
            plaintext.suggest(state, seat, iterations=50, timeout=3)
        assert _code(e) == grpc.StatusCode.UNAVAILABLE


# ------------------------------------------------------------------------------------------------ operations
def test_reflection_lists_the_service(server):
    from grpc_reflection.v1alpha.proto_reflection_descriptor_database import ProtoReflectionDescriptorDatabase

    with grpc.insecure_channel(server.address) as channel:
        db = ProtoReflectionDescriptorDatabase(channel)
        services = db.get_services()
        assert "feudo.v1.Advisor" in services and "grpc.health.v1.Health" in services
        desc = db.FindFileContainingSymbol("feudo.v1.Advisor")
        assert desc.package == "feudo.v1" and "feudo/v1/game.proto" in desc.dependency


@pytest.mark.timing
def test_health_flips_to_not_serving_while_draining():
    state = positions_by_phase(2)[Phase.MOVE]
    seat = state.current_player()
    with running_server() as srv, AdvisorClient(srv.address) as c:
        assert c.health() == "SERVING" and c.health("feudo.v1.Advisor") == "SERVING"
        stub = apb_grpc.AdvisorStub(c.channel)
        in_flight = stub.Suggest.future(apb.SuggestRequest(position=position_from(state, seat), seat=seat,
                                                           limits=apb.Limits(seconds=1.0)))
        time.sleep(0.2)
        drainer = threading.Thread(target=srv.drain, kwargs=dict(grace=5.0, delay=0.6))
        drainer.start()
        time.sleep(0.2)
        assert c.health() == "NOT_SERVING" and c.health("feudo.v1.Advisor") == "NOT_SERVING"
        assert in_flight.result(timeout=5).advice.best.id in state.legal_actions()  # finished, not cut
        drainer.join(10)
        assert not drainer.is_alive()


def test_prometheus_metrics(free_metrics_port=None):
    from service_helpers import free_port

    port = free_port()
    state = positions_by_phase(2)[Phase.REVEAL]
    with running_server(metrics_port=port) as srv, AdvisorClient(srv.address) as c:
        c.suggest(state, state.current_player(), iterations=100)
        with pytest.raises(AdvisorError):
            c.suggest(state, state.current_player(), iterations=0)
        text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    assert 'feudo_advisor_requests_total{code="OK",method="Suggest"} 1.0' in text
    assert 'feudo_advisor_requests_total{code="INVALID_ARGUMENT",method="Suggest"} 1.0' in text
    assert "feudo_advisor_latency_seconds_bucket" in text and "feudo_advisor_searches_in_flight 0.0" in text


def test_one_structured_log_line_per_call(client, caplog):
    state = positions_by_phase(2)[Phase.REVEAL]
    seat = state.current_player()
    with caplog.at_level("INFO", logger="feudo.service"):
        client.suggest(state, seat, iterations=120)
    lines = [json.loads(r.getMessage()) for r in caplog.records if r.name == "feudo.service"]
    assert len(lines) == 1
    line = lines[0]
    assert line["method"] == "Suggest" and line["seat"] == seat and line["phase"] == "REVEAL"
    assert line["status"] == "OK" and line["iterations"] == 120 and line["budget"]["iterations"] == 120
    assert line["latency_ms"] > 0


# ------------------------------------------------------------------------------------------------ command line
def test_feudo_advise_in_process_and_through_a_server(server, tmp_path):
    state = positions_by_phase(4)[Phase.SELECT]
    seat = state.current_player()
    path = tmp_path / "state.json"
    path.write_text(state.to_json())
    base = [sys.executable, "-m", "feudo_ai", "advise", str(path), "--seat", str(seat), "--iterations", "300",
            "--seed", "2"]
    local = subprocess.run(base + ["--json"], capture_output=True, text=True, cwd=str(ROOT), timeout=120)
    assert local.returncode == 0, local.stderr
    remote = subprocess.run(base + ["--json", "--server", server.address], capture_output=True, text=True,
                            cwd=str(ROOT), timeout=120)
    assert remote.returncode == 0, remote.stderr
    a, b = json.loads(local.stdout), json.loads(remote.stdout)
    assert a["decision"] == "selection" and a["plan"] == b["plan"] and a["alternatives"] == b["alternatives"]
    text = subprocess.run(base, capture_output=True, text=True, cwd=str(ROOT), timeout=120).stdout
    assert text.startswith(f"seat {seat} selection: select ") and "visits" in text
    bad = subprocess.run(base[:4] + [str(path), "--seat", "9"], capture_output=True, text=True, cwd=str(ROOT),
                         timeout=120)
    assert bad.returncode == 2 and "seat" in bad.stderr and "Traceback" not in bad.stderr


def test_observed_position_round_trips_through_the_wire_form():
    """Every seat's observation survives the message form unchanged; the seat to act's also passes the loader
    (a waiting seat's view of another player's reveal can be refused by the loader, which cannot see the hidden
    selection it would need)."""
    from feudo_ai.wire.convert import game_from_setup, observation_dict, observed_position

    strip = lambda d: {k: v for k, v in d.items() if k not in ("current_player", "vp_log")}  # noqa: E731
    for players in (2, 3, 4):
        for state in positions_by_phase(players).values():
            for seat in range(players):
                msg = gpb.Position.FromString(position_from(state, seat).SerializeToString())
                want = ObservedPosition.from_state(state, seat)
                got = observation_dict(game_from_setup(msg.setup), msg.observation, seat)
                assert strip(got) == strip(want.observation)
                if seat == state.current_player():
                    back = observed_position(msg, seat)
                    assert back.to_state().canonical() == state_from_dict(
                        state.game, {k: v for k, v in want.observation.items()
                                     if k not in ("selected_count", "seat", "current_player")}).canonical()
