"""The learned evaluation (feudo_ai.value, feudo_ai._value, feudo_ai.train): C and Python agree, the features are
public (R22), the weights file is validated, training is reproducible from its seed, and the search with
``evaluation="learned"`` stays deterministic and honest."""

from __future__ import annotations

import json
import math
import random

import numpy as np
import pytest

from engine import Phase, new_fast_game, sample_chance
from engine.core import CoreState
from feudo_ai import SearchOptions, _feudo_game, _value, advise
from feudo_ai.experimental import value
from feudo_ai.bots import make_bot
from feudo_ai.cli import main
from feudo_ai.experimental.train import TrainConfig, cross_entropy, dumps, fit, train
from search_helpers import advice_key, find_position, hidden_of_others, with_other_selections


def _random_positions(players: int, seed: int, every: float = 0.15):
    """Core states met along one random game (about ``every`` of them), turn 0 to the end."""
    state = new_fast_game(players=players, seed=seed)
    rng = random.Random(seed)
    out = []
    while not state.is_terminal():
        if state.is_chance_node():
            state.apply_action(sample_chance(state, rng))
        else:
            state.apply_action(rng.choice(state.legal_actions()))
        if not state.is_terminal() and rng.random() < every:
            out.append(state.clone())
    return out


def _random_model(seed: int) -> value.ValueModel:
    rng = np.random.default_rng(seed)
    return value.ValueModel({n: rng.normal(0, 0.3, value.NUM_FEATURES) for n in value.PLAYER_COUNTS})


# --- features: C and Python ---------------------------------------------------------------------------------------

def test_c_and_python_agree_on_the_feature_list() -> None:
    assert _value.num_features() == value.NUM_FEATURES == len(set(value.FEATURE_NAMES))


@pytest.mark.parametrize("players", [2, 3, 4])
def test_c_and_python_features_agree_on_random_positions(players: int) -> None:
    checked = 0
    phases = set()
    for seed in range(1, 9):
        for state in _random_positions(players, seed):
            c = np.array(_feudo_game.learned_features(state))
            py = value.features(state)
            ref = value.features(state.to_reference())  # the reference engine's state gives the same
            assert c.shape == (players, value.NUM_FEATURES)
            np.testing.assert_allclose(c, py, rtol=1e-12, atol=1e-12)
            np.testing.assert_allclose(py, ref, rtol=1e-12, atol=1e-12)
            checked += 1
            phases.add(state.phase)
    assert checked > 200 and len(phases) >= 6


@pytest.mark.parametrize("players", [2, 3, 4])
def test_c_and_python_rewards_agree_on_random_positions(players: int) -> None:
    model = _random_model(players)
    weights = value.c_model(model)
    for state in _random_positions(players, 40 + players, every=0.3):
        c = np.array(_feudo_game.learned_rewards(state, weights))
        py = model.rewards(state)
        np.testing.assert_allclose(c, py, rtol=1e-9, atol=1e-12)
        assert abs(c.sum() - 1.0) < 1e-9 and (c >= 0).all()
        sharp = np.array(_feudo_game.learned_rewards(state, weights, 0.25))  # the search's temperature option
        np.testing.assert_allclose(sharp, model.rewards(state, temperature=0.25), rtol=1e-9, atol=1e-12)
        if not state.tiebreak:  # every seat in play: an independent check, the softmax of 4 x the utilities
            u = model.utilities(state)
            e = np.exp(4 * (u - u.max()))
            np.testing.assert_allclose(sharp, e / e.sum(), rtol=1e-9, atol=1e-12)


def test_features_by_hand_on_a_known_position() -> None:
    """Independent check of a few features: VP, lead and living tokens set by hand."""
    state = _random_positions(2, 3)[40]
    d = state.to_dict()
    d["vp"] = [7, 3]
    d["loc"][1][0] = -2  # seat 1's first token dies
    from engine.serialize import state_from_dict

    s = CoreState.from_reference(state_from_dict(state.game, d))
    f = np.array(_feudo_game.learned_features(s))
    i = value.FEATURE_NAMES.index
    assert f[0, i("vp")] == 7 and f[1, i("vp")] == 3
    assert f[0, i("lead")] == 4 and f[1, i("lead")] == -4
    assert f[0, i("leader")] == 1 and f[1, i("leader")] == 0
    assert f[1, i("alive")] == sum(1 for x in d["loc"][1] if x != -2)
    prog = min(1.0, max(0.0, (d["turn"] - 1) / state.game.ruleset.turns))
    assert f[0, i("vp_x_prog")] == pytest.approx(7 * prog)


