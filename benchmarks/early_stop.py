"""How much of a search's budget ``early_stop`` leaves unspent, and whether it ever changes the answer.

Games between ``greedy`` players (deal seeds SEED, SEED+1, ...); at every third decision with two or more legal
actions that is not a secret selection, the product's search of that player count (``resolve("product",
players)``) at ``--iterations`` on one thread, once with the whole budget and once with ``early_stop``, the same
seed. Prints the share of the decisions stopped early, the mean share of the budget left unspent (by phase too)
and how many answers differed (0 by construction on one thread: the check of it).

    python benchmarks/early_stop.py --players 2 --games 3 --iterations 1400 --seed 100 --json
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


def measure(players: int, games: int, iterations: int, seed: int, every: int = 3) -> dict:
    from engine import Phase, new_game, sample_chance
    from feudo_ai.bots.greedy import GreedyBot
    from feudo_ai.search.advise import advise
    from feudo_ai.settings import resolve

    base = resolve("product", players).replace(iterations=iterations, seconds=None, seed=7)
    rows = []  # (phase, saved share, answer differed)
    for g in range(games):
        rng = random.Random(seed + g)
        state = new_game(players=players, seed=seed + g)
        bots = [GreedyBot(seed + g + i) for i in range(players)]
        k = 0
        while not state.is_terminal():
            if state.is_chance_node():
                state.apply_action(sample_chance(state, rng))
                continue
            if len(state.legal_actions()) >= 2 and state.phase != Phase.SELECT:
                k += 1
                if k % every == 0:
                    seat = state.current_player()
                    full = advise(state.clone(), seat, base)
                    early = advise(state.clone(), seat, base.replace(early_stop=True))
                    rows.append((state.phase.name, 1.0 - early.stats.iterations / full.stats.iterations,
                                 early.best != full.best))
            state.apply_action(bots[state.current_player()].choose(state))
    by_phase: dict[str, list[float]] = {}
    for phase, saved, _ in rows:
        by_phase.setdefault(phase, []).append(saved)
    return {
        "decisions": len(rows),
        "stopped_early": round(sum(s > 0 for _, s, _ in rows) / len(rows), 3) if rows else None,
        "mean_budget_saved": round(sum(s for _, s, _ in rows) / len(rows), 3) if rows else None,
        "answers_changed": sum(d for _, _, d in rows),
        "by_phase": {p: {"decisions": len(v), "mean_budget_saved": round(sum(v) / len(v), 3)}
                     for p, v in sorted(by_phase.items())},
        "search_options": base.to_dict(),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--players", type=int, default=2, choices=(2, 3, 4))
    ap.add_argument("--games", type=int, default=3, help="greedy games whose decisions are searched")
    ap.add_argument("--iterations", type=int, default=1400, help="the budget of a search (about 0.1 s: 1,400)")
    ap.add_argument("--seed", type=int, default=100, help="deal seed of the first game")
    ap.add_argument("--json", action="store_true", help="print JSON with its provenance")
    args = ap.parse_args(argv)
    if args.games < 1 or args.iterations < 16:
        ap.error("--games must be at least 1 and --iterations at least 16")
    started = time.time()
    result = measure(args.players, args.games, args.iterations, args.seed)
    result["seconds"] = round(time.time() - started, 1)
    if args.json:
        print(json.dumps(with_provenance(result, {"args": args}), indent=2))
        return 0
    print(f"{result['decisions']} decisions: stopped early {result['stopped_early']:.0%}, budget left unspent "
          f"{result['mean_budget_saved']:.0%} on average, answers changed {result['answers_changed']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
