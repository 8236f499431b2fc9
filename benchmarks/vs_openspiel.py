"""Our MO-ISMCTS against OpenSpiel's ISMCTS on python_feudo: equal wall time per decision, seats rotated.

    python benchmarks/vs_openspiel.py --json                               # 20 games, 0.1 s, 10 turns
    python benchmarks/vs_openspiel.py --games 10 --seconds 0.05 --turns 3 --json   # a few minutes

Needs the extra: ``pip install -e '.[openspiel]'``.

Two players on ``python_feudo`` (feudo_ai/openspiel_game.py). Games come in pairs with the same map
(``map_seed``) and the same chance draws, our bot in seat 0 in one and seat 1 in the other. Each decision with
more than one legal action gets ``--seconds`` of wall time, on one thread, for either side:

- ours: ``feudo_ai.bots.make_bot("ismcts:seconds=S")`` (the C MO-ISMCTS over the compiled core) on the
  engine position (it reads only the seat's observation);
- OpenSpiel's: ``open_spiel.python.algorithms.ismcts.ISMCTSBot`` with random-rollout evaluation
  (``mcts.RandomRolloutEvaluator``), its simulations run until the same wall time is spent, worlds from
  ``python_feudo``'s ``resample_from_infostate`` drawn with the bot's own random state.

Prints games, our score (R19: 1 a win, 1/2 a shared win) with a Wilson 95% interval, and each side's
iterations per second measured on the same positions (every ``--every``-th searched decision of the games,
at most ``--positions``, each searched again by both sides after the games).
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

try:
    import pyspiel  # noqa: F401
    from open_spiel.python.algorithms import ismcts, mcts
except ImportError:  # reported as a usage error by main()
    ismcts = None

from feudo_ai.arena import wilson  # noqa: E402
from feudo_ai.bots import make_bot  # noqa: E402


def _timed_ismcts_class():
    class TimedISMCTS(ismcts.ISMCTSBot):
        """OpenSpiel's ISMCTS with a wall-time budget instead of a simulation count (its own tree, selection,
        expansion and final policy; only the loop's stopping rule differs)."""

        def __init__(self, game, seconds: float, seed: int, uct_c: float):
            rs = __import__("numpy").random.RandomState(seed)
            super().__init__(game, mcts.RandomRolloutEvaluator(1, rs), uct_c=uct_c, max_simulations=1,
                             random_state=rs)
            self.seconds = seconds
            self.last_simulations = 0
            self.last_elapsed = 0.0
            self.set_resampler(lambda state, player: state.resample_from_infostate(player, self.random_number))

        def run_search(self, state):
            self.reset()
            legal = state.legal_actions()
            if len(legal) == 1:
                return [(legal[0], 1.0)]
            started = time.perf_counter()
            self._root_node = self.create_new_node(state)
            n = 0
            # at least 2: the first simulation only expands the root (OpenSpiel's ISMCTS)
            while n < 2 or time.perf_counter() - started < self.seconds:
                self.run_simulation(self.sample_root_state(state))
                n += 1
            self.last_simulations, self.last_elapsed = n, time.perf_counter() - started
            return self.get_final_policy(state, self._root_node)

    return TimedISMCTS


def _our_iterations(bot) -> int | None:
    advice = getattr(bot, "last_advice", None)
    stats = getattr(advice, "stats", None)
    if isinstance(stats, dict):
        return stats.get("iterations")
    return getattr(stats, "iterations", None)


def _ours_options(args) -> dict:
    """Our bot's spec and the search options it plays with in these 2-player games; OpenSpiel's bot's settings."""
    spec = f"ismcts:seconds={args.seconds}"
    bot = make_bot(spec, args.seed)
    return {"spec": spec, "search_options": bot.options_for(2).to_dict(),
            "theirs": {"uct_c": args.uct_c, "rollouts": "random", "seconds": args.seconds}}


def play_game(game, index: int, args, positions: list) -> dict:
    """One game; our bot in seat ``index % 2``. Appends sampled decision states to ``positions``."""
    ours_seat = index % 2
    pair = index // 2
    ours = make_bot(f"ismcts:seconds={args.seconds}", args.seed * 1000 + index)
    theirs = _timed_ismcts_class()(game, args.seconds, args.seed * 1000 + index, args.uct_c)
    chance = random.Random(args.seed * 7919 + pair)  # both games of a pair see the same chance draws
    state = game.new_initial_state()
    decisions = {"ours": 0, "theirs": 0}
    searched = 0
    while not state.is_terminal():
        if state.is_chance_node():
            actions, probs = zip(*state.chance_outcomes())
            state.apply_action(chance.choices(actions, probs)[0])
            continue
        legal = state.legal_actions()
        if len(legal) > 1:
            searched += 1
            if searched % args.every == 0 and len(positions) < args.positions:
                positions.append(state.clone())
        if state.current_player() == ours_seat:
            action = ours(state.engine_state())
            decisions["ours"] += len(legal) > 1
        else:
            action = theirs.step(state)
            decisions["theirs"] += len(legal) > 1
        state.apply_action(int(action))
    returns = state.returns()
    return {"game": index, "ours_seat": ours_seat, "map_seed": game.get_parameters()["map_seed"],
            "score": returns[ours_seat], "returns": returns, "vp": list(state.engine_state().vp),
            "turns_played": state.engine_state().turn, "searched_decisions": decisions}


