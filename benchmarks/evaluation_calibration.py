"""How well the hand-made evaluation's rewards predict who wins: calibration of its softmax on played games.

    python benchmarks/evaluation_calibration.py [--json] DIR [DIR ...]    # arena --out directories

The search's leaves are scored by the C evaluation (``_evaluate`` in ``feudo_ai/_feudo_game.pyx``): a softmax of
the seats' position scores at temperature ``max(0.5, temperature * sqrt(turns left / turns))``, read as the
seats' win probabilities. This replays the games of ``feudo arena --out DIR`` (its records), takes the position at
the start of every regular turn, and scores the evaluation as a forecast of the game's R19 returns: the mean
negative log-likelihood (NLL, :func:`feudo_ai.train.cross_entropy`, the loss ``feudo train`` reports; lower is
better, ``log(players)`` is the NLL of knowing nothing) at the shipped ``temperature`` 1 and at each value of a
grid, per turn and over the whole game. The rewards are the C evaluation's own
(``feudo_ai._feudo_game.evaluate_state``), so what is measured is what the search sees. Not a test: nothing here
asserts.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from provenance import with_provenance  # noqa: E402  (benchmarks/provenance.py)

import numpy as np  # noqa: E402

from engine import FeudoError, GameRecord  # noqa: E402
from engine.core import to_core  # noqa: E402
from feudo_ai.settings import SearchOptions  # noqa: E402

GRID = (0.5, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 16, 18, 20, 25, 30)
SHIPPED = float(SearchOptions().temperature)  # the temperature every search uses unless told otherwise


def turn_starts(record: GameRecord) -> tuple[list, list[float]]:
    """(the first state of every regular turn, the game's R19 returns)."""
    starts, turn, last = [], 0, None
    for state in record.states():
        last = state
        if state.turn != turn and state.turn >= 1 and not state.tiebreak and not state.is_terminal():
            starts.append(state.clone())
            turn = state.turn
    return starts, list(last.returns())


def calibrate(records: list[GameRecord], grid=GRID) -> dict:
    """Mean NLL of the C evaluation per turn and over the game, at each temperature of ``grid`` and ``SHIPPED``.

    :raises ValueError: records of more than one number of players.
    :raises IllegalActionError: a record whose actions do not replay."""
    from feudo_ai._feudo_game import evaluate_state
    from feudo_ai.experimental.train import cross_entropy

    temps = sorted({float(t) for t in grid} | {SHIPPED})
    counts = sorted({r.players for r in records})
    if len(counts) > 1:
        raise ValueError(f"records: expected games of one number of players, got {counts}")
    n = counts[0] if counts else 0
    # per turn: the returns of each position's game, and the evaluation's rewards at each temperature
    returns: dict[int, list[list[float]]] = {}
    rewards: dict[int, dict[float, list[list[float]]]] = {}
    for record in records:
        starts, result = turn_starts(record)
        for state in starts:
            core = to_core(state)
            returns.setdefault(state.turn, []).append(result)
            row = rewards.setdefault(state.turn, {t: [] for t in temps})
            for t in temps:
                row[t].append(evaluate_state(core, temperature=t)[1])

    def summary(turns: list[int]) -> dict:
        Y = np.array([y for k in turns for y in returns[k]])
        mean = {t: cross_entropy(np.array([p for k in turns for p in rewards[k][t]]), Y) for t in temps}
        best = min(mean, key=mean.get)
        return {"positions": len(Y), "nll_shipped": round(mean[SHIPPED], 4),
                "best_temperature": best, "nll_best": round(mean[best], 4),
                "nll_by_temperature": {f"{t:g}": round(m, 4) for t, m in mean.items()}}

    return {"games": len(records), "players": n, "nll_uniform": round(math.log(n), 4) if n else None,
            "shipped_temperature": SHIPPED, "grid": list(temps),
            "overall": summary(sorted(returns)) if returns else None,
            "by_turn": {str(turn): summary([turn]) for turn in sorted(returns)}}


def records_of(dirs: list[str]) -> list[GameRecord]:
    """The records of the finished games of arena ``--out`` directories, as the arena reads them
    (:meth:`feudo_ai.arena.results.ResultStore.finished_lines`): the games ``games.jsonl`` lists, without a torn
    last line (a run killed while writing it); a run killed between a record and its line leaves an orphan
    record, which is not a finished game either.

    :raises ValueError: a directory without ``games.jsonl``, or a line of it that names no record.
    :raises ArenaError: a line of ``games.jsonl`` that is not JSON (but the last) or not a JSON object.
    :raises DataFileError: a record that is not a readable game record (its path in the message)."""
    from feudo_ai.arena.results import ResultStore

    out = []
    for d in dirs:
        store = ResultStore(d)
        if not store.games_path.is_file():
            raise ValueError(f"{d}: not an arena --out directory (no {store.games_path.name})")
        lines, _torn = store.finished_lines()
        for i, line in enumerate(lines, 1):
            record = line.get("record")
            if not isinstance(record, str):
                raise ValueError(f"{store.games_path}:{i}: expected a game line with its record's path")
            out.append(GameRecord.load(store.dir / record))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dirs", nargs="+", help="arena --out directories whose records to read (games of one number "
                    "of players)")
    ap.add_argument("--json", action="store_true", help="print JSON (default: a table)")
    args = ap.parse_args(argv)
    try:
        result = calibrate(records_of(args.dirs))
    except (ValueError, OSError, FeudoError) as e:
        print(f"evaluation_calibration: error: {e}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(with_provenance(result, {"args": args, "shipped_temperature": SHIPPED}), indent=2))
        return 0
    print(f"{result['games']} games, {result['players']} players; NLL of knowing nothing {result['nll_uniform']}")
    for name, s in [("all", result["overall"])] + [(f"turn {k}", v) for k, v in result["by_turn"].items()]:
        print(f"{name:>8}: {s['positions']:5d} positions  NLL at temperature {SHIPPED:g} {s['nll_shipped']:.3f}"
              f"  best temperature {s['best_temperature']:g} NLL {s['nll_best']:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
