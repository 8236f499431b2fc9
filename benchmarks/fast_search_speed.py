"""Speed of the C searches (feudo_ai.advise, backend "c"): iterations per second, 1 and 2 threads.

    python benchmarks/fast_search_speed.py --json [--seconds 1]
    python benchmarks/fast_search_speed.py --playouts --json    # the playouts' cost, the product's budgets
    python benchmarks/fast_search_speed.py --pool-growth --json # when a timed search fills its node pool

Positions: 4 players, default map (seed 1), Castles on the first legal sites, turn 1: the first decision
after the Castles (CHOOSE_ORDER), the first selector's first pick (SELECT) and the first reveal with a choice
(REVEAL). For each: the default evaluation (truncated playout to the end of the turn + softmax of the
position score) with 1 and 2 threads (root parallel, GIL released), the full-random-rollout variant and the
leaf-evaluation variant, the weighted sampler and the PIMC baseline with 1 thread, and the action prior
(``prior_weight``) and the "ismcts" bot's greedy playouts per CPU second. The load average before the
run is reported: other processes on the machine lower the wall-clock rates and the 2-thread ratio, so the
default search is also measured per CPU second of the process (``default_1_thread_it_per_cpu_s``: a fixed budget
of iterations over the CPU time it took), a figure a loaded machine barely moves. Not a test: nothing here
asserts.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from provenance import with_provenance  # noqa: E402  (benchmarks/provenance.py)

from engine import Phase, new_game, sample_chance  # noqa: E402
import feudo_ai  # noqa: E402
from feudo_ai.settings import resolve  # noqa: E402

# the product profile's playouts: one more turn (3-4 players) and to the end of the game (2 players)
GREEDY_PLAYOUTS = {k: v for k, v in resolve("product", 4).changes().items() if k.startswith("playout")}
GREEDY_PLAYOUTS_2P = {k: v for k, v in resolve("product", 2).changes().items() if k.startswith("playout")}
# --playouts: each measured search as (profile, settings), resolved for the player count (feudo_ai.settings.resolve)
PLAYOUT_MODES = {"plain": ("default", {}), "playout_turns_1": ("default", {"playout_turns": 1}),
                 "greedy_playouts": ("default", GREEDY_PLAYOUTS),
                 "greedy_playouts_to_the_end": ("default", GREEDY_PLAYOUTS_2P), "product": ("product", {})}


def _mode_options(mode: str, players: int, **budget):
    profile, settings = PLAYOUT_MODES[mode]
    return resolve(profile, players, {**settings, **budget})


def first_turn_positions() -> dict:
    state = new_game(players=4, seed=1)
    rng = random.Random(1)
    out: dict = {}
    while "reveal" not in out:
        if state.is_chance_node():
            state.apply_action(sample_chance(state, rng))
            continue
        legal = state.legal_actions()
        if state.phase == Phase.CHOOSE_ORDER and "order" not in out:
            out["order"] = state.clone()
        if state.phase == Phase.SELECT and "select" not in out:
            out["select"] = state.clone()
        if state.phase == Phase.REVEAL and len(legal) > 1:
            out["reveal"] = state.clone()
        state.apply_action(legal[0] if state.phase == Phase.PLACE_CASTLE else rng.choice(legal))
    return out


def random_game_positions(players: int, count: int = 40, seed: int = 3) -> list:
    """Decisions of random games (``count`` games of ``players``, each stopped at a random turn 1-8 at its first
    Move, March, selection or attack with a choice): the mix a game's searches meet."""
    rng = random.Random(seed)
    out: list = []
    game = 0
    while len(out) < count:
        state = new_game(players=players, seed=seed * 1000 + game)
        game += 1
        stop = rng.randint(1, 8)
        while not state.is_terminal():
            if state.is_chance_node():
                state.apply_action(sample_chance(state, rng))
                continue
            legal = state.legal_actions()
            if state.turn >= stop and state.phase in (Phase.MOVE, Phase.MARCH, Phase.SELECT, Phase.ATTACK) \
                    and len(legal) > 1:
                out.append(state.clone())
                break
            state.apply_action(rng.choice(legal))
    return out


