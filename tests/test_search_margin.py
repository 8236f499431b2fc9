"""The margin term of the handmade evaluation (``SearchOptions.margin_weight`` / ``margin_temperature``).

The evaluation's diagnosis (docs/search.md): the sharp softmax of the handmade evaluation saturates, so a seat a few VP
ahead or behind sees every move as worth the same and plays at random. The margin term mixes a wide softmax
(constant temperature) into the rewards. Expected values here are computed from the rules' VP and
:func:`feudo_ai.evaluate.position_score` with the formula written out by hand, not read from the code under test.
"""

from __future__ import annotations

import math
import random
import re

import pytest

from engine import Phase
from engine.core import CoreState
from feudo_ai import _feudo_game
from feudo_ai.search import c_backend as fast_search
from feudo_ai.search import python_backend as ismcts
from feudo_ai.settings import SearchOptions
from feudo_ai.evaluate import position_score

from search_helpers import advice_key, check_blind_pairs_agree, find_position, hidden_position, positions
from search_helpers import c_search as search  # noqa: E402 - one C search, SearchOptions names


def _by_hand(state, temperature: float, m: float, wide_t: float) -> list[float]:
    """(1 - m) * softmax(score / temp) + m * softmax(score / wide_t) over the players in play, with
    temp = max(0.5, temperature * sqrt(turns left / turns)) (the handmade evaluation's schedule)."""
    n = state.num_players
    players = [p for p in range(n) if state.active[p]] if state.tiebreak else list(range(n))
    turns = state.game.ruleset.turns
    temp = max(0.5, temperature * math.sqrt(max(0, turns - state.turn + 1) / turns))
    score = {p: position_score(state, p) for p in players}

    def soft(t: float) -> list[float]:
        z = sum(math.exp(v / t) for v in score.values())
        return [math.exp(score[p] / t) / z if p in score else 0.0 for p in range(n)]

    sharp, wide = soft(temp), soft(wide_t)
    return [(1 - m) * a + m * b for a, b in zip(sharp, wide)]


def test_margin_rewards_equal_the_formula_by_hand() -> None:
    n = 0
    for players in (2, 3, 4):
        for state in positions(players, seeds=(1, 2))[::5]:
            core = CoreState.from_reference(state)
            for m, wide_t in ((0.0, 4.0), (0.5, 4.0), (0.3, 2.0), (1.0, 3.0)):
                _, rewards = _feudo_game.evaluate_state(core, 1.0, m, wide_t)
                assert rewards == pytest.approx(_by_hand(state, 1.0, m, wide_t), abs=1e-9)
                assert sum(rewards) == pytest.approx(1.0)
            n += 1
    assert n > 15


def test_margin_zero_is_the_v1_evaluation_bit_for_bit() -> None:
    for state in positions(2, seeds=(3,))[::3]:
        core = CoreState.from_reference(state)
        assert _feudo_game.evaluate_state(core, 1.0) == _feudo_game.evaluate_state(core, 1.0, 0.0, 0.01)


def test_a_two_player_lead_late_in_the_game_keeps_a_gradient() -> None:
    """The saturation found by that diagnosis: in 2 players, late in the game (temp at its floor 0.5), a lead of 5 in
    position score is worth 1 / (1 + e^-10) = 0.99995 to the sharp softmax, 6 only 0.0000 more; the wide softmax at
    temperature 4 gives 1 / (1 + e^-1.25) = 0.7773 and 1 / (1 + e^-1.5) = 0.8176 (by hand)."""
    state = find_position(lambda s: s.turn >= 9 and not s.tiebreak, players=2, seeds=range(1, 30))
    core = CoreState.from_reference(state)
    d = position_score(state, 0) - position_score(state, 1)
    _, sharp = _feudo_game.evaluate_state(core, 1.0)
    _, mixed = _feudo_game.evaluate_state(core, 1.0, 1.0, 4.0)
    assert mixed[0] == pytest.approx(1.0 / (1.0 + math.exp(-d / 4.0)), abs=1e-12)
    assert sharp[0] == pytest.approx(1.0 / (1.0 + math.exp(-d / 0.5)), abs=1e-12)
    # the worked numbers of the docstring
    assert 1.0 / (1.0 + math.exp(-1.25)) == pytest.approx(0.7773, abs=1e-4)
    assert 1.0 / (1.0 + math.exp(-1.5)) - 1.0 / (1.0 + math.exp(-1.25)) == pytest.approx(0.0403, abs=1e-4)


