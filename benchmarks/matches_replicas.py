"""Hosted-match throughput over replicas, and the failover time of a bot when its replica is killed.

For each configuration (1, 2 and 3 replicas on PostgreSQL, 1 server on SQLite) the benchmark starts the servers
(``server.py --db ...``, real processes on loopback ports) on a fresh database, creates ``--matches`` two-player
matches between two bots round-robin over the replicas and measures the actions logged per second (decisions and
chance draws, over all matches) from the first creation until every match is over; once with ``greedy`` bots,
once with ``ismcts:seconds=0.1`` bots. Then, on 3 PostgreSQL replicas, ``--failovers`` times: a bot match is
started, the replica holding its bot lease is killed with SIGKILL while its bot searches, and the time until
another replica holds the lease and until the next action is logged is measured.

PostgreSQL is a throwaway server of its own (``tests/pg_helpers.py``: initdb, pg_ctl, PostgreSQL's default
durability: fsync on, synchronous_commit on), as is every server process.

    python benchmarks/matches_replicas.py --json > benchmarks/results/matches_replicas.json
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "tests"))  # pg_helpers: the throwaway PostgreSQL server
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import psycopg  # noqa: E402
from pg_helpers import PostgresServer  # noqa: E402
from provenance import with_provenance  # noqa: E402

from feudo_ai.client import AdvisorClient  # noqa: E402
from feudo_ai.matches.client import MatchesClient  # noqa: E402


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Replica:
    def __init__(self, db: str, log_dir: str, i: int, extra: list[str]):
        self.address = f"127.0.0.1:{_free_port()}"
        self.log = open(os.path.join(log_dir, f"replica{i}.log"), "w")
        self.proc = subprocess.Popen([sys.executable, os.path.join(ROOT, "server.py"), "--address", self.address,
                                      "--no-http", "--db", db, "--log-level", "WARNING", *extra],
                                     stdout=subprocess.DEVNULL, stderr=self.log, cwd=ROOT)

    def wait_serving(self, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        with AdvisorClient(self.address) as c:
            while True:
                if self.proc.poll() is not None:
                    raise RuntimeError(f"replica exited: {open(self.log.name).read()[-2000:]}")
                try:
                    if c.health(timeout=1.0) == "SERVING":
                        return
                except Exception:  # noqa: BLE001 - not listening yet
                    pass
                if time.monotonic() > deadline:
                    raise RuntimeError("replica did not start")
                time.sleep(0.1)

    def stop(self, sig=signal.SIGTERM) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        self.log.close()


def start(db: str, n: int, log_dir: str, extra: list[str]) -> list[Replica]:
    reps = [Replica(db, log_dir, i, extra) for i in range(n)]
    for r in reps:
        r.wait_serving()
    return reps


def throughput(db: str, n: int, bot: str, matches: int, turns: int, timeout: float, log_dir: str) -> dict:
    reps = start(db, n, log_dir, [])
    clients = [MatchesClient(r.address) for r in reps]
    try:
        t0 = time.monotonic()
        mids = [clients[i % n].create_match(2, [bot, bot], seed=100 + i, turns=turns)[0] for i in range(matches)]
        pending = set(mids)
        while pending and time.monotonic() - t0 < timeout:
            done = {s.match_id for s in clients[0].list_matches() if s.finished}
            pending -= done
            time.sleep(0.05)
        elapsed = time.monotonic() - t0
        actions = sum(s.action_count for s in clients[0].list_matches() if s.match_id in set(mids))
        return {"replicas": n, "bot": bot, "matches": matches, "finished": matches - len(pending),
                "turns": turns, "actions": actions, "seconds": round(elapsed, 2),
                "actions_per_second": round(actions / elapsed, 1)}
    finally:
        for c in clients:
            c.close()
        for r in reps:
            r.stop()


def _owner(url: str, mid: str) -> int | None:
    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT owner FROM bot_leases WHERE match_id = %s AND "
                           "expires >= EXTRACT(EPOCH FROM clock_timestamp())", (mid,)).fetchone()
    return None if row is None else int(row[0].split("/")[1])


def _count(url: str, mid: str) -> int:
    with psycopg.connect(url) as conn:
        return conn.execute("SELECT COUNT(*) FROM actions WHERE match_id = %s", (mid,)).fetchone()[0]


def failover(url: str, log_dir: str, lease: float) -> dict:
    reps = start(url, 3, log_dir, ["--bot-lease-seconds", str(lease)])
    clients = [MatchesClient(r.address) for r in reps]
    try:
        mid, _ = clients[0].create_match(2, ["ismcts:seconds=0.3", "ismcts:seconds=0.3"], seed=7, turns=3)
        deadline = time.monotonic() + 30
        while (pid := _owner(url, mid)) is None or _count(url, mid) < 10:
            assert time.monotonic() < deadline, "no lease"
            time.sleep(0.02)
        victim = next(r for r in reps if r.proc.pid == pid)
        time.sleep(0.1)  # its bot is searching (0.3 s a decision)
        before = _count(url, mid)
        t0 = time.monotonic()
        victim.proc.kill()
        lease_at = action_at = None
        while lease_at is None or action_at is None:
            now = time.monotonic() - t0
            assert now < lease + 20, "no takeover"
            if lease_at is None and (o := _owner(url, mid)) is not None and o != pid:
                lease_at = now
            if action_at is None and _count(url, mid) > before + 1:
                action_at = now  # (one action may have been logged by the victim just before it died)
            time.sleep(0.02)
        return {"lease_seconds": lease, "taken_over_after": round(lease_at, 2),
                "next_action_after": round(action_at, 2)}
    finally:
        for c in clients:
            c.close()
        for r in reps:
            r.stop(signal.SIGKILL)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--matches", type=int, default=12, help="matches per configuration (default 12)")
    p.add_argument("--greedy-turns", type=int, default=2, help="turns of a greedy match (default 2)")
    p.add_argument("--ismcts-turns", type=int, default=1, help="turns of an ismcts match (default 1)")
    p.add_argument("--timeout", type=float, default=60.0, help="seconds per configuration at most (default 60)")
    p.add_argument("--failovers", type=int, default=3, help="kill -9 runs (default 3)")
    p.add_argument("--lease", type=float, default=3.0, help="--bot-lease-seconds of the failover runs (default 3)")
    p.add_argument("--json", action="store_true", help="print the JSON result")
    args = p.parse_args(argv)
    log_dir = tempfile.mkdtemp(prefix="feudo-bench-")
    out: dict = {"benchmark": "matches_replicas", "cpus": os.cpu_count(), "throughput": [], "failover": []}
    with PostgresServer(durable=True) as pg:
        for bot, turns in (("greedy", args.greedy_turns), ("ismcts:seconds=0.1", args.ismcts_turns)):
            for database, n in (("sqlite", 1), ("postgres", 1), ("postgres", 2), ("postgres", 3)):
                db = os.path.join(log_dir, f"m{time.monotonic_ns()}.db") if database == "sqlite" else pg.new_database()
                r = throughput(db, n, bot, args.matches, turns, args.timeout, log_dir)
                r["database"] = database
                out["throughput"].append(r)
                print(json.dumps(r), file=sys.stderr, flush=True)
        for _ in range(args.failovers):
            r = failover(pg.new_database(), log_dir, args.lease)
            out["failover"].append(r)
            print(json.dumps(r), file=sys.stderr, flush=True)
    if out["failover"]:
        out["failover_summary"] = {
            "taken_over_after_max": max(r["taken_over_after"] for r in out["failover"]),
            "next_action_after_max": max(r["next_action_after"] for r in out["failover"])}
    result = with_provenance(out, {"args": args})
    if args.json:
        print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
