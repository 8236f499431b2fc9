"""Matches.ReplayRecord over gRPC and Connect, from a real `feudo serve`: a finished match's record and the same
game sent as a "feudo-game/1" document replay to the same positions; each seat's view at every action count is the
engine's own projection of the replayed position (R22: another seat's pick is a hidden pick), the public view holds
no selection; the final VP are GetRecord's; a match still running is refused; a bad record is INVALID_ARGUMENT
naming the field or the action, over both protocols."""

from __future__ import annotations

import json
import signal

import grpc
import pytest
from google.protobuf import json_format
from test_web_connect import post, start

from engine.history import apply_logged
from engine.record import GameRecord
from feudo.v1 import matches_pb2 as mpb
from feudo.v1 import matches_pb2_grpc as mpb_grpc
from feudo_ai.matches.client import MatchesClient, MatchesError
from feudo_ai.wire.convert import observation_from_dict, setup_from_request


@pytest.fixture(scope="module")
def served():
    proc, grpc_address, http = start()
    channel = grpc.insecure_channel(grpc_address)
    stub = mpb_grpc.MatchesStub(channel)
    created = stub.CreateMatch(mpb.CreateMatchRequest(setup={"players": 2, "options": {"turns": 1}}, seed=11,
                                                      seats=[{"bot": "random"}, {"bot": "random"}]))
    events = list(stub.WatchMatch(mpb.WatchMatchRequest(match_id=created.match_id), timeout=60))
    assert events[-1].HasField("end")
    yield stub, http, created.match_id, stub.GetRecord(mpb.GetRecordRequest(match_id=created.match_id)), grpc_address
    channel.close()
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(15) == 0


def states_of(record: mpb.GetRecordResponse):
    """Every position of the record and the full log entries, replayed here by the engine (the check's own)."""
    state = setup_from_request(record.match).start_state(backend="reference")
    states, entries = [state.clone()], []
    for a in record.actions:
        entries.append(apply_logged(state, a))
        states.append(state.clone())
    return states, entries


def game_record_json(record: mpb.GetRecordResponse) -> str:
    game = setup_from_request(record.match).start_state(backend="reference").game
    return GameRecord(game.ruleset, game.map, game.num_players, 0, list(record.actions)).to_json()


def test_each_seats_view_at_every_count_is_the_engines_projection_and_picks_of_others_are_hidden(served):
    """R22: at every action count seat s gets the engine's observation for s of the replayed position; the event of
    another seat's Strategy pick is a hidden pick; the public view has no selection and hides every pick."""
    stub, _, match_id, record, _ = served
    states, entries = states_of(record)
    game = states[0].game
    hidden_seen = own_seen = 0
    for seat in (0, 1, None):
        for k in range(len(record.actions) + 1):
            req = mpb.ReplayRecordRequest(match_id=match_id, action_count=k)
            if seat is not None:
                req.seat = seat
            r = stub.ReplayRecord(req)
            assert r.action_count == k and r.total_actions == len(record.actions)
            if seat is not None:
                assert r.observation == observation_from_dict(game, states[k].observation(seat))
            else:
                assert not r.observation.HasField("own_selection") and not r.observation.HasField("seat")
                assert [p.vp for p in r.observation.players] == list(states[k].vp)
            if k == 0:
                assert not r.HasField("event")
                continue
            entry = entries[k - 1]
            assert r.event.action_count == k
            if entry.pick and entry.player != seat:
                hidden_seen += 1
                assert r.event.entry.HasField("hidden_pick") and not r.event.entry.HasField("action")
                assert r.event.text.endswith("secret Strategy pick")
            elif entry.pick:
                own_seen += 1
                assert r.event.entry.action == record.actions[k - 1]
    assert hidden_seen >= 8 + 8 and own_seen >= 8  # turn 1's four picks each, seen by the other seat and the public