def playout_rates(iterations: int = 1000) -> dict:
    """``--playouts``: iterations per CPU second (1 thread, ``iterations`` a position, seeds 0-39) over 40
    positions of random games, 2 and 4 players, for the plain playouts (SearchOptions' defaults), one more turn
    with uniform moves, and greedy moves for one more turn (the "ismcts" bot's playouts in 3 and 4 players) and to
    the end of the game (its playouts in 2 players), and the product's search as the ``product`` profile resolves it
    for the player count (in 2 players: the playouts to the end and the action prior). For that product search,
    also what a budget buys on the same positions, in wall time: the iterations of a 0.1 s search (median) and the
    seconds of a 10,000-iteration one (the ``max`` level: median and 90th percentile)."""
    out: dict = {}
    for players in (2, 4):
        states = random_game_positions(players)
        row = {}
        for name in PLAYOUT_MODES:
            c0, total = _cpu(), 0
            for i, state in enumerate(states):
                opts = _mode_options(name, players, iterations=iterations, seed=i)
                total += feudo_ai.advise(state, state.current_player(), opts).stats.iterations
            row[name] = round(total / (_cpu() - c0))
        out[f"{players}_players_it_per_cpu_s"] = row
        its, seconds = [], []
        for i, state in enumerate(states):
            its.append(feudo_ai.advise(state, state.current_player(),
                                       _mode_options("product", players, seconds=0.1, seed=i)).stats.iterations)
            t0 = time.perf_counter()
            feudo_ai.advise(state, state.current_player(), _mode_options("product", players, iterations=10_000, seed=i))
            seconds.append(time.perf_counter() - t0)
        out[f"{players}_players_product"] = {
            "iterations_in_0.1_s_median": statistics.median(its),
            "seconds_for_10000_iterations_median": round(statistics.median(seconds), 3),
            "seconds_for_10000_iterations_p90": round(sorted(seconds)[int(0.9 * len(seconds))], 3)}
    return out


def pool_growth(iterations: int = 4000, count: int = 10) -> dict:
    """``--pool-growth``: when does a timed search fill its node pool? Over ``count`` positions of random games (2
    and 4 players, 1 thread, ``iterations`` a position, seeds 0..), the nodes an iteration adds and the iterations
    per CPU second, for the product's settings and for the plain playouts (``ismcts-v1``'s); their product is the
    pool's growth a CPU second, and the timed pool (``c_backend.TIMED_MAX_NODES`` nodes) over it the seconds of one
    unloaded core before it fills and recycling starts (``recycle``)."""
    from feudo_ai.search.c_backend import TIMED_MAX_NODES
    from feudo_ai.settings import resolve

    out: dict = {"timed_pool_nodes": TIMED_MAX_NODES, "iterations": iterations, "positions": count}
    for players in (2, 4):
        states = random_game_positions(players, count=count)
        for name, profile in (("product", "product"), ("plain", "ismcts-v1")):
            base = resolve(profile, players, {"iterations": iterations})
            c0, its, nodes, full = _cpu(), 0, 0, 0
            for i, state in enumerate(states):
                st = feudo_ai.advise(state, state.current_player(), base.replace(seed=i)).stats
                its, nodes, full = its + st.iterations, nodes + st.nodes, full + st.pool_full
            rate = its / (_cpu() - c0)
            per_it = nodes / its
            out[f"{players}p_{name}"] = {"nodes_per_iteration": round(per_it, 2), "it_per_cpu_s": round(rate),
                                          "nodes_per_cpu_s": round(per_it * rate),
                                          "cpu_s_to_fill_timed_pool": round(TIMED_MAX_NODES / (per_it * rate), 1),
                                          "pools_filled": full}
    return out


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def rate(state, seconds: float, **kw) -> tuple[int, float, int]:
    """(iterations per second, cores used = process CPU time / wall time, nodes at the end)."""
    c0 = _cpu()
    advice = feudo_ai.advise(state, state.current_player(), feudo_ai.SearchOptions(seconds=seconds, seed=1, **kw))
    cpu = _cpu() - c0
    wall = advice.stats.search_seconds
    return round(advice.stats.iterations / wall), round(cpu / wall, 2), advice.stats.nodes