def measure_speed(game, positions: list, args) -> dict:
    """Iterations per second of both searches on the same positions (each searched ``--seconds``)."""
    ours_it = theirs_it = 0
    ours_t = theirs_t = 0.0
    theirs = _timed_ismcts_class()(game, args.seconds, args.seed, args.uct_c)
    for i, state in enumerate(positions):
        ours = make_bot(f"ismcts:seconds={args.seconds}", args.seed + i)
        t0 = time.perf_counter()
        ours(state.engine_state())
        ours_t += time.perf_counter() - t0
        ours_it += _our_iterations(ours) or 0
        theirs.step(state.clone())
        theirs_it += theirs.last_simulations
        theirs_t += theirs.last_elapsed
    return {"positions": len(positions),
            "ours_iterations_per_s": round(ours_it / ours_t, 1) if ours_t else None,
            "theirs_iterations_per_s": round(theirs_it / theirs_t, 2) if theirs_t else None,
            "ours_iterations": ours_it, "theirs_iterations": theirs_it}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--games", type=int, default=20, help="games (even: both seats of each pair; default 20)")
    ap.add_argument("--seconds", type=float, default=0.1, help="wall time per decision for each side (0.1)")
    ap.add_argument("--seed", type=int, default=0, help="base seed: maps, chance draws, both bots (0)")
    ap.add_argument("--turns", type=int, default=10, help="regular turns per game (the ruleset's 10)")
    ap.add_argument("--uct-c", type=float, default=2.0, help="OpenSpiel ISMCTS exploration constant (2.0)")
    ap.add_argument("--every", type=int, default=10, help="keep every N-th searched decision for the speed "
                                                          "measure (10)")
    ap.add_argument("--positions", type=int, default=10, help="at most this many positions for the speed "
                                                              "measure (10)")
    ap.add_argument("--json", action="store_true", help="print the summary as JSON")
    args = ap.parse_args(argv)
    if ismcts is None:
        ap.error("OpenSpiel is not installed: pip install -e '.[openspiel]'")
    for name in ("games", "turns", "every"):
        if getattr(args, name) < 1:
            ap.error(f"--{name}: expected a positive integer, got {getattr(args, name)}")
    if args.positions < 0:
        ap.error(f"--positions: expected 0 or more, got {args.positions}")
    if not 0 < args.seconds <= 60:
        ap.error(f"--seconds: expected a number in (0, 60], got {args.seconds}")
    import pyspiel as ps
    from feudo_ai import openspiel_game  # noqa: F401  (registers python_feudo)

    started = time.perf_counter()
    results = []
    positions: list = []
    log = sys.stderr if args.json else sys.stdout
    for i in range(args.games):
        game = ps.load_game("python_feudo", {"players": 2, "turns": args.turns, "map_seed": args.seed + i // 2})
        r = play_game(game, i, args, positions)
        results.append(r)
        print(json.dumps(r), file=log, flush=True)
    speed_game = ps.load_game("python_feudo", {"players": 2, "turns": args.turns, "map_seed": args.seed})
    speed = measure_speed(speed_game, positions, args)
    score = sum(r["score"] for r in results)
    lo, hi = wilson(score, len(results))
    summary = {"benchmark": "vs_openspiel", "game": "python_feudo", "players": 2, "turns": args.turns,
               "games": len(results), "seconds_per_decision": args.seconds, "seed": args.seed,
               "ours": "ismcts (feudo_ai.bots, C MO-ISMCTS, 1 thread)",
               "theirs": f"open_spiel.python.algorithms.ismcts.ISMCTSBot (random rollouts, uct_c={args.uct_c})",
               "ours_score": round(score, 2), "ours_win_rate": round(score / len(results), 3),
               "wilson95": [round(lo, 3), round(hi, 3)],
               "ours_wins": sum(1 for r in results if r["score"] == 1.0),
               "shared": sum(1 for r in results if 0.0 < r["score"] < 1.0),
               "theirs_wins": sum(1 for r in results if r["score"] == 0.0),
               "speed": speed, "wall_seconds": round(time.perf_counter() - started, 1)}
    with_provenance(summary, {"args": args, "ours": _ours_options(args)})
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        print(f"{summary['games']} games: ours {summary['ours_win_rate']:.3f} "
              f"[{lo:.3f}, {hi:.3f}] against OpenSpiel ISMCTS at {args.seconds} s per decision; iterations/s "
              f"ours {speed['ours_iterations_per_s']}, theirs {speed['theirs_iterations_per_s']} "
              f"({speed['positions']} positions)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
