"""Load on the Advisor service: concurrent clients asking Suggest with a small time budget.

    python benchmarks/service_load.py --json [--duration 60] [--clients 16] [--budget-ms 200] [--address HOST:PORT]

Starts ``server.py`` on a free loopback port (unless ``--address`` names a running server), builds Suggest requests
on varied positions (every decision phase of seeded random 2-, 3- and 4-player games, asked by the player to act),
then ``--clients`` threads each send one request after another (one gRPC channel each, call deadline = budget +
1 s) for ``--duration`` seconds after a warm-up. The warm-up lasts ``--warmup`` seconds and at least until every
position has been answered once (so the server's caches, its thread pool's threads and their malloc arenas have
all been used); the server's resident memory (RSS) is read at its end and then every half second, and its
growth is reported over the measured period and over its second half alone (a leak keeps growing there, a
warm-up effect does not). Before the load, ``overhead_ms`` measures the per-call overhead (time outside the search:
:func:`call_overhead`). Prints latency percentiles (client side, whole call), throughput, errors by status
code, mean iterations per answer, the RSS, and the machine's load average before and after the run (other
processes take CPU from the searches: iterations per answer drop and latency spreads when it is above the number
of cores). Targets (the service's load targets): zero errors, p99 <= 300 ms, RSS growth <= 10 %. Not a test: nothing here asserts.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import socket
import subprocess
import sys
import threading
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from provenance import with_provenance  # noqa: E402  (benchmarks/provenance.py)

import grpc  # noqa: E402
import numpy as np  # noqa: E402

from engine import Phase, new_game, sample_chance  # noqa: E402
from feudo.v1 import advisor_pb2 as apb  # noqa: E402
from feudo.v1 import advisor_pb2_grpc as apb_grpc  # noqa: E402
from feudo_ai.wire.convert import position_from  # noqa: E402


def requests(budget: float, per_game: int = 12) -> list[apb.SuggestRequest]:
    """Suggest requests on decisions of seeded random games, 2-4 players, spread over the game."""
    out = []
    for players in (2, 3, 4):
        for seed in (1, 2):
            rng = random.Random(seed)
            state = new_game(players=players, seed=seed)
            decisions = []
            while not state.is_terminal():
                if state.is_chance_node():
                    state.apply_action(sample_chance(state, rng))
                    continue
                if len(state.legal_actions()) > 1:
                    decisions.append(state.clone())
                state.apply_action(rng.choice(state.legal_actions()))
            by_phase: dict = {}
            for s in decisions:
                by_phase.setdefault(Phase(s.phase), []).append(s)
            picked = [rng.choice(v) for v in by_phase.values()]  # every phase once, then random ones
            picked += rng.sample(decisions, max(0, per_game - len(picked)))
            for s in picked:
                seat = s.current_player()
                out.append(apb.SuggestRequest(position=position_from(s, seat), seat=seat,
                                              limits=apb.Limits(seconds=budget, seed=len(out))))
    return out


def rss_mb(pid: int) -> float | None:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def rss_report(start: float | None, end: float | None, samples: list[float]) -> dict:
    """The server's RSS after the warm-up, at the end and at its highest, its growth over the measured period
    and over the period's second half (a leak keeps growing there; a warm-up effect has levelled off)."""
    if not start or not end:
        return {"after_warmup": None, "end": None, "max": None, "growth_pct": None, "second_half_growth_pct": None}
    half = samples[len(samples) // 2] if samples else start
    return {"after_warmup": round(start, 1), "end": round(end, 1), "max": round(max(samples + [start, end]), 1),
            "growth_pct": round(100 * (end - start) / start, 1),
            "second_half_growth_pct": round(100 * (end - half) / half, 1) if half else None}


def call_overhead(channel, reqs: list, rounds: int = 3) -> dict:
    """The per-call overhead, the time of a call outside the search: the latency of Suggest with a one-iteration
    budget, one call at a time before the load starts (every position ``rounds`` times; the first round only
    warms the server up). Everything but the search is in it: the request's parsing and checking, building the
    position, the search's set-up, the answer and the loopback round trip."""
    stub = apb_grpc.AdvisorStub(channel)
    lat = []
    for r in range(rounds):
        for req in reqs:
            one = apb.SuggestRequest()
            one.CopyFrom(req)
            one.limits.ClearField("seconds")
            one.limits.iterations = 1
            t = time.perf_counter()
            stub.Suggest(one, timeout=30)
            if r:
                lat.append((time.perf_counter() - t) * 1000)
    a = np.array(lat)
    return {"calls": len(lat), "mean": round(float(a.mean()), 2), "p50": round(float(np.percentile(a, 50)), 2),
            "p90": round(float(np.percentile(a, 90)), 2), "max": round(float(a.max()), 2)}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--duration", type=float, default=60.0, help="seconds of measured load (default 60)")
    ap.add_argument("--warmup", type=float, default=10.0,
                    help="seconds of load before measuring, and at least until every position was answered once "
                         "(default 10)")
    ap.add_argument("--clients", type=int, default=16, help="concurrent clients (default 16)")
    ap.add_argument("--budget-ms", type=float, default=200.0, help="search time per request (default 200 ms)")
    ap.add_argument("--address", default=None, help="a running Advisor (default: start server.py here)")
    ap.add_argument("--json", action="store_true", help="print JSON")
    args = ap.parse_args()
    for name in ("duration", "budget_ms"):
        if not getattr(args, name) > 0:
            ap.error(f"--{name.replace('_', '-')}: expected a positive number")
    if not 1 <= args.clients <= 256:
        ap.error("--clients: expected 1..256")
    if args.warmup < 0:
        ap.error("--warmup: expected a non-negative number")

    budget = args.budget_ms / 1000
    reqs = requests(budget)
    proc = None
    address = args.address
    if address is None:
        port = free_port()
        address = f"127.0.0.1:{port}"
        proc = subprocess.Popen([sys.executable, os.path.join(ROOT, "server.py"), "--address", address,
                                 "--max-concurrent", str(max(16, args.clients)), "--log-level", "WARNING"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    load_before = os.getloadavg()
    channels = [grpc.insecure_channel(address) for _ in range(args.clients)]
    try:
        grpc.channel_ready_future(channels[0]).result(timeout=30)
        for ch in channels:
            grpc.channel_ready_future(ch).result(timeout=30)
        lock = threading.Lock()
        results: list[tuple[float, str, int]] = []  # (latency, status, iterations), measured phase only
        phase = {"measure": False, "stop": False}
        overhead = call_overhead(channels[0], reqs)
        answered: set[int] = set()  # positions answered during the warm-up
        warmup_requests = [0]

        def client(i: int) -> None:
            stub = apb_grpc.AdvisorStub(channels[i])
            rng = random.Random(i)
            while not phase["stop"]:
                k = rng.randrange(len(reqs))
                t = time.perf_counter()
                try:
                    resp = stub.Suggest(reqs[k], timeout=budget + 1.0)
                    status, its = "OK", resp.advice.stats.iterations
                except grpc.RpcError as e:
                    status, its = e.code().name, 0
                lat = time.perf_counter() - t
                with lock:
                    if phase["measure"]:
                        results.append((lat, status, its))
                    else:
                        warmup_requests[0] += 1
                        if status == "OK":
                            answered.add(k)

        threads = [threading.Thread(target=client, args=(i,), daemon=True) for i in range(args.clients)]
        warm_start = time.perf_counter()
        for th in threads:
            th.start()
        time.sleep(args.warmup)
        while len(answered) < len(reqs) and time.perf_counter() - warm_start < args.warmup + 120:
            time.sleep(0.1)
        warmup = {"seconds": round(time.perf_counter() - warm_start, 1), "requests": warmup_requests[0],
                  "positions_answered": len(answered)}
        rss_samples: list[float] = []
        rss_start = rss_mb(proc.pid) if proc else None
        phase["measure"] = True
        started = time.perf_counter()
        while time.perf_counter() - started < args.duration:
            time.sleep(min(0.5, max(args.duration - (time.perf_counter() - started), 0)))
            if proc is not None:
                rss_samples.append(rss_mb(proc.pid) or 0.0)
        phase["measure"] = False
        elapsed = time.perf_counter() - started
        rss_end = rss_mb(proc.pid) if proc else None
        load_after = os.getloadavg()
        phase["stop"] = True
        for th in threads:
            th.join(budget + 5)
    finally:
        for ch in channels:
            ch.close()
        if proc is not None:
            proc.terminate()
            proc.wait(30)

    lat = np.array([r[0] for r in results]) * 1000 if results else np.zeros(1)
    ok = [r for r in results if r[1] == "OK"]
    errors: dict[str, int] = {}
    for r in results:
        if r[1] != "OK":
            errors[r[1]] = errors.get(r[1], 0) + 1
    out = {
        "clients": args.clients, "budget_ms": args.budget_ms, "duration_s": round(elapsed, 1),
        "positions": len(reqs), "requests": len(results), "errors": sum(errors.values()), "errors_by_code": errors,
        "throughput_rps": round(len(results) / elapsed, 1),
        "latency_ms": {k: round(float(np.percentile(lat, q)), 1) for k, q in (("p50", 50), ("p90", 90),
                                                                                ("p99", 99))}
        | {"max": round(float(lat.max()), 1)},
        "mean_iterations": round(float(np.mean([r[2] for r in ok])), 1) if ok else 0,
        "overhead_ms": overhead,
        "warmup": warmup,
        "server_rss_mb": rss_report(rss_start, rss_end, rss_samples),
        "cpus": os.cpu_count(),
        "load_average": {"before_1min": round(load_before[0], 2), "after_1min": round(load_after[0], 2),
                         "after_5min": round(load_after[1], 2)},
    }
    if args.json:
        print(json.dumps(with_provenance(out, {"args": args}), indent=2))
    else:
        for k, v in out.items():
            print(f"{k}: {v}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
