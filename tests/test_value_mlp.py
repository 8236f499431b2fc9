"""The learned evaluation's MLP kind and model files given by path (feudo_ai.experimental.value, feudo_ai._value,
feudo_ai.experimental.train, the setting ``evaluation=FILE``): the file is validated naming the field, C and numpy
agree, the MLP is what its formula says, training is reproducible, a file reaches the search through a bot spec,
SearchOptions, ``feudo advise`` and ``feudo serve``, and a server never opens a file a client names."""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import shutil

import numpy as np
import pytest

from engine import Phase, new_fast_game, sample_chance
from feudo_ai import SearchOptions, _feudo_game, _value, advise
from feudo_ai.bots import make_bot
from feudo_ai.cli import main
from feudo_ai.experimental import value
from feudo_ai.experimental.train import TrainConfig, cross_entropy, dumps, fit, fit_mlp, train
from feudo_ai.matches.errors import InvalidArgument
from feudo_ai.matches.limits import BotLimits
from feudo_ai.matches.service import MatchService
from feudo_ai.wire.advisor import ServiceConfig, service_options
from search_helpers import advice_key, find_position


def _random_positions(players: int, seed: int, every: float = 0.2):
    state = new_fast_game(players=players, seed=seed)
    rng = random.Random(seed)
    out = []
    while not state.is_terminal():
        state.apply_action(sample_chance(state, rng) if state.is_chance_node() else rng.choice(state.legal_actions()))
        if not state.is_terminal() and rng.random() < every:
            out.append(state.clone())
    return out


def _random_mlp(seed: int, hidden: int = 12) -> value.ValueModel:
    rng = np.random.default_rng(seed)
    layers = {n: value.MLPLayer(rng.normal(0, 2, value.NUM_FEATURES), rng.uniform(0.5, 3, value.NUM_FEATURES),
                                rng.normal(0, 0.5, (hidden, value.NUM_FEATURES)), rng.normal(0, 0.5, hidden),
                                rng.normal(0, 1, hidden), float(rng.normal()))
              for n in value.PLAYER_COUNTS}
    return value.model_from_dict(value.ValueModel(None, {}, layers).to_dict())


def _random_linear(seed: int) -> value.ValueModel:
    rng = np.random.default_rng(seed)
    return value.ValueModel({n: rng.normal(0, 0.3, value.NUM_FEATURES) for n in value.PLAYER_COUNTS})


def _write(tmp_path, model: value.ValueModel, name: str = "model.json"):
    path = tmp_path / name
    path.write_text(dumps(model), encoding="utf-8")
    return path


# --- C and numpy ----------------------------------------------------------------------------------------------------

def test_c_and_python_agree_on_the_largest_hidden_layer() -> None:
    assert _value.max_hidden() == value.MAX_HIDDEN


@pytest.mark.parametrize("kind", ["linear", "mlp"])
@pytest.mark.parametrize("players", [2, 3, 4])
def test_c_and_numpy_rewards_agree_on_random_positions(kind: str, players: int) -> None:
    model = _random_mlp(players) if kind == "mlp" else _random_linear(players)
    weights = value.c_model(model)
    assert weights.kind == kind
    checked = 0
    for seed in range(1, 5):
        for state in _random_positions(players, seed):
            c = np.array(_feudo_game.learned_rewards(state, weights))
            np.testing.assert_allclose(c, model.rewards(state), rtol=0, atol=1e-9)
            np.testing.assert_allclose(np.array(_feudo_game.learned_rewards(state, weights, 0.4)),
                                       model.rewards(state, 0.4), rtol=0, atol=1e-9)
            checked += 1
    assert checked > 50