def rate_per_cpu(state, iterations: int = 20000, **kw) -> int:
    """Iterations per CPU second of a fixed budget (1 thread, the default search unless options are given)."""
    c0 = _cpu()
    feudo_ai.advise(state, state.current_player(), feudo_ai.SearchOptions(iterations=iterations, seed=1, **kw))
    return round(iterations / (_cpu() - c0))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=1.0)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--playouts", action="store_true",
                    help="only the playouts' cost: iterations per CPU second over 40 positions of random games, "
                         "and the product's iterations in 0.1 s and seconds for 10,000 iterations there")
    ap.add_argument("--pool-growth", action="store_true",
                    help="only the node pool's growth: nodes an iteration adds, and the CPU seconds a timed search "
                         "takes to fill its pool (product and plain playouts, 2 and 4 players)")
    args = ap.parse_args()
    if args.pool_growth:
        result = with_provenance(pool_growth(), {"args": args})
        print(json.dumps(result, indent=1) if args.json else result)
        return
    if args.playouts:
        result = with_provenance(playout_rates(), {"args": args, "modes": {
            name: {f"{n}_players": _mode_options(name, n, iterations=1000, seed=1).to_dict() for n in (2, 4)}
            for name in PLAYOUT_MODES}})
        print(json.dumps(result, indent=1) if args.json else result)
        return
    load = os.getloadavg()
    out: dict = {"cpus": os.cpu_count(), "loadavg_before": [round(x, 2) for x in load], "seconds": args.seconds,
                 "default_playout": "truncated (to the end of the turn) + softmax of the position score",
                 "positions": {}}
    for name, state in first_turn_positions().items():
        one, cpu1, nodes1 = rate(state, args.seconds)
        two, cpu2, nodes2 = rate(state, args.seconds, threads=2)
        out["positions"][name] = {
            "default_1_thread_it_s": one,
            "default_2_threads_it_s": two,
            "default_1_thread_it_per_cpu_s": rate_per_cpu(state),
            # the tree's action prior (docs/search.md, "Limits"): the game scores every legal action at each expansion
            "prior_1_thread_it_per_cpu_s": rate_per_cpu(state, prior_weight=0.5, prior_temperature=0.5),
            # the "ismcts" bot's playouts in 4 players (docs/search.md, "Playouts"): one more turn, greedy moves
            # (the product profile's)
            "greedy_playouts_1_thread_it_per_cpu_s": rate_per_cpu(state, **GREEDY_PLAYOUTS),
            "thread_speedup": round(two / one, 2),
            "cores_used_1_thread": cpu1,
            "cores_used_2_threads": cpu2,  # below ~1.9: other processes took CPU from the run
            "nodes_1_thread": nodes1,
            "random_rollout_1_thread_it_s": rate(state, args.seconds, playout="random")[0],
            "leaf_eval_1_thread_it_s": rate(state, args.seconds, playout="eval")[0],
            "pimc_1_thread_it_s": rate(state, args.seconds, algorithm="pimc")[0],
            "weighted_sampler_1_thread_it_s": rate(state, args.seconds, sampler="weighted")[0],
        }
    out["loadavg_after"] = [round(x, 2) for x in os.getloadavg()]
    with_provenance(out, {"args": args, "modes": {
        name: feudo_ai.SearchOptions(seconds=args.seconds, seed=1, **kw).to_dict()
        for name, kw in (("default", {}), ("2_threads", {"threads": 2}), ("random", {"playout": "random"}),
                         ("eval", {"playout": "eval"}), ("pimc", {"algorithm": "pimc"}),
                         ("weighted", {"sampler": "weighted"}),
                         ("prior", {"prior_weight": 0.5, "prior_temperature": 0.5}),
                         ("greedy_playouts", GREEDY_PLAYOUTS))}})
    if args.json:
        print(json.dumps(out, indent=1))
    else:
        for k, v in out.items():
            print(f"{k}: {v}")


if __name__ == "__main__":
    main()
