"""Fief 2's hosted matches in the store, beside Feudo's: real databases (a SQLite file, and PostgreSQL through the
session's ``postgres`` fixture, :mod:`pg_helpers`), real services, real server processes for a ``kill -9``.

- a match with a bot seat and an external seat survives a restart (a close, or an object dropped without closing):
  the same observation and legal actions for the seat, the match plays on to its end, and its record replays to the
  same final state, every chance outcome the seed's draw (checked with fief2's own sampler, not the service's);
- a server process killed with SIGKILL restarts with every acknowledged action;
- an idle match is retired from memory, listed, and loaded back on its next call; a finished one is read from the
  store after a restart (GetRecord, ListMatches);
- a version-2 database (made by the current migrations 1 and 2) is upgraded in place, its Feudo match still there;
- Feudo's and Fief 2's matches in one database never see each other;
- on PostgreSQL, two services (replicas) share a Fief 2 match: an action submitted on one is seen by the other, whose
  bots (the lease's holder) answer it; the same submit on the other is a retry; when the bots' replica stops, the
  other takes its bots on and the match ends.
"""

from __future__ import annotations

import json
import random
import sqlite3

import grpc
import psycopg
import pytest

from fief2 import GameRecord, new_game, sample_chance
from fief2.v1 import game_pb2 as gpb
from fief2.v1 import matches_pb2 as mpb
from fief2.v1 import matches_pb2_grpc as mpb_grpc
from tabletop.v1 import tabletop_pb2 as tpb
from test_service_limits import Server

from feudo_ai.matches import store as store_module
from feudo_ai.matches.client import MatchesClient
from feudo_ai.matches.database import open_store
from feudo_ai.matches.errors import FailedPrecondition, NotFound
from feudo_ai.matches.fief2_service import Fief2MatchService, observation_json
from feudo_ai.matches.service import MatchService
from feudo_ai.matches.store import FIEF2, SCHEMA_VERSION

SETUP = {"players": 3, "turn_limit": 2}
SEATS = ["greedy", None, "greedy"]  # seat 1 is played here
ME = 1


@pytest.fixture(params=["sqlite", "postgres"])
def db(request, tmp_path):
    if request.param == "sqlite":
        return str(tmp_path / "matches.db")
    return request.getfixturevalue("postgres").new_database()


def my_turn(svc: Fief2MatchService, mid: str) -> None:
    """Wait until seat 1 is to act or the match is over (the bots move in the background)."""
    assert svc.wait(mid, 60, until=lambda m: m.finished or m.to_act() == ME)


def play(svc: Fief2MatchService, mid: str, token: str, rng: random.Random, decisions: int | None) -> int:
    """Seat 1's random legal decisions (all of them to the end if ``decisions`` is None); how many were made."""
    made = 0
    while decisions is None or made < decisions:
        my_turn(svc, mid)
        o = svc.get_observation(mid, ME, token)
        if o["finished"]:
            break
        a = rng.choice(o["legal_actions"])[0]
        assert svc.submit_action(mid, ME, token, a, o["action_count"]) == {"action_count": o["action_count"] + 1,
                                                                          "retry": False}
        made += 1
    return made


def check_record_replays_to(record: dict, final_observations: list[str]) -> None:
    """The record replays (fief2's own replay) to the final observations given, and every chance outcome in it is
    the next draw of ``random.Random(seed)`` (fief2's sampler): the same cards and dice as a server that never
    stopped."""
    rec = GameRecord.from_json(record["json"])
    st, rng = rec.replay(0), random.Random(rec.seed)
    for i, a in enumerate(rec.actions):
        if st.is_chance_node():
            assert a == sample_chance(st, rng), f"chance outcome {i} is not the seed's draw"
        st.apply_action(a)
    assert st.is_terminal()
    assert [observation_json(st.observation(f)) for f in range(st.num_players)] == final_observations
    assert [observation_json(rec.replay().observation(f)) for f in range(st.num_players)] == final_observations