def test_mlp_utility_is_its_formula() -> None:
    """An independent check of the MLP: its utility written out with Python floats, one unit at a time."""
    model = _random_mlp(3, hidden=5)
    layer = model.mlp[3]
    c = value.c_model(model)
    f = [float(x) for x in np.random.default_rng(4).normal(0, 3, value.NUM_FEATURES)]
    expected = layer.b2
    for i in range(5):
        a = layer.b1[i] + sum(layer.w1[i][j] * (f[j] - layer.mean[j]) / layer.scale[j]
                              for j in range(value.NUM_FEATURES))
        expected += layer.w2[i] * math.tanh(a)
    assert c.utility(3, f) == pytest.approx(expected, rel=1e-12)
    assert layer.utilities(np.array(f)) == pytest.approx(expected, rel=1e-12)


def test_c_mlp_weights_refuse_bad_shapes_and_numbers() -> None:
    good = [{"mean": np.zeros(value.NUM_FEATURES), "scale": np.ones(value.NUM_FEATURES),
             "w1": np.zeros((2, value.NUM_FEATURES)), "b1": np.zeros(2), "w2": np.zeros(2), "b2": 0.0}] * 3
    _value.ValueWeights(mlp=good)
    for key, bad, msg in (("w1", np.zeros((value.MAX_HIDDEN + 1, value.NUM_FEATURES)), "rows"),
                          ("b1", np.zeros(3), "shape"), ("scale", np.zeros(value.NUM_FEATURES), "positive"),
                          ("w2", np.array([0.0, np.inf]), "finite")):
        layers = [dict(good[0]), dict(good[0]), {**good[0], key: bad}]
        with pytest.raises(ValueError, match=rf"mlp\[2\]\.{key}: .*{msg}"):
            _value.ValueWeights(mlp=layers)
    with pytest.raises(ValueError, match="either"):
        _value.ValueWeights()


# --- the file -------------------------------------------------------------------------------------------------------

def _good_mlp() -> dict:
    return _random_mlp(1, hidden=3).to_dict()


@pytest.mark.parametrize("change, field", [
    (lambda d: d.update(format="feudo-value/3"), "format"),
    (lambda d: d.update(kind="forest"), "kind"),
    (lambda d: d["features"].pop(), "features"),
    (lambda d: d.update(activation="relu"), "activation"),
    (lambda d: d.update(layers=[]), "layers"),
    (lambda d: d["layers"].pop("4"), "layers"),
    (lambda d: d["layers"].update({"2": 7}), "layers.2"),
    (lambda d: d["layers"]["2"].update(hidden=0), "layers.2.hidden"),
    (lambda d: d["layers"]["2"].update(hidden=value.MAX_HIDDEN + 1), "layers.2.hidden"),
    (lambda d: d["layers"]["3"].update(hidden=True), "layers.3.hidden"),
    (lambda d: d["layers"]["3"].pop("b2"), "layers.3.b2"),
    (lambda d: d["layers"]["3"]["mean"].__setitem__(2, float("nan")), "layers.3.mean[2] (lead)"),
    (lambda d: d["layers"]["4"]["scale"].__setitem__(0, 0.0), "layers.4.scale[0] (vp)"),
    (lambda d: d["layers"]["4"]["scale"].pop(), "layers.4.scale"),
    (lambda d: d["layers"]["2"]["w1"].pop(), "layers.2.w1"),
    (lambda d: d["layers"]["2"]["w1"][1].append(1.0), "layers.2.w1[1]"),
    (lambda d: d["layers"]["2"]["w1"][0].__setitem__(4, "x"), "layers.2.w1[0][4]"),
    (lambda d: d["layers"]["2"]["b1"].append(0.0), "layers.2.b1"),
    (lambda d: d["layers"]["2"]["w2"].__setitem__(0, float("inf")), "layers.2.w2[0]"),
    (lambda d: d["layers"]["2"].update(b2=None), "layers.2.b2"),
])
def test_a_bad_mlp_file_is_refused_naming_the_field(tmp_path, change, field) -> None:
    d = _good_mlp()
    value.model_from_dict(d)  # the unchanged one is good
    change(d)
    path = tmp_path / "m.json"
    path.write_text(json.dumps(d))
    with pytest.raises(ValueError) as e:
        value.load_model(path)
    assert f": {field}: " in str(e.value) and str(path) in str(e.value)


