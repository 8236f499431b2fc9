"""python_feudo: Feudo as an OpenSpiel game (feudo_ai/openspiel_game.py).

Needs the optional extra: ``pip install -e '.[test,openspiel]'``. Without OpenSpiel the whole module is skipped
with that reason (CI installs the extra, so there these tests run).
"""

from __future__ import annotations

import random

import numpy as np
import pytest

pyspiel = pytest.importorskip(
    "pyspiel", reason="OpenSpiel is not installed: pip install -e '.[test,openspiel]' (the package open-spiel)")

from engine import IllegalActionError, load_ruleset, new_fast_game, new_game  # noqa: E402
from engine.core import core_available  # noqa: E402
from engine.state import CHANCE, Phase  # noqa: E402
from feudo_ai import openspiel_game as og  # noqa: E402


def load(players: int = 2, turns: int = 2, **params) -> "og.FeudoGame":
    return pyspiel.load_game(og.SHORT_NAME, {"players": players, "turns": turns, **params})


def play_random(state, rng: random.Random, stop=None):
    """Random play (chance by its probabilities) until the end or ``stop(state)``; yields each decision state."""
    while not state.is_terminal():
        if stop is not None and stop(state):
            return
        if state.is_chance_node():
            actions, probs = zip(*state.chance_outcomes())
            state.apply_action(rng.choices(actions, probs)[0])
        else:
            yield state
            state.apply_action(rng.choice(state.legal_actions()))


# ------------------------------------------------------------------------------------------------- conformance
@pytest.mark.parametrize("players", [2, 3, 4])
def test_random_sim_test_with_serialization(players: int) -> None:
    pyspiel.random_sim_test(load(players, turns=2), num_sims=2, serialize=True, verbose=False)


@pytest.mark.parametrize("params", [{"virulent": True}, {"strategy_only": True}, {"map_seed": 5}])
def test_r20_optional_rules_and_map_seed_pass_random_sim_test(params: dict) -> None:
    pyspiel.random_sim_test(load(3, turns=2, **params), num_sims=1, serialize=False, verbose=False)


def test_reference_backend_passes_random_sim_test() -> None:
    pyspiel.random_sim_test(load(2, turns=1, backend="reference"), num_sims=1, serialize=True, verbose=False)


@pytest.mark.parametrize("players", [2, 4])
def test_random_sim_test_full_length_games(players: int) -> None:
    pyspiel.random_sim_test(load(players, turns=10), num_sims=2, serialize=True, verbose=False)


def test_game_type_and_parameters() -> None:
    game = load(3, turns=4)
    t = game.get_type()
    assert t.short_name == "python_feudo"
    assert t.dynamics == pyspiel.GameType.Dynamics.SEQUENTIAL
    assert t.chance_mode == pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC
    assert t.information == pyspiel.GameType.Information.IMPERFECT_INFORMATION
    assert t.utility == pyspiel.GameType.Utility.CONSTANT_SUM
    assert game.num_players() == 3 and game.get_parameters()["turns"] == 4
    assert game.engine_game.ruleset.turns == 4
    # player actions stop before the engine's chance ranges; chance outcomes are renumbered from 0
    assert game.num_distinct_actions() == game.layout.CHANCE_PLAYER
    assert game.max_chance_outcomes() == 3 + 12  # 3 players to draw + 12 plague kinds (R2)
    assert (game.min_utility(), game.max_utility(), game.utility_sum()) == (0.0, 1.0, 1.0)
    assert pyspiel.load_game("python_feudo(players=3,turns=4)").max_game_length() == game.max_game_length()


def test_game_info_bounds_worked_by_hand() -> None:
    # 4 players, 10 turns + 5 tie-break turns (R19). Per player and turn: select 3+1, reveal 3+3+1, march
    # (4 + King's Help 2) + 1, attack 3*9+1, advance 2*9 = 4+7+7+28+18 = 64; a turn 1 + 4*64 = 257.
    game = load(4, turns=10)
    assert game.max_game_length() == 4 + 15 * 257 == 3859
    assert game.max_chance_nodes_in_history() == 4 + 15 + 10  # placers, deciders, plague draws
    game2 = load(2, turns=15, strategy_only=True)
    assert game2.max_game_length() == 2 + 20 * (1 + 2 * 64)