@pytest.mark.parametrize("abrupt", [False, True], ids=["closed", "dropped"])
def test_a_match_survives_a_restart_with_the_same_view_and_plays_to_its_end(db, abrupt):
    svc = Fief2MatchService(db)
    r = svc.create_match(SETUP, SEATS, seed=7)
    mid, token = r["match_id"], r["tokens"][ME]
    assert play(svc, mid, token, random.Random(1), 4) == 4
    my_turn(svc, mid)
    before = svc.get_observation(mid, ME, token)
    logged = list(svc._matches[mid].actions)
    assert not before["finished"] and before["legal_actions"]
    if abrupt:  # dropped without closing: nothing more is written than what each call committed
        svc._closed.set()  # (its idle bot threads end; the store is left open as a killed server leaves it)
    else:
        svc.close()
    again = Fief2MatchService(db)
    try:
        after = again.get_observation(mid, ME, token)
        assert after == before  # F46: the seat's own observation, and its legal actions, as before the restart
        assert observation_json(after["observation"]) == observation_json(before["observation"])
        assert again._matches[mid].actions == logged
        with pytest.raises(Exception, match="token"):
            again.get_observation(mid, ME, "x" * 43)  # the token's hash was kept, not the token
        play(again, mid, token, random.Random(2), None)
        m = again._matches[mid]
        final = [observation_json(m.state.observation(f)) for f in range(3)]
        record = again.get_record(mid)
        assert json.loads(record["json"])["seed"] == 7 and record["seats"] == ["greedy", "external", "greedy"]
        assert json.loads(record["json"])["actions"][:len(logged)] == logged
        check_record_replays_to(record, final)
        (listed,) = [s for s in again.list_matches() if s["match_id"] == mid]
        assert listed["finished"] and listed["action_count"] == len(m.actions)
    finally:
        again.close()
        if abrupt:
            svc.store.close()  # (the dropped service's connections, once the test no longer needs them open)
    third = Fief2MatchService(db)  # finished: marked retired at close, read from the store, not loaded
    try:
        assert mid not in third._matches
        assert third.get_record(mid) == record
        assert [s["finished"] for s in third.list_matches() if s["match_id"] == mid] == [True]
    finally:
        third.close()


def test_an_idle_match_is_retired_then_loaded_back_on_its_next_call(db):
    svc = Fief2MatchService(db, idle_seconds=0, finished_seconds=None, sweep_every=3600)
    try:
        r = svc.create_match(SETUP, SEATS, seed=3)
        mid, token = r["match_id"], r["tokens"][ME]
        play(svc, mid, token, random.Random(5), 2)
        my_turn(svc, mid)
        before = svc.get_observation(mid, ME, token)
        assert svc.sweep() == 1 and mid not in svc._matches  # an external seat to act, no watcher: idle
        assert svc.store.retired(mid, game=FIEF2)[0] is False
        with pytest.raises(FailedPrecondition, match="not over"):  # F52: no record (every card) before the end
            svc.get_record(mid)
        (listed,) = [s for s in svc.list_matches() if s["match_id"] == mid]
        assert listed["action_count"] == before["action_count"] and not listed["finished"]
        assert svc.get_observation(mid, ME, token) == before  # loaded back: the same position
        assert mid in svc._matches and svc.store.retired(mid, game=FIEF2) is None
        rng, n = random.Random(6), before["action_count"]
        for _ in range(50):  # and it plays on, its bots too (seat 1 may have several decisions in a row)
            play(svc, mid, token, rng, 1)
            my_turn(svc, mid)
            if {0, 2} & set(svc._matches[mid].actors[n:]) or svc._matches[mid].finished:
                break
        assert {0, 2} & set(svc._matches[mid].actors[n:])
    finally:
        svc.close()


