"""Could a policy learned from the search's own visit counts be a better action prior than the hand-made one?

    python benchmarks/policy_prior.py [--games 60] [--iterations 1000] [--seed 46] [--jobs 2] [--json]

The 2-player product search (``resolve("product", 2)``) takes the tree's action prior (``prior_weight`` 4,
``prior_temperature`` 0.25): in a Move, March, Advance or Milady decision (R8-R14) each action is scored by the
mover's ``position_score`` one ply after it (``_prior_scores`` in ``feudo_ai/_feudo_game.pyx``, as
:func:`feudo_ai._feudo_game.prior_scores` returns it). Issue 46 asks whether a policy learned from the search's
own visit counts would do better. This measures it offline, before any of it goes into the tree:

1. the product's search plays ``--games`` 2-player games against itself at ``--iterations`` a decision (every
   random choice from ``--seed``: the deals, the chance outcomes, the searches' seeds); at every Move, March,
   Advance or Milady decision with two or more legal actions it records the root's visits of each action, the
   hand-made prior's scores, and the learned evaluation's 24 features of the mover
   (:data:`feudo_ai.experimental.value.FEATURE_NAMES`, public facts only, R22) in the position after each action;
2. every fifth game is the test set, every fifth game after the first the validation set (the MLP's early
   stopping), the others the training set;
3. predictors of the search's choice, scored on the test set: uniform; the hand-made scores in a softmax at
   each temperature of a grid (0.25 is the product's); a conditional logit over the after-action features
   (:func:`feudo_ai.experimental.train.fit`, the learned evaluation's fit, with the actions in place of the
   seats) fitted to the visit distribution and to the most visited action; a one-hidden-layer MLP
   (:func:`feudo_ai.experimental.train.fit_mlp`) fitted to the most visited action. Reported: the mean
   cross-entropy to the visit distribution and to the most visited action (lower is better), and the share of
   decisions where the predictor's best action is the search's most visited one (``top1``).

Not a test: nothing here asserts. Results: ``benchmarks/results/policy_prior_*.json``; docs/search-history.md
("A learned policy prior, measured offline").
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import sys
import time
from concurrent.futures import ProcessPoolExecutor

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from provenance import with_provenance  # noqa: E402  (benchmarks/provenance.py)

import numpy as np  # noqa: E402

from engine import Phase  # noqa: E402

# the decisions the hand-made prior scores one ply deep (_prior_scores)
ONE_PLY_PHASES = (Phase.MOVE, Phase.MILADY, Phase.MARCH, Phase.ADVANCE)
TEMPERATURES = (0.1, 0.25, 0.5, 1.0, 2.0, 4.0)
MAX_ACTIONS_MLP = 48  # the MLP's fit pads every decision to its most actions; wider ones are left out of its sets


def play_one(task: tuple[int, int, int]) -> list[dict]:
    """Game ``i`` of ``seed``: the product's search against itself; the records of its one-ply decisions."""
    i, seed, iterations = task
    from engine import load_map, new_fast_game, sample_chance

    from feudo_ai import _feudo_game
    from feudo_ai.experimental.train import game_seed
    from feudo_ai.search import advise
    from feudo_ai.settings import resolve

    gs = game_seed(seed, i)
    rng = random.Random(gs)
    state = new_fast_game(players=2, seed=gs, game_map=load_map(None, seed=gs), backend="core")
    records = []
    while not state.is_terminal():
        if state.is_chance_node():
            state.apply_action(sample_chance(state, rng))
            continue
        legal = state.legal_actions()
        if len(legal) == 1:
            state.apply_action(legal[0])
            continue
        p = state.current_player()
        advice = advise(state, p, resolve("product", 2, {"iterations": iterations, "seed": rng.randrange(2**62)}))
        if state.phase in ONE_PLY_PHASES:
            visits = {a.action: a.visits for a in advice.alternatives}
            hand = _feudo_game.prior_scores(state)
            rows = []
            for a in legal:
                after = state.clone()
                after.apply_action(a)
                rows.append(_feudo_game.learned_features(after)[p])
            records.append({"game": i, "X": np.array(rows, dtype=np.float64),
                            "hand": np.array([hand[a] for a in legal], dtype=np.float64),
                            "visits": np.array([visits.get(a, 0) for a in legal], dtype=np.float64)})
        state.apply_action(advice.best)
    return records


def collect(seed: int, games: int, iterations: int, jobs: int) -> list[dict]:
    tasks = [(i, seed, iterations) for i in range(games)]
    if jobs == 1:
        return [r for t in tasks for r in play_one(t)]
    ctx = multiprocessing.get_context("spawn")  # no fork of a process that may hold search threads
    with ProcessPoolExecutor(jobs, mp_context=ctx) as pool:
        return [r for rs in pool.map(play_one, tasks) for r in rs]


def _kept(records: list[dict], cap: int | None = None) -> list[dict]:
    """The decisions a fit can use: searched (some visits) and, with ``cap``, of at most ``cap`` actions."""
    return [r for r in records if r["visits"].sum() > 0 and (cap is None or len(r["visits"]) <= cap)]