@pytest.mark.parametrize("params,field", [({"players": 5}, "players"), ({"players": 1}, "players"),
                                          ({"turns": 0}, "turns"), ({"backend": "gpu"}, "backend"),
                                          ({"map_seed": "x"}, "map_seed"), ({"virulent": 3}, "virulent"),
                                          ({"colour": 1}, "colour")])
def test_bad_parameters_name_the_field(params: dict, field: str) -> None:
    with pytest.raises(Exception) as e:
        pyspiel.load_game("python_feudo", {"players": 2, **params})
    assert field in str(e.value)


# ------------------------------------------------------------------------------------------------- length bounds
def _count_turns(players: int, seed: int, turns: int = 10) -> tuple[dict, int, int]:
    """Play one random game on the engine; the most decisions of each per-player group in one turn, the
    decisions and the chance nodes of the whole game."""
    groups = {Phase.SELECT: "select", Phase.REVEAL: "reveal", Phase.MOVE: "reveal", Phase.MILADY: "reveal",
              Phase.MARCH: "march", Phase.ATTACK: "attack", Phase.ATTACK_JOIN: "attack", Phase.ADVANCE: "advance"}
    rs = load_ruleset().with_options(turns=turns)
    state = new_fast_game(rs, players, seed=seed)
    rng = random.Random(seed)
    most: dict[str, int] = {}
    counts: dict = {}
    decisions = chance = 0
    turn = state.turn
    while not state.is_terminal():
        if state.turn != turn:
            counts, turn = {}, state.turn
        if state.is_chance_node():
            chance += 1
            actions, probs = zip(*state.chance_outcomes())
            state.apply_action(rng.choices(actions, probs)[0])
            continue
        decisions += 1
        group = groups.get(Phase(state.phase))
        if group:
            key = (state.current_player(), group)
            counts[key] = counts.get(key, 0) + 1
            most[group] = max(most.get(group, 0), counts[key])
        state.apply_action(rng.choice(state.legal_actions()))
    return most, decisions, chance


def _check_bounds(players: int, seeds: range) -> None:
    game = load(players, turns=10)
    b = game.bounds
    for seed in seeds:
        most, decisions, chance = _count_turns(players, seed)
        for group, value in most.items():
            assert value <= b[f"per_player_turn_{group}"], (seed, group, value)
        assert decisions <= game.max_game_length()
        assert chance <= game.max_chance_nodes_in_history()


@pytest.mark.parametrize("players", [2, 3, 4])
def test_max_game_length_holds_per_turn_and_phase_over_random_games(players: int) -> None:
    _check_bounds(players, range(6))


@pytest.mark.slow
def test_max_game_length_holds_over_many_random_games() -> None:
    for players in (2, 3, 4):
        _check_bounds(players, range(100, 200))


# ------------------------------------------------------------------------------------------------- information
def test_infostate_string_hides_other_players_picks_and_shows_own() -> None:
    game = load(2, turns=1)
    state = game.new_initial_state()
    rng = random.Random(3)
    for _ in play_random(state, rng, stop=lambda s: s.current_player() == 1 and
                         s._f.s.phase == Phase.SELECT):
        pass
    picks = [a for q, a in zip(state._f.actors, state._f.actions) if q == 0 and game.is_secret(a)]
    assert len(picks) == 4  # three Army Cards and the Trading Card of Blue (R6)
    own = state.information_state_string(0).split(" | ")[1].split()
    other = state.information_state_string(1).split(" | ")[1].split()
    assert [f"0:{a}" for a in picks] == [t for t in own if t.startswith("0:") and int(t[2:]) in picks]
    assert sum(1 for t in other if t == "0:?") == 4
    assert not any(t.startswith("0:") and t[2:].isdigit() and int(t[2:]) in picks for t in other)