def test_both_formats_load_and_round_trip(tmp_path) -> None:
    linear = value.load_model()  # the shipped linear model: feudo-value/1
    assert linear.kind == "linear" and json.loads(value.DEFAULT_MODEL_PATH.read_text())["format"] == value.FORMAT_V1
    as_v2 = {**linear.to_dict(), "format": value.FORMAT, "kind": "linear"}  # /2 reads a linear model too
    np.testing.assert_array_equal(value.model_from_dict(as_v2).weights[2], linear.weights[2])
    m = _random_mlp(6)
    back = value.load_model(_write(tmp_path, m))
    assert back.kind == "mlp" and json.loads(dumps(m))["format"] == "feudo-value/2"
    for n in value.PLAYER_COUNTS:
        np.testing.assert_array_equal(back.mlp[n].w1, m.mlp[n].w1)


def test_a_file_over_the_size_bound_is_refused_unread(tmp_path) -> None:
    path = tmp_path / "big.json"
    path.write_text(" " * (value.MAX_FILE_BYTES + 1))
    with pytest.raises(ValueError, match="size: larger than"):
        value.load_model(path)
    with pytest.raises(ValueError, match="^evaluation: .*size: "):
        SearchOptions(evaluation=str(path))


# --- training -------------------------------------------------------------------------------------------------------

def test_fit_mlp_learns_what_a_linear_model_cannot() -> None:
    """Outcomes drawn (numpy's generator) from a utility that is not linear in the features, |x0| - |x1|: the MLP's
    held-out loss beats the linear fit's, and nears the loss of the true probabilities."""
    rng = np.random.default_rng(2)

    def draw(N):
        X = rng.normal(0, 1, (N, 2, 3))
        u = 2.0 * (np.abs(X[:, :, 0]) - np.abs(X[:, :, 1]))
        P = np.exp(u - u.max(axis=1, keepdims=True))
        P /= P.sum(axis=1, keepdims=True)
        Y = np.eye(2)[(rng.random(N) > P[:, 0]).astype(int)]
        return X, np.ones((N, 2), dtype=bool), Y, P

    X, M, Y, _ = draw(4000)
    Xv, Mv, Yv, Pv = draw(2000)
    layer, report = fit_mlp(X, M, Y, l2=1.0, hidden=8, seed=1, lr=0.03, steps=1500, patience=300,
                            validation=(Xv, Mv, Yv))
    u = layer.utilities(Xv)
    P = np.exp(u - u.max(axis=1, keepdims=True))
    P /= P.sum(axis=1, keepdims=True)
    w = fit(X, M, Y, l2=1.0)
    ul = Xv @ w
    Pl = np.exp(ul - ul.max(axis=1, keepdims=True))
    Pl /= Pl.sum(axis=1, keepdims=True)
    mlp_loss, linear_loss, best = cross_entropy(P, Yv), cross_entropy(Pl, Yv), cross_entropy(Pv, Yv)
    assert linear_loss > math.log(2) - 0.02  # no linear signal
    assert mlp_loss < linear_loss - 0.1 and mlp_loss < best + 0.05
    assert 0 < report["best_step"] <= report["steps"] <= 1500


def _tiny_mlp(seed: int, **kw) -> TrainConfig:
    return TrainConfig(**{**dict(games=4, players=(2,), bots=("ismcts:iterations=20:playout_turns=1",), seed=seed,
                                 holdout=2, model="mlp", rounds=2, hidden=4, steps=60, patience=30,
                                 date="2026-01-01"), **kw})


