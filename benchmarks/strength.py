"""Strength benchmark: seat-rotated matches between bots, win rates with Wilson 95% intervals.

    python benchmarks/strength.py --quick --json      # about 4 minutes on 2 cores
    python benchmarks/strength.py --json              # the full set: about 48 minutes on 2 cores
    python benchmarks/strength.py --suite playouts --json   # evaluation options head to head (~20 minutes)

A pairing "A vs B" with P players puts A in one seat and B in all the others; the seat of A rotates game by
game (seat = game index mod P), and the game seed (map board order and chance) is the game index plus the base
seed, so every pairing plays the same positions. A's score per game is its R19 return (1 for a sole win, 1/k
for a k-way shared win, 0 otherwise). Budgets are in iterations per decision (deterministic, machine
independent) except the one pairing marked equal-time; decisions with one legal action are not searched.
Games run in parallel over processes (--jobs), each search on one thread.

The bots are the C searches (``ismcts``: MO-ISMCTS, ``pimc``: determinized UCT with the same playouts and
evaluation) and the ``greedy`` and ``random`` baselines. Games per pairing (full / --quick) are in
:func:`pairings`; the full run plays 3,600 games.
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
    """The issue's targets at 2,000 iterations per decision, one equal-time pairing, and one budget-scaling
    pairing (does the search get stronger with more iterations?)."""
    it = 2000
    g2, g4, small = (40, 20, 20) if quick else (800, 300, 100)
    t = 0.02  # seconds per decision in the equal-time pairing (about 2,000 MO-ISMCTS iterations)
    ism, pim = f"ismcts:iterations={it}", f"pimc:iterations={it}"
    return [
        {"name": "greedy vs random (2p)", "a": "greedy", "b": "random", "players": 2,
         "games": 40 if quick else 500, "target": ">= 0.90"},
        {"name": f"ismcts vs random (2p, {it} it)", "a": ism, "b": "random", "players": 2,
         "games": 40 if quick else 500, "target": ">= 0.95"},
        {"name": f"ismcts vs greedy (2p, {it} it)", "a": ism, "b": "greedy", "players": 2, "games": g2,
         "target": ">= 0.75"},
        {"name": f"ismcts vs pimc (2p, {it} it each)", "a": ism, "b": pim, "players": 2, "games": g2,
         "target": ">= 0.55, interval above 0.5"},
        {"name": f"ismcts vs pimc (2p, equal time {t} s)", "a": f"ismcts:seconds={t}", "b": f"pimc:seconds={t}",
         "players": 2, "games": 40 if quick else 300, "equal_time": True},
        {"name": f"ismcts vs 3 greedy (4p, {it} it)", "a": ism, "b": "greedy", "players": 4, "games": g4,
         "target": "> 0.40"},
        {"name": f"ismcts vs 3 pimc (4p, {it} it each)", "a": ism, "b": pim, "players": 4, "games": g4,
         "target": "> 0.30"},
        {"name": f"ismcts 10000 it vs ismcts {it} it (2p)", "a": "ismcts:iterations=10000", "b": ism,
         "players": 2, "games": small},
    ]


def playout_pairings(quick: bool) -> list[dict]:
    """``--suite playouts``: the default evaluation (truncated playout to the end of the turn) against the
    other choices, head to head at 2,000 iterations each (about 20 minutes on 2 cores; --quick: 3)."""
    it, n = 2000, (30 if quick else 200)
    ism = f"ismcts:iterations={it}"
    return [
        {"name": f"ismcts truncated vs ismcts eval (2p, {it} it each)", "a": ism,
         "b": f"ismcts:iterations={it}:playout=eval", "players": 2, "games": n},
        {"name": f"ismcts truncated vs ismcts random playouts (2p, {it} it each)", "a": ism,
         "b": f"ismcts:iterations={it}:playout=random", "players": 2, "games": n},
        {"name": f"ismcts truncated vs ismcts truncated+1 turn (2p, {it} it each)", "a": ism,
         "b": f"ismcts:iterations={it}:playout_turns=1", "players": 2, "games": n},
        {"name": f"ismcts uniform vs ismcts weighted sampler (2p, {it} it each)", "a": ism,
         "b": f"ismcts:iterations={it}:sampler=weighted", "players": 2, "games": n},
    ]


SUITES = {"targets": pairings, "playouts": playout_pairings}


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
            if pr.get("target"):
                res["target"] = pr["target"]
            out.append(res)
            if log:
                log(res)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="few games per pairing (about 4 minutes on 2 cores)")
    ap.add_argument("--json", action="store_true", help="print the results as JSON")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="parallel games (processes)")
    ap.add_argument("--seed", type=int, default=1000, help="base seed of the games")
    ap.add_argument("--suite", default="targets", choices=sorted(SUITES),
                    help="targets: the issue's pairings (default); playouts: the search's evaluation options "
                         "head to head")
    ap.add_argument("--only", default=None, help="run only pairings whose name contains this text")
    ap.add_argument("--games", type=int, default=None, help="games per pairing (overrides the mode's numbers)")
    args = ap.parse_args(argv)
    if args.games is not None and args.games < 1:
        ap.error("--games: expected a positive integer")
    if args.jobs < 1:
        ap.error("--jobs: expected a positive integer")
    pairs = SUITES[args.suite](args.quick)
    if args.only:
        pairs = [p for p in pairs if args.only in p["name"]]
        if not pairs:
            ap.error(f"--only: no pairing name contains {args.only!r}")
    if args.games is not None:
        pairs = [{**p, "games": args.games} for p in pairs]
    # progress: one line per pairing (stderr with --json, so stdout stays one JSON document)
    log = (lambda r: print(json.dumps(r), file=sys.stderr if args.json else sys.stdout, flush=True))
    started = time.perf_counter()
    results = run(pairs, args.jobs, args.seed, log)
    summary = {"benchmark": "strength", "suite": args.suite, "quick": args.quick, "seed": args.seed, "jobs": args.jobs,
               "games": sum(r["games"] for r in results), "pairings": results,
               "seconds": round(time.perf_counter() - started, 1)}
    if args.json:
        print(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
