"""``feudo arena``: the subcommand (registered by :func:`add_parser` in :mod:`feudo_ai.cli`)."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys

from feudo_ai.games import GAME_NAMES

from .results import ResultStore
from .schedule import ENGINES, FORMATS, SEATINGS, ArenaError, TournamentConfig
from .tournament import run_tournament

EXAMPLES = """examples:
  feudo arena --bots ismcts:seconds=0.2,greedy,random --players 2 --games 60 --seed 7 --out results/
  feudo arena --bots ismcts:iterations=2000,greedy,pimc:iterations=2000 --players 4 --format gauntlet --games 40
  feudo arena --game fief2 --bots greedy,easy,random --players 4 --games 24   # Fief 2's bots
  feudo arena --resume results/                        # continue a stopped tournament where it was
  feudo arena --bots ismcts,pimc --games 400 --backend ray --address auto   # on a Ray cluster
"""

# tournament options: None when not given, so that --resume can tell which ones the user set
_CONFIG_ARGS = {"bots": "bots", "players": "players", "games": "games", "seed": "seed", "format": "format",
                "seating": "seating", "ruleset": "ruleset", "map_file": "map", "turns": "turns",
                "virulent": "virulent", "strategy_only": "strategy_only", "engine": "engine", "game": "game"}


def add_parser(sub) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "arena", help="bot-vs-bot tournaments: fair schedules, win rates, ratings, chart, resume",
        description="Bot-vs-bot tournament. Every entrant plays every deal (game seed + map) from every seat; "
                    "results are win rates (R19 returns) with Wilson 95% intervals per pairing and openskill "
                    "ratings. Ctrl-C stops (finished games are kept); --resume continues.",
        epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bots", default=None,
                   help="entrants, comma-separated bot specs with :key=value parameters, e.g. "
                        "ismcts:seconds=0.2,greedy,random; an Advisor service: remote:address=host:port:seconds=0.5")
    p.add_argument("--game", choices=GAME_NAMES, default=None,
                   help="the game: feudo (default) or fief2 (Fief 2; bots random, greedy, easy, medium; --turns is "
                        "its turn limit, F51)")
    p.add_argument("--players", type=int, default=None,
                   help="players per game, 2-4 (default 2); Fief 2: 3-6 (default 4)")
    p.add_argument("--games", type=int, default=None,
                   help="games per pairing, rounded up to whole deals x seatings (default 20)")
    p.add_argument("--seed", type=int, default=None, help="seed of the deals (default 1)")
    p.add_argument("--format", choices=FORMATS, default=None,
                   help="round-robin (default): every group of entrants; gauntlet: the first entrant against "
                        "each other one, which fills all other seats")
    p.add_argument("--seating", choices=SEATINGS, default=None,
                   help="rotate (default): every cyclic seat rotation of a table; permute: every permutation")
    p.add_argument("--ruleset", default=None, help="ruleset name or JSON file (default: 'basic')")
    p.add_argument("--map", dest="map_file", default=None, help="map name or JSON file (default: 'default')")
    p.add_argument("--turns", type=int, default=None, help="R20 longer game: number of turns")
    p.add_argument("--virulent", action="store_true", default=None, help="R20 optional rule: Virulent Plague")
    p.add_argument("--strategy-only", action="store_true", default=None,
                   help="R20 optional rule: Only Strategy and Tactics")
    p.add_argument("--engine", choices=ENGINES, default=None,
                   help="rules implementation: compiled core when built (auto, default), core or reference")
    p.add_argument("--backend", choices=("local", "ray"), default="local",
                   help="local processes (default) or Ray (pip install 'feudo-ai[ray]')")
    p.add_argument("--address", default=None, help="with --backend ray: the cluster (default: a local Ray)")
    p.add_argument("--jobs", type=int, default=None,
                   help="parallel games (local processes; default: the CPU count; with a local Ray its CPUs)")
    p.add_argument("--out", default=None,
                   help="directory for games.jsonl (appended game by game), records/, summary.json, chart.png")
    p.add_argument("--resume", default=None, metavar="DIR", help="continue the tournament stored in DIR")
    p.add_argument("--json", action="store_true", help="print the summary as JSON instead of tables")
    p.add_argument("--no-progress", action="store_true", help="no progress bar / running table")
    p.set_defaults(func=cmd_arena)
    return p


def _given(args: argparse.Namespace) -> dict:
    given = {}
    for arg, name in _CONFIG_ARGS.items():
        value = getattr(args, arg)
        if value is None:
            continue
        if name == "bots":
            value = tuple(s.strip() for s in value.split(",") if s.strip())
        given[name] = value
    return given


def config_from_args(args: argparse.Namespace) -> TournamentConfig | None:
    """The tournament the flags describe; with --resume, the stored one with the flags given checked against it
    (None: run_tournament loads it)."""
    given = _given(args)
    if args.resume is not None:
        if not given:
            return None
        stored = ResultStore(args.resume).load_config()
        return dataclasses.replace(stored, **given)
    if "bots" not in given:
        raise ArenaError("--bots: required (or --resume DIR)")
    if given.get("game", "feudo") != "feudo" and "players" not in given:
        given["players"] = 4
    return TournamentConfig(**given)


def cmd_arena(args: argparse.Namespace) -> int:
    # rich (~0.07 s to import) loads only when the subcommand runs: feudo_ai.cli imports this module (add_parser)
    # at every start of the `feudo` command
    from rich.console import Console

    from .progress import print_results

    config = config_from_args(args)
    err = Console(stderr=True)
    show = not args.no_progress and not args.json and sys.stderr.isatty()
    run = run_tournament(config, out=args.out, resume=args.resume,
                         backend=args.backend, jobs=args.jobs, address=args.address, progress=show)
    if args.json:
        print(json.dumps(run.summary, indent=2))
    else:
        # a file or a pipe gets the full table, not one folded to 80 columns
        print_results(run.summary, Console() if sys.stdout.isatty() else Console(width=160))
    if run.out is not None:
        err.print(f"results in {run.out}/: games.jsonl, records/ ({len(run.results)} games), summary.json, "
                  f"chart.png")
    if run.interrupted:
        where = f" (feudo arena --resume {run.out})" if run.out is not None else " (give --out to be able to resume)"
        err.print(f"stopped: {run.summary['games_played']} of {run.summary['games_scheduled']} games finished; "
                  f"resume to play the rest{where}")
        return 130
    return 0