def _stack(records: list[dict], cap: int | None = None):
    """(X, mask, visit distribution, most visited one-hot, hand-made scores), padded to the widest decision."""
    rs = _kept(records, cap)
    width = max(len(r["visits"]) for r in rs)
    n, d = len(rs), rs[0]["X"].shape[1]
    X, M = np.zeros((n, width, d)), np.zeros((n, width), dtype=bool)
    Y, H = np.zeros((n, width)), np.zeros((n, width))
    for i, r in enumerate(rs):
        k = len(r["visits"])
        X[i, :k], M[i, :k], Y[i, :k], H[i, :k] = r["X"], True, r["visits"] / r["visits"].sum(), r["hand"]
    O = np.zeros_like(Y)
    O[np.arange(n), Y.argmax(axis=1)] = 1.0
    return X, M, Y, O, H


def _scores(P: np.ndarray, M: np.ndarray, Y: np.ndarray, O: np.ndarray) -> dict:
    from feudo_ai.experimental.train import cross_entropy

    top = np.where(M, P, -np.inf).argmax(axis=1) == O.argmax(axis=1)
    return {"cross_entropy_visits": round(cross_entropy(P, Y), 4), "cross_entropy_choice": round(cross_entropy(P, O), 4),
            "top1": round(float(top.mean()), 4)}


def study(records: list[dict], l2: float = 1.0, hidden: int = 16, seed: int = 0) -> dict:
    """The predictors' scores on the test games (``game % 5 == 0``); see the module's docstring."""
    from feudo_ai.experimental.train import _mlp_forward, _probs, _probs_u, fit, fit_mlp

    test = [r for r in records if r["game"] % 5 == 0]
    valid = [r for r in records if r["game"] % 5 == 1]
    train = [r for r in records if r["game"] % 5 > 1]
    if not (test and valid and train):
        raise ValueError("games: expected at least 3 games with decisions to split (test, validation, training)")
    Xt, Mt, Yt, Ot, _ = _stack(train)
    Xs, Ms, Ys, Os, Hs = _stack(test)
    out: dict = {"decisions": {"training": len(Xt), "validation": len(_kept(valid)), "test": len(Xs)},
                 "mean_legal_actions_test": round(float(Ms.sum(axis=1).mean()), 2), "predictors": {}}
    pred = out["predictors"]
    pred["uniform"] = _scores(_probs_u(np.zeros_like(Ys), Ms), Ms, Ys, Os)
    for t in TEMPERATURES:
        pred[f"handmade T={t:g}"] = _scores(_probs_u(Hs / t, Ms), Ms, Ys, Os)
    pred["linear (visits)"] = _scores(_probs(Xs, Ms, fit(Xt, Mt, Yt, l2)), Ms, Ys, Os)
    pred["linear (choice)"] = _scores(_probs(Xs, Ms, fit(Xt, Mt, Ot, l2)), Ms, Ys, Os)
    # the MLP on the decisions of at most MAX_ACTIONS_MLP actions (its padded arrays stay small); the hand-made
    # prior scored on the same ones beside it, so the two compare
    Xt, Mt, _, Ot, _ = _stack(train, MAX_ACTIONS_MLP)
    Xv, Mv, _, Ov, _ = _stack(valid, MAX_ACTIONS_MLP)
    Xs, Ms, Ys, Os, Hs = _stack(test, MAX_ACTIONS_MLP)
    layer, report = fit_mlp(Xt, Mt, Ot, l2, hidden, seed, validation=(Xv, Mv, Ov))
    Z = np.where(Ms[:, :, None], (Xs - layer.mean) / layer.scale, 0.0)
    pred[f"mlp {hidden} (choice), at most {MAX_ACTIONS_MLP} actions"] = {
        **_scores(_mlp_forward(Z, Ms, layer.w1, layer.b1, layer.w2)[1], Ms, Ys, Os), "fit": report,
        "test_decisions": len(Xs)}
    pred[f"handmade T=1, at most {MAX_ACTIONS_MLP} actions"] = _scores(_probs_u(Hs, Ms), Ms, Ys, Os)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--games", type=int, default=60, help="self-play games of the 2-player product (default 60)")
    ap.add_argument("--iterations", type=int, default=1000, help="the search's iterations a decision (default 1000, "
                    "about its 0.1 s)")
    ap.add_argument("--seed", type=int, default=46, help="every random choice flows from it (default 46)")
    ap.add_argument("--jobs", type=int, default=2, help="processes playing the games (default 2)")
    ap.add_argument("--json", action="store_true", help="print JSON (default: a table)")
    args = ap.parse_args(argv)
    for name, low, high in (("games", 3, 10_000), ("iterations", 1, 1_000_000), ("jobs", 1, 64),
                            ("seed", 0, 2**63 - 1)):
        if not low <= getattr(args, name) <= high:
            print(f"policy_prior: error: --{name}: expected an integer in [{low}, {high}], got {getattr(args, name)}",
                  file=sys.stderr)
            return 2
    started = time.perf_counter()
    try:
        result = study(collect(args.seed, args.games, args.iterations, args.jobs))
    except ValueError as e:
        print(f"policy_prior: error: {e}", file=sys.stderr)
        return 2
    result = {"benchmark": "policy_prior", "games": args.games, "iterations": args.iterations, "seed": args.seed,
              **result, "seconds": round(time.perf_counter() - started, 1)}
    if args.json:
        print(json.dumps(with_provenance(result, {"args": args}), indent=2))
        return 0
    print(f"{result['decisions']} decisions, {result['mean_legal_actions_test']} legal actions on average (test)")
    for name, s in result["predictors"].items():
        print(f"{name:>42}: cross-entropy to the visits {s['cross_entropy_visits']:.3f}, to the choice "
              f"{s['cross_entropy_choice']:.3f}, top1 {s['top1']:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