def _interchangeable_marches(game, seeds: range):
    """Two states reached from one position by two marches of different tokens made in either order, ending
    in the same position (searched over random games), or None."""
    T, first = game.engine_game.num_territories, game.layout.MARCH
    for seed in seeds:
        state = game.new_initial_state()
        for s in play_random(state, random.Random(seed)):
            if s._f.s.phase != Phase.MARCH or s._f.s.shillings < 2:
                continue
            marches = [a for a in s.legal_actions() if a >= first]
            for a in marches:
                for b in marches:
                    if (a - first) // T >= (b - first) // T:
                        continue
                    ab, ba = s.clone(), s.clone()
                    ab.apply_action(a)
                    ba.apply_action(b)
                    if b not in ab.legal_actions() or a not in ba.legal_actions():
                        continue
                    ab.apply_action(b)
                    ba.apply_action(a)
                    if ab._f.s.canonical() == ba._f.s.canonical():
                        return ab, ba
    return None


def test_perfect_recall_distinguishes_orders_of_the_same_marches() -> None:
    # The engine's compact key merges two orders of the same marches; OpenSpiel's information state must not.
    game = load(2, turns=10)
    pair = _interchangeable_marches(game, range(40))
    assert pair is not None, "no position with two interchangeable marches in 40 random games"
    ab, ba = pair
    for p in (0, 1):
        assert ab._f.s.information_state_string(p) == ba._f.s.information_state_string(p)
        assert ab.information_state_string(p) != ba.information_state_string(p)
        assert ab.information_state_tensor(p) != ba.information_state_tensor(p)
        assert ab.observation_string(p) == ba.observation_string(p)
        assert ab.observation_tensor(p) == ba.observation_tensor(p)


def test_observation_is_the_engine_observation() -> None:
    game = load(3, turns=2, backend="reference")
    state = game.new_initial_state()
    for i, s in enumerate(play_random(state, random.Random(11))):
        if i % 5:
            continue
        eng = s._f.s
        for seat in range(3):
            want = eng.observation(seat)
            want["vp_log"] = []
            assert og.observation(og._fields(eng), seat, game.engine_game) == want


def test_tensors_have_the_declared_shapes_and_differ_by_seat() -> None:
    game = load(2, turns=1)
    state = game.new_initial_state()
    for _ in play_random(state, random.Random(2), stop=lambda s: s._f.s.phase == Phase.REVEAL):
        pass
    obs0, obs1 = np.array(state.observation_tensor(0)), np.array(state.observation_tensor(1))
    inf0 = np.array(state.information_state_tensor(0))
    assert obs0.shape == tuple(game.observation_tensor_shape())
    assert inf0.shape == tuple(game.information_state_tensor_shape())
    assert not np.array_equal(obs0, obs1)  # each seat sees its own selection only (R22)
    assert np.isfinite(inf0).all()


def test_resampled_states_share_the_seats_information() -> None:
    for players in (2, 3, 4):
        game = load(players, turns=2)
        state = game.new_initial_state()
        sampler = pyspiel.UniformProbabilitySampler(players, 0.0, 1.0)
        different = 0
        for i, s in enumerate(play_random(state, random.Random(players))):
            if i % (2 * players - 1):
                continue
            for seat in range(players):
                other = s.resample_from_infostate(seat, sampler)
                assert other.information_state_string(seat) == s.information_state_string(seat)
                assert other.information_state_tensor(seat) == s.information_state_tensor(seat)
                assert other.observation_string(seat) == s.observation_string(seat)
                assert other.current_player() == s.current_player()
                if seat == s.current_player():  # another player's choices may depend on his hidden cards
                    assert other.legal_actions() == s.legal_actions()
                assert len(other.history()) == len(s.history())
                different += str(other) != str(s)
        assert different > 0, "resampling never changed a hidden card"


def test_resampled_history_replays_to_the_resampled_state() -> None:
    game = load(3, turns=2)
    state = game.new_initial_state()
    sampler = pyspiel.UniformProbabilitySampler(5, 0.0, 1.0)
    checked = 0
    for i, s in enumerate(play_random(state, random.Random(9))):
        if i % 4:
            continue
        other = s.resample_from_infostate(s.current_player(), sampler)
        replay = game.new_initial_state()
        for a in other.history():
            replay.apply_action(a)
        assert str(replay) == str(other)
        for seat in range(3):
            assert replay.information_state_string(seat) == other.information_state_string(seat)
        checked += 1
    assert checked >= 10