def test_r22_learned_evaluation_is_the_same_in_every_world() -> None:
    """Features and rewards read public facts only: every determinized world of a seat gives the same."""
    state = next(s for s in _random_positions(4, 5, every=1.0)
                 if s.phase == Phase.MOVE and hidden_of_others(s.to_reference(), s.current_player()))
    seat = state.current_player()
    weights = value.c_model(_random_model(9))
    worlds = [_feudo_game.determinize(state, seat, seed) for seed in range(12)]
    assert len({w.to_json() for w in worlds}) > 1, "the worlds must differ in hidden selections"
    feats = {json.dumps(_feudo_game.learned_features(w)) for w in worlds + [state]}
    rewards = {json.dumps(_feudo_game.learned_rewards(w, weights)) for w in worlds + [state]}
    assert len(feats) == 1 and len(rewards) == 1


def test_tiebreak_rewards_only_seats_in_play() -> None:
    """R19: in a tie-break only the tied leaders can win; the others get 0."""
    state = new_fast_game(players=3, seed=6)  # a random game of this seed reaches a tie-break
    rng = random.Random(6)
    while not (state.tiebreak and not all(state.active)):
        assert not state.is_terminal()
        state.apply_action(sample_chance(state, rng) if state.is_chance_node() else rng.choice(state.legal_actions()))
    out = [p for p in range(3) if not state.active[p]]
    model = _random_model(3)
    r = np.array(_feudo_game.learned_rewards(state, value.c_model(model)))
    assert all(r[p] == 0 for p in out) and r.sum() == pytest.approx(1.0) and r.max() > 0
    np.testing.assert_allclose(r, model.rewards(state), atol=1e-12)


# --- the weights file ---------------------------------------------------------------------------------------------

def test_the_shipped_model_loads_and_says_how_it_was_made() -> None:
    m = value.load_model()
    assert set(m.weights) == {2, 3, 4}
    t = m.meta["training"]
    assert isinstance(t["seed"], int) and t["games"] >= 1 and t["positions"] >= 1 and t["command"].startswith(
        "feudo train")
    assert all(np.isfinite(w).all() and w.shape == (value.NUM_FEATURES,) for w in m.weights.values())


def _good() -> dict:
    return value.ValueModel({n: np.full(value.NUM_FEATURES, 0.1) for n in value.PLAYER_COUNTS}).to_dict()


@pytest.mark.parametrize("change, field", [
    (lambda d: d.update(format="feudo-value/0"), "format"),
    (lambda d: d.pop("format"), "format"),
    (lambda d: d["features"].reverse(), "features"),
    (lambda d: d["features"].pop(), "features"),
    (lambda d: d.update(weights=[1, 2]), "weights"),
    (lambda d: d["weights"].pop("3"), "weights"),
    (lambda d: d["weights"]["2"].pop(), "weights.2"),
    (lambda d: d["weights"].update({"4": "x"}), "weights.4"),
    (lambda d: d["weights"]["3"].__setitem__(5, float("nan")), "weights.3[5] (leader)"),
    (lambda d: d["weights"]["3"].__setitem__(0, float("inf")), "weights.3[0] (vp)"),
    (lambda d: d["weights"]["2"].__setitem__(1, True), "weights.2[1] (vp_x_prog)"),
    (lambda d: d["weights"]["2"].__setitem__(2, "1"), "weights.2[2] (lead)"),
])
def test_a_bad_weights_file_is_refused_naming_the_field(tmp_path, change, field) -> None:
    d = _good()
    change(d)
    path = tmp_path / "v.json"
    path.write_text(json.dumps(d))
    with pytest.raises(ValueError) as e:
        value.load_model(path)
    assert f": {field}: " in str(e.value) and str(path) in str(e.value)