def test_terminal_returns_stay_the_r19_returns() -> None:
    """R19: at the end of the game the search is scored with the real returns, margin or not."""
    rng = random.Random(5)
    from engine import new_game, sample_chance
    state = new_game(players=2, seed=5)
    while not state.is_terminal():
        a = sample_chance(state, rng) if state.is_chance_node() else rng.choice(state.legal_actions())
        state.apply_action(a)
    _, rewards = _feudo_game.evaluate_state(CoreState.from_reference(state), 1.0, 0.7, 4.0)
    assert rewards == list(state.returns())


def test_python_reference_evaluates_the_same_with_the_margin() -> None:
    """The reference backend's evaluation (feudo_ai.ismcts) and the C one agree with the margin term on."""
    for players in (2, 4):
        for state in positions(players, seeds=(1,))[::6]:
            seat = state.current_player() if not state.is_chance_node() else 0
            cfg = ismcts.config(SearchOptions(backend="python", iterations=10, margin_weight=0.4,
                                              margin_temperature=3.0))
            ref = ismcts._Searcher(state.game, state.observation(seat), cfg, None)._evaluate(state)
            _, c = _feudo_game.evaluate_state(CoreState.from_reference(state), 1.0, 0.4, 3.0)
            assert ref == pytest.approx(c, abs=1e-9)


def test_margin_on_is_deterministic_and_changes_the_search() -> None:
    state = hidden_position(players=2)
    on = search(state, iterations=1500, seed=3, margin_weight=0.5, margin_temperature=4.0)
    assert advice_key(on) == advice_key(search(state, iterations=1500, seed=3, margin_weight=0.5,
                                               margin_temperature=4.0))
    assert advice_key(on) != advice_key(search(state, iterations=1500, seed=3, margin_weight=0.0))


def test_margin_zero_ignores_the_margin_temperature() -> None:
    state = hidden_position(players=2)
    assert advice_key(search(state, iterations=800, seed=2, margin_weight=0.0)) == \
        advice_key(search(state, iterations=800, seed=2, margin_weight=0.0, margin_temperature=0.1))


def test_honesty_with_the_margin_on() -> None:
    """Two states that differ only in the opponents' secret selections give the same advice (R22)."""
    assert check_blind_pairs_agree(search, [(Phase.REVEAL, Phase.MOVE)], range(1, 40), random.Random(9), per_set=2,
                                   iterations=1500, margin_weight=0.5, margin_temperature=4.0) == 2


@pytest.mark.parametrize("field, value", [
    ("margin_weight", -0.1), ("margin_weight", 1.01), ("margin_weight", math.nan), ("margin_weight", True),
    ("margin_weight", "0.5"), ("margin_temperature", 0), ("margin_temperature", -2.0),
    ("margin_temperature", math.inf), ("margin_temperature", None),
])
def test_bad_margin_options_name_the_field(field: str, value) -> None:
    with pytest.raises(ValueError, match=re.escape(field)):
        SearchOptions(**{field: value})


def test_margin_is_for_the_handmade_evaluation() -> None:
    with pytest.raises(ValueError, match="margin_weight"):
        SearchOptions(evaluation="learned", margin_weight=0.5)
    SearchOptions(evaluation="learned", margin_temperature=2.0)  # harmless: no margin term


def test_game_and_helper_check_their_margin_arguments() -> None:
    core = CoreState.from_reference(positions(2, seeds=(1,))[0])
    with pytest.raises(ValueError, match="margin_weight"):
        _feudo_game.evaluate_state(core, 1.0, 1.5, 4.0)
    with pytest.raises(ValueError, match="margin_temperature"):
        _feudo_game.evaluate_state(core, 1.0, 0.5, 0.0)
    with pytest.raises(ValueError, match="margin_weight"):
        _feudo_game.FeudoGame(core, 0, "uniform", 1.0, "handmade", None, -0.5, 4.0)


def test_frozen_baselines_pin_the_margin_off() -> None:
    from feudo_ai.settings import resolve

    assert resolve("ismcts-v1").margin_weight == resolve("pimc").margin_weight == 0.0
    from feudo_ai.bots import make_bot
    for name in ("ismcts-v1", "pimc"):
        assert make_bot(name, 1).options.margin_weight == 0.0
