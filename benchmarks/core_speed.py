"""Speed of the Cython core against the reference engine, in one process, on the same seeded games.

    python benchmarks/core_speed.py --json                 # 4 players, full 10-turn random games
    python benchmarks/core_speed.py --players 2 --games 40 --core-games 20000

Both implementations start from the same positions (``new_game(players=P, seed=s)`` for s in 0..games-1, at
Castle placement) and play uniformly random legal actions to the end (chance drawn with its probabilities).
The reference is driven through its Python API (``sample_chance`` / ``random.choice``); the core runs
``core_playout`` in a C loop with the GIL released. Clone and legal-action times are measured in C loops
(no Python call overhead), over positions sampled along reference games. Prints one JSON object with
``--json``, else a short table. Not a test: nothing here asserts.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from provenance import print_result  # noqa: E402  (benchmarks/provenance.py)

from engine import new_game, sample_chance  # noqa: E402
from engine.core import core_available  # noqa: E402


def reference_playouts(starts, repeat: int = 1) -> tuple[float, int, int]:
    """(seconds, games, actions) for random games with the reference engine from clones of ``starts``."""
    games = actions = 0
    t0 = time.perf_counter()
    for _ in range(repeat):
        for i, start in enumerate(starts):
            state = start.clone()
            rng = random.Random(i)
            while not state.is_terminal():
                a = sample_chance(state, rng) if state.is_chance_node() else rng.choice(state.legal_actions())
                state.apply_action(a)
                actions += 1
            games += 1
    return time.perf_counter() - t0, games, actions


def sample_positions(starts, every: int = 7, limit: int = 400):
    """Reference positions along random games (decision nodes only), for the clone/legal timings."""
    out = []
    for i, start in enumerate(starts):
        state = start.clone()
        rng = random.Random(1000 + i)
        step = 0
        while not state.is_terminal() and len(out) < limit:
            if not state.is_chance_node() and step % every == 0:
                out.append(state.clone())
            a = sample_chance(state, rng) if state.is_chance_node() else rng.choice(state.legal_actions())
            state.apply_action(a)
            step += 1
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--players", type=int, default=4)
    ap.add_argument("--games", type=int, default=30, help="reference games (and distinct start positions)")
    ap.add_argument("--core-games", type=int, default=20000, help="core playouts (spread over the starts)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    if not core_available():
        print("engine._core is not built: python setup.py build_ext --inplace", file=sys.stderr)
        return 2
    from engine._core import CoreState, bench_clone, bench_legal, bench_playouts, sizeof_state

    starts = [new_game(None, players=args.players, seed=s) for s in range(args.games)]
    ref_s, ref_games, ref_actions = reference_playouts(starts)

    cores = [CoreState.from_reference(s) for s in starts]
    per = max(1, args.core_games // len(cores))
    core_s = 0.0
    core_games = core_actions = 0
    for i, c in enumerate(cores):
        secs, acts = bench_playouts(c, per, i + 1)
        core_s += secs
        core_games += per
        core_actions += acts

    positions = [CoreState.from_reference(p) for p in sample_positions(starts)]
    clone_ns = min(bench_clone(c, 2_000_000) for c in positions[:3])
    legal = [bench_legal(c, 2000) for c in positions]
    # the Python API (for comparison: what a pure-Python search would see)
    c = cores[0].clone()
    rng = random.Random(0)
    t0 = time.perf_counter()
    py_actions = 0
    for _ in range(20):
        state = cores[0].clone()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                a = rng.choices([x for x, _ in outcomes], [p for _, p in outcomes])[0]
            else:
                a = rng.choice(state.legal_actions())
            state.apply_action(a)
            py_actions += 1
    py_s = time.perf_counter() - t0

    ref_rate = ref_games / ref_s
    core_rate = core_games / core_s
    result = {
        "players": args.players,
        "reference_games": ref_games,
        "reference_playouts_per_s": round(ref_rate, 2),
        "reference_actions_per_s": round(ref_actions / ref_s, 1),
        "core_games": core_games,
        "core_playouts_per_s": round(core_rate, 1),
        "core_actions_per_s": round(core_actions / core_s, 1),
        "ratio": round(core_rate / ref_rate, 1),
        "actions_per_game": round(core_actions / core_games, 1),
        "clone_ns": round(clone_ns, 1),
        "legal_actions_ns": round(sum(legal) / len(legal), 1),
        "legal_actions_ns_max": round(max(legal), 1),
        "legal_positions": len(legal),
        "core_python_api_actions_per_s": round(py_actions / py_s, 1),
        "state_bytes": sizeof_state(),
    }
    print_result(result, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