def test_unreadable_or_non_json_weights_file(tmp_path) -> None:
    with pytest.raises(ValueError, match="cannot read"):
        value.load_model(tmp_path / "missing.json")
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(ValueError, match="not JSON"):
        value.load_model(tmp_path / "bad.json")
    (tmp_path / "list.json").write_text("[]")
    with pytest.raises(ValueError, match="expected a JSON object"):
        value.load_model(tmp_path / "list.json")


def test_c_weights_refuse_bad_shapes_and_numbers() -> None:
    with pytest.raises(ValueError, match="weights: expected shape"):
        _value.ValueWeights(np.zeros((2, value.NUM_FEATURES)))
    bad = np.zeros((3, value.NUM_FEATURES))
    bad[1, 2] = np.nan
    with pytest.raises(ValueError, match="finite"):
        _value.ValueWeights(bad)
    w = np.arange(3 * value.NUM_FEATURES, dtype=float).reshape(3, -1)
    np.testing.assert_array_equal(_value.ValueWeights(w).weights(), w)


def test_good_file_round_trips(tmp_path) -> None:
    m = value.model_from_dict(_good())
    path = tmp_path / "v.json"
    path.write_text(dumps(m))
    np.testing.assert_array_equal(value.load_model(path).weights[3], m.weights[3])


# --- training ------------------------------------------------------------------------------------------------------

def test_fit_recovers_known_weights_on_synthetic_data() -> None:
    """The conditional logit fitted to outcomes drawn from known weights finds them again (an independent check
    of fit: the data come from numpy's generator, not from the code under test)."""
    rng = np.random.default_rng(5)
    N, n, D = 20000, 3, 4
    X = rng.normal(0, 1, (N, n, D)) * np.array([1.0, 2.0, 0.5, 3.0]) + np.array([0.0, 5.0, 1.0, -2.0])
    w_true = np.array([0.8, -0.4, 1.5, 0.2])
    u = X @ w_true
    P = np.exp(u - u.max(axis=1, keepdims=True))
    P /= P.sum(axis=1, keepdims=True)
    winners = np.array([rng.choice(n, p=p) for p in P])
    Y = np.eye(n)[winners]
    M = np.ones((N, n), dtype=bool)
    w = fit(X, M, Y, l2=0.0)
    np.testing.assert_allclose(w, w_true, atol=0.08)
    assert cross_entropy(P, Y) < math.log(n)


def test_fit_leaves_a_constant_feature_at_zero() -> None:
    rng = np.random.default_rng(1)
    X = rng.normal(0, 1, (500, 2, 3))
    X[:, :, 1] = 4.0
    Y = np.eye(2)[rng.integers(0, 2, 500)]
    w = fit(X, np.ones((500, 2), dtype=bool), Y, l2=1.0)
    assert w[1] == 0.0 and np.isfinite(w).all()


def _tiny(seed: int, jobs: int = 1) -> TrainConfig:
    return TrainConfig(games=6, players=(2, 3, 4), bots=("random",), seed=seed, jobs=jobs,
                       holdout=2, l2=1.0, date="2026-01-01")


def test_training_is_reproducible_from_its_seed() -> None:
    a, report = train(_tiny(7))
    b, _ = train(_tiny(7, jobs=2))  # processes do not change the games
    c, _ = train(_tiny(8))
    assert dumps(a) == dumps(b)
    assert dumps(a) != dumps(c)
    assert report["games"] == 6 and report["positions"] > 0
    for n in ("2", "3", "4"):
        e = report["by_players"][n]
        assert e["train_games"] == 1 and e["validation_games"] == 1  # rounds 0 and 2 held out of 0, 1
        assert e["validation_loss"] > 0 and e["validation_loss_uniform"] == pytest.approx(math.log(int(n)))
    # what is written loads, and says how it was made
    m = value.model_from_dict(json.loads(dumps(a)))
    assert m.meta["training"]["seed"] == 7 and m.meta["training"]["date"] == "2026-01-01"


def test_bad_training_options_are_refused_naming_the_field() -> None:
    for kw, field in ((dict(games=0), "games"), (dict(players=(5,)), "players"), (dict(bots=()), "bots"),
                      (dict(seed=-1), "seed"), (dict(jobs=0), "jobs"), (dict(holdout=1), "holdout"),
                      (dict(l2=-1.0), "l2")):
        with pytest.raises(ValueError, match=f"^{field}: "):
            TrainConfig(**kw)
    with pytest.raises(ValueError, match="unknown bot"):
        TrainConfig(bots=("nosuchbot",))


