"""The C determinized-UCT baseline (``search(..., algorithm="pimc")``, bot "pimc"): legal advice, the budget
split evenly over the sampled worlds, determinism, root-parallel merging, node cap, cancel, whole games, and
that it beats random. Its honesty (the opponents' secret selections never change the advice) is tested with the
MO-ISMCTS's in tests/test_fast_search.py.

Fails (does not skip) when the extension is not built: ``python setup.py build_ext --inplace``.
"""

from __future__ import annotations

import pytest

from engine import Phase, new_game, play_game
from engine.core import CoreState
from feudo_ai.bots import RandomBot, make_bot

# A missing extension is a collection error (the tests fail, never skip): python setup.py build_ext --inplace
from feudo_ai import _feudo_game, _search
from feudo_ai._feudo_game import FeudoGame
from feudo_ai.settings import SearchOptions
from feudo_ai.bots.search_bots import PIMCBot

from search_helpers import c_search as search  # noqa: E402 - one C search, SearchOptions names
from search_helpers import (advice_key, cancel_after, find_position, hidden_of_others, hidden_position, positions,
                            score_against_random)


def test_pimc_returns_legal_actions_on_many_positions() -> None:
    for players in (2, 3, 4):
        for state in positions(players, seeds=(2,))[::4]:
            legal = state.legal_actions()
            advice = search(state, iterations=240, algorithm="pimc", worlds=6, seed=5)
            assert advice.best in legal and all(a.action in legal for a in advice.alternatives)
            assert advice.stats.iterations == 240 and advice.stats.algorithm == "pimc"
            assert advice.stats.worlds_sampled == 6
            if len(legal) > 1:
                assert sum(a.visits for a in advice.alternatives) == 240
            assert advice.plan and advice.plan[0].action == advice.best


def test_budget_is_split_evenly_over_the_worlds() -> None:
    """Iteration i searches world i mod worlds, so each world's tree gets its share of the budget; the
    advice's visits are the sum of the worlds' root visits (the votes)."""
    state = hidden_position()
    seat = state.current_player()
    w = _search.SearchWorker(FeudoGame(CoreState.from_reference(state), seat), 3, 1003, 0.0, 100_000, "truncated",
                             0, 0.2, 0.15, None, "pimc", 5)
    assert w.run() == "iterations"
    roots = w.world_roots()
    assert len(roots) == 5 and len(set(roots)) == 5
    shares = [sum(v for _, v, _, _ in w.children(r)) for r in roots]
    assert shares == [201, 201, 201, 200, 200]
    summed: dict = {}
    for r in roots:
        for a, v, _, _ in w.children(r):
            if v:
                summed[a] = summed.get(a, 0) + v
    assert {a: v for a, (v, _) in w.root_stats().items()} == summed
    assert w.stats()["worlds"] == 5


def test_worlds_differ_and_are_consistent_with_the_observation() -> None:
    """The worlds are drawn by the search's determinization: beliefs come from exactly `worlds` worlds
    per worker, and with several worlds the opponents' hidden cards are not all the same."""
    state = hidden_position()
    seat = state.current_player()
    advice = search(state, iterations=400, algorithm="pimc", worlds=16, seed=2, threads=2)
    assert advice.stats.worlds_sampled == 32
    assert hidden_of_others(state, seat)
    army = [b for b in advice.beliefs if b.kind == "army"]
    spread = [b.probability for b in army if 0.0 < b.probability < 1.0]
    assert spread, advice.beliefs  # some card is selected in some worlds and not in others
    for b in army:  # the labelled beliefs cover exactly the held, unrevealed cards of opponents
        assert b.player != seat and state.army_held[b.player][b.index] and not state.revealed[b.player][b.index]


def test_pimc_is_deterministic_and_merges_threads() -> None:
    state = hidden_position()
    for kw in ({}, {"threads": 2}, {"worlds": 3, "sampler": "weighted"}):
        a = search(state, iterations=1200, algorithm="pimc", seed=4, **kw)
        b = search(state, iterations=1200, algorithm="pimc", seed=4, **kw)
        assert advice_key(a) == advice_key(b)
    two = search(state, iterations=1201, algorithm="pimc", threads=2, seed=4)
    assert two.stats.worker_iterations == (601, 600) and sum(a.visits for a in two.alternatives) == 1201
    assert advice_key(search(state, iterations=1200, algorithm="pimc", seed=5)) != advice_key(
        search(state, iterations=1200, algorithm="pimc", seed=4))


def test_pimc_differs_from_ismcts() -> None:
    """The two algorithms share the C machinery but not the trees: at a secret selection, PIMC's worlds
    give it different statistics from MO-ISMCTS's (same seed and budget)."""
    state = find_position(lambda s: s.phase == Phase.SELECT and len(s.legal_actions()) > 1
                          and hidden_of_others(s, s.current_player()), players=4)
    a = search(state, iterations=2000, seed=1)
    b = search(state, iterations=2000, seed=1, algorithm="pimc")
    assert [(x.action, x.visits) for x in a.alternatives] != [(x.action, x.visits) for x in b.alternatives]


@pytest.mark.timing
def test_pimc_node_cap_and_cancel() -> None:
    state = hidden_position()
    capped = search(state, iterations=3000, algorithm="pimc", worlds=4, max_nodes=200, seed=1)
    assert capped.stats.nodes <= 200 and capped.stats.iterations == 3000 and capped.stats.pool_full
    assert capped.best in state.legal_actions()
    advice, latency = cancel_after(search, _search.CancelFlag(), state=state, seconds=30.0, algorithm="pimc",
                                   playout="random", seed=1)
    assert latency < 0.5
    assert advice.stats.stopped_by == "cancelled" and advice.stats.iterations > 0


def test_pimc_bot_plays_whole_games_and_beats_random() -> None:
    with pytest.raises(ValueError, match="nonsense"):
        PIMCBot(1, nonsense=2)
    bots = [make_bot("pimc:iterations=60:worlds=3", 1), RandomBot(2), make_bot("pimc:iterations=60", 3)]
    _, final = play_game(bots, new_game(players=3, seed=3), seed=3)
    assert final.is_terminal() and abs(sum(final.returns()) - 1.0) < 1e-9
    score = score_against_random(lambda g: PIMCBot(seed=g, iterations=300), games=8)
    assert score >= 6.0, score