def test_a_match_with_an_opening_of_its_own_chance_is_loaded_again_and_draws_on_from_its_seed(tmp_path):
    """The opening's chance was chosen by the creator, not drawn from the seed: a restart replays it as given, and
    the chance after it, before and after the restart, is the seed's (the generator starts after the opening)."""
    st, rng, opening = new_game(players=3, turn_limit=3), random.Random(99), []
    while len(opening) < 20 or st.is_chance_node():  # dealt by another generator than the match's
        a = sample_chance(st, rng) if st.is_chance_node() else rng.choice(st.legal_actions())
        st.apply_action(a)
        opening.append(a)

    def decide(svc: Fief2MatchService, mid: str, tokens: dict, n: int) -> None:
        for _ in range(n):
            m = svc._matches[mid]
            if m.finished:
                return
            seat = m.to_act()
            o = svc.get_observation(mid, seat, tokens[seat])
            svc.submit_action(mid, seat, tokens[seat], o["legal_actions"][-1][0], o["action_count"])

    db = str(tmp_path / "m.db")
    svc = Fief2MatchService(db, run_bots=False)
    r = svc.create_match({"players": 3, "turn_limit": 3}, [None] * 3, seed=5, opening=opening)
    mid, tokens = r["match_id"], r["tokens"]
    while None not in svc._matches[mid].actors[len(opening):]:  # until a chance outcome is drawn from the seed
        decide(svc, mid, tokens, 1)
    logged = list(svc._matches[mid].actions)
    assert logged[:len(opening)] == opening
    svc.close()
    again = Fief2MatchService(db, run_bots=False)
    try:
        assert again.unloadable == {} and again._matches[mid].actions == logged
        decide(again, mid, tokens, 5000)  # to its end: chance after the restart too
        log = again._matches[mid].actions
        assert log[:len(logged)] == logged and again._matches[mid].finished
    finally:
        again.close()
    st, draws, chance = new_game(players=3, turn_limit=3), random.Random(5), [0, 0]
    for i, a in enumerate(log):  # fief2's own sampler: the chance after the opening is the seed's, in order
        if i >= len(opening) and st.is_chance_node():
            assert a == sample_chance(st, draws), f"chance outcome {i}"
            chance[i >= len(logged)] += 1
        st.apply_action(a)
    assert chance[0] > 0 and chance[1] > 0  # before the restart and after it


def test_a_finished_match_is_retired_and_its_record_read_from_the_store(tmp_path):
    svc = Fief2MatchService(str(tmp_path / "m.db"), finished_seconds=0, sweep_every=3600)
    try:
        mid = svc.create_match({"players": 3, "turn_limit": 1}, ["greedy"] * 3, seed=4)["match_id"]
        assert svc.wait(mid, 60)
        record = svc.get_record(mid)
        assert svc.sweep() == 1 and mid not in svc._matches
        assert svc.get_record(mid) == record and mid not in svc._matches  # read as it is, not loaded back
        assert [s["finished"] for s in svc.list_matches() if s["match_id"] == mid] == [True]
    finally:
        svc.close()


def test_feudo_and_fief2_matches_in_one_database_never_see_each_other(db):
    feudo = MatchService(db, run_bots=False)
    fief2 = Fief2MatchService(store=feudo.store, run_bots=False)
    try:
        f1 = feudo.create_match({"players": 2, "seats": ["external", "external"], "seed": 3, "turns": 1})["match_id"]
        f2 = fief2.create_match(SETUP, [None] * 3, seed=9)["match_id"]
        assert [s["match_id"] for s in feudo.list_matches()] == [f1]
        assert [s["match_id"] for s in fief2.list_matches()] == [f2]
        with pytest.raises(NotFound):
            fief2.get_record(f1)
        with pytest.raises(NotFound):
            feudo.get_record(f2)
        assert feudo.store.load(f2) is None and feudo.store.load(f2, game=FIEF2) is not None
    finally:
        fief2.close()
        feudo.close()
    # a server starting again loads each game's live matches into its own service only
    feudo = MatchService(db, run_bots=False)
    fief2 = Fief2MatchService(store=feudo.store, run_bots=False)
    try:
        if not feudo.shared:  # (on a shared database matches are loaded on demand)
            assert set(feudo._matches) == {f1} and set(fief2._matches) == {f2}
        assert [s["match_id"] for s in feudo.list_matches()] == [f1]
        assert [s["match_id"] for s in fief2.list_matches()] == [f2]
    finally:
        fief2.close()
        feudo.close()


