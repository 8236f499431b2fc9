"""Hosted matches on PostgreSQL: the store against a real server (started by the session's ``postgres`` fixture,
:mod:`pg_helpers`), then several replicas (real ``server.py`` processes) on one database:

- the store: one interface, the same behaviour on SQLite and PostgreSQL (an index taken once, migrations,
  a newer schema refused in one line naming both versions, an old SQLite file migrated);
- a match created on one replica is played through the others; ListMatches and GetRecord agree on all;
- the same submit sent to two replicas at the same moment is applied once (the other is told it was a retry);
- watchers on one replica get every event exactly once, in order, promptly (LISTEN/NOTIFY);
- kill -9 of the replica moving a bot while it searches: another replica takes the bot within the lease (3 s)
  plus a tick, the match finishes, and the watchers on a survivor saw every event once and in order.
"""

from __future__ import annotations

import json
import os
import random
import sqlite3
import statistics
import subprocess
import sys
import threading
import time

import psycopg
import pytest
from pg_helpers import wait_until
from service_helpers import ROOT
from test_service_limits import Server

from feudo_ai.matches.client import MatchesClient, MatchesError
from feudo_ai.matches.service import MatchService
from feudo_ai.matches.database import open_store
from feudo_ai.matches.store import SCHEMA_VERSION, Conflict, SchemaTooNew, SQLiteStore

pytestmark = pytest.mark.timing  # real processes, timed by wall clock

LEASE = 3.0  # the servers' default --bot-lease-seconds


# ------------------------------------------------------------------------------------------------ the store
@pytest.fixture(params=["sqlite", "postgres"])
def db(request, tmp_path):
    if request.param == "sqlite":
        return str(tmp_path / "m.db")
    return request.getfixturevalue("postgres").new_database()


def test_the_store_behaves_the_same_on_both_databases(db):
    s = open_store(db)
    try:
        assert s.schema_version() == SCHEMA_VERSION and s.shared == db.startswith("postgresql://")
        s.create_match("m1", {"players": 2}, {0: "h"}, 12.5, [3, 4], summary={"action_count": 2}, bots=True)
        s.append_actions("m1", 2, [5, 6], summary={"action_count": 4})
        with pytest.raises(Conflict):
            s.append_actions("m1", 3, [9])  # index 3 is taken: nothing written
        assert s.actions_from("m1", 0) == [3, 4, 5, 6] and s.actions_from("m1", 3) == [6]
        assert s.load("m1").created == 12.5 and s.load("m1").token_hashes == {0: "h"}
        assert s.live_summaries(10) == [("m1", {"action_count": 4})]
        # leases: one owner at a time; an expired lease is anybody's
        assert s.claim("m1", "a", 0.3) and not s.claim("m1", "b", 0.3) and s.claim("m1", "a", 0.3)
        assert s.unleased(10) == ([], 1) and s.renew("a", 0.3) == {"m1"}
        time.sleep(0.5)
        assert s.unleased(10) == (["m1"], 0) and s.renew("a", 0.3) == set()
        assert s.claim("m1", "b", 5) and s.renew("b", 5) == {"m1"}
        s.retire("m1", True, {"x": 1})
        assert s.retired("m1") == (True, {"x": 1}) and s.unleased(10) == ([], 1)
    finally:
        s.close()
    open_store(db).close()  # opening again migrates nothing


def test_a_database_of_a_newer_schema_is_refused_in_one_line(db, tmp_path):
    open_store(db).close()
    if db.startswith("postgresql://"):
        with psycopg.connect(db, autocommit=True) as conn:
            conn.execute("INSERT INTO schema_migrations (version, applied) VALUES (7, 0)")
    else:
        with sqlite3.connect(db) as conn:
            conn.execute("INSERT INTO schema_migrations (version, applied) VALUES (7, 0)")
    with pytest.raises(SchemaTooNew, match=f"version 7, newer than this server's {SCHEMA_VERSION}"):
        open_store(db)
    done = subprocess.run([sys.executable, str(ROOT / "server.py"), "--address", "127.0.0.1:0", "--no-http",
                           "--db", db], capture_output=True, text=True, timeout=60, cwd=str(ROOT))
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and f"version 7, newer than this server's {SCHEMA_VERSION}" in lines[0], done.stderr