def test_mlp_training_is_reproducible_and_records_its_rounds(monkeypatch) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1767225600")  # a reproducible build: no wall times in the file
    a, report = train(_tiny_mlp(3))
    b, _ = train(_tiny_mlp(3))
    c, _ = train(_tiny_mlp(4))
    assert dumps(a) == dumps(b) and dumps(a) != dumps(c)
    t = json.loads(dumps(a))["training"]
    assert t["seed"] == 3 and t["rounds"] == 2 and t["games"] == 8 and t["untrained_players"] == [3, 4]
    assert t["command"].startswith("feudo train --model mlp --rounds 2 --hidden 4")
    r0, r1 = t["per_round"]
    assert r0["bots"] == ["ismcts:iterations=20:playout_turns=1"]
    assert r1["bots"] == ["ismcts:iterations=20:playout_turns=1:evaluation=<model 1>"]  # the model of round 0
    assert r0["games"] == r1["games"] == 4 and r0["positions"] > 0 and "seconds" not in r0
    v = r1["validation"]["2"]
    assert v["train_games"] == 4 and v["validation_games"] == 4  # the held-out games of both rounds
    assert v["validation_loss_uniform"] == pytest.approx(math.log(2)) and v["validation_loss_linear"] > 0
    assert report["games"] == 8
    # a player count without games gets the uniform rewards
    state = _random_positions(3, 1)[5]
    np.testing.assert_allclose(a.rewards(state), [1 / 3] * 3)
    monkeypatch.delenv("SOURCE_DATE_EPOCH")
    d, _ = train(_tiny_mlp(3, rounds=1))
    assert d.meta["training"]["per_round"][0]["seconds"] >= 0  # wall times recorded otherwise


def test_bad_mlp_training_options_are_refused_naming_the_field() -> None:
    for kw, field in ((dict(model="tree"), "model"), (dict(rounds=0), "rounds"), (dict(hidden=0), "hidden"),
                      (dict(hidden=value.MAX_HIDDEN + 1), "hidden"), (dict(lr=0.0), "lr"), (dict(steps=0), "steps"),
                      (dict(patience=0), "patience"),
                      (dict(bots=("ismcts:iterations=20:evaluation=learned",)), "bots")):
        with pytest.raises(ValueError, match=f"^{field}: "):
            _tiny_mlp(1, **kw)
    with pytest.raises(ValueError, match="^rounds: "):
        TrainConfig(rounds=2)  # linear: one round


def test_feudo_train_mlp_command(tmp_path, capsys) -> None:
    out = tmp_path / "mlp.json"
    rc = main(["train", "--model", "mlp", "--rounds", "2", "--games", "2", "--players", "2", "--bots",
               "ismcts:iterations=20:playout_turns=1", "--hidden", "3", "--steps", "20", "--holdout", "0",
               "--seed", "2", "--out", str(out), "--json", "--quiet"])
    assert rc == 0
    report = json.loads(capsys.readouterr().out)
    assert report["games"] == 4 and len(report["rounds"]) == 2
    assert value.load_model(out).kind == "mlp"
    assert (tmp_path / "mlp.rounds" / "round1.json").exists()  # the model round 1's bots played with
    assert main(["train", "--hidden", "3", "--out", str(tmp_path / "x.json"), "--quiet"]) == 2
    assert "--hidden: for --model mlp only" in capsys.readouterr().err


# --- evaluation=FILE ------------------------------------------------------------------------------------------------

def _decision():
    return find_position(lambda s: s.turn >= 3 and s.phase == Phase.MOVE and len(s.legal_actions()) > 2, players=2)


def test_a_model_file_plays_as_the_same_model_by_name(tmp_path) -> None:
    """A copy of the shipped linear model given by path searches exactly as evaluation="learned"; an MLP file
    searches otherwise; through SearchOptions and through a bot spec."""
    copy = tmp_path / "linear copy.json"
    shutil.copy(value.DEFAULT_MODEL_PATH, copy)
    state = _decision()
    opts = SearchOptions(iterations=400, seed=3, evaluation="learned")
    by_file = opts.replace(evaluation=str(copy))
    assert by_file.evaluation == str(copy) and by_file.to_dict()["evaluation"] == str(copy)
    assert advice_key(advise(state, options=by_file)) == advice_key(advise(state, options=opts))
    mlp = _write(tmp_path, _random_mlp(8))
    other = advise(state, options=opts.replace(evaluation=str(mlp)))
    assert [x.win_probability for x in other.alternatives] != \
        [x.win_probability for x in advise(state, options=opts).alternatives]
    spec = f"ismcts:iterations=300:playout_turns=1:evaluation={mlp}"
    bot = make_bot(spec, 5)
    assert bot.options_for(2).evaluation == str(mlp)
    assert bot(state) == make_bot(spec, 5)(state) and bot(state) in state.legal_actions()


