"""R19's optional VP-margin term (``SearchOptions.final_margin_weight``): a finished game's rewards mix a softmax of
the final VP into the R19 returns (C search only).

Expected values are computed here from the reference engine's winners and VP with the formula written out by hand
(R19: 1 for a sole win, 1/k for a k-way shared win, 0 otherwise), not read from the code under test.
"""

from __future__ import annotations

import math

import pytest

from engine.core import CoreState
from feudo_ai import _feudo_game
from feudo_ai.settings import SearchOptions, resolve

from search_helpers import advice_key, play, positions
from search_helpers import c_search as search  # noqa: E402 - one C search, SearchOptions names


def _greedy_move(state, rng) -> int:
    return _feudo_game.playout_action(CoreState.from_reference(state), rng.getrandbits(63), 1.0)


def _finished_games(players: int, seeds) -> list:
    """Reference states at the end of games whose moves are the greedy playout's (so the VP differ), seeded."""
    return [play(players, seed, pick=_greedy_move) for seed in seeds]


def _by_hand(state, m: float, width: float) -> list[float]:
    """(1 - m) x R19 returns + m x softmax(VP / width) over the players in play (the tied leaders after a
    tie-break, R19)."""
    n = state.num_players
    win = [0.0] * n
    for p in state.winners:
        win[p] = 1.0 / len(state.winners)
    players = [p for p in range(n) if state.active[p]] if state.tiebreak else list(range(n))
    z = sum(math.exp(state.vp[p] / width) for p in players)
    wide = [math.exp(state.vp[p] / width) / z if p in players else 0.0 for p in range(n)]
    return [(1 - m) * a + m * b for a, b in zip(win, wide)]


@pytest.mark.parametrize("players", [2, 3, 4])
def test_R19_final_margin_rewards_equal_the_formula_by_hand(players: int) -> None:
    states = _finished_games(players, range(1, 5))
    assert len({tuple(s.vp) for s in states}) > 1  # the games end differently
    for state in states:
        core = CoreState.from_reference(state)
        for m, width in ((0.0, 4.0), (0.2, 4.0), (0.5, 2.0), (0.1, 8.0)):
            game = _feudo_game.FeudoGame(core, 0, margin_temperature=width, final_margin_weight=m)
            rewards = game.leaf_rewards(core)
            assert rewards == pytest.approx(_by_hand(state, m, width), abs=1e-12)
            assert sum(rewards) == pytest.approx(1.0)


def test_R19_final_margin_zero_is_the_R19_returns_exactly() -> None:
    for state in _finished_games(2, range(1, 4)):
        core = CoreState.from_reference(state)
        game = _feudo_game.FeudoGame(core, 0, final_margin_weight=0.0)
        assert game.leaf_rewards(core) == list(state.returns())


def test_R19_final_margin_keeps_a_win_above_a_loss_in_2_players() -> None:
    """At the largest weight (0.5) the loser of a game lost by many VP still scores below the winner of a game won
    by one, whatever the width."""
    for state in _finished_games(2, range(1, 6)):
        core = CoreState.from_reference(state)
        if len(state.winners) != 1:
            continue
        for width in (0.5, 4.0, 1e6):
            game = _feudo_game.FeudoGame(core, 0, margin_temperature=width, final_margin_weight=0.5)
            rewards = game.leaf_rewards(core)
            winner = state.winners[0]
            assert rewards[winner] > rewards[1 - winner]


def test_R19_final_margin_leaves_unfinished_leaves_alone() -> None:
    """Only a finished game's rewards change: the evaluation of a truncated playout's end is the same."""
    for state in positions(2, seeds=(3,))[::4]:
        core = CoreState.from_reference(state)
        plain = _feudo_game.FeudoGame(core, 0).leaf_rewards(core)
        assert _feudo_game.FeudoGame(core, 0, final_margin_weight=0.3).leaf_rewards(core) == plain


def test_R19_final_margin_changes_the_search_and_zero_changes_nothing() -> None:
    """With playouts to the end (2 players) the weight reaches the search: 0 is the search of before bit for bit,
    a weight changes its statistics; same seed, same advice."""
    state = positions(2, seeds=(5,))[6]
    opts = dict(iterations=600, seed=4, playout_greedy=1.0, playout_turns=200)
    before = search(state, **opts)
    assert advice_key(search(state, **opts, final_margin_weight=0.0)) == advice_key(before)
    on = search(state, **opts, final_margin_weight=0.25)
    assert advice_key(on) != advice_key(before)
    assert advice_key(search(state, **opts, final_margin_weight=0.25)) == advice_key(on)


@pytest.mark.parametrize("value", [-0.1, 0.51, 1.0, math.nan, math.inf, "0.2", True])
def test_R19_final_margin_out_of_range_is_refused_naming_the_field(value) -> None:
    with pytest.raises(ValueError, match="final_margin_weight"):
        SearchOptions(final_margin_weight=value).validate()


def test_R19_final_margin_is_refused_by_the_python_backend() -> None:
    with pytest.raises(ValueError, match="final_margin_weight: .*backend='c'"):
        SearchOptions(backend="python", final_margin_weight=0.2).validate()


def test_R19_final_margin_refused_by_the_game_before_C_reads_it() -> None:
    core = CoreState.from_reference(positions(2, seeds=(3,))[0])
    with pytest.raises(ValueError, match="final_margin_weight"):
        _feudo_game.FeudoGame(core, 0, final_margin_weight=0.75)


def test_R19_final_margin_is_off_in_every_profile() -> None:
    """No profile sets it (Experimental): the product and the frozen baselines keep the R19 returns alone."""
    for profile in ("product", "ismcts-v1", "ismcts-v2", "default"):
        for players in (2, 3, 4):
            assert resolve(profile, players).final_margin_weight == 0.0
