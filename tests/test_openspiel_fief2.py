"""python_fief2: Fief 2 as an OpenSpiel game (feudo_ai/openspiel_fief2.py), checked by OpenSpiel's own random
simulation test and by random rollouts through pyspiel's interface."""

from __future__ import annotations

import json
import random

import pytest

pyspiel = pytest.importorskip(
    "pyspiel", reason="OpenSpiel is not installed: pip install -e '.[test,openspiel]' (the package open-spiel)")

from feudo_ai import openspiel_fief2 as of  # noqa: E402


def load(players: int = 3, turn_limit: int = 2):
    return pyspiel.load_game(of.SHORT_NAME, {"players": players, "turn_limit": turn_limit})


@pytest.mark.parametrize("players", [3, 6])
def test_random_sim_test(players: int) -> None:
    pyspiel.random_sim_test(load(players, 2), num_sims=1, serialize=True, verbose=False)


def test_random_rollouts_end_with_f51_returns_and_match_the_engine() -> None:
    game = load(4, 3)
    assert game.num_players() == 4 and game.get_type().short_name == "python_fief2"
    rng = random.Random(5)
    state = game.new_initial_state()
    while not state.is_terminal():
        if state.is_chance_node():
            outcomes, probs = zip(*state.chance_outcomes())
            assert abs(sum(probs) - 1.0) < 1e-9 and all(0 <= o < game.max_chance_outcomes() for o in outcomes)
            state.apply_action(rng.choices(outcomes, probs)[0])
        else:
            seat = state.current_player()
            legal = state.legal_actions()
            assert legal and all(0 <= a < game.num_distinct_actions() for a in legal)
            assert state.information_state_string(seat) != state.information_state_string((seat + 1) % 4) or \
                not state.engine_state().hands[seat]
            state.apply_action(rng.choice(legal))
    returns = state.returns()
    assert abs(sum(returns) - 1.0) < 1e-9 and max(returns) > 0
    replayed = game.new_initial_state()
    engine = replayed.engine_state()
    for a in state.engine_history():
        engine.apply_action(a)
    assert engine.returns() == returns and engine.is_terminal()


def test_a_seat_never_sees_another_hand() -> None:
    game = load(3, 2)
    state = game.new_initial_state()
    rng = random.Random(2)
    while not state.is_terminal():
        if state.is_chance_node():
            outcomes, probs = zip(*state.chance_outcomes())
            state.apply_action(rng.choices(outcomes, probs)[0])
            continue
        st = state.engine_state()
        if all(st.hands):
            break
        state.apply_action(rng.choice(state.legal_actions()))
    st = state.engine_state()
    for seat in range(3):
        other = (seat + 1) % 3
        seen = state.observation_string(seat)
        obs = json.loads(seen)
        assert obs["hands"][other] == [] and obs["hand_counts"][other] == len(st.hands[other])
        assert obs["hands"][seat] == st.hands[seat]


def test_bad_parameters_are_named() -> None:
    with pytest.raises(ValueError, match="players"):
        of.Fief2Game({"players": 2})
    with pytest.raises(ValueError, match="turn_limit"):
        of.Fief2Game({"turn_limit": 0})