def test_feudo_train_command_writes_a_loadable_file(tmp_path, capsys) -> None:
    out = tmp_path / "m" / "value.json"
    rc = main(["train", "--games", "3", "--players", "2,3,4", "--bots", "random", "--seed", "4", "--holdout", "0",
               "--out", str(out), "--json", "--quiet"])
    assert rc == 0
    report = json.loads(capsys.readouterr().out)
    assert report["games"] == 3 and report["out"] == str(out)
    m = value.load_model(out)
    assert m.meta["training"]["command"].startswith("feudo train --games 3 --players 2,3,4 --bots random --seed 4")


@pytest.mark.parametrize("argv, msg", [
    (["--players", "5"], "players"), (["--bots", "nosuch"], "unknown bot"), (["--games", "0"], "games"),
    (["--players", "x"], "--players"),
])
def test_feudo_train_bad_input_is_one_line(argv, msg, tmp_path, capsys) -> None:
    assert main(["train", "--out", str(tmp_path / "v.json"), "--quiet", *argv]) == 2
    err = capsys.readouterr().err
    assert msg in err and "Traceback" not in err and not (tmp_path / "v.json").exists()


# --- the search with the learned evaluation ------------------------------------------------------------------------

def test_evaluation_option_is_validated() -> None:
    with pytest.raises(ValueError, match="^evaluation: expected one of handmade, learned"):
        SearchOptions(evaluation="neural")
    with pytest.raises(ValueError, match="^evaluation: 'learned' is only available with backend='c'"):
        SearchOptions(evaluation="learned", backend="python")
    with pytest.raises(ValueError, match="evaluation"):
        make_bot("ismcts:evaluation=nope", 1)
    with pytest.raises(ValueError, match="evaluation: 'learned' needs"):
        _feudo_game.FeudoGame(new_fast_game(players=2, seed=1), 0, "uniform", 1.0, "learned", None)


def _decision(players: int = 2):
    return find_position(lambda s: s.turn >= 3 and s.phase == Phase.MOVE and len(s.legal_actions()) > 2,
                         players=players)


@pytest.mark.parametrize("algorithm", ["ismcts", "pimc"])
def test_learned_search_is_deterministic_at_fixed_iterations(algorithm: str) -> None:
    state = _decision()
    opts = SearchOptions(iterations=600, seed=3, evaluation="learned", algorithm=algorithm)
    a, b = advise(state, options=opts), advise(state, options=opts)
    assert advice_key(a) == advice_key(b)
    h = advise(state, options=opts.replace(evaluation="handmade"))
    # the leaves are evaluated differently, so the root statistics differ
    assert [x.win_probability for x in h.alternatives] != [x.win_probability for x in a.alternatives]


@pytest.mark.parametrize("phase", [Phase.MOVE, Phase.REVEAL, Phase.SELECT], ids=lambda p: p.name)
def test_r22_learned_search_ignores_hidden_selections(phase: Phase) -> None:
    """Two games that differ only in the opponents' hidden cards give the same advice with the learned
    evaluation, for the search and the bot."""
    def pred(s):
        seat = s.current_player()
        if not (s.phase == phase and len(s.legal_actions()) > 1 and hidden_of_others(s, seat) and s.turn >= 2):
            return False
        return with_other_selections(s, seat, random.Random(int(phase))).to_dict() != s.to_dict()

    state = find_position(pred, players=4)
    seat = state.current_player()
    other = with_other_selections(state, seat, random.Random(int(phase)))
    assert other.to_dict() != state.to_dict() and other.observation(seat) == state.observation(seat)
    for algorithm in ("ismcts", "pimc"):
        opts = SearchOptions(iterations=300, seed=11, evaluation="learned", algorithm=algorithm)
        assert advice_key(advise(state, seat, opts)) == advice_key(advise(other, seat, opts))
    spec = "ismcts:iterations=300:evaluation=learned"
    assert make_bot(spec, 5)(state) == make_bot(spec, 5)(other)
