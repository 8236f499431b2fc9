"""The long differential run: the Cython core against the reference on many seeded random games.

    python benchmarks/core_diff.py --games 100000            # all configs, round robin, a new seed per game
    python benchmarks/core_diff.py --games 2000 --canonical-every 1 --jobs 2
    python benchmarks/core_diff.py --games 500 --config 4p-virulent --start-seed 10**6

Each game compares, at every step, the legal actions, chance outcomes and current player, and the canonical
encodings every ``--canonical-every`` steps (and at the end); ``--playouts`` more games are chosen by the
core's own C random playout and replayed through the reference. Stops at the first mismatch and prints the
report (seed, step, action history, field-by-field diff); otherwise prints one JSON summary. Exit status 1 on
a mismatch.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from provenance import with_provenance  # noqa: E402  (benchmarks/provenance.py)

from engine.testing.differential import Mismatch, configs, play_side_by_side, replay_core_playout  # noqa: E402


def _chunk(args: tuple) -> tuple[int, int, str | None]:
    """Play games [lo, hi) of the round robin; (games, actions, first mismatch report or None)."""
    lo, hi, start_seed, names, canonical_every, playouts = args
    table = {c.label: c for c in configs()}
    chosen = [table[n] for n in names]
    games = actions = 0
    for k in range(lo, hi):
        config = chosen[k % len(chosen)]
        seed = start_seed + k
        try:
            if playouts:
                actions += replay_core_playout(config, seed, playout_seed=seed)
            else:
                actions += play_side_by_side(config, seed, canonical_every=canonical_every)
        except Mismatch as e:
            return games, actions, str(e)
        games += 1
    return games, actions, None


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--games", type=int, default=2000)
    ap.add_argument("--playouts", type=int, default=0, help="extra games chosen by the C playout, replayed")
    ap.add_argument("--start-seed", type=int, default=1_000_000)
    ap.add_argument("--canonical-every", type=int, default=4)
    ap.add_argument("--config", action="append", help="only these configs (repeatable); default all")
    ap.add_argument("--jobs", type=int, default=1)
    args = ap.parse_args(argv)
    names = args.config or [c.label for c in configs()]
    unknown = set(names) - {c.label for c in configs()}
    if unknown:
        ap.error(f"unknown config(s) {sorted(unknown)}; known: {[c.label for c in configs()]}")

    t0 = time.perf_counter()
    summary = {"configs": names, "start_seed": args.start_seed}
    for kind, total, playouts in (("games", args.games, False), ("playouts", args.playouts, True)):
        if total <= 0:
            continue
        step = max(1, min(2000, total // max(1, args.jobs * 4)))
        tasks = [(lo, min(total, lo + step), args.start_seed + (10**9 if playouts else 0), names,
                  args.canonical_every, playouts) for lo in range(0, total, step)]
        done = actions = 0
        if args.jobs > 1:
            with ProcessPoolExecutor(args.jobs) as pool:
                results = pool.map(_chunk, tasks)
                for g, a, report in results:
                    done, actions = done + g, actions + a
                    if report:
                        print(report)
                        return 1
        else:
            for task in tasks:
                g, a, report = _chunk(task)
                done, actions = done + g, actions + a
                if report:
                    print(report)
                    return 1
                print(f"{kind}: {done}/{total} identical ({time.perf_counter() - t0:.0f} s)", file=sys.stderr)
        summary[kind] = done
        summary[f"{kind}_actions"] = actions
    summary["seconds"] = round(time.perf_counter() - t0, 1)
    summary["mismatches"] = 0
    print(json.dumps(with_provenance(summary, {"args": args, "configs": names})))
    return 0


if __name__ == "__main__":
    sys.exit(main())