def test_a_sqlite_file_made_before_schema_versions_is_migrated(tmp_path):
    path = str(tmp_path / "old.db")
    with sqlite3.connect(path) as conn:  # the schema as it was before versions
        conn.executescript("""
            CREATE TABLE matches (id TEXT PRIMARY KEY, setup TEXT NOT NULL, token_hashes TEXT NOT NULL,
                                  created REAL NOT NULL);
            CREATE TABLE actions (match_id TEXT NOT NULL REFERENCES matches(id), idx INTEGER NOT NULL,
                                  action INTEGER NOT NULL, PRIMARY KEY (match_id, idx));
            CREATE TABLE retired (match_id TEXT PRIMARY KEY REFERENCES matches(id), finished INTEGER NOT NULL,
                                  summary TEXT NOT NULL);""")
    svc = MatchService(path, run_bots=False)
    m = svc.create_match({"players": 2, "seats": ["external", "external"], "seed": 3, "turns": 1})
    svc.close()
    s = SQLiteStore(path)
    assert s.schema_version() == SCHEMA_VERSION and s.load(m["match_id"]) is not None
    s.close()


def test_a_service_on_postgres_plays_bot_matches_in_process(postgres):
    svc = MatchService(postgres.new_database())
    try:
        mid = svc.create_match({"players": 2, "seats": ["greedy", "greedy"], "seed": 5, "turns": 1})["match_id"]
        assert svc.wait(mid, 60)
        rec = svc.get_record(mid)
        ref = MatchService(":memory:")
        mid2 = ref.create_match({"players": 2, "seats": ["greedy", "greedy"], "seed": 5, "turns": 1})["match_id"]
        assert ref.wait(mid2, 60)
        assert rec["actions"] == ref.get_record(mid2)["actions"]  # the same game as on SQLite
        ref.close()
    finally:
        svc.close()


