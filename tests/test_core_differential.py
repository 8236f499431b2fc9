"""The Cython core (engine/_core.pyx) plays exactly the reference rules (engine/state.py).

Seeded random games are played through both implementations side by side (engine/differential.py): at every
step the legal action lists, the chance outcomes and the current player are compared, and the canonical
encodings every step in a third of the games (every 8 steps and at the end in the others). 14 kinds of game
(2/3/4 players x every optional rule on the default map, whose board order follows the seed; the turn example
map for 2 players) x 150 games = 2,100 games, each with its own seed. ``benchmarks/core_diff.py --games
100000`` is the long version.

Nothing here is skipped: without the built extension every test fails and says how to build it.
"""

from __future__ import annotations

import copy
import json
import pickle
import random

import numpy as np
import pytest

from engine import IllegalActionError, Phase, State, load_map, load_ruleset, new_game, sample_chance
from engine.testing.differential import Config, Mismatch, configs, field_diff, play_side_by_side, replay_core_playout

try:
    from engine import _core
except ImportError as e:  # pragma: no cover - CI builds the extension
    _core = None
    _IMPORT_ERROR = e

GAMES_PER_CONFIG = 150
CONFIGS = configs()


def need_core():
    """The extension module, or a test failure (never a skip) saying how to build it."""
    if _core is None:
        pytest.fail(f"engine._core is not built ({_IMPORT_ERROR}): run `pip install .` or "
                    f"`python setup.py build_ext --inplace` (FEUDO_DEBUG=1 for bounds checks)", pytrace=False)
    return _core