def test_resampling_depends_only_on_the_seats_information() -> None:
    # Two states the seat cannot tell apart resample to the same world from the same random numbers: the
    # hidden cards of the real state cannot leak into the draw (R22).
    game = load(3, turns=2)
    state = game.new_initial_state()
    rng = random.Random(4)
    compared = 0
    for i, s in enumerate(play_random(state, rng)):
        if i % 3 or s._f.s.phase not in (Phase.SELECT, Phase.REVEAL, Phase.MOVE):
            continue
        seat = s.current_player()
        twin = s.resample_from_infostate(seat, pyspiel.UniformProbabilitySampler(1, 0.0, 1.0))
        a = s.resample_from_infostate(seat, pyspiel.UniformProbabilitySampler(77, 0.0, 1.0))
        b = twin.resample_from_infostate(seat, pyspiel.UniformProbabilitySampler(77, 0.0, 1.0))
        assert str(a) == str(b) and a.history() == b.history()
        again = s.resample_from_infostate(seat, pyspiel.UniformProbabilitySampler(77, 0.0, 1.0))
        assert str(again) == str(a)  # reproducible from OpenSpiel's sampler
        compared += 1
    assert compared > 5


def test_resample_rejects_bad_arguments() -> None:
    state = load(2).new_initial_state()
    with pytest.raises(ValueError, match="player_id"):
        state.resample_from_infostate(2, lambda: 0.5)
    with pytest.raises(ValueError, match="probability_sampler"):
        state.resample_from_infostate(0, lambda: 1.5)


# ------------------------------------------------------------------------------------------------- actions, API
def test_action_strings_are_the_engines_in_openspiel_argument_order() -> None:
    game = load(4, turns=2, backend="reference")
    state = game.new_initial_state()
    rng = random.Random(8)
    while not state.is_terminal():
        eng = state._f.s
        player = state.current_player()
        for a in state.legal_actions():  # at a chance node: the outcomes
            assert state.action_to_string(player, a) == eng.action_to_string(game.to_engine(player, a))
        if state.is_chance_node():
            actions, probs = zip(*state.chance_outcomes())
            state.apply_action(rng.choices(actions, probs)[0])
        else:
            state.apply_action(rng.choice(state.legal_actions()))


def test_rewards_are_terminal_and_constant_sum() -> None:
    game = load(3, turns=1)
    state = game.new_initial_state()
    for s in play_random(state, random.Random(1)):
        assert s.rewards() == [0.0, 0.0, 0.0]
    assert state.is_terminal()
    assert state.rewards() == state.returns()
    assert sum(state.returns()) == pytest.approx(1.0)
    assert state.returns() == state._f.s.returns()  # R19 from the engine, unchanged


def test_illegal_action_is_refused_with_the_engines_message() -> None:
    game = load(2)
    state = game.new_initial_state()
    state.apply_action(state.legal_actions()[0])  # chance: who places the first Castle
    with pytest.raises(Exception, match="not legal"):
        state.apply_action(game.layout.ATTACK)


@pytest.mark.parametrize("backend", ["reference", "core"])
def test_engine_apply_action_takes_numpy_integers(backend: str) -> None:
    if backend == "core" and not core_available():
        pytest.skip("engine._core is not built")
    state = new_game(load_ruleset(), 2, seed=1) if backend == "reference" else new_fast_game(load_ruleset(), 2, seed=1)
    state.apply_action(np.int64(state.legal_actions()[0]))
    state.apply_action(np.int32(state.legal_actions()[-1]))
    assert state.current_player() == CHANCE and len(state.castle) == 2 and max(state.castle) >= 0
    for bad in (np.float64(1.0), np.bool_(True), True, "1"):
        with pytest.raises(IllegalActionError):
            state.apply_action(bad)


# ------------------------------------------------------------------------------------------------- OpenSpiel tools
def test_rl_environment_runs_random_agents() -> None:
    from open_spiel.python import rl_environment
    from open_spiel.python.algorithms import random_agent

    env = rl_environment.Environment("python_feudo", players=2, turns=1)
    n_actions = env.action_spec()["num_actions"]
    assert env.observation_spec()["info_state"] == tuple(env.game.information_state_tensor_shape())
    agents = [random_agent.RandomAgent(player_id=p, num_actions=n_actions) for p in range(2)]
    for episode in range(3):
        ts = env.reset()
        steps = 0
        while not ts.last():
            p = ts.observations["current_player"]
            assert len(ts.observations["info_state"][p]) == env.observation_spec()["info_state"][0]
            out = agents[p].step(ts)
            assert out.action in ts.observations["legal_actions"][p]
            ts = env.step([out.action])
            steps += 1
        for agent in agents:
            agent.step(ts)
        assert steps > 20 and sum(ts.rewards) == pytest.approx(1.0)


