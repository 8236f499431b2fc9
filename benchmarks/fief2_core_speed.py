"""Speed of the compiled Fief 2 core (fief2/_core.pyx) against the reference rules (fief2/state.py), beside
Feudo's core (engine/_core.pyx), in one process, on seeded random games.

    python benchmarks/fief2_core_speed.py --json
    python benchmarks/fief2_core_speed.py --players 6 --reference-games 4 --core-games 200 --json

Random playouts: uniformly random legal actions to the end (the turn limit of the standard ruleset, 30 turns, F51),
chance drawn with its probabilities. The reference is driven through its Python API (``sample_chance`` /
``random.choice``) from clones of the start positions; the core plays the same kind of games in a C loop with the
GIL released (``Fief2Core.random_playouts``), so its figure is what a search's playouts get. Clone time: the
reference's ``State.clone()`` against the core's struct copy (a memcpy timed in a C loop), on positions sampled
along a reference game (mid-game states, hands and assaults filled). Feudo's core is measured the same way
(``engine._core.bench_playouts`` / ``bench_clone``; its games are far shorter, so actions per second compare best).
Prints one JSON object with ``--json``, else a table. Not a test: nothing here asserts.
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

from fief2 import new_game, sample_chance  # noqa: E402


def reference_playouts(starts) -> tuple[float, int, int]:
    """(seconds, games, actions) of random games with the reference rules from clones of ``starts``."""
    actions = 0
    t0 = time.perf_counter()
    for i, start in enumerate(starts):
        st = start.clone()
        rng = random.Random(i)
        while not st.is_terminal():
            st.apply_action(sample_chance(st, rng) if st.is_chance_node() else rng.choice(st.legal_actions()))
            actions += 1
    return time.perf_counter() - t0, len(starts), actions


def sample_positions(start, count: int = 20, every: int = 97) -> list:
    """Reference positions along one random game (every ``every`` actions), for the clone timings."""
    out, st, rng, step = [], start.clone(), random.Random(99), 0
    while not st.is_terminal() and len(out) < count:
        if step % every == every - 1:
            out.append(st.clone())
        st.apply_action(sample_chance(st, rng) if st.is_chance_node() else rng.choice(st.legal_actions()))
        step += 1
    return out


def reference_clone_ns(positions, repeat: int = 200) -> float:
    t0 = time.perf_counter()
    for _ in range(repeat):
        for p in positions:
            p.clone()
    return (time.perf_counter() - t0) * 1e9 / (repeat * len(positions))


def feudo_core(players: int, games: int) -> dict | None:
    """Feudo's core, measured as benchmarks/core_speed.py does (None if engine._core is not built)."""
    try:
        from engine import new_game as feudo_new_game
        from engine._core import CoreState, bench_clone, bench_playouts, sizeof_state
    except ImportError:
        return None
    starts = [CoreState.from_reference(feudo_new_game(None, players=players, seed=s)) for s in range(10)]
    per = max(1, games // len(starts))
    secs = acts = 0.0
    for i, c in enumerate(starts):
        s, a = bench_playouts(c, per, i + 1)
        secs += s
        acts += a
    return {"players": players, "games": per * len(starts), "playouts_per_s": round(per * len(starts) / secs, 1),
            "actions_per_s": round(acts / secs, 1), "actions_per_game": round(acts / (per * len(starts)), 1),
            "clone_ns": round(min(bench_clone(c, 1_000_000) for c in starts[:3]), 1), "state_bytes": sizeof_state()}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--players", type=int, default=4)
    ap.add_argument("--reference-games", type=int, default=6, help="reference random games (distinct starts)")
    ap.add_argument("--core-games", type=int, default=600, help="core random games (spread over the starts)")
    ap.add_argument("--clones", type=int, default=2_000_000, help="core struct copies timed per position")
    ap.add_argument("--seed", type=int, default=0, help="first deal seed of the start positions")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    try:
        from fief2._core import Fief2Core
    except ImportError:
        print("fief2._core is not built: python setup.py build_ext --inplace", file=sys.stderr)
        return 2

    # start positions: after the setup (F7), each seeded differently, so games differ from the first deal on
    starts = []
    for s in range(args.seed, args.seed + args.reference_games):
        st, rng = new_game(players=args.players), random.Random(10_000 + s)
        while st.turn == 0:
            st.apply_action(sample_chance(st, rng) if st.is_chance_node() else rng.choice(st.legal_actions()))
        starts.append(st)
    ref_s, ref_games, ref_actions = reference_playouts(starts)

    cores = [Fief2Core.from_state(s) for s in starts]
    per = max(1, args.core_games // len(cores))
    core_s, core_actions = 0.0, 0
    for i, c in enumerate(cores):
        t0 = time.perf_counter()
        core_actions += c.random_playouts(per, i + 1)
        core_s += time.perf_counter() - t0
    core_games = per * len(cores)

    positions = sample_positions(starts[0])
    ref_clone = reference_clone_ns(positions)
    clone_ns = []
    for p in positions[:5]:
        c = Fief2Core.from_state(p)
        t0 = time.perf_counter()
        c.clone_loop(args.clones)
        clone_ns.append((time.perf_counter() - t0) * 1e9 / args.clones)

    ref_rate, core_rate = ref_games / ref_s, core_games / core_s
    result = {
        "players": args.players,
        "reference_games": ref_games,
        "reference_playouts_per_s": round(ref_rate, 3),
        "reference_actions_per_s": round(ref_actions / ref_s, 1),
        "reference_actions_per_game": round(ref_actions / ref_games, 1),
        "reference_clone_ns": round(ref_clone, 1),
        "core_games": core_games,
        "core_playouts_per_s": round(core_rate, 2),
        "core_actions_per_s": round(core_actions / core_s, 1),
        "core_actions_per_game": round(core_actions / core_games, 1),
        "core_clone_ns": round(min(clone_ns), 1),
        "core_state_bytes": Fief2Core.state_size(),
        "ratio_playouts": round(core_rate / ref_rate, 1),
        "ratio_actions": round((core_actions / core_s) / (ref_actions / ref_s), 1),
        "ratio_clone": round(ref_clone / min(clone_ns), 1),
        "feudo_core": feudo_core(min(args.players, 4), 20_000),  # Feudo has 2-4 players
    }
    print_result(result, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