def test_a_version_2_database_is_upgraded_in_place_with_its_feudo_match(db, monkeypatch):
    # a Feudo match as the current code writes it, copied below into a version-2 database
    ref = MatchService(":memory:", run_bots=False)
    r = ref.create_match({"players": 2, "seats": ["external", "external"], "seed": 3, "turns": 1})
    mid = r["match_id"]
    seat = ref.public_observation(mid)["current_player"]
    token = r["tokens"][seat]
    obs = ref.get_observation(mid, seat, token)
    ref.submit_action(mid, seat, token, obs["legal_actions"][0]["action"], obs["action_count"])
    row = ref.store._read("SELECT id, setup, token_hashes, created, summary FROM matches")[0]
    actions = ref.store.actions_from(mid, 0)
    expected = ref.get_observation(mid, seat, token)
    ref.close()

    with monkeypatch.context() as patch:  # the current migrations 1 and 2 only: a version-2 database
        patch.setattr(store_module, "SCHEMA_VERSION", 2)
        v2 = open_store(db)
        assert v2.schema_version() == 2
        v2.close()
    insert = [("INSERT INTO matches (id, setup, token_hashes, created, summary, bots, finished) "
               "VALUES (?, ?, ?, ?, ?, 0, 0)", row)]
    insert += [("INSERT INTO actions (match_id, idx, action) VALUES (?, ?, ?)", (mid, i, a))
               for i, a in enumerate(actions)]
    if db.startswith("postgresql://"):
        with psycopg.connect(db, autocommit=True) as conn:
            assert "game" not in [c.name for c in conn.execute("SELECT * FROM matches LIMIT 0").description]
            for sql, args in insert:
                conn.execute(sql.replace("?", "%s"), args)
    else:
        with sqlite3.connect(db) as conn:
            assert "game" not in [c[1] for c in conn.execute("PRAGMA table_info(matches)")]
            for sql, args in insert:
                conn.execute(sql, args)

    feudo = MatchService(db, run_bots=False)  # the new code: migration 3 in place
    fief2 = Fief2MatchService(store=feudo.store, run_bots=False)
    try:
        assert SCHEMA_VERSION == 3 and feudo.store.schema_version() == 3
        assert feudo.get_observation(mid, seat, token) == expected  # the Feudo match is still there, as it was
        assert [s["match_id"] for s in feudo.list_matches()] == [mid] and fief2.list_matches() == []
        f2 = fief2.create_match(SETUP, [None] * 3, seed=1)["match_id"]
        assert [s["match_id"] for s in fief2.list_matches()] == [f2]
        assert [s["match_id"] for s in feudo.list_matches()] == [mid]
    finally:
        fief2.close()
        feudo.close()