def test_a_bad_evaluation_path_is_refused_naming_evaluation(tmp_path) -> None:
    with pytest.raises(ValueError, match="^evaluation: expected one of handmade, learned or a model file's path; "
                                         ".*cannot read"):
        SearchOptions(evaluation=str(tmp_path / "missing.json"))
    bad = tmp_path / "bad.json"
    d = _good_mlp()
    d["layers"]["2"]["hidden"] = 0
    bad.write_text(json.dumps(d))
    with pytest.raises(ValueError, match=r"^evaluation: .*layers\.2\.hidden"):
        SearchOptions(evaluation=str(bad))
    with pytest.raises(ValueError, match="evaluation: .*cannot read"):
        make_bot(f"ismcts:evaluation={tmp_path / 'nope.json'}", 1)
    with pytest.raises(ValueError, match="^evaluation: expected one of"):
        SearchOptions(evaluation="")
    good = _write(tmp_path, _random_mlp(2))
    with pytest.raises(ValueError, match="only available with backend='c'"):
        SearchOptions(evaluation=str(good), backend="python")


def test_a_model_without_the_games_player_count_is_refused(tmp_path) -> None:
    """A model trained on 2-player games only (the shipped MLP) has uniform rewards in 3 and 4 players: a search
    of those is refused, naming evaluation, rather than searching blind."""
    shipped = str(value.DEFAULT_MODEL_PATH.parent / "value_mlp_v1.json")
    assert value.model_file(shipped).meta["training"]["untrained_players"] == [3, 4]
    state = find_position(lambda s: s.turn >= 2 and s.phase == Phase.MOVE and len(s.legal_actions()) > 2, players=4)
    with pytest.raises(ValueError, match="^evaluation: .*without 4-player games"):
        advise(state, options=SearchOptions(iterations=50, evaluation=shipped))
    two = _decision()
    assert advise(two, options=SearchOptions(iterations=50, evaluation=shipped)).alternatives


def test_the_shipped_4_player_mlp_searches_4_players_only_and_deterministically() -> None:
    """value_mlp_4p_v1.json (docs/search.md, "The shipped 4-player MLP"): trained on 4-player games only; a 4-player search
    with it gives the same advice for the same seed and iterations, a 2-player one is refused."""
    shipped = str(value.DEFAULT_MODEL_PATH.parent / "value_mlp_4p_v1.json")
    model = value.model_file(shipped)
    assert model.kind == "mlp" and model.meta["training"]["untrained_players"] == [2, 3]
    assert np.any(model.mlp[4].w1 != 0) and not np.any(model.mlp[2].w1 != 0)
    state = find_position(lambda s: s.turn >= 2 and s.phase == Phase.MOVE and len(s.legal_actions()) > 2, players=4)
    a = advise(state, options=SearchOptions(iterations=200, seed=7, evaluation=shipped))
    b = advise(state, options=SearchOptions(iterations=200, seed=7, evaluation=shipped))
    assert a.alternatives and [x.action for x in a.alternatives] == [x.action for x in b.alternatives]
    assert [x.visits for x in a.alternatives] == [x.visits for x in b.alternatives]
    with pytest.raises(ValueError, match="^evaluation: .*without 2-player games"):
        advise(_decision(), options=SearchOptions(iterations=50, evaluation=shipped))


