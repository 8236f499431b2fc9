"""Latency of the Advisor's history form of a position as the game goes on.

    python benchmarks/history_latency.py --json [--players 4] [--seed 1] [--turns 1,10] [--seconds 0.2]

Plays a seeded random game of ``--players`` players up to the end of the last turn of ``--turns``; a client
for each seat sends, at every decision of its seat (more than one legal action), LegalActions with the
seat's whole history (`Position.history`: the setup and every entry as the seat saw it, as a client that keeps
the log of WatchMatch does). It measures, at the decisions of each turn of ``--turns``, the LegalActions
latency (client side, whole call) and, at up to ``--suggests`` decisions of that turn, a Suggest with
``limits.seconds`` (its latency, ``stats.elapsed_seconds`` and iterations). ``cold`` repeats the turn's
LegalActions with an empty history cache for that call (when the server has one): the cost of a history the
server has never seen. The server runs in this process (one gRPC channel; the client only sends prepared
messages). Prints JSON with its provenance. Not a test: nothing here asserts.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from provenance import with_provenance  # noqa: E402  (benchmarks/provenance.py)

import grpc  # noqa: E402

from engine import history as eh  # noqa: E402
from engine import new_game, sample_chance  # noqa: E402
from feudo.v1 import advisor_pb2 as apb  # noqa: E402
from feudo.v1 import advisor_pb2_grpc as apb_grpc  # noqa: E402
from feudo.v1 import game_pb2 as gpb  # noqa: E402
from feudo_ai.wire.convert import history_from_entries, setup_from_game  # noqa: E402
from feudo_ai.wire.server import FeudoServer, ServerSettings  # noqa: E402


def _summary(xs: list[float]) -> dict:
    if not xs:
        return {"n": 0}
    return {"n": len(xs), "mean_ms": round(1000 * statistics.fmean(xs), 2),
            "median_ms": round(1000 * statistics.median(xs), 2), "max_ms": round(1000 * max(xs), 2)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--players", type=int, default=4)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--turns", default="1,10", help="turns measured, comma-separated")
    ap.add_argument("--seconds", type=float, default=0.2, help="Suggest's limits.seconds")
    ap.add_argument("--suggests", type=int, default=3, help="Suggests per measured turn")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    turns = sorted({int(t) for t in args.turns.split(",")})

    rng = random.Random(args.seed)
    state = new_game(players=args.players, seed=args.seed)
    start = state.clone()
    setup = setup_from_game(state.game)
    actions: list[int] = []
    decisions: list[tuple[int, int, int]] = []  # (index in the log, seat, turn)
    while not state.is_terminal() and state.turn <= turns[-1]:
        if not state.is_chance_node() and len(state.legal_actions()) > 1:
            decisions.append((len(actions), state.current_player(), state.turn))
        a = sample_chance(state, rng) if state.is_chance_node() else rng.choice(state.legal_actions())
        actions.append(a)
        state.apply_action(a)
    full = eh.game_log(start, actions)
    logs = [eh.seat_view(full, s) for s in range(args.players)]

    def position(seat: int, n: int) -> gpb.Position:
        return gpb.Position(setup=setup, history=history_from_entries(logs[seat][:n]))

    server = FeudoServer(ServerSettings(address="127.0.0.1:0")).start()
    cache = getattr(server.servicer, "history_cache", None)
    channel = grpc.insecure_channel(f"127.0.0.1:{server.port}")
    stub = apb_grpc.AdvisorStub(channel)
    per_turn: dict[int, dict] = {t: {"legal": [], "cold": [], "suggest": [], "elapsed": [], "iterations": [],
                                     "entries": []} for t in turns}
    try:
        for index, seat, turn in decisions:
            req = apb.LegalActionsRequest(position=position(seat, index), seat=seat)
            t0 = time.perf_counter()
            stub.LegalActions(req, timeout=30)
            took = time.perf_counter() - t0
            if turn not in per_turn:
                continue
            row = per_turn[turn]
            row["legal"].append(took)
            row["entries"].append(index)
            if len(row["suggest"]) < args.suggests:
                sreq = apb.SuggestRequest(position=req.position, seat=seat,
                                          limits=apb.Limits(seconds=args.seconds, seed=1))
                t0 = time.perf_counter()
                resp = stub.Suggest(sreq, timeout=30)
                row["suggest"].append(time.perf_counter() - t0)
                row["elapsed"].append(resp.advice.stats.elapsed_seconds)
                row["iterations"].append(resp.advice.stats.iterations)
                if cache is not None:  # a history the server has never seen: an empty cache for this call only
                    server.servicer.history_cache = type(cache)(cache.max_entries)
                t0 = time.perf_counter()
                stub.LegalActions(req, timeout=30)
                row["cold"].append(time.perf_counter() - t0)
                if cache is not None:
                    server.servicer.history_cache = cache
    finally:
        channel.close()
        server.stop()
    result = {"players": args.players, "seed": args.seed, "seconds": args.seconds,
              "history_cache": cache is not None, "turns": {}}
    for t, row in per_turn.items():
        result["turns"][str(t)] = {
            "entries": [min(row["entries"], default=0), max(row["entries"], default=0)],
            "legal_actions": _summary(row["legal"]), "legal_actions_cold": _summary(row["cold"]),
            "suggest": _summary(row["suggest"]),
            "suggest_elapsed_seconds": [round(x, 4) for x in row["elapsed"]],
            "suggest_iterations": row["iterations"]}
    with_provenance(result, args)
    print(json.dumps(result, indent=None if args.json else 2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
