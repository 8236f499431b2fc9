"""Progressive widening led by the action prior (``SearchOptions.prior_widening``, C MO-ISMCTS, off by default):
with the prior on, a node's untried actions wait as one more UCB1 arm instead of each being tried once before any
is tried twice (``_untried_wins`` in ``feudo_ai/_search.pyx``). Off, or without a prior, the search is the search of
before, bit for bit."""

from __future__ import annotations

import math
import random

import pytest

from engine import Phase
from feudo_ai.settings import SearchOptions, resolve

from search_helpers import advice_key, check_blind_pairs_agree, find_position
from search_helpers import c_search as search
from test_search_prior import _opening, _visits, _worker

C = 0.7  # _worker's exploration constant
WEIGHT = 10.0  # the prior's weight in the Goofspiel cases


def _widening_threshold() -> int:
    """The visits n after which the untried arm first beats the one tried child, worked out from the rule: one
    child holding the whole prior (probability 1 at temperature 0.1: the others e^-90), so both arms share its
    mean; the child's UCB1 is C sqrt(ln(n + 1) / n) + WEIGHT / (1 + n) (availability n + 1: it was legal at every
    visit and this one), the untried arm's C sqrt(ln n) + WEIGHT x (1 - 1)."""
    n = 1
    while C * math.sqrt(math.log(n)) <= C * math.sqrt(math.log(n + 1) / n) + WEIGHT / (1 + n):
        n += 1
    return n


def test_the_prior_favourite_is_deepened_until_the_untried_arm_wins() -> None:
    """Goofspiel's UCB1 node of five bids, the prior all on bid 3 (index 2). Without widening every bid is tried
    in the first five iterations; with it the favourite takes every visit until the untried arm's exploration
    overtakes its fading bias (12 visits, by the rule worked out by hand), and the 13th iteration tries one more bid,
    on every seed."""
    n = _widening_threshold()
    assert n == 12
    prior = [0, 0, 9, 0, 0]
    for seed in range(1, 6):
        plain = _visits(_worker(_opening(prior), 5, seed=seed, prior_weight=WEIGHT, prior_temperature=0.1))
        assert sorted(plain) == [0, 1, 2, 3, 4]
        wide = _visits(_worker(_opening(prior), n, seed=seed, prior_weight=WEIGHT, prior_temperature=0.1,
                               prior_widening=True))
        assert wide == {2: n}
        wide = _visits(_worker(_opening(prior), n + 1, seed=seed, prior_weight=WEIGHT, prior_temperature=0.1,
                               prior_widening=True))
        assert wide[2] == n and len(wide) == 2 and sum(wide.values()) == n + 1


def test_widening_still_finds_the_best_bid() -> None:
    """Given the budget, the untried bids are tried and the best bid (index 4: bid 5 wins prize 5 unless player 0
    bid 5 too) ends the most visited, the misleading prior notwithstanding, over five seeds."""
    for seed in range(1, 6):
        visits = _visits(_worker(_opening([0, 0, 9, 0, 0]), 600, seed=seed, prior_weight=WEIGHT,
                                 prior_temperature=0.1, prior_widening=True))
        assert sorted(visits) == [0, 1, 2, 3, 4]
        assert max(visits, key=visits.get) == 4, visits


def test_without_a_prior_widening_changes_nothing() -> None:
    """Weight 0, or a game without a prior entry: the trees of the search without the setting, exactly."""
    for prior, weight in (([0, 0, 9, 0, 0], 0.0), (None, 2.0)):
        key = lambda w: (w.root_stats(), w.stats()["nodes"], w.stats()["max_depth"])  # noqa: E731
        assert key(_worker(_opening(prior), 500, seed=7, prior_weight=weight, prior_widening=True)) == \
            key(_worker(_opening(prior), 500, seed=7, prior_weight=weight))


def test_feudo_widening_is_deterministic_and_changes_the_search() -> None:
    """The 2-player product's search of a Feudo decision with the setting: same seed, same advice; not the
    advice's statistics of the search without it."""
    state = find_position(lambda s: s.phase == Phase.MOVE and len(s.legal_actions()) >= 6, players=2)
    opts = resolve("product", 2, {"iterations": 1200, "seed": 5}).to_dict()
    on = [advice_key(search(state, **{**opts, "prior_widening": True})) for _ in range(2)]
    assert on[0] == on[1]
    assert on[0] != advice_key(search(state, **opts))


def test_honesty_with_widening() -> None:
    """Two states that differ only in the opponents' secret selections give the same advice with the setting on
    (R22: the prior and the widening read determinized worlds only)."""
    assert check_blind_pairs_agree(search, [(Phase.REVEAL,), (Phase.MOVE,)], range(1, 30), random.Random(9),
                                   iterations=1500, prior_weight=4.0, prior_temperature=0.25,
                                   prior_widening=True) == 2


@pytest.mark.parametrize("value", [1, "true", None, 0.5])
def test_prior_widening_is_a_flag(value) -> None:
    with pytest.raises(ValueError, match="prior_widening"):
        SearchOptions(prior_widening=value)


def test_prior_widening_needs_the_c_backend() -> None:
    with pytest.raises(ValueError, match="prior_widening"):
        SearchOptions(backend="python", prior_widening=True)


@pytest.mark.parametrize("profile", ["product", "ismcts-v1", "ismcts-v2", "pimc"])
@pytest.mark.parametrize("players", [2, 3, 4])
def test_off_in_the_product_and_pinned_off_in_the_baselines(profile: str, players: int) -> None:
    assert resolve(profile, players).prior_widening is False