def test_a_model_file_is_read_once_until_it_changes(tmp_path) -> None:
    path = _write(tmp_path, _random_mlp(1))
    a = value.model_file(path)
    assert value.model_file(path) is a and value.c_model_file(path) is value.c_model_file(path)
    path.write_text(dumps(_random_mlp(2, hidden=7)), encoding="utf-8")
    os.utime(path, ns=(1, 1))  # a new mtime (and size): read again
    b = value.model_file(path)
    assert b is not a and b.mlp[2].w1.shape[0] == 7


# --- the services ---------------------------------------------------------------------------------------------------

def test_feudo_serve_and_advise_take_an_evaluation_file(tmp_path) -> None:
    from feudo_ai.wire.cli import add_arguments, settings_from_args

    path = str(_write(tmp_path, _random_mlp(3)))
    assert service_options("ismcts", 2, {"iterations": 10}, evaluation=path).evaluation == path
    assert service_options("ismcts", 4, {"iterations": 10}, evaluation=path).margin_weight == 0  # hand-made only
    assert service_options("ismcts", 2, {"iterations": 10}).evaluation == "handmade"
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    settings = settings_from_args(parser.parse_args(["--evaluation", path]))
    assert settings.config.evaluation == path and settings.config.evaluation_files == (path,)
    assert settings_from_args(parser.parse_args([])).config.evaluation_files == ()
    with pytest.raises(ValueError, match="^evaluation: .*cannot read"):
        settings_from_args(parser.parse_args(["--evaluation", str(tmp_path / "missing.json")]))
    with pytest.raises(ValueError, match="^evaluation: "):
        ServiceConfig(evaluation="nope")


def test_feudo_advise_evaluation_file(tmp_path, capsys) -> None:
    state = _decision()
    position = tmp_path / "position.json"
    position.write_text(state.to_reference().to_json() if hasattr(state, "to_reference") else state.to_json())
    seat = str(state.current_player())
    args = ["advise", str(position), "--seat", seat, "--iterations", "300", "--json"]
    assert main(args + ["--evaluation", "learned"]) == 0
    learned = json.loads(capsys.readouterr().out)
    copy = tmp_path / "copy.json"
    shutil.copy(value.DEFAULT_MODEL_PATH, copy)
    assert main(args + ["--evaluation", str(copy)]) == 0
    assert json.loads(capsys.readouterr().out)["alternatives"] == learned["alternatives"]
    assert main(args + ["--evaluation", str(tmp_path / "missing.json")]) == 2
    assert "evaluation" in capsys.readouterr().err


def test_a_server_never_opens_a_model_file_a_client_names(tmp_path, monkeypatch) -> None:
    """A hosted match's bot may name only the operator's file (feudo serve --evaluation); any other path is
    refused from the spec's text, before anything opens it."""
    allowed = str(_write(tmp_path, _random_mlp(4)))
    other = str(_write(tmp_path, _random_mlp(5), "other.json"))
    limits = BotLimits(evaluation_files=(allowed,))
    svc = MatchService(":memory:", bot_limits=limits)
    try:
        opened = []
        real = value.load_model
        monkeypatch.setattr(value, "load_model", lambda p=None: opened.append(str(p)) or real(p))
        with pytest.raises(InvalidArgument, match=r"^seats\[1\]: evaluation: .*allowed: " + allowed):
            svc.create_match({"players": 2, "seats": ["external", f"ismcts:iterations=50:evaluation={other}"],
                              "seed": 1})
        with pytest.raises(InvalidArgument, match=r"^seats\[0\]: evaluation: "):
            svc.create_match({"players": 2, "seats": ["ismcts:evaluation=/etc/passwd", "external"], "seed": 1})
        assert other not in opened and "/etc/passwd" not in opened
        r = svc.create_match({"players": 2, "seats": ["external", f"ismcts:iterations=50:evaluation={allowed}"],
                              "seed": 1})
        assert r["match_id"] and set(r["tokens"]) == {0}
        svc.create_match({"players": 2, "seats": ["external", "ismcts:iterations=50:evaluation=learned"], "seed": 1})
    finally:
        svc.close()
    with pytest.raises(InvalidArgument, match="allowed: none"):
        BotLimits().check_files(f"ismcts:evaluation={allowed}", "seats[0]")