def _random_positions(core, count: int, seed: int, players: int = 4):
    """(reference, core) pairs at decision nodes along a random game."""
    ref = new_game(None, players=players, seed=seed)
    rng = random.Random(seed)
    out = []
    step = 0
    while not ref.is_terminal():
        if step % 11 == 5:
            out.append((ref.clone(), core.CoreState.from_reference(ref)))
        a = sample_chance(ref, rng) if ref.is_chance_node() else rng.choice(ref.legal_actions())
        ref.apply_action(a)
        step += 1
    out.append((ref.clone(), core.CoreState.from_reference(ref)))
    picked = out[:: max(1, len(out) // count)]
    return picked


# ---------------------------------------------------------------------------------------------------------
# the differential games
# ---------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("index", range(len(CONFIGS)), ids=[c.label for c in CONFIGS])
def test_random_games_identical(index):
    need_core()
    config = CONFIGS[index]
    total = 0
    for i in range(GAMES_PER_CONFIG):
        seed = 1 + index * GAMES_PER_CONFIG + i  # a different seed for every game of the file
        total += play_side_by_side(config, seed, canonical_every=1 if i % 3 == 0 else 8)
    assert total > GAMES_PER_CONFIG * 50  # games of a sensible length were played


def test_configs_cover_every_option_and_player_count():
    labels = {c.label for c in CONFIGS}
    for p in (2, 3, 4):
        for opt in ("basic", "virulent", "strategy_only", "turns15"):
            assert f"{p}p-{opt}" in labels
    assert any(c.map_name == "turn_example" for c in CONFIGS)
    assert len(CONFIGS) * GAMES_PER_CONFIG >= 2000


def test_core_playouts_replay_in_the_reference():
    need_core()
    """Games chosen by the C playout (its own RNG and uniform policy) are legal reference games."""
    for index, config in enumerate(CONFIGS):
        for k in range(4):
            assert replay_core_playout(config, 5000 + index * 10 + k, playout_seed=k) > 0


def test_mismatch_report_is_readable():
    core = need_core()
    ref = new_game(None, players=2, seed=3)
    a = ref.canonical()
    other = ref.clone()
    other.vp[1] = 7
    other.loc[0][2] = 13
    text = field_diff(a, other.canonical())
    assert "vp[1]: reference=0 core=7" in text
    assert "loc[0]" in text and "13" in text
    assert field_diff(a, a) == "  (identical)"


def test_mismatch_names_seed_step_and_history(monkeypatch):
    core = need_core()
    """A core that goes wrong is reported with the seed, the step, the history and the diff."""
    config = Config("2p-basic", 2, {})
    original = core.CoreState.apply_action

    calls = {"n": 0}

    class Broken:
        def __init__(self, state):
            self._s = state

        def __getattr__(self, name):
            return getattr(self._s, name)

        def apply_action(self, a):
            calls["n"] += 1
            if calls["n"] == 30:  # skip one action: the positions diverge
                return None
            return self._s.apply_action(a)

    import engine.testing.differential as differential

    real = differential.make_core
    monkeypatch.setattr(differential, "make_core", lambda state: Broken(real(state)))
    with pytest.raises(Mismatch) as info:
        play_side_by_side(config, seed=11)
    text = str(info.value)
    assert "seed 11" in text and "step 30" in text
    assert "actions so far (30): 0:" in text and "canonical diff" in text
    assert original is core.CoreState.apply_action


# ---------------------------------------------------------------------------------------------------------
# the API
# ---------------------------------------------------------------------------------------------------------
def test_clone_is_independent():
    core = need_core()
    for ref, c in _random_positions(core, 12, seed=21):
        if c.is_terminal():
            continue
        before = c.canonical()
        d = c.clone()
        assert d.canonical() == before and d.legal_actions() == c.legal_actions()
        rng = random.Random(1)
        for _ in range(40):
            if d.is_terminal():
                break
            d.apply_action(rng.choice(d.legal_actions()))
        assert c.canonical() == before  # the original did not move
        e = c.clone()
        c.apply_action(c.legal_actions()[-1])
        assert e.canonical() == before  # nor did the clone when the original moved
        assert copy.deepcopy(e).canonical() == before


def test_illegal_action_raises_and_changes_nothing():
    core = need_core()
    for ref, c in _random_positions(core, 15, seed=8):
        before = c.canonical()
        legal = set(c.legal_actions())
        illegal = [a for a in range(-3, c.game.num_distinct_actions + 3) if a not in legal][:40]
        for bad in illegal + [True, False, 1.0, "0", None]:
            with pytest.raises(IllegalActionError) as info:
                c.apply_action(bad)
            text = str(info.value)
            assert repr(bad) in text and Phase(c.phase).name in text
            with pytest.raises(IllegalActionError) as ref_info:
                ref.clone().apply_action(bad)
            assert text == str(ref_info.value)  # the reference's message
            assert c.canonical() == before


def test_round_trip_with_the_reference():
    core = need_core()
    for players in (2, 3, 4):
        for ref, c in _random_positions(core, 10, seed=40 + players, players=players):
            assert c.canonical() == ref.canonical()
            back = c.to_reference()
            assert isinstance(back, State) and back.canonical() == ref.canonical()
            assert back.legal_actions() == ref.legal_actions()
            again = core.CoreState.from_reference(back)
            assert again.canonical() == ref.canonical()
            d = ref.to_dict()
            d["vp_log"] = []
            assert c.to_dict() == d
            assert json.loads(c.to_json())["state"] == d
            assert core.CoreState.from_json(ref.to_json()).canonical() == ref.canonical()
            for seat in range(players):  # the core keeps no VP log (not part of the position)
                assert c.observation(seat) == {**ref.observation(seat), "vp_log": []}
            assert c.current_player() == ref.current_player()
            assert c.is_chance_node() == ref.is_chance_node()
            assert c.chance_outcomes() == ref.chance_outcomes()
            assert c.returns() == ref.returns()
            assert [c.action_to_string(a) for a in c.legal_actions()] == \
                [ref.action_to_string(a) for a in ref.legal_actions()]
            assert c.vp == ref.vp and c.loc == ref.loc and c.won == ref.won and c.num_players == players
            for name in ("phase", "turn", "tiebreak", "active", "castle", "stricken", "entered", "owner",
                         "plague_village", "plague_card", "king", "order", "cursor", "round", "token", "decider",
                         "winners", "sel_army", "march_over", "joiners"):
                assert getattr(c, name) == getattr(ref, name), name
            for p in range(players):
                assert c.castle_territory(p) == ref.castle_territory(p)
                assert c.living_soldiers(p) == ref.living_soldiers(p) and c.desperate(p) == ref.desperate(p)
                for card in range(len(ref.game.ruleset.trading_cards)):
                    assert c.shillings_of(p, card) == ref.shillings_of(p, card)
                for t in range(ref.game.num_tokens):
                    assert c.number(p, t) == ref.number(p, t) and c.red_number(p, t) == ref.red_number(p, t)
                    assert c.can_move(p, t) == ref.can_move(p, t)
            assert pickle.loads(pickle.dumps(c)).canonical() == ref.canonical()
            if not ref.is_terminal() and not ref.is_chance_node():
                a = ref.legal_actions()[0]
                assert c.string_to_action(ref.action_to_string(a)) == a
                assert c.legal_actions(player=(ref.current_player() + 1) % players) == []


def test_random_playout_is_deterministic_and_ends():
    core = need_core()
    for players in (2, 3, 4):
        start = core.CoreState.from_reference(new_game(None, players=players, seed=players))
        before = start.canonical()
        for seed in range(25):
            r1 = start.random_playout(seed)
            assert r1 == start.random_playout(seed)
            assert len(r1) == players and abs(sum(r1) - 1.0) < 1e-12 and all(x >= 0 for x in r1)
            actions = start.random_playout_actions(seed)
            end = start.clone()
            for a in actions:
                end.apply_action(a)  # every action legal (validated)
            assert end.is_terminal() and end.returns() == r1
        assert start.canonical() == before  # playouts work on a copy
        results = {tuple(start.random_playout(seed)) for seed in range(25)}
        assert len(results) > 1  # different seeds, different games
    mid = _random_positions(core, 5, seed=77)[2][1]
    assert mid.random_playout(3) == mid.random_playout(3)


def test_legal_into_buffer():
    core = need_core()
    buf = np.zeros(core.max_actions(), dtype=np.int32)
    for ref, c in _random_positions(core, 8, seed=5):
        n = c.legal_into(buf)
        assert list(buf[:n]) == ref.legal_actions()
    with pytest.raises(ValueError):
        c.legal_into(np.zeros(3, dtype=np.int32))


def test_new_game_backends():
    core = need_core()
    from engine import core_available, new_fast_game
    from engine.core import new_game as core_new_game

    assert core_available()
    rs = load_ruleset().with_options(turns=12)
    ref = new_game(rs, players=3, seed=9, castles=None)
    for backend in ("auto", "core"):
        s = core_new_game(rs, players=3, seed=9, backend=backend)
        assert isinstance(s, core.CoreState) and s.canonical() == ref.canonical()
    assert isinstance(core_new_game(players=2, seed=1, backend="reference"), State)
    ref_c = new_game(None, players=2, seed=4, castles=[0, 30])
    fast = new_fast_game(None, players=2, seed=4, castles=[0, 30])
    assert fast.canonical() == ref_c.canonical() and fast.turn == 1
    assert core.CoreState(ref.game).canonical() == State(ref.game).canonical()
    tm = load_map("turn_example")
    assert new_fast_game(None, players=2, game_map=tm).canonical() == new_game(None, players=2, game_map=tm).canonical()
    with pytest.raises(ValueError):
        core_new_game(backend="fast")


def test_fallback_warns_once_without_the_extension(monkeypatch):
    import engine.core as ec

    monkeypatch.setattr(ec, "_core", None)
    monkeypatch.setattr(ec, "_IMPORT_ERROR", ImportError("not built"))
    monkeypatch.setattr(ec, "_warned", False)
    with pytest.warns(RuntimeWarning, match="not built"):
        s = ec.new_game(players=2, seed=1)
    assert isinstance(s, State)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert isinstance(ec.new_game(players=2, seed=1), State)  # once only
    with pytest.raises(ImportError, match="build_ext"):
        ec.new_game(players=2, seed=1, backend="core")


def test_compiled_game_is_shared_and_data_driven():
    core = need_core()
    """Nothing is hard-coded: a ruleset with another roster and a graph map compile and play identically."""
    from engine.ruleset import ruleset_from_dict

    d = load_ruleset().to_dict()
    d["army"] = [g for g in d["army"] if g["kind"] != "knight"] + [
        {"name": "Knight", "kind": "knight", "count": 4, "red": 4, "black": 2}]
    d["trading_cards"] = [6, 3, 3, 0]
    d["turns"] = 8
    rs = ruleset_from_dict(d)
    for seed in range(30):
        config = Config("custom", 2 + seed % 3, {})
        config_game = config.game(seed)
        game = type(config_game)(rs, config_game.map, config.players)
        ref = State(game)
        c = core.CoreState.from_reference(ref)
        rng = random.Random(seed)
        while not ref.is_terminal():
            assert ref.legal_actions() == c.legal_actions()
            a = sample_chance(ref, rng) if ref.is_chance_node() else rng.choice(ref.legal_actions())
            ref.apply_action(a)
            c.apply_action(a)
        assert ref.canonical() == c.canonical()
    s1 = core.CoreState.from_reference(State(game))
    assert s1.compiled is s1.clone().compiled


def test_benchmark_helpers():
    core = need_core()
    c = core.CoreState.from_reference(new_game(None, players=4, seed=1))
    assert core.bench_clone(c, 1000) > 0 and core.bench_legal(c, 100) > 0
    secs, actions = core.bench_playouts(c, 3, 1)
    assert secs > 0 and actions > 300
    assert core.sizeof_state() < 4096


def test_games_beyond_the_core_sizes_fall_back(monkeypatch):
    """A game the core cannot hold (here: pretend the core allows no more than 10 territories) is refused by
    backend="core" and served by the reference with a warning under "auto"."""
    need_core()
    import engine.core as ec
    from engine import StateError

    class Tiny:
        class CoreState:
            @staticmethod
            def from_reference(state):
                raise StateError("the core supports at most 10 territories, this game has 93")

    monkeypatch.setattr(ec, "_core", Tiny)
    with pytest.raises(StateError, match="at most 10 territories"):
        ec.new_game(players=2, seed=1, backend="core")
    with pytest.warns(RuntimeWarning, match="using the reference engine"):
        assert isinstance(ec.new_game(players=2, seed=1), State)


def test_core_perft_and_golden_game():
    """The stored perft counts (tests/data/perft.json) and the golden game hold for the core too."""
    core = need_core()
    from pathlib import Path

    from engine.testing.perft import perft

    data_dir = Path(__file__).resolve().parent / "data"

    data = json.loads((data_dir / "perft.json").read_text())
    for entry in data["positions"]:
        c = core.CoreState.from_json(entry["state"])
        assert [perft(c, d) for d in range(1, data["depth"] + 1)] == entry["counts"], entry["name"]
    g = json.loads((data_dir / "golden_game.json").read_text())
    c = core.CoreState.from_reference(new_game(load_ruleset(), g["players"], seed=g["map_seed"],
                                               game_map=load_map(None, seed=g["map_seed"])))
    for a in g["actions"]:
        c.apply_action(a)
    assert c.is_terminal() and c.vp == g["final_vp"] and c.winners == g["winners"]
    assert c.canonical() == g["final_canonical"]
