"""Strength benchmark: named arena runs (``feudo arena``), win rates with Wilson 95% intervals.

    python benchmarks/strength.py --quick --json       # 260 games, about 4 minutes on 2 cores
    python benchmarks/strength.py --json               # the full set: 3,600 games, about 48 minutes on 2 cores
    python benchmarks/strength.py --suite playouts --json   # evaluation options head to head (~20 minutes)
    python benchmarks/strength.py --suite scaling --json    # thinking time at human budgets (~60 minutes)
    python benchmarks/strength.py --suite growth --games 40 --seed 5100 --jobs 1 --json   # tree reuse vs ismcts-v2
    python benchmarks/strength.py --suite learned --only handmade --games 60 --seed 5300 --jobs 1 --json  # the MLP
    python benchmarks/strength.py --suite strength-ii --seed 14000 --json   # the second strength table (held out)

Every pairing "A vs B" is an arena gauntlet of two entrants (:mod:`feudo_ai.arena`): with P players A sits in one
seat and B in all the others; every deal (game seed: map board order and chance) is played from every seat of
A, and every pairing plays the same deals (drawn from ``--seed``; use a seed no tuning used for held-out
figures). A's score per game is its R19 return (1 for a sole win, 1/k for a k-way shared win, 0 otherwise).
Budgets are in iterations per decision (deterministic, machine independent) except the pairings marked
equal-time; decisions with one legal action are not searched. Games run in parallel over processes (--jobs),
each search on one thread; ``--backend ray`` runs them on Ray instead, ``--out DIR`` keeps every run's arena
directory (games, records, summary, chart) in ``DIR/<pairing>``.

The games of every pairing (full / --quick) are stated in :func:`pairings` and friends and printed with each
result.

``--suite strength-targets`` is the table of the strength targets (the product's ``ismcts`` at equal time against
the frozen baselines, growth with thinking time, the difficulty levels; docs/search.md, "Strength"):

    python benchmarks/strength.py --suite strength-targets --json             # 400 games a pairing: ~17 hours
    python benchmarks/strength.py --suite strength-targets --games 32 --json  # about 85 minutes on 2 cores
    python benchmarks/strength.py --suite strength-targets --games 16 --json  # what fits an hour: 2,496 s measured
    python benchmarks/strength.py --suite strength-targets --long --only "ismcts 1 s" --json  # 1 s vs 0.2 s: ~7 h
    python benchmarks/strength.py --suite strength-targets --quick --json     # a smoke run, 44 games: 468 s
    python benchmarks/strength.py --pool benchmarks/results/*_to_the_end_seed7[12]00_*.json   # pool earlier runs

Its default seed, 1000, is a held-out one: the tuning of the strength targets' changes used deal seeds in 5000-5999
only. Seconds a game with ``--jobs 2``, the 2 cores to the run (seed 7400; docs/search-history.md, "The hour run"):
equal time
0.1 s a decision, 2 players 18.5-19 s, 4 players 38-39 s (a search takes its wall time whatever the load), vs
greedy 10.7 s; iteration budgets, whose time grows with the load: 10,000 vs 2,000 iterations about 103 s (112 s
at seed 7100), medium vs easy 0.5 s, hard vs medium 0.6 s, max vs hard 78 s (``max`` is the ismcts bot at 10,000
iterations); with ``--long``, 1 s vs 0.2 s about 130 s (seed 7300). The whole ``--games 16`` run took 2,496 s,
so it fits an hour; ``--games 32`` takes about twice that. 400 games a pairing take about 17 hours, and 7 more
for the 1 s vs 0.2 s pairing: they cannot fit an hour.

``--pool FILE...`` plays nothing: it sums each pairing's games and scores over earlier ``--json`` outputs (runs of
the same code on distinct deal seeds; a repeated seed is refused, as its deals are the same, and so are runs whose
bots played with other search options, ``a_options`` and ``b_options`` in each pairing) and prints the pooled win
rate and Wilson interval, and where every run recorded them (``se_deal_clustered``, ``a_vp_mean``, ``b_vp_mean``,
``a_places``: a seat-rotated gauntlet plays each deal from every seat, so its games are not independent draws; the
Wilson interval stands where the deal-clustered standard error is no larger than the binomial one, ``se_binomial``)
the pooled standard error by deal, mean VP and places; with ``--only`` just the pairings named. Runs made before
the options were recorded have none, and pool only with each other: ``benchmarks/record_options.py`` records them
from the code of the run's own commit.

Every ``--json`` output (a run or a pool) carries ``provenance`` (:mod:`provenance`): the commit and whether the
tree was dirty, the command line, and the resolved arguments; each pairing also records its bots' search options.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from feudo_ai.arena import ArenaError, TournamentConfig, run_tournament, wilson  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from provenance import with_provenance  # noqa: E402  (benchmarks/provenance.py)


def pairings(quick: bool) -> list[dict]:
    """The search's first targets at 2,000 iterations per decision, one equal-time pairing, and one
    budget-scaling pairing (does the search get stronger with more iterations?).

    Games full / quick: greedy vs random 500 / 40, ismcts vs random 500 / 40, ismcts vs greedy 800 / 40,
    ismcts vs pimc 800 / 40, equal time 300 / 40, 4-player pairings 300 / 20 each, 10,000 vs 2,000 iterations
    100 / 20: 3,600 / 260 games (2-player counts even and 4-player counts multiples of 4: whole seat rotations).
    """
    it = 2000
    g2, g4, small = (40, 20, 20) if quick else (800, 300, 100)
    t = 0.02  # seconds per decision in the equal-time pairing (about 2,000 MO-ISMCTS iterations)
    ism, pim = f"ismcts:iterations={it}", f"pimc:iterations={it}"
    return [
        {"name": "greedy vs random (2p)", "a": "greedy", "b": "random", "players": 2,
         "games": 40 if quick else 500, "target": ">= 0.90"},
        {"name": f"ismcts vs random (2p, {it} it)", "a": ism, "b": "random", "players": 2,
         "games": 40 if quick else 500, "target": ">= 0.95"},
        {"name": f"ismcts vs greedy (2p, {it} it)", "a": ism, "b": "greedy", "players": 2, "games": g2,
         "target": ">= 0.75"},
        {"name": f"ismcts vs pimc (2p, {it} it each)", "a": ism, "b": pim, "players": 2, "games": g2,
         "target": ">= 0.55, interval above 0.5"},
        {"name": f"ismcts vs pimc (2p, equal time {t} s)", "a": f"ismcts:seconds={t}", "b": f"pimc:seconds={t}",
         "players": 2, "games": 40 if quick else 300, "equal_time": True},
        {"name": f"ismcts vs 3 greedy (4p, {it} it)", "a": ism, "b": "greedy", "players": 4, "games": g4,
         "target": "> 0.40"},
        {"name": f"ismcts vs 3 pimc (4p, {it} it each)", "a": ism, "b": pim, "players": 4, "games": g4,
         "target": "> 0.30"},
        {"name": f"ismcts 10000 it vs ismcts {it} it (2p)", "a": "ismcts:iterations=10000", "b": ism,
         "players": 2, "games": small},
    ]


def playout_pairings(quick: bool) -> list[dict]:
    """``--suite playouts``: the default evaluation (truncated playout to the end of the turn) against the
    other choices, head to head at 2,000 iterations each; 200 games a pairing (--quick: 30), 800 in all
    (about 20 minutes on 2 cores; --quick: 3)."""
    it, n = 2000, (30 if quick else 200)
    ism = f"ismcts:iterations={it}"
    return [
        {"name": f"ismcts truncated vs ismcts eval (2p, {it} it each)", "a": ism,
         "b": f"ismcts:iterations={it}:playout=eval", "players": 2, "games": n},
        {"name": f"ismcts truncated vs ismcts random playouts (2p, {it} it each)", "a": ism,
         "b": f"ismcts:iterations={it}:playout=random", "players": 2, "games": n},
        {"name": f"ismcts truncated vs ismcts truncated+1 turn (2p, {it} it each)", "a": ism,
         "b": f"ismcts:iterations={it}:playout_turns=1", "players": 2, "games": n},
        {"name": f"ismcts uniform vs ismcts weighted sampler (2p, {it} it each)", "a": ism,
         "b": f"ismcts:iterations={it}:sampler=weighted", "players": 2, "games": n},
    ]


def scaling_pairings(quick: bool) -> list[dict]:
    """``--suite scaling``: does more thinking time keep paying at the budgets a person would give? ismcts at
    1 s against itself at 0.2 s a decision, 2 players: 100 games (--quick: 10). About 60 searched decisions a
    seat a game, so about 72 s of search a game: about 60 minutes on 2 cores (--quick: 6)."""
    return [
        {"name": "ismcts 1 s vs ismcts 0.2 s (2p)", "a": "ismcts:seconds=1", "b": "ismcts:seconds=0.2",
         "players": 2, "games": 10 if quick else 100, "target": ">= 0.62", "equal_time": False},
    ]


def strength_target_pairings(quick: bool, long: bool = False) -> list[dict]:
    """``--suite strength-targets``: exactly the table of the strength targets (2 players unless stated), the
    product's "ismcts" against the frozen baselines ("pimc", "ismcts-v1": the ismcts of before plan following,
    the bank and the greedy playouts, options pinned) at equal time a decision, budget growth, "greedy", and each
    difficulty level against the one below.

    Games full / --quick: 400 a pairing / 4 (the levels 10; the two slowest, 10,000 vs 2,000 iterations and max vs
    hard, 2); with ``--long`` also ismcts at 1 s vs 0.2 s a decision, 400 / 2 games. The time each takes is in the
    module docstring.
    """
    t = 0.1
    g2, g4, lv, slow, lg = (4, 4, 10, 2, 2) if quick else (400,) * 5
    ism, pim, v1 = f"ismcts:seconds={t}", f"pimc:seconds={t}", f"ismcts-v1:seconds={t}"
    out = [
        {"name": f"ismcts vs pimc (2p, equal time {t} s)", "a": ism, "b": pim, "players": 2, "games": g2,
         "target": ">= 0.68, Wilson lower bound > 0.62", "equal_time": True},
        {"name": f"ismcts vs 3 pimc (4p, equal time {t} s)", "a": ism, "b": pim, "players": 4, "games": g4,
         "target": ">= 0.42", "equal_time": True},
        {"name": f"ismcts vs ismcts-v1 (2p, equal time {t} s)", "a": ism, "b": v1, "players": 2, "games": g2,
         "target": ">= 0.65", "equal_time": True},
        {"name": f"ismcts vs 3 ismcts-v1 (4p, equal time {t} s)", "a": ism, "b": v1, "players": 4, "games": g4,
         "target": ">= 0.40", "equal_time": True},
        {"name": "ismcts 10000 it vs ismcts 2000 it (2p)", "a": "ismcts:iterations=10000",
         "b": "ismcts:iterations=2000", "players": 2, "games": slow, "target": ">= 0.60"},
        {"name": f"ismcts vs greedy (2p, {t} s)", "a": ism, "b": "greedy", "players": 2, "games": g2,
         "target": ">= 0.95"},
        {"name": "medium vs easy (2p)", "a": "medium", "b": "easy", "players": 2, "games": lv, "target": ">= 0.70"},
        {"name": "hard vs medium (2p)", "a": "hard", "b": "medium", "players": 2, "games": lv, "target": ">= 0.70"},
        {"name": "max vs hard (2p)", "a": "max", "b": "hard", "players": 2, "games": slow, "target": ">= 0.70"},
    ]
    if long:
        out.append({"name": "ismcts 1 s vs ismcts 0.2 s (2p)", "a": "ismcts:seconds=1", "b": "ismcts:seconds=0.2",
                    "players": 2, "games": lg, "target": ">= 0.62", "equal_time": False})
    return out


def growth_pairings(quick: bool) -> list[dict]:
    """``--suite growth``: a search that keeps growing with time, 2 players, 400 games a pairing (--quick: 4).

    - Tree reuse between a seat's decisions (``reuse_tree``) against the frozen product bot ``ismcts-v2`` at equal
      time, 0.1 s a decision: ``ismcts`` differs from ``ismcts-v2`` there only by ``reuse_tree`` (the node pool's
      recycling, also new, never starts within 0.1 s: the timed pool holds 8M nodes). About 40 s a game on one
      loaded core.
    - The recycled node pool against the pool that stops growing, head to head at 2,000 iterations a decision in a
      pool of 1,000 nodes, which fills after about 500 iterations (2 nodes an iteration in 2 players,
      ``fast_search_speed.py --pool-growth``): a search that outgrows its pool, as a 10 s search in the Advisor's
      500,000-node pool does in 4 players (55,000 nodes a CPU second), on a budget of iterations, so the load does
      not move it. About 18 CPU s a game.
    """
    n = 4 if quick else 400
    return [
        {"name": "ismcts reuse_tree vs ismcts-v2 (2p, equal time 0.1 s)", "a": "ismcts:seconds=0.1:reuse_tree=true",
         "b": "ismcts-v2:seconds=0.1", "players": 2, "games": n, "equal_time": True},
        {"name": "ismcts recycled pool vs pool that stops growing (2p, 2000 it, 1000 nodes)",
         "a": "ismcts:iterations=2000:max_nodes=1000", "b": "ismcts:iterations=2000:max_nodes=1000:recycle=false",
         "players": 2, "games": n},
    ]


def strength_ii_pairings(quick: bool) -> list[dict]:
    """``--suite strength-ii``: the table of the second round of strength targets (2 players unless stated): the
    product's ``ismcts`` (whatever its profile is at the commit measured) against the frozen ``ismcts-v2`` (the
    product before that round) at equal time, more time against less, and ``greedy``. 200 games a pairing
    (--quick: 4). At 0.1 s a decision a 2-player game takes about 19 s a core, a 4-player one about 39 s, the 0.5 s
    pairing about 57 s: about 9.5 hours on 2 cores for the whole table (``--only`` picks rows)."""
    n = 4 if quick else 200
    ism, v2 = "ismcts:seconds=0.1", "ismcts-v2:seconds=0.1"
    return [
        {"name": "ismcts vs ismcts-v2 (2p, equal time 0.1 s)", "a": ism, "b": v2, "players": 2, "games": n,
         "target": ">= 0.62", "equal_time": True},
        {"name": "ismcts vs 3 ismcts-v2 (4p, equal time 0.1 s)", "a": ism, "b": v2, "players": 4, "games": n,
         "target": ">= 0.33", "equal_time": True},
        {"name": "ismcts 0.5 s vs ismcts 0.1 s (2p)", "a": "ismcts:seconds=0.5", "b": ism, "players": 2,
         "games": n, "target": ">= 0.68", "equal_time": False},
        {"name": "ismcts vs greedy (2p, 0.1 s)", "a": ism, "b": "greedy", "players": 2, "games": n,
         "target": ">= 0.98"},
    ]


# The MLP evaluation of feudo train --model mlp (docs/search.md, "The learned evaluation"), relative to the
# repository's root, where the benchmark runs
MLP_MODEL = "feudo_ai/data/value_mlp_v1.json"
# its 4-player counterpart, trained on the product's own 4-player games (where the product reads an evaluation)
MLP_4P_MODEL = "feudo_ai/data/value_mlp_4p_v1.json"


def learned_pairings(quick: bool) -> list[dict]:
    """``--suite learned``: the MLP evaluation (:data:`MLP_MODEL`) at the leaves, 2 players, 2,000 iterations a
    decision each side, 100 games a pairing (--quick: 4). In 2 players the product's playouts go to the end of the
    game and never read an evaluation, so the learned side plays one more turn and evaluates (``playout_turns=1``,
    the product's horizon in 3 and 4 players), and is compared with:

    - the same bot with the hand-made evaluation: the evaluation alone differs (about 8 CPU s a game);
    - the same bot with the shipped linear model (``evaluation=learned``): does the hidden layer pay?
    - the frozen ``ismcts-v2`` (the product before this work: greedy playouts to the end of a 2-player game) at
      the same budget, and at equal time (0.1 s a decision);
    - the product's ``ismcts`` (playouts to the end of the game) at the same budget: can a truncated playout
      with the learned evaluation stand in for the playout to the end (about 20 CPU s a game)?

    And in 4 players, where the product itself plays one more turn and reads the hand-made evaluation (with the
    wide margin mixed in), the product with :data:`MLP_4P_MODEL` instead against three ``ismcts-v2`` at equal time
    (0.1 s a decision, about 39 CPU s a game; fair share 0.25), also at other temperatures and mixed half and half
    with the product's hand-made evaluation (``handmade_weight=0.5``, the hand-made part with its margin).
    """
    n = 4 if quick else 100
    it = 2000
    mlp = f"ismcts:iterations={it}:playout_turns=1:evaluation={MLP_MODEL}"
    return [
        {"name": f"ismcts mlp vs ismcts handmade (2p, {it} it each, one more turn)", "a": mlp,
         "b": f"ismcts:iterations={it}:playout_turns=1", "players": 2, "games": n},
        {"name": f"ismcts mlp vs ismcts linear (2p, {it} it each, one more turn)", "a": mlp,
         "b": f"ismcts:iterations={it}:playout_turns=1:evaluation=learned", "players": 2, "games": n},
        {"name": f"ismcts mlp vs ismcts-v2 (2p, {it} it each)", "a": mlp, "b": f"ismcts-v2:iterations={it}",
         "players": 2, "games": n},
        {"name": f"ismcts mlp vs ismcts to the end (2p, {it} it each)", "a": mlp, "b": f"ismcts:iterations={it}",
         "players": 2, "games": n},
        # at equal time the learned side's shorter playouts (one turn, then the evaluation) buy it more iterations
        {"name": "ismcts mlp vs ismcts-v2 (2p, equal time 0.1 s)",
         "a": f"ismcts:seconds=0.1:playout_turns=1:evaluation={MLP_MODEL}", "b": "ismcts-v2:seconds=0.1",
         "players": 2, "games": n, "equal_time": True},
        # and with the seat's tree kept between its decisions (reuse_tree), which the cheaper iterations feed
        {"name": "ismcts mlp reuse vs ismcts-v2 (2p, equal time 0.1 s)",
         "a": f"ismcts:seconds=0.1:playout_turns=1:evaluation={MLP_MODEL}:reuse_tree=true",
         "b": "ismcts-v2:seconds=0.1", "players": 2, "games": n, "equal_time": True},
        {"name": "ismcts mlp vs 3 ismcts-v2 (4p, equal time 0.1 s)",
         "a": f"ismcts:seconds=0.1:evaluation={MLP_4P_MODEL}", "b": "ismcts-v2:seconds=0.1", "players": 4,
         "games": n, "equal_time": True},
        # the model's softmax is calibrated, so nearly flat in 4 players: other temperatures sharpen or flatten it
        *({"name": f"ismcts mlp temperature {t} vs 3 ismcts-v2 (4p, equal time 0.1 s)",
           "a": f"ismcts:seconds=0.1:evaluation={MLP_4P_MODEL}:temperature={t}", "b": "ismcts-v2:seconds=0.1",
           "players": 4, "games": n, "equal_time": True} for t in (0.35, 2.0)),
        # half the model's rewards, half the product's own 4-player evaluation (hand-made, with its wide margin)
        {"name": "ismcts mlp mixed half with handmade vs 3 ismcts-v2 (4p, equal time 0.1 s)",
         "a": f"ismcts:seconds=0.1:evaluation={MLP_4P_MODEL}:handmade_weight=0.5:margin_weight=0.5",
         "b": "ismcts-v2:seconds=0.1", "players": 4, "games": n, "equal_time": True},
    ]


SUITES = {"targets": pairings, "playouts": playout_pairings, "scaling": scaling_pairings,
          "strength-targets": strength_target_pairings, "growth": growth_pairings, "strength-ii": strength_ii_pairings,
          "learned": learned_pairings}
# Earlier spellings of a suite's name, still accepted: the commands recorded with the committed results (their
# ``provenance``) and older notes use them. Not offered in --help.
SUITE_ALIASES = {"issue14": "strength-targets"}


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def played_options(spec: str, players: int) -> dict | None:
    """The search options (``SearchOptions.to_dict()``) the bot of ``spec`` plays with in a game of ``players``,
    as its ``options_for`` resolves its defaults (the product's change with the code, a spec's text does not);
    None for a bot that does not search. Their ``seed`` is SearchOptions' default: the bot draws each search's seed
    from its own generator, which the arena seeds per game. Recorded in each pairing (``a_options``, ``b_options``) so that
    ``--pool`` never sums runs of one spec that played differently.

    :raises ValueError: a bad spec (naming it)."""
    from feudo_ai.bots import make_bot

    bot = make_bot(spec, 0)
    options_for = getattr(bot, "options_for", None)
    return options_for(players).to_dict() if options_for is not None else None


def run_pairing(pr: dict, seed: int, jobs: int, backend: str = "local", address: str | None = None,
                out: str | None = None) -> dict:
    """One pairing as an arena run (a two-entrant gauntlet); A's result in the benchmark's JSON shape, with the
    search options each side played with (:func:`played_options`), the standard errors of A's win rate (binomial
    and deal-clustered: a seat-rotated gauntlet plays each deal from every seat), each side's mean VP a seat and
    A's finishing places (counts of first, second, ...; the arena summary's)."""
    config = TournamentConfig(bots=(pr["a"], pr["b"]), players=pr["players"], games=pr["games"], seed=seed,
                              format="gauntlet")
    started = time.perf_counter()
    run = run_tournament(config, backend=backend, jobs=jobs, address=address,
                         out=os.path.join(out, _slug(pr["name"])) if out else None)
    if run.interrupted:
        raise KeyboardInterrupt
    table = run.summary["pairings"][0]
    a, b = table["entrants"]
    res = {"name": pr["name"], "a": pr["a"], "b": pr["b"], "players": pr["players"], "games": table["games"],
           "score_a": a["score"], "win_rate_a": a["win_rate"], "wilson95": a["wilson95"],
           "fair_share": round(1 / pr["players"], 3),
           "se_deal_clustered": a["standard_error"]["deal_clustered"], "se_binomial": a["standard_error"]["binomial"],
           "a_vp_mean": a["vp_mean"], "b_vp_mean": b["vp_mean"], "a_places": a["places"],
           "seconds": round(time.perf_counter() - started, 1),
           "seconds_per_game": run.summary["timing"]["seconds_per_game"],
           "a_options": played_options(pr["a"], pr["players"]), "b_options": played_options(pr["b"], pr["players"])}
    if pr.get("equal_time"):
        res["equal_time"] = True
    if pr.get("target"):
        res["target"] = pr["target"]
    return res


class PoolError(ValueError):
    """A file given to ``--pool`` that cannot be pooled (the message names the file and the field)."""


def pool_results(summaries: list[tuple[str, dict]], only: list[str] | None = None) -> dict:
    """Pool the pairings of several strength runs (``(path, summary)`` pairs, as this script prints them with
    ``--json``): each pairing's games and A's score summed over the runs, its Wilson 95% interval recomputed.
    With ``only``, just the pairings whose name contains one of its texts (a file may hold others, of other code).

    A pairing is known by its name; every run of it must agree on its bots and players, and on the search options
    the bots played with (``a_options``, ``b_options``; a run recorded before they were, or by a bot that does not
    search, has none, which pools only with none; an option added or removed at some version of the code, recorded
    at the value that plays as the code without it, :data:`OPTIONAL_OPTIONS`, is left out of the comparison). Each
    run of a pairing must have its own deal seed: runs of one seed play the same deals (a prefix of one list), so
    pooling them would count those games twice. The options tell a change of the bots' defaults; a change of the
    code under the same options (or in runs without them) they cannot: pool runs of the same code.

    :raises PoolError: if a file is not a strength run, a field is missing or wrong, a pairing's bots, players
        or played options differ between runs, a pairing's seed repeats, or no pairing is left to pool.
    """
    pooled: dict[str, dict] = {}
    # in the order of the runs' seeds, so that what is printed does not hang on the order a shell expands a glob in
    for path, summary in sorted(summaries, key=_seed_of):
        if not isinstance(summary, dict) or summary.get("benchmark") != "strength":
            raise PoolError(f"{path}: benchmark: expected a strength run (\"benchmark\": \"strength\")")
        seed = summary.get("seed")
        if not isinstance(seed, int) or isinstance(seed, bool):
            raise PoolError(f"{path}: seed: expected an integer, got {seed!r}")
        runs = summary.get("pairings")
        if not isinstance(runs, list):
            raise PoolError(f"{path}: pairings: expected a list")
        for i, run in enumerate(runs):
            where = f"{path}: pairings[{i}]"
            if not isinstance(run, dict):
                raise PoolError(f"{where}: expected an object")
            for key, kind in (("name", str), ("a", str), ("b", str), ("players", int), ("games", int),
                              ("score_a", (int, float))):
                if not isinstance(run.get(key), kind) or isinstance(run.get(key), bool):
                    raise PoolError(f"{where}.{key}: expected {getattr(kind, '__name__', 'a number')}, "
                                    f"got {run.get(key)!r}")
            if run["games"] < 1 or not 0 <= run["score_a"] <= run["games"]:
                raise PoolError(f"{where}: expected games >= 1 and 0 <= score_a <= games, "
                                f"got {run['games']} and {run['score_a']}")
            if only and not any(text in run["name"] for text in only):
                continue
            for key in ("a_options", "b_options"):
                if run.get(key) is not None and not isinstance(run[key], dict):
                    raise PoolError(f"{where}.{key}: expected an object or null, got {run[key]!r}")
            into = pooled.setdefault(run["name"], {"name": run["name"], "a": run["a"], "b": run["b"],
                                                   "players": run["players"], "a_options": run.get("a_options"),
                                                   "b_options": run.get("b_options"), "games": 0, "score_a": 0.0,
                                                   "seeds": [], "runs": []})
            for key in ("a", "b", "players"):
                if run[key] != into[key]:
                    raise PoolError(f"{where}.{key}: {run['name']!r} was played with {into[key]!r} in an earlier "
                                    f"file, here {run[key]!r}")
            for key in ("a_options", "b_options"):
                if _comparable(run.get(key)) != _comparable(into[key]):
                    raise PoolError(f"{where}.{key}: {run['name']!r} "
                                    + _options_differ(_comparable(into[key]), _comparable(run.get(key))))
            if seed in into["seeds"]:
                raise PoolError(f"{where}: {run['name']!r} has seed {seed} twice (the same deals)")
            into["seeds"].append(seed)
            into["runs"].append(run)
            into["games"] += run["games"]
            into["score_a"] += run["score_a"]
            if run.get("target"):
                into["target"] = run["target"]
    if not pooled:
        raise PoolError("no pairing to pool" + (f" whose name contains any of {only!r}" if only else ""))
    out = []
    for into in pooled.values():
        lo, hi = wilson(into["score_a"], into["games"])
        into.update(_pooled_figures(into.pop("runs"), into["games"]))
        out.append({**into, "score_a": round(into["score_a"], 4),
                    "win_rate_a": round(into["score_a"] / into["games"], 4),
                    "wilson95": [round(lo, 4), round(hi, 4)], "fair_share": round(1 / into["players"], 3)})
    return {"benchmark": "strength-pooled", "files": [path for path, _ in summaries],
            "games": sum(p["games"] for p in out), "pairings": out}


def _seed_of(item: tuple[str, dict]) -> int:
    """The deal seed of a ``(path, summary)`` pair, for ordering; -1 where there is none (refused later)."""
    seed = item[1].get("seed") if isinstance(item[1], dict) else None
    return seed if isinstance(seed, int) and not isinstance(seed, bool) else -1


def _pooled_figures(runs: list[dict], games: int) -> dict:
    """A pooled pairing's deal-clustered standard error, mean VP of each side and A's places, from its runs' own
    (:func:`run_pairing`); None where a run has none (recorded before they were). The runs play distinct deals,
    independent of each other, so the variances of their scores add: sqrt(sum_i (n_i se_i)^2) / n."""
    def have(key):
        return all(isinstance(r.get(key), (int, float, list)) and not isinstance(r.get(key), bool) for r in runs)

    out: dict = {"se_deal_clustered": None, "a_vp_mean": None, "b_vp_mean": None, "a_places": None}
    if have("se_deal_clustered"):
        out["se_deal_clustered"] = round(math.sqrt(sum((r["games"] * r["se_deal_clustered"]) ** 2
                                                       for r in runs)) / games, 4)
    for key in ("a_vp_mean", "b_vp_mean"):
        if have(key):
            out[key] = round(sum(r["games"] * r[key] for r in runs) / games, 3)
    if have("a_places") and len({len(r["a_places"]) for r in runs}) == 1:
        out["a_places"] = [sum(col) for col in zip(*(r["a_places"] for r in runs))]
    return out


# Search options that not every version of the code had, each with the value at which a search plays as the code
# without it: added later, off by default (early_stop, final_margin_weight, handmade_weight: a run recorded before
# them has no such key), or removed since (prior_widening, playout_strategy; docs/search-history.md, "Settings that
# did not pay, removed": the advice at fixed iterations on 139 positions was the same before and after). Recorded at
# that value or not recorded, the option compares equal; at any other value the run played something else.
OPTIONAL_OPTIONS = {"early_stop": False, "final_margin_weight": 0.0, "handmade_weight": 0.0,
                    "prior_widening": False, "playout_strategy": False}


def _comparable(options: dict | None) -> dict | None:
    """``options`` without the :data:`OPTIONAL_OPTIONS` recorded at the value that plays as the code without them."""
    if options is None:
        return None
    return {k: v for k, v in options.items()
            if not (k in OPTIONAL_OPTIONS and type(v) is type(OPTIONAL_OPTIONS[k]) and v == OPTIONAL_OPTIONS[k])}


def _options_differ(before: dict | None, here: dict | None) -> str:
    """What differs between the search options a pairing's bot played with in an earlier file and here."""
    if before is None or here is None:
        return (f"was played {'without' if before is None else 'with'} recorded search options in an earlier file, "
                f"here {'without' if here is None else 'with'} (a run recorded before they were, or another bot)")
    fields = sorted(k for k in before.keys() | here.keys() if before.get(k) != here.get(k))
    return "was played with other search options in an earlier file: " + ", ".join(
        f"{k} {before.get(k)!r} there, {here.get(k)!r} here" for k in fields)