def test_evaluate_bots_plays_random_bots() -> None:
    from open_spiel.python.algorithms import evaluate_bots
    from open_spiel.python.bots import uniform_random

    game = load(3, turns=1)
    bots = [uniform_random.UniformRandomBot(p, np.random.RandomState(p)) for p in range(3)]
    returns = evaluate_bots.evaluate_bots(game.new_initial_state(), bots, np.random.RandomState(0))
    assert sum(returns) == pytest.approx(1.0) and all(r in (0.0, 1 / 3, 0.5, 1.0) or 0 <= r <= 1 for r in returns)
    cpp_bots = [pyspiel.make_uniform_random_bot(p, 10 + p) for p in range(3)]
    assert sum(pyspiel.evaluate_bots(game.new_initial_state(), cpp_bots, 5)) == pytest.approx(1.0)


def test_openspiel_ismcts_searches_the_game() -> None:
    from open_spiel.python.algorithms import ismcts, mcts

    game = load(2, turns=1)
    rs = np.random.RandomState(0)
    bot = ismcts.ISMCTSBot(game, mcts.RandomRolloutEvaluator(1, rs), uct_c=2.0, max_simulations=6,
                           random_state=rs)
    bot.set_resampler(lambda s, p: s.resample_from_infostate(p, bot.random_number))
    state = game.new_initial_state()
    for s in play_random(state, random.Random(5), stop=lambda s: s._f.s.phase == Phase.MOVE):
        pass
    assert not state.is_terminal()
    action = bot.step(state)
    assert action in state.legal_actions()


def test_trading_card_reveals_are_recorded_with_the_action_that_revealed_them() -> None:
    # Independent check on the reference engine: compare trade_revealed before and after every action.
    game = load(3, turns=3, backend="reference")
    state = game.new_initial_state()
    rng = random.Random(6)
    base = len(game.engine_game.ruleset.trading_cards) + 1
    seen = 0
    while not state.is_terminal():
        eng = state._f.s
        before = list(eng.trade_revealed)
        if state.is_chance_node():
            actions, probs = zip(*state.chance_outcomes())
            state.apply_action(rng.choices(actions, probs)[0])
        else:
            state.apply_action(rng.choice(state.legal_actions()))
        after, cards = eng.trade_revealed, eng.sel_trade
        want = sum((cards[q] + 1) * base ** q for q in range(3) if after[q] and not before[q])
        assert state._f.reveals[-1] == want
        seen += want > 0
    assert seen >= 3  # at least one reveal step a turn


def test_vs_openspiel_benchmark_prints_its_json() -> None:
    import json
    import os
    import subprocess
    import sys

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = subprocess.run([sys.executable, "benchmarks/vs_openspiel.py", "--games", "2", "--seconds", "0.01",
                          "--turns", "1", "--positions", "2", "--every", "3", "--json"],
                         cwd=root, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    summary = json.loads(out.stdout)
    assert summary["games"] == 2 and summary["players"] == 2
    lo, hi = summary["wilson95"]
    assert 0.0 <= lo <= summary["ours_win_rate"] <= hi <= 1.0
    assert summary["ours_score"] == pytest.approx(summary["ours_win_rate"] * 2)
    assert summary["speed"]["positions"] == 2
    assert summary["speed"]["ours_iterations"] > 0 and summary["speed"]["theirs_iterations"] >= 4
    for bad in (["--games", "0"], ["--seconds", "0"], ["--turns", "0"]):
        out = subprocess.run([sys.executable, "benchmarks/vs_openspiel.py", *bad], cwd=root, capture_output=True,
                             text=True, timeout=60)
        assert out.returncode == 2 and "Traceback" not in out.stderr and bad[0] in out.stderr
