"""How often the greedy playout's pick is a tie: the top score shared by several legal actions.

    python benchmarks/playout_ties.py [--games 10] [--players 2] [--seed 20] [--json]

The product's playouts play the greedy player's moves: in a Move, March, Advance or Milady decision (R8-R14) the
action after which the mover's ``position_score`` gains most (``_greedy_pick`` in ``feudo_ai/_feudo_game.pyx``),
ties broken uniformly at random. The score is blind to much of the board (a Knight on one empty Hill is worth what
it is on another), so ties are common, and every tie is a random draw in a playout whose end is the leaf's only
value. This plays ``--games`` games of the greedy player in every seat (the deals, the chance outcomes and the bots'
draws from ``--seed``) and, at every such decision with two or more legal actions, scores the actions with the
playout's own scorer (:func:`feudo_ai._feudo_game.greedy_scores`) and counts the actions that share the top score.

Reported: the decisions, the share with a tie at the top, the mean number of actions tied there when there is a
tie, and the count of decisions by that number. Why it was measured and what was tried about it:
docs/search-history.md ("The greedy playout's ties"). Not a test: nothing here asserts.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from collections import Counter

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from provenance import with_provenance  # noqa: E402  (benchmarks/provenance.py)

from engine import new_game, sample_chance  # noqa: E402
from engine.core import CoreState  # noqa: E402
from engine import Phase  # noqa: E402
from feudo_ai.bots.greedy import GreedyBot  # noqa: E402

SCORED_PHASES = (Phase.MOVE, Phase.MARCH, Phase.ADVANCE, Phase.MILADY)  # where the playout's pick is the greedy one


def top_ties(scores: dict[int, float]) -> int:
    """How many actions share the top score of ``scores`` ({action: score}, exact centi-VP)."""
    best = max(scores.values())
    return sum(1 for v in scores.values() if v == best)


def tied_decisions(players: int, seed: int, games: int):
    """Yield (state, {action: the greedy playout's score}) at every scored decision with two or more legal
    actions of ``games`` games of the greedy player in every seat; game g deals from ``seed + g``. The state is
    the game's own: read it before the next item, which plays on from it."""
    from feudo_ai._feudo_game import greedy_scores  # compiled

    for g in range(games):
        state, rng = new_game(players=players, seed=seed + g), random.Random(seed + g)
        bots = [GreedyBot((seed + g) * 10 + i) for i in range(players)]
        while not state.is_terminal():
            if state.is_chance_node():
                state.apply_action(sample_chance(state, rng))
                continue
            if state.phase in SCORED_PHASES and len(state.legal_actions()) > 1:
                yield state, greedy_scores(CoreState.from_reference(state))
            state.apply_action(bots[state.current_player()].choose(state))


def measure(players: int, seed: int, games: int) -> dict:
    sizes: Counter = Counter()
    by_phase: dict[str, list[int]] = {}
    for state, scores in tied_decisions(players, seed, games):
        k = top_ties(scores)
        sizes[k] += 1
        counts = by_phase.setdefault(state.phase.name.lower(), [0, 0])
        counts[0] += 1
        counts[1] += k > 1
    decisions = sum(sizes.values())
    tied = sum(n for k, n in sizes.items() if k > 1)
    return {"decisions": decisions, "tied": tied, "tied_share": round(tied / decisions, 4) if decisions else None,
            "mean_tied_actions": round(sum(k * n for k, n in sizes.items() if k > 1) / tied, 3) if tied else None,
            "by_top_ties": {str(k): sizes[k] for k in sorted(sizes)},
            "by_phase": {name: {"decisions": n, "tied": t} for name, (n, t) in sorted(by_phase.items())}}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--games", type=int, default=10, help="games of the greedy player in every seat (default 10)")
    ap.add_argument("--players", type=int, default=2, help="players, 2 to 4 (default 2)")
    ap.add_argument("--seed", type=int, default=20, help="every random choice flows from it (default 20)")
    ap.add_argument("--json", action="store_true", help="print JSON (default: a table)")
    args = ap.parse_args(argv)
    for name, low, high in (("games", 1, 10_000), ("players", 2, 4), ("seed", 0, 2**31 - 1)):
        if not low <= getattr(args, name) <= high:
            print(f"playout_ties: error: --{name}: expected an integer in [{low}, {high}], got {getattr(args, name)}",
                  file=sys.stderr)
            return 2
    started = time.perf_counter()
    result = {"benchmark": "playout_ties", "games": args.games, "players": args.players, "seed": args.seed,
              **measure(args.players, args.seed, args.games), "seconds": round(time.perf_counter() - started, 1)}
    if args.json:
        print(json.dumps(with_provenance(result, {"args": args}), indent=2))
        return 0
    print(f"{result['decisions']} decisions, {result['tied']} with a tie at the top ({result['tied_share']:.1%}), "
          f"{result['mean_tied_actions']} actions tied there on average")
    for k, n in result["by_top_ties"].items():
        print(f"{k:>3} at the top: {n}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