def test_a_server_killed_with_sigkill_restarts_with_every_acknowledged_action(tmp_path):
    db = str(tmp_path / "matches.db")

    def stub(server: Server):
        channel = grpc.insecure_channel(server.address)
        return channel, mpb_grpc.MatchesServiceStub(channel)

    server = Server(tmp_path / "first.log", "--db", db, "--no-http", "--log-level", "WARNING")
    try:
        channel, matches = stub(server)
        r = matches.CreateMatch(mpb.CreateMatchRequest(
            setup=gpb.GameSetup(players=3, turn_limit=2),
            seats=[tpb.SeatSpec(bot="greedy"), tpb.SeatSpec(external=True), tpb.SeatSpec(bot="greedy")], seed=21))
        mid, token = r.match_id, r.tokens[0].token
        rng, acknowledged = random.Random(8), 0
        for _ in range(2000):
            o = matches.GetObservation(mpb.GetObservationRequest(match_id=mid, seat=ME, token=token))
            if o.observation.HasField("to_act") and o.observation.to_act == ME:
                a = rng.choice(o.legal_actions).id
                done = matches.SubmitAction(mpb.SubmitActionRequest(match_id=mid, seat=ME, token=token, action=a,
                                                                    expected_action_count=o.action_count))
                acknowledged = done.action_count
                if acknowledged > 20:
                    break  # killed right after this acknowledged action
        assert acknowledged > 20
        channel.close()
    finally:
        server.kill()  # SIGKILL: no drain, no close, right after an acknowledged action
    server = Server(tmp_path / "second.log", "--db", db, "--no-http", "--log-level", "WARNING")
    try:
        channel, matches = stub(server)
        o = matches.GetObservation(mpb.GetObservationRequest(match_id=mid, seat=ME, token=token))
        assert o.action_count >= acknowledged and not o.finished  # the bots may have answered before the kill
        listed = [s for s in matches.ListMatches(mpb.ListMatchesRequest()).matches if s.match_id == mid]
        assert len(listed) == 1 and listed[0].seats == ["greedy", "external", "greedy"]
        with MatchesClient(server.address) as feudo:  # the same --db: Feudo's service does not list it
            assert mid not in [s.match_id for s in feudo.list_matches()]
        for _ in range(20_000):  # to its end
            o = matches.GetObservation(mpb.GetObservationRequest(match_id=mid, seat=ME, token=token))
            if o.finished:
                break
            if o.observation.HasField("to_act") and o.observation.to_act == ME:
                matches.SubmitAction(mpb.SubmitActionRequest(match_id=mid, seat=ME, token=token,
                                                             action=rng.choice(o.legal_actions).id,
                                                             expected_action_count=o.action_count))
        assert o.finished
        record = matches.GetRecord(mpb.GetRecordRequest(match_id=mid)).record
        rec = GameRecord.from_json(record.json)
        assert rec.seed == 21 and rec.replay().is_terminal()
        st, draws = rec.replay(0), random.Random(21)
        for a in rec.actions:  # every chance outcome, before and after the kill, the seed's next draw
            if st.is_chance_node():
                assert a == sample_chance(st, draws)
            st.apply_action(a)
        channel.close()
        server.stop()
    finally:
        server.kill()


def test_two_replicas_on_postgres_share_a_fief2_match(postgres):
    url = postgres.new_database()
    a = Fief2MatchService(url, lease_seconds=1.0)
    b = Fief2MatchService(url, lease_seconds=1.0)
    try:
        r = a.create_match(SETUP, SEATS, seed=12)
        mid, token = r["match_id"], r["tokens"][ME]
        rng = random.Random(4)
        for i in range(4):  # seat 1 plays through replica b; the bots (moved by one replica) answer
            service = b if i % 2 == 0 else a
            my_turn(service, mid)
            o = service.get_observation(mid, ME, token)
            if o["finished"]:
                break
            action = rng.choice(o["legal_actions"])[0]
            assert service.submit_action(mid, ME, token, action, o["action_count"])["retry"] is False
            other = a if service is b else b
            assert other.submit_action(mid, ME, token, action, o["action_count"]) == {
                "action_count": o["action_count"] + 1, "retry": True}  # the same submit on the other: a retry
        my_turn(a, mid)
        my_turn(b, mid)
        assert a.get_observation(mid, ME, token) == b.get_observation(mid, ME, token)
        assert a.store.actions_from(mid, 0) == a._matches[mid].actions == b._matches[mid].actions
        a.close()  # the replica moving the bots stops: its lease is freed, b takes the bots on
        play(b, mid, token, rng, None)
        m = b._matches[mid]
        check_record_replays_to(b.get_record(mid), [observation_json(m.state.observation(f)) for f in range(3)])
    finally:
        b.close()
        a.close()
