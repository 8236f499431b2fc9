"""Strength benchmark: seat-rotated matches between bots, win rates with Wilson 95% intervals.

    python benchmarks/strength.py --quick --json      # a few minutes
    python benchmarks/strength.py --json              # the full set (long)

A pairing "A vs B" with P players puts A in one seat and B in all the others; the seat of A rotates game by
game (seat = game index mod P), and the game seed (map board order and chance) is the game index plus the base
seed, so every pairing plays the same positions. A's score per game is its R19 return (1 for a sole win, 1/k
for a k-way shared win, 0 otherwise). Budgets are in iterations (deterministic, machine independent) except
the one pairing marked equal-time. Games run in parallel over processes (--jobs).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from engine import new_game, play_game  # noqa: E402
from feudo_ai.bots import make_bot  # noqa: E402


def wilson(successes: float, n: int, z: float = 1.96) -> tuple[float, float]:
    if n == 0:
        return (0.0, 1.0)
    p = successes / n
    den = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / den
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return (max(0.0, centre - half), min(1.0, centre + half))


def play_one(args) -> dict:
    a, b, players, game_index, base_seed = args
    seat = game_index % players
    seed = base_seed + game_index
    specs = [a if p == seat else b for p in range(players)]
    bots = [make_bot(s, seed * 100 + p) for p, s in enumerate(specs)]
    state = new_game(players=players, seed=seed)
    started = time.perf_counter()
    _, final = play_game(bots, state, seed=seed)
    return {"seat": seat, "seed": seed, "score": final.returns()[seat], "vp": final.vp,
            "winners": final.winners, "seconds": time.perf_counter() - started}


def pairings(quick: bool) -> list[dict]:
    """Budgets in iterations per decision (default search parameters), plus one equal-time pairing."""
    it, it4, n2, n4, t = (200, 100, 16, 8, 0.1) if quick else (1000, 500, 100, 40, 0.5)
    # pimc is Python: its budget is what keeps a pairing with it affordable.
    nf2, nf4, itp = (24, 12, 300) if quick else (200, 100, 2000)
    return [
        {"name": "greedy vs random (2p)", "a": "greedy", "b": "random", "players": 2, "games": 30 if quick else 100},
        {"name": f"ismcts vs random (2p, {it} it)", "a": f"ismcts:iterations={it}", "b": "random",
         "players": 2, "games": n2},
        {"name": f"ismcts vs greedy (2p, {it} it)", "a": f"ismcts:iterations={it}", "b": "greedy",
         "players": 2, "games": n2},
        {"name": f"ismcts vs pimc (2p, {it} it each)", "a": f"ismcts:iterations={it}",
         "b": f"pimc:iterations={it}", "players": 2, "games": n2},
        {"name": f"ismcts vs pimc (2p, equal time {t} s)", "a": f"ismcts:iterations=None:time_limit={t}",
         "b": f"pimc:iterations=None:time_limit={t}", "players": 2, "games": n2, "equal_time": True},
        {"name": f"ismcts vs 3 greedy (4p, {it4} it)", "a": f"ismcts:iterations={it4}", "b": "greedy",
         "players": 4, "games": n4},
        {"name": f"ismcts vs 3 pimc (4p, {it4} it each)", "a": f"ismcts:iterations={it4}",
         "b": f"pimc:iterations={it4}", "players": 4, "games": n4},
        # The C search (bot "fast") at the budget of 2,000 iterations per decision.
        {"name": "fast vs random (2p, 2000 it)", "a": "fast:iterations=2000", "b": "random",
         "players": 2, "games": nf2},
        {"name": "fast vs greedy (2p, 2000 it)", "a": "fast:iterations=2000", "b": "greedy",
         "players": 2, "games": nf2},
        {"name": f"fast vs pimc (2p, {itp} it each)", "a": f"fast:iterations={itp}", "b": f"pimc:iterations={itp}",
         "players": 2, "games": nf2},
        {"name": "fast vs 3 greedy (4p, 2000 it)", "a": "fast:iterations=2000", "b": "greedy",
         "players": 4, "games": nf4},
        {"name": f"fast vs 3 pimc (4p, {itp} it each)", "a": f"fast:iterations={itp}",
         "b": f"pimc:iterations={itp}", "players": 4, "games": nf4},
    ]


def run(pairs: list[dict], jobs: int, seed: int, log=None) -> list[dict]:
    out = []
    with ProcessPoolExecutor(jobs) as ex:
        for pr in pairs:
            started = time.perf_counter()
            args = [(pr["a"], pr["b"], pr["players"], i, seed) for i in range(pr["games"])]
            games = list(ex.map(play_one, args))
            score = sum(g["score"] for g in games)
            n = len(games)
            lo, hi = wilson(score, n)
            res = {"name": pr["name"], "a": pr["a"], "b": pr["b"], "players": pr["players"], "games": n,
                   "score_a": round(score, 3), "win_rate_a": round(score / n, 3) if n else None,
                   "wilson95": [round(lo, 3), round(hi, 3)],
                   "fair_share": round(1 / pr["players"], 3),
                   "seconds": round(time.perf_counter() - started, 1),
                   "seconds_per_game": round(sum(g["seconds"] for g in games) / max(1, n), 2)}
            if pr.get("equal_time"):
                res["equal_time"] = True
            out.append(res)
            if log:
                log(res)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="small budgets and few games (a few minutes)")
    ap.add_argument("--json", action="store_true", help="print the results as JSON")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="parallel games (processes)")
    ap.add_argument("--seed", type=int, default=1000, help="base seed of the games")
    ap.add_argument("--only", default=None, help="run only pairings whose name contains this text")
    args = ap.parse_args(argv)
    pairs = pairings(args.quick)
    if args.only:
        pairs = [p for p in pairs if args.only in p["name"]]
    # progress: one line per pairing (stderr with --json, so stdout stays one JSON document)
    log = (lambda r: print(json.dumps(r), file=sys.stderr if args.json else sys.stdout, flush=True))
    started = time.perf_counter()
    results = run(pairs, args.jobs, args.seed, log)
    summary = {"benchmark": "strength", "quick": args.quick, "seed": args.seed, "jobs": args.jobs,
               "engine": _engine_name(), "pairings": results, "seconds": round(time.perf_counter() - started, 1)}
    if args.json:
        print(json.dumps(summary, indent=2))
    return 0


def _engine_name() -> str:
    from feudo_ai.sampler import search_backend

    return search_backend()


if __name__ == "__main__":
    sys.exit(main())