# -------------------------------------------------------------------------------------------- replicas
def start_replicas(log_dir, url: str, n: int) -> list[Server]:
    out: list[Server | None] = [None] * n
    errors = []

    def one(i: int) -> None:
        try:
            out[i] = Server(log_dir / f"replica{i}.log", "--db", url, "--no-http", "--max-seconds", "5")
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)
    threads = [threading.Thread(target=one, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        for s in out:
            if s is not None:
                s.kill()
        raise errors[0]
    return out  # type: ignore[return-value]


@pytest.fixture(scope="module")
def cluster(postgres, tmp_path_factory):
    url = postgres.new_database()
    replicas = start_replicas(tmp_path_factory.mktemp("replicas"), url, 3)
    clients = [MatchesClient(r.address) for r in replicas]
    yield url, replicas, clients
    for c in clients:
        c.close()
    for r in replicas:
        r.kill()


class Watcher:
    """A spectator's watch stream on one replica, read by a thread: (index, arrival time) of each event."""

    def __init__(self, client: MatchesClient, match_id: str):
        self.events: list[tuple[int, float]] = []
        self.end = None
        self.error = None
        self.thread = threading.Thread(target=self._run, args=(client, match_id), daemon=True)
        self.thread.start()

    def _run(self, client, match_id) -> None:
        try:
            for ev in client.watch(match_id):
                if ev.HasField("end"):
                    self.end = ev
                    return
                self.events.append((ev.action_count - 1, time.monotonic()))
        except Exception as e:  # noqa: BLE001 - asserted by the test
            self.error = e

    def check_complete(self, n: int) -> None:
        self.thread.join(30)
        assert self.error is None, self.error
        assert self.end is not None and self.end.action_count == n
        assert [i for i, _ in self.events] == list(range(n))  # every event exactly once, in order


def play(clients, match_id: str, seat: int, token: str, rng, timeout: float = 90.0, stamps=None):
    """Seat ``seat`` plays random legal actions until the match ends, each call to the next replica in turn."""
    deadline = time.monotonic() + timeout
    k = 0
    while time.monotonic() < deadline:
        c = clients[k % len(clients)]
        k += 1
        obs = c.observation(match_id, seat, token)
        if obs.finished:
            return obs.action_count
        if not obs.legal_actions:
            time.sleep(0.02)
            continue
        a = rng.choice(obs.legal_actions).id
        r = clients[k % len(clients)].submit(match_id, seat, token, a, obs.action_count)
        assert r.action_count == obs.action_count + 1 and not r.retry
        if stamps is not None:
            stamps[obs.action_count] = time.monotonic()
    pytest.fail("the match did not end in time")


def test_a_match_created_on_one_replica_is_played_through_the_others(cluster):
    _, replicas, clients = cluster
    mid, tokens = clients[0].create_match(2, ["external", "external"], seed=11, turns=1)
    watchers = [Watcher(clients[2], mid), Watcher(clients[1], mid)]
    rng = random.Random(1)
    stamps: dict[int, float] = {}
    deadline = time.monotonic() + 90
    k = 0
    while True:  # both seats external, every call to another replica than the last
        obs = clients[k % 3].observation(mid, 0, tokens[0])
        if obs.finished:
            break
        seat = obs.to_act
        obs = clients[(k + 1) % 3].observation(mid, seat, tokens[seat])
        a = rng.choice(obs.legal_actions).id
        r = clients[(k + 2) % 3].submit(mid, seat, tokens[seat], a, obs.action_count)
        assert r.action_count == obs.action_count + 1 and not r.retry
        stamps[obs.action_count] = time.monotonic()
        k += 1
        assert time.monotonic() < deadline
    n = obs.action_count
    for w in watchers:
        w.check_complete(n)
    # promptly: LISTEN/NOTIFY wakes the other replicas' streams (the poll fallback would take up to 0.5 s)
    lags = [t - stamps[i] for w in watchers for i, t in w.events if i in stamps]
    assert statistics.median(lags) < 0.15, statistics.median(lags)
    records = [c.record(mid) for c in clients]
    assert all(list(r.actions) == list(records[0].actions) for r in records) and len(records[0].actions) == n
    for c in clients:
        (s,) = [s for s in c.list_matches() if s.match_id == mid]
        assert s.finished and s.action_count == n


def test_the_same_submit_on_two_replicas_at_once_is_applied_once(cluster):
    url, replicas, clients = cluster
    mid, tokens = clients[0].create_match(2, ["external", "external"], seed=12, turns=1)
    rng = random.Random(2)
    for _ in range(25):
        obs = clients[0].observation(mid, 0, tokens[0])
        seat = obs.to_act
        obs = clients[1].observation(mid, seat, tokens[seat])
        a = rng.choice(obs.legal_actions).id
        barrier = threading.Barrier(2)
        answers: list = [None, None]

        def send(i: int) -> None:
            barrier.wait()
            answers[i] = clients[i].submit(mid, seat, tokens[seat], a, obs.action_count)
        threads = [threading.Thread(target=send, args=(i,)) for i in (0, 1)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        assert [x.action_count for x in answers] == [obs.action_count + 1] * 2
        assert sorted(x.retry for x in answers) == [False, True]  # applied once; the other was told so
    with psycopg.connect(url) as conn:
        (count,) = conn.execute("SELECT COUNT(*) FROM actions WHERE match_id = %s", (mid,)).fetchone()
    assert count == clients[2].observation(mid, 0, tokens[0]).action_count
    # two different actions for one index at once: one is applied, the other is stale
    obs = clients[0].observation(mid, 0, tokens[0])
    seat = obs.to_act
    obs = clients[0].observation(mid, seat, tokens[seat])
    if len(obs.legal_actions) >= 2:
        a, b = obs.legal_actions[0].id, obs.legal_actions[1].id
        barrier = threading.Barrier(2)
        results: list = [None, None]

        def send2(i: int, action: int) -> None:
            barrier.wait()
            try:
                results[i] = clients[i].submit(mid, seat, tokens[seat], action, obs.action_count)
            except MatchesError as e:
                results[i] = e
        threads = [threading.Thread(target=send2, args=(0, a)), threading.Thread(target=send2, args=(1, b))]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        ok = [r for r in results if not isinstance(r, MatchesError)]
        failed = [r for r in results if isinstance(r, MatchesError)]
        assert len(ok) == 1 and len(failed) == 1 and failed[0].code.name == "FAILED_PRECONDITION"
        assert clients[2].observation(mid, seat, tokens[seat]).action_count == obs.action_count + 1


def _lease_owner(url: str, mid: str) -> int | None:
    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT owner FROM bot_leases WHERE match_id = %s AND "
                           "expires >= EXTRACT(EPOCH FROM clock_timestamp())", (mid,)).fetchone()
    return None if row is None else int(row[0].split("/")[1])


def test_bot_matches_spread_over_replicas_and_finish(cluster):
    url, replicas, clients = cluster
    mids = [clients[i % 3].create_match(2, ["greedy", "greedy"], seed=20 + i, turns=2)[0] for i in range(6)]
    owners: set[str] = set()
    deadline = time.monotonic() + 60
    with psycopg.connect(url, autocommit=True) as conn:
        while True:
            owners |= {r[0] for r in conn.execute("SELECT owner FROM bot_leases").fetchall()}
            finished = {s.match_id for s in clients[1].list_matches() if s.finished}
            if set(mids) <= finished:
                break
            assert time.monotonic() < deadline, "the bot matches did not finish in 60 s"
            time.sleep(0.05)
    assert len(owners) >= 2, owners  # the bot work is spread over replicas
    for mid in mids:
        assert len(clients[2].record(mid).actions) > 0


def test_kill_9_of_the_replica_moving_a_bot_another_takes_it_over(cluster):
    url, replicas, clients = cluster
    mid, tokens = clients[0].create_match(2, ["external", "ismcts:seconds=0.4"], seed=13, turns=1)
    pids = {r.proc.pid: i for i, r in enumerate(replicas)}
    rng = random.Random(3)
    # play until the bot is to act, then find who is searching for it
    deadline = time.monotonic() + 60
    while True:
        obs = clients[0].observation(mid, 0, tokens[0])
        assert not obs.finished and time.monotonic() < deadline
        if obs.to_act == 1:
            break
        if obs.legal_actions:
            clients[0].submit(mid, 0, tokens[0], rng.choice(obs.legal_actions).id, obs.action_count)
        else:
            time.sleep(0.02)
    victim = pids[wait_until(lambda: _lease_owner(url, mid), 10, "the bot's lease")]
    survivors = [i for i in range(3) if i != victim]
    watchers = [Watcher(clients[i], mid) for i in survivors]
    time.sleep(0.1)  # mid-search (0.4 s a decision)
    t_kill = time.monotonic()
    replicas[victim].kill()  # SIGKILL
    new_owner = wait_until(lambda: (lambda o: o if o is not None and o != replicas[victim].proc.pid else None)(
        _lease_owner(url, mid)), LEASE + 3, "another replica to take the bot")
    took = time.monotonic() - t_kill
    assert pids[new_owner] in survivors and took <= LEASE + 2, took
    n = play([clients[i] for i in survivors], mid, 0, tokens[0], rng)
    for w in watchers:
        w.check_complete(n)
    print(f"bot taken over {took:.2f} s after kill -9")


def test_an_unreachable_database_is_one_line_without_the_password():
    done = subprocess.run([sys.executable, str(ROOT / "server.py"), "--address", "127.0.0.1:0", "--no-http", "--db",
                           "postgresql://feudo:s3cret@127.0.0.1:1/matches"], capture_output=True, text=True,
                          timeout=60, cwd=str(ROOT))
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1 and "cannot connect" in lines[0], done.stderr
    assert "s3cret" not in done.stderr and "postgresql://feudo:***@127.0.0.1:1/matches" in lines[0]


def test_a_replica_drained_hands_its_bots_over_at_once(cluster):
    url, replicas, clients = cluster
    alive = [i for i, r in enumerate(replicas) if r.proc.poll() is None]
    assert len(alive) == 2  # after the kill -9 above
    c = clients[alive[0]]
    mid, _ = c.create_match(2, ["ismcts:seconds=0.3", "ismcts:seconds=0.3"], seed=14, turns=1)
    pid = wait_until(lambda: _lease_owner(url, mid), 10, "the bots' lease")
    holder = next(i for i in alive if replicas[i].proc.pid == pid)
    other = next(i for i in alive if i != holder)
    t0 = time.monotonic()
    replicas[holder].stop()  # SIGTERM: drains, frees its leases
    new_owner = wait_until(lambda: (lambda o: o if o not in (None, pid) else None)(_lease_owner(url, mid)), 5,
                           "the other replica to take the bots")
    assert new_owner == replicas[other].proc.pid and time.monotonic() - t0 < LEASE, time.monotonic() - t0
    wait_until(lambda: any(s.match_id == mid and s.finished for s in clients[other].list_matches()), 60,
               "the match to end")


def test_watchers_survive_a_lost_listen_connection(postgres):
    """Two services (replicas in one process) on one database; the LISTEN connection of the watching one is
    terminated by the server: its watch stream still gets every event once, in order (the poll meanwhile), and
    promptly again once the listener is back."""
    url = postgres.new_database()
    a, b = MatchService(url, run_bots=False), MatchService(url, run_bots=False)
    try:
        r = a.create_match({"players": 2, "seats": ["external", "external"], "seed": 4, "turns": 1})
        mid, tokens = r["match_id"], r["tokens"]
        got: list[tuple[int, float]] = []
        cancel = threading.Event()

        def watch() -> None:
            for ev in b.watch(mid, None, None, 0, cancel=cancel):
                if ev["kind"] == "action":
                    got.append((ev["index"], time.monotonic()))
        t = threading.Thread(target=watch, daemon=True)
        t.start()
        rng = random.Random(5)

        def act(k: int) -> None:
            for _ in range(k):
                m = a._match(mid)
                seat = m.current_player()
                obs = a.get_observation(mid, seat, tokens[seat])
                if obs["finished"]:
                    return
                a.submit_action(mid, seat, tokens[seat], rng.choice(obs["legal_actions"])["action"],
                                obs["action_count"])
        act(3)
        wait_until(lambda: len(got) == a._match(mid).action_count, 5, "the first events")
        with psycopg.connect(url, autocommit=True) as conn:
            killed = conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE "
                                  "'LISTEN%%' AND datname = current_database()").fetchall()
        assert len(killed) == 2  # both services' listeners
        act(3)  # while the listener reconnects: the watch's poll catches up
        wait_until(lambda: len(got) == a._match(mid).action_count, 5, "events while the listener is down")
        time.sleep(1.5)  # the listener is back
        for _ in range(5):
            act(1)
            n = a._match(mid).action_count
            stamp = time.monotonic()
            wait_until(lambda: len(got) == n, 5, "an event")
            assert got[-1][1] - stamp < 0.3
        assert [i for i, _ in got] == list(range(len(got)))  # every event once, in order
        cancel.set()
        t.join(5)
    finally:
        a.close()
        b.close()
