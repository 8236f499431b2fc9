"""The C search (feudo_ai/fast_search.py over feudo_ai/_search.pyx) and the readable Python reference
(feudo_ai/ismcts.py) agree: same positions, same options, statistically the same root decision.

Both implement the same MO-ISMCTS (availability-count UCB1, EXP3 at a secret selection while another player still
selects, the same determinization and evaluation), but with their own random generators, so single runs differ;
we compare them over ``SEEDS`` seeds each. Options: ``playout="eval"`` (the leaf's evaluation, no random playout):
the two implementations' truncated/random playouts use different policies on purpose (the C playout launches
only winnable attacks, R11; the Python one plays uniformly), so only the leaf evaluation is the same function
(``tests/test_fast_search.py`` checks the C evaluation against feudo_ai.evaluate).

Bounds. For each implementation, the root-visit share of each action is averaged over the seeds, with its
standard error ``se`` (run-to-run spread / sqrt(seeds)). The implementations differ in their random streams and
in how ties and floating-point sums fall, nothing else is meant to differ. So:

- total variation between the averaged root-visit distributions <= half the sum over actions of
  ``4 * sqrt(se_c**2 + se_py**2)`` (each share within 4 standard errors: a chance below 1e-4 per action under the
  normal approximation) plus ``SYSTEMATIC = 0.03`` (ties broken differently);
- the chosen action (most visited on average) of the C search is worth, by the Python search's own estimates,
  within 4 standard errors plus 0.01 of the Python search's chosen action (when they differ, they are near-ties);
- the two implementations' value estimates of that action agree within 4 standard errors plus 0.02.

This test found a real difference once: the Python tree walk went on past an untried action to the next
information set (two new levels an iteration), the C walk stops after it; the chosen action's value then
differed by 0.07 at 200 iterations. The reference now stops where the C search does.

With 200 iterations a run (a few seconds of the Python search in all) the whole file runs in well under 30 s.
"""

from __future__ import annotations

import math

import pytest

from engine import Phase
from search_helpers import c_search, find_position, hidden_of_others, py_search

SEEDS = range(4)
ITERATIONS = 200
SYSTEMATIC = 0.03


def _positions() -> dict:
    return {
        # an Army Card reveal while opponents hold hidden selections (R6, R22)
        "reveal": find_position(lambda s: s.phase == Phase.REVEAL and s.turn >= 2 and len(s.legal_actions()) > 1
                                and hidden_of_others(s, s.current_player())),
        # a token's move among several territories (3 players)
        "move": find_position(lambda s: s.phase == Phase.MOVE and 3 <= len(s.legal_actions()) <= 8, players=3),
        # the first pick of a secret selection (EXP3 at the root, the other selectors' picks hidden)
        "select": find_position(lambda s: s.phase == Phase.SELECT and s.turn == 2 and sum(s.sel_done) == 0
                                and sum(s.sel_army[s.current_player()]) == 0, players=3),
    }


def _runs(search, state) -> list[tuple[dict, dict]]:
    """Per seed: ({action: share of the root visits}, {action: mean reward of the seat})."""
    out = []
    for seed in SEEDS:
        adv = search(state, iterations=ITERATIONS, seed=seed, playout="eval")
        total = sum(a.visits for a in adv.alternatives)
        out.append(({a.action: a.visits / total for a in adv.alternatives},
                    {a.action: a.win_probability for a in adv.alternatives}))
    return out


def _mean_se(values: list[float]) -> tuple[float, float]:
    m = sum(values) / len(values)
    var = sum((v - m) ** 2 for v in values) / (len(values) - 1)
    return m, math.sqrt(var / len(values))


@pytest.fixture(scope="module")
def runs() -> dict:
    out = {}
    for name, state in _positions().items():
        out[name] = (state, _runs(c_search, state), _runs(py_search, state))
    return out


@pytest.mark.parametrize("name", ["reveal", "move", "select"])
def test_root_visit_distributions_agree(runs, name: str) -> None:
    state, c, py = runs[name]
    actions = state.legal_actions()
    tv = bound = 0.0
    for a in actions:
        mc, sc = _mean_se([r[0].get(a, 0.0) for r in c])
        mp, sp = _mean_se([r[0].get(a, 0.0) for r in py])
        tv += 0.5 * abs(mc - mp)
        bound += 0.5 * 4 * math.hypot(sc, sp)
    assert tv <= bound + SYSTEMATIC, (name, tv, bound)


@pytest.mark.parametrize("name", ["reveal", "move", "select"])
def test_chosen_actions_agree_in_value(runs, name: str) -> None:
    state, c, py = runs[name]
    share = {impl: {a: sum(r[0].get(a, 0.0) for r in rs) / len(rs) for a in state.legal_actions()}
             for impl, rs in (("c", c), ("py", py))}
    best_c = max(share["c"], key=lambda a: (share["c"][a], -a))
    best_py = max(share["py"], key=lambda a: (share["py"][a], -a))

    def value(rs, a):  # the mean reward estimate over the seeds whose search visited a (every action is tried)
        vals = [r[1][a] for r in rs if a in r[1]]
        return _mean_se(vals) if len(vals) > 1 else (vals[0] if vals else 0.0, 0.5)

    v_pc, s_pc = value(py, best_c)
    v_pp, s_pp = value(py, best_py)
    assert v_pp - v_pc <= 4 * math.hypot(s_pc, s_pp) + 0.01, (name, best_c, best_py, v_pc, v_pp)
    v_cc, s_cc = value(c, best_c)
    assert abs(v_cc - v_pc) <= 4 * math.hypot(s_cc, s_pc) + 0.02, (name, best_c, v_cc, v_pc)


def test_the_bound_has_teeth(runs) -> None:
    """A search that picks uniformly at random at the root (what a broken selection would look like) fails the
    visit-distribution bound at the move position, where the real searches concentrate on one move."""
    state, c, py = runs["move"]
    actions = state.legal_actions()
    uniform = {a: 1 / len(actions) for a in actions}
    tv = bound = 0.0
    for a in actions:
        mp, sp = _mean_se([r[0].get(a, 0.0) for r in py])
        tv += 0.5 * abs(uniform[a] - mp)
        bound += 0.5 * 4 * sp
    assert tv > bound + SYSTEMATIC, (tv, bound)
