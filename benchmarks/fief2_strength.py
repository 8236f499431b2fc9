"""Fief 2 strength: arena gauntlets of the Fief 2 bots, win rates with Wilson 95% intervals, JSON with provenance.

    python benchmarks/fief2_strength.py --json                      # greedy vs 3 random, 100 games (4 players)
    python benchmarks/fief2_strength.py --a medium --b easy --games 40 --json
    python benchmarks/fief2_strength.py --games 100 --jobs 2 --json --save benchmarks/results/fief2_greedy_vs_random.json
    python benchmarks/fief2_strength.py --a ismcts:seconds=0.1 --b greedy,random --games 8 --jobs 1 --json


A pairing "A vs B" is a ``feudo arena --game fief2 --format gauntlet`` run: A sits in one seat and B in all the
others, every deal (game seed: every dealt card and die) is played from each of A's seats (seat-rotated), so
``--games`` is rounded up to a multiple of the number of players. A's score per game is its F51 return (1 for a
sole win, 1/k for a k-way shared win); its fair share is 1/players. The bots are deterministic by seed, so a run is
reproducible from its seed (a search bot with a time limit, e.g. ``ismcts:seconds=0.1``, depends on the machine's
speed too). ``--b`` may name several bots (``greedy,random``): one pairing each, in ``results`` (``result`` is the
first).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

sys.path.insert(0, str(Path(__file__).resolve().parent))
from provenance import with_provenance  # noqa: E402
from feudo_ai.arena.schedule import TournamentConfig  # noqa: E402
from feudo_ai.arena.tournament import run_tournament  # noqa: E402


def pairing(a: str, b: str, players: int, games: int, seed: int, jobs: int | None,
            turns: int | None = None) -> dict:
    config = TournamentConfig(bots=(a, b), players=players, games=games, seed=seed, format="gauntlet",
                              game="fief2", turns=turns)
    started = time.perf_counter()
    run = run_tournament(config, jobs=jobs, chart=False)
    row = run.summary["pairings"][0]
    mine = next(e for e in row["entrants"] if e["bot"] == a)
    return {"pairing": f"{a} vs {players - 1} {b}", "a": a, "b": b, "players": players, "games": row["games"],
            "deals": run.summary["deals"], "a_score": mine["score"], "a_win_rate": mine["win_rate"],
            "a_wilson95": mine["wilson95"], "fair_share": mine["fair_share"],
            "se_binomial": mine["standard_error"]["binomial"],
            "se_deal_clustered": mine["standard_error"]["deal_clustered"],
            "a_power_mean": mine["vp_mean"], "a_places": mine["places"],
            "turns_mean": run.summary["turns_mean"], "shared_wins": run.summary["shared_wins"],
            "seconds": round(time.perf_counter() - started, 1)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--a", default="greedy", help="the bot in one seat (default greedy)")
    ap.add_argument("--b", default="random", help="the bot in every other seat (default random); several, "
                    "comma-separated: one pairing each")
    ap.add_argument("--players", type=int, default=4, help="players, 3-6 (default 4)")
    ap.add_argument("--games", type=int, default=100, help="games, rounded up to whole deals x seats (default 100)")
    ap.add_argument("--seed", type=int, default=2000, help="seed of the deals (default 2000)")
    ap.add_argument("--turns", type=int, default=None, help="F51 turn limit (default the ruleset's, 30)")
    ap.add_argument("--jobs", type=int, default=None, help="parallel games (default: the CPU count)")
    ap.add_argument("--json", action="store_true", help="print the result as JSON")
    ap.add_argument("--save", default=None, help="also write the JSON to this file")
    args = ap.parse_args(argv)
    opponents = [b for b in args.b.split(",") if b]
    if not opponents:
        ap.error("--b: expected one or more bot names")
    results = [pairing(args.a, b, args.players, args.games, args.seed, args.jobs, args.turns) for b in opponents]
    result = {"benchmark": "fief2_strength", "result": results[0], "results": results}
    with_provenance(result, args)
    text = json.dumps(result, indent=2)
    if args.save:
        Path(args.save).write_text(text + "\n", encoding="utf-8")
    if args.json:
        print(text)
    else:
        for r in results:
            print(f"{r['pairing']}: {r['a_win_rate']} of {r['games']} games, Wilson 95% {r['a_wilson95']}, "
                  f"fair share {r['fair_share']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