# --- handmade_weight: the hand-made evaluation mixed into a learned one -------------------------------------------

@pytest.mark.parametrize("players", [2, 4])
def test_handmade_weight_mixes_the_two_evaluations_rewards(players: int) -> None:
    """The search's leaf rewards with a learned model and handmade_weight w are (1 - w) x the model's rewards
    (checked against numpy) plus w x the hand-made ones (checked against evaluate_state, itself checked against
    feudo_ai.evaluate), the hand-made part with its margin; w 0 is the model alone, bit for bit."""
    model = _random_mlp(players + 20)
    weights = value.c_model(model)
    checked = 0
    for state in _random_positions(players, 31):
        def leaf(w: float, margin: float = 0.0) -> np.ndarray:
            game = _feudo_game.FeudoGame(state.clone(), 0, evaluation="learned", value=weights,
                                         margin_weight=margin, handmade_weight=w)
            return np.array(game.leaf_rewards(state))
        learned = np.array(model.rewards(state))
        hand = np.array(_feudo_game.evaluate_state(state)[1])
        wide = np.array(_feudo_game.evaluate_state(state, 1.0, 0.5, 4.0)[1])
        assert list(leaf(0.0)) == _feudo_game.learned_rewards(state, weights)
        np.testing.assert_allclose(leaf(0.0), learned, rtol=0, atol=1e-9)
        np.testing.assert_allclose(leaf(0.3), 0.7 * learned + 0.3 * hand, rtol=0, atol=1e-9)
        np.testing.assert_allclose(leaf(1.0), hand, rtol=0, atol=1e-12)
        np.testing.assert_allclose(leaf(0.5, 0.5), 0.5 * learned + 0.5 * wide, rtol=0, atol=1e-9)
        assert abs(leaf(0.3).sum() - 1.0) < 1e-9
        checked += 1
    assert checked > 10
    with pytest.raises(ValueError, match="^handmade_weight: expected a number in \\[0, 1\\]"):
        _feudo_game.FeudoGame(new_fast_game(players=2, seed=1), 0, evaluation="learned", value=weights,
                              handmade_weight=1.5)


def test_handmade_weight_one_searches_as_the_handmade_evaluation(tmp_path) -> None:
    """Through SearchOptions and a bot spec: a learned model with handmade_weight 1 gives exactly the hand-made
    evaluation's advice (same seed and iterations), 0.5 gives other advice, and the settings are validated
    naming the field."""
    mlp = str(_write(tmp_path, _random_mlp(9)))
    state = _decision()
    base = SearchOptions(iterations=400, seed=3, playout_turns=1)
    hand = advise(state, options=base)
    assert advice_key(advise(state, options=base.replace(evaluation=mlp, handmade_weight=1.0))) == advice_key(hand)
    half = advise(state, options=base.replace(evaluation=mlp, handmade_weight=0.5))
    assert [x.win_probability for x in half.alternatives] != [x.win_probability for x in hand.alternatives]
    spec = f"ismcts:iterations=300:playout_turns=1:evaluation={mlp}:handmade_weight=0.5:margin_weight=0.5"
    bot = make_bot(spec, 5)
    assert (bot.options_for(4).handmade_weight, bot.options_for(4).margin_weight) == (0.5, 0.5)
    assert bot(state) == make_bot(spec, 5)(state) and bot(state) in state.legal_actions()
    with pytest.raises(ValueError, match="^handmade_weight: mixes the handmade evaluation into a learned one"):
        SearchOptions(handmade_weight=0.5)
    with pytest.raises(ValueError, match="^handmade_weight: expected"):
        SearchOptions(evaluation=mlp, handmade_weight=2)
    with pytest.raises(ValueError, match="^margin_weight: .*handmade_weight"):
        SearchOptions(evaluation=mlp, margin_weight=0.5)
    with pytest.raises(ValueError, match="handmade_weight"):
        make_bot("ismcts:handmade_weight=0.5", 1)