def test_the_end_gives_getrecords_vp_and_the_same_game_sent_as_a_file_replays_the_same(served):
    stub, _, match_id, record, _ = served
    total = len(record.actions)
    end = stub.ReplayRecord(mpb.ReplayRecordRequest(match_id=match_id, action_count=total))
    assert end.finished and [p.vp for p in end.observation.players] == list(record.vp)
    assert list(end.observation.winners) == list(record.winners)
    text = game_record_json(record)
    for k in (0, 7, total // 2, total):
        for seat in (0, 1):
            a = stub.ReplayRecord(mpb.ReplayRecordRequest(match_id=match_id, action_count=k, seat=seat))
            b = stub.ReplayRecord(mpb.ReplayRecordRequest(record_json=text, action_count=k, seat=seat))
            assert a.observation == b.observation and a.event == b.event and a.finished == b.finished


def test_connect_json_answers_as_grpc(served):
    stub, http, match_id, record, _ = served
    k = len(record.actions) // 2
    status, body = post(f"{http}/feudo.v1.Matches/ReplayRecord", {"matchId": match_id, "actionCount": str(k), "seat": 1})
    assert status == 200
    want = stub.ReplayRecord(mpb.ReplayRecordRequest(match_id=match_id, action_count=k, seat=1))
    assert body == json_format.MessageToDict(want)


def test_a_match_still_running_is_refused(served):
    stub, _, _, _, _ = served
    live = stub.CreateMatch(mpb.CreateMatchRequest(setup={"players": 2}, seats=[{"external": True}, {"bot": "random"}]))
    with pytest.raises(grpc.RpcError) as e:
        stub.ReplayRecord(mpb.ReplayRecordRequest(match_id=live.match_id, action_count=0))
    assert e.value.code() == grpc.StatusCode.FAILED_PRECONDITION and "is not over" in e.value.details()


def test_bad_records_are_invalid_arguments_naming_the_field_or_action(served):
    stub, http, match_id, record, _ = served
    good = json.loads(game_record_json(record))
    impossible = dict(good, actions=list(good["actions"][:5]) + [99999] + list(good["actions"][6:]))
    too_long = dict(good, actions=list(good["actions"]) + [0])
    cases = [
        ({"record_json": "not json"}, "record_json: invalid JSON"),
        ({"record_json": json.dumps(dict(good, format="feudo-state/1"))}, 'record_json: format: expected "feudo-game/1"'),
        ({"record_json": json.dumps({k: v for k, v in good.items() if k != "map"})}, "record_json: map: missing"),
        ({"record_json": json.dumps(dict(good, actions=["x"]))}, "record_json: actions: expected a list of integers"),
        ({"record_json": json.dumps(impossible)}, "record_json: actions[5]: action 99999"),
        ({"record_json": json.dumps(too_long)}, f"record_json: actions[{len(record.actions)}]: the game ended"),
        ({"record_json": " " * 1_000_001}, "record_json: at most 1000000 characters"),
        ({"match_id": match_id, "action_count": len(record.actions) + 1}, "action_count: at most"),
        ({"match_id": match_id, "seat": 2}, "seat: expected 0..1 or unset"),
        ({}, "record: expected match_id or record_json"),
    ]
    for fields, message in cases:
        with pytest.raises(grpc.RpcError) as e:
            stub.ReplayRecord(mpb.ReplayRecordRequest(**fields))
        assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT, fields
        assert e.value.details().startswith(message), (e.value.details(), message)
    status, body = post(f"{http}/feudo.v1.Matches/ReplayRecord", {"recordJson": json.dumps(impossible)})
    assert status == 400 and body["code"] == "invalid_argument" and body["message"].startswith("record_json: actions[5]")


def test_the_python_client_replays_as_the_stub(served):
    stub, _, match_id, record, address = served
    with MatchesClient(address) as client:
        for seat in (None, 1):
            got = client.replay(5, seat, match_id=match_id)
            req = mpb.ReplayRecordRequest(match_id=match_id, action_count=5)
            if seat is not None:
                req.seat = seat
            assert got == stub.ReplayRecord(req)
        assert client.replay(0, record_json=game_record_json(record)).total_actions == len(record.actions)
        with pytest.raises(MatchesError) as e:
            client.replay(0, record_json="[]")
        assert e.value.code == grpc.StatusCode.INVALID_ARGUMENT and "record_json: format" in str(e.value)
