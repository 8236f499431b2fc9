"""Fief 2: N random games of n families (default 200 x 6), invariants checked after every action.

    python benchmarks/fief2_random.py [games] [players] [--no-check]

Prints games, errors, actions per game (mean/min/max), turns, and speed (actions per second).
"""

from __future__ import annotations

import sys
import time
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fief2 import play_random  # noqa: E402
from fief2.invariants import check_invariants  # noqa: E402


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    games = int(args[0]) if args else 200
    players = int(args[1]) if len(args) > 1 else 6
    check = None if "--no-check" in sys.argv else check_invariants
    errors, lengths, turns = 0, [], []
    t0 = time.perf_counter()
    for seed in range(games):
        try:
            rec = play_random(players, 10_000 + seed, check=check)
            lengths.append(len(rec.actions))
            turns.append(rec.final.turn)
        except Exception:  # noqa: BLE001 - counted and shown
            errors += 1
            traceback.print_exc()
    dt = time.perf_counter() - t0
    total = sum(lengths)
    print(f"games {games}, players {players}, errors {errors}, invariants {'on' if check else 'off'}")
    if lengths:
        print(f"actions per game: mean {total / len(lengths):.0f}, min {min(lengths)}, max {max(lengths)}; "
              f"turns mean {sum(turns) / len(turns):.1f}")
    print(f"time {dt:.1f} s, {total / dt:.0f} actions/s, {dt / games:.2f} s/game")


if __name__ == "__main__":
    main()
