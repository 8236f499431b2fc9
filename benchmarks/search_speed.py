"""Search speed: ISMCTS/PIMC iterations per second (4 players, first turn), full random rollouts per second,
and root-parallel scaling.

    python benchmarks/search_speed.py --json [--seconds 3]

Positions: 4 players, default map (seed 1), Castles placed by the first legal sites, turn 1: the first
selector's first pick (SELECT) and the first reveal of the turn (REVEAL). Each measurement runs the search with
a wall-time budget and reports iterations / elapsed, with the worlds on the reference Python State and on the
Cython core (``SearchOptions.engine``, reported as "engine").
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from provenance import with_provenance  # noqa: E402  (benchmarks/provenance.py)

from engine import Phase, new_game, sample_chance  # noqa: E402
import feudo_ai  # noqa: E402


def advise(state, engine: str, **options):
    """The Python reference search through feudo_ai.advise (options by their SearchOptions names)."""
    opts = feudo_ai.SearchOptions(backend="python", engine=engine, **options)
    return feudo_ai.advise(state, state.current_player(), opts)


def first_turn_positions():
    state = new_game(players=4, seed=1)
    rng = random.Random(1)
    select = reveal = None
    while reveal is None:
        if state.is_chance_node():
            state.apply_action(sample_chance(state, rng))
            continue
        if state.phase == Phase.SELECT and select is None:
            select = state.clone()
        if state.phase == Phase.REVEAL and reveal is None and len(state.legal_actions()) > 1:
            reveal = state.clone()
        state.apply_action(rng.choice(state.legal_actions()) if state.phase != Phase.PLACE_CASTLE
                           else state.legal_actions()[0])
    return {"select": select, "reveal": reveal}


def rollouts_per_s(seconds: float) -> dict:
    """Full random games from turn 1 (after Castle placement) to the end, in the reference engine."""
    start = first_turn_positions()["select"]
    rng = random.Random(0)
    n = actions = 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        s = start.clone()
        while not s.is_terminal():
            s.apply_action(sample_chance(s, rng) if s.is_chance_node() else rng.choice(s.legal_actions()))
            actions += 1
        n += 1
    dt = time.perf_counter() - t0
    out = {"reference_rollouts_per_s": round(n / dt, 1), "reference_actions_per_s": round(actions / dt)}
    try:
        from engine.core import CoreState  # type: ignore

        core = CoreState.from_reference(start)
        n = 0
        t0 = time.perf_counter()
        while time.perf_counter() - t0 < seconds:
            c = core.clone()
            c.random_playout(n)
            n += 1
        out["core_rollouts_per_s"] = round(n / (time.perf_counter() - t0), 1)
    except Exception as e:  # noqa: BLE001 - the core is optional
        out["core_rollouts_per_s"] = None
        out["core_note"] = f"engine.core not available ({type(e).__name__})"
    return out


def _core_built() -> bool:
    try:
        from engine.core import CoreState  # type: ignore  # noqa: F401

        return True
    except Exception:  # noqa: BLE001
        return False


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="ISMCTS/PIMC speed")
    ap.add_argument("--seconds", type=float, default=3.0, help="wall time per measurement")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    pos = first_turn_positions()
    engines = ["reference"] + (["core"] if _core_built() else [])
    results = []
    scaling = {}
    for engine_name in engines:
        for name, state in pos.items():
            for algo in ("ismcts", "pimc"):
                for playout in ("mixed", "eval", "truncated", "random"):
                    st = advise(state, engine_name, algorithm=algo, seconds=args.seconds, playout=playout,
                                seed=1).stats
                    results.append({"engine": engine_name, "position": name, "algorithm": algo, "playout": playout,
                                    "iterations": st.iterations, "seconds": round(st.search_seconds, 3),
                                    "iterations_per_s": round(st.iterations / st.search_seconds, 1),
                                    "nodes": st.nodes})
        # root parallelism (worker processes): 2 workers against 1, ISMCTS at the reveal position
        for playout in ("eval", "random"):
            state = pos["reveal"]
            one = advise(state, engine_name, seconds=args.seconds, playout=playout, seed=1).stats
            base = one.iterations / one.search_seconds
            two = advise(state, engine_name, seconds=args.seconds, threads=2, playout=playout, seed=1).stats
            rate = two.iterations / two.search_seconds
            scaling[f"{engine_name}/{playout}"] = {"single_iterations_per_s": round(base, 1), "process": {
                "workers": 2, "iterations_per_s": round(rate, 1), "speedup": round(rate / base, 2)}}
    out = {"benchmark": "search_speed", "engines": engines, "cpus": os.cpu_count(), "players": 4, "turn": 1,
           "load_note": "shared machine: other jobs may be running", "search": results,
           "root_parallel": scaling, "rollouts": rollouts_per_s(args.seconds)}
    with_provenance(out, {"args": args, "seed": 1, "algorithms": ["ismcts", "pimc"],
                          "playouts": ["mixed", "eval", "truncated", "random"], "root_parallel_workers": 2})
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        for r in results:
            print(r)
        print(scaling)
        print(out["rollouts"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