def _read_pool(paths: list[str]) -> list[tuple[str, dict]]:
    """The summaries in ``paths``; :raises PoolError: naming a file that cannot be read as JSON."""
    summaries = []
    for path in paths:
        try:
            with open(path, encoding="utf-8") as f:
                summaries.append((path, json.load(f)))
        except OSError as e:
            raise PoolError(f"{path}: {e.strerror or e}") from None
        except ValueError as e:
            raise PoolError(f"{path}: not JSON ({e})") from None
    return summaries


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="few games per pairing (about 4 minutes on 2 cores)")
    ap.add_argument("--json", action="store_true", help="print the results as JSON")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="parallel games (processes)")
    ap.add_argument("--seed", type=int, default=1000, help="seed of the deals (held-out figures: a fresh seed)")
    ap.add_argument("--suite", default="targets", type=lambda name: SUITE_ALIASES.get(name, name),
                    choices=sorted(SUITES),
                    help="targets: the search's first targets at 2,000 iterations (default); strength-targets: the "
                         "table of the strength targets (equal time 0.1 s, difficulty levels; --long adds 1 s vs "
                         "0.2 s); playouts: the search's evaluation options head to head; scaling: 1 s against "
                         "0.2 s a decision")
    ap.add_argument("--long", action="store_true",
                    help="--suite strength-targets: also ismcts at 1 s vs 0.2 s a decision (its own time: see the "
                         "docstring)")
    ap.add_argument("--only", action="append", default=None, metavar="TEXT",
                    help="run only pairings whose name contains this text (repeatable: any of them)")
    ap.add_argument("--games", type=int, default=None, help="games per pairing (overrides the mode's numbers)")
    ap.add_argument("--backend", choices=("local", "ray"), default="local", help="arena backend (default local)")
    ap.add_argument("--address", default=None, help="with --backend ray: the Ray cluster")
    ap.add_argument("--out", default=None, help="keep each pairing's arena directory under this directory")
    ap.add_argument("--pool", nargs="+", default=None, metavar="FILE",
                    help="play nothing: pool the pairings of these --json outputs (runs of the same code on distinct "
                         "seeds) and print each pairing's games, score and Wilson interval over all of them")
    args = ap.parse_args(argv)
    if args.pool:
        played = [flag for flag, given in (("--games", args.games is not None), ("--quick", args.quick),
                                           ("--long", args.long), ("--out", args.out is not None)) if given]
        if played:
            ap.error(f"--pool plays nothing: {', '.join(played)} cannot go with it")
        try:
            pooled = pool_results(_read_pool(args.pool), only=args.only)
        except PoolError as e:
            ap.error(f"--pool: {e}")
        if args.json:
            print(json.dumps(with_provenance(pooled, {"args": args}), indent=2))
        else:
            for p in pooled["pairings"]:
                lo, hi = p["wilson95"]
                target = f"; target {p['target']}" if p.get("target") else ""
                se = f", SE by deal {p['se_deal_clustered']:.4f}" if p["se_deal_clustered"] is not None else ""
                print(f"{p['name']}: {p['win_rate_a']:.3f} over {p['games']} games [{lo:.3f}, {hi:.3f}]{se}, "
                      f"seeds {', '.join(map(str, p['seeds']))}{target}")
        return 0
    if args.games is not None and args.games < 1:
        ap.error("--games: expected a positive integer")
    if args.jobs < 1:
        ap.error("--jobs: expected a positive integer")
    pairs = SUITES[args.suite](args.quick, args.long) if args.suite == "strength-targets" \
        else SUITES[args.suite](args.quick)
    if args.only:
        pairs = [p for p in pairs if any(text in p["name"] for text in args.only)]
        if not pairs:
            ap.error(f"--only: no pairing name contains any of {args.only!r}")
    if args.games is not None:
        pairs = [{**p, "games": args.games} for p in pairs]
    # progress: one line per pairing (stderr with --json, so stdout stays one JSON document)
    log_to = sys.stderr if args.json else sys.stdout
    started = time.perf_counter()
    results = []
    try:
        for pr in pairs:
            res = run_pairing(pr, args.seed, args.jobs, args.backend, args.address, args.out)
            results.append(res)
            print(json.dumps(res), file=log_to, flush=True)
    except ArenaError as e:
        ap.error(str(e))
    except KeyboardInterrupt:
        print(f"stopped after {len(results)} pairing(s)", file=sys.stderr)
        return 130
    summary = {"benchmark": "strength", "suite": args.suite, "quick": args.quick, "seed": args.seed, "jobs": args.jobs,
               "games": sum(r["games"] for r in results), "pairings": results,
               "seconds": round(time.perf_counter() - started, 1)}
    # the resolved options: the arguments, and each pairing's bots with the search options they played with
    with_provenance(summary, {"args": args, "pairings": [
        {key: r.get(key) for key in ("name", "a", "b", "players", "games", "a_options", "b_options")}
        for r in results]})
    if args.json:
        print(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
