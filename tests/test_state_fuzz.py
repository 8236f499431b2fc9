"""A loader that trusts nothing.

The property test runs tests/fuzz_states.py (Hypothesis mutations of valid states fed to both backends) in a
subprocess, so a crash of the C core fails the test instead of killing pytest. CI runs a bounded number of
examples; ``FEUDO_FUZZ_EXAMPLES=20000 python -m pytest -m slow tests/test_state_fuzz.py`` runs the long one.
The unit tests below are the defects the review found, one each (they fail on the engine of before that review).
"""

from __future__ import annotations

import json
import math
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from engine import DataFileError, State, StateError, load_map, load_ruleset, new_game, sample_chance
from engine.core import CoreState, core_available
from engine.ruleset import ruleset_from_dict
from engine.state import Phase

HERE = Path(__file__).resolve().parent
needs_core = pytest.mark.skipif(not core_available(), reason="engine._core is not built")


def _fuzz(examples: int, seed: int, timeout: float) -> dict:
    proc = subprocess.run([sys.executable, str(HERE / "fuzz_states.py"), str(examples), str(seed)],
                          capture_output=True, text=True, timeout=timeout, cwd=HERE.parent)
    assert proc.returncode == 0, f"fuzz run failed (exit {proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-6000:]}"
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["tried"] >= examples and result["loaded"] + result["rejected"] == result["tried"]
    assert result["loaded"] > 0 and result["rejected"] > 0  # both paths were exercised
    assert sum(result["rejections_by_field"].values()) == result["rejected"]
    return result


@needs_core
def test_mutated_states_load_identically_or_are_refused_by_field():
    result = _fuzz(int(os.environ.get("FEUDO_FUZZ_CI_EXAMPLES", "120")), seed=9, timeout=600)
    print(json.dumps(result))


@needs_core
@pytest.mark.slow
@pytest.mark.skipif("FEUDO_FUZZ_EXAMPLES" not in os.environ, reason="the long run: set FEUDO_FUZZ_EXAMPLES=20000")
def test_mutated_states_long_run():
    n = int(os.environ["FEUDO_FUZZ_EXAMPLES"])
    print(json.dumps(_fuzz(n, seed=20261130, timeout=max(600, n))))


# ------------------------------------------------------------------ the listed defects, one test each

@pytest.fixture(scope="module")
def mid_doc() -> dict:
    """A 3-player game in an ATTACK_JOIN-free mid-game MOVE/REVEAL position, as its JSON document."""
    state = new_game(load_ruleset(), players=3, seed=4)
    rng = random.Random(4)
    while not (state.turn == 3 and state.phase == Phase.REVEAL):
        state.apply_action(sample_chance(state, rng) if state.is_chance_node() else rng.choice(state.legal_actions()))
    return json.loads(state.to_json())


def _doc_with(doc: dict, **fields) -> str:
    d = json.loads(json.dumps(doc))
    d["state"].update(fields)
    return json.dumps(d)


def _refused(text, field: str) -> str:
    with pytest.raises(StateError) as e:
        State.from_json(text)
    assert str(e.value).startswith(field), str(e.value)
    return str(e.value)


@needs_core
@pytest.mark.parametrize("field,value", [
    ("joiners", list(range(17)) * 2), ("advanced", [0] * 40), ("won", [[0, 5, [0], False]] * 64),
    ("plague_history", [0] * 128), ("order", [0, 1, 2, 0, 1]),
])
def test_lists_longer_than_the_core_arrays_are_refused(mid_doc, field, value):
    _refused(_doc_with(mid_doc, **{field: value}), f"state.{field}")
    # and the core itself refuses a reference state carrying them, without writing past an array
    ref = State.from_json(json.dumps(mid_doc))
    setattr(ref, field, value)
    with pytest.raises(StateError, match=f"state.{field}"):
        CoreState.from_reference(ref)


@pytest.mark.parametrize("field,value", [
    ("turn", 2**40), ("tiebreak", 2**31), ("round", 10**9), ("shillings", 2**33), ("vp", [2**40, 0, 0]),
    ("rest_until", [[2**20] * 10] * 3), ("cursor", -1), ("round", -1),
])
def test_integers_out_of_the_rules_range_are_refused(mid_doc, field, value):
    _refused(_doc_with(mid_doc, **{field: value}), f"state.{field}")


def test_turn_must_match_the_phase(mid_doc):
    _refused(_doc_with(mid_doc, turn=0), "state.turn")
    _refused(_doc_with(mid_doc, turn=16), "state.turn")  # past the last regular turn without a tie-break (R19)


def _first_state_in(phase: Phase, seed: int) -> State:
    for g in range(seed, seed + 20):
        state = new_game(load_ruleset(), players=3, seed=g)
        rng = random.Random(g)
        while not state.is_terminal():
            if state.phase == phase:
                return state
            state.apply_action(sample_chance(state, rng) if state.is_chance_node() else rng.choice(state.legal_actions()))
    raise AssertionError(f"no {phase.name} position found")


def test_attack_join_target_must_be_a_valid_attack():
    state = _first_state_in(Phase.ATTACK_JOIN, 1)
    doc = json.loads(state.to_json())
    _refused(_doc_with(doc, target=-1), "state.target")
    # a territory the attacker cannot attack (its own Castle's territory, or one far from its tokens)
    far = [x for x in range(state.game.num_territories) if x not in state._attack_targets(state.current_player())]
    msg = _refused(_doc_with(doc, target=far[0]), "state.")
    assert "target" in msg or "joiners" in msg


def test_plague_token_on_a_non_village_is_refused(mid_doc):
    game_map = load_map(None, seed=4)
    not_village = next(t.id for t in game_map.territories if t.kind.name != "VILLAGE")
    _refused(_doc_with(mid_doc, plague_village=not_village), "state.plague_village")


@needs_core
def test_a_chance_node_without_outcomes_is_refused_and_the_core_survives_one():
    state = new_game(load_ruleset(), players=2, seed=1)
    rng = random.Random(1)
    while state.phase != Phase.CHANCE_PLAGUE:
        state.apply_action(sample_chance(state, rng) if state.is_chance_node() else rng.choice(state.legal_actions()))
    doc = json.loads(state.to_json())
    counts = [c.count for c in state.game.ruleset.plague_cards]
    _refused(_doc_with(doc, plague_drawn=counts), "state.plague_drawn")
    # a setup phase in mid-game: refused too (it used to have no outcome)
    _refused(_doc_with(doc, phase=int(Phase.CHANCE_PLACER)), "state.turn")
    # the core's sampler returns an error instead of an uninitialised action, even for a state forced past
    # the loader (the C struct edited after loading): random_playout raises, no segfault
    core = CoreState.from_reference(state)
    forced = state.clone()
    forced.plague_drawn = counts
    assert forced.chance_outcomes() == []
    import engine._core as _core

    bad = _core.CoreState.__new__(_core.CoreState)
    assert bad is not None  # constructing without from_reference leaves no way to inject: from_reference validates
    with pytest.raises(StateError):
        CoreState.from_reference(forced)
    assert len(core.random_playout(3)) == 2


def test_non_terminal_state_without_legal_action_is_refused(mid_doc):
    d = json.loads(json.dumps(mid_doc))
    p = d["state"]["order"][d["state"]["cursor"]]
    d["state"]["sel_army"][p] = [False] * len(d["state"]["sel_army"][p])  # nothing left to reveal
    d["state"]["revealed"][p] = [False] * len(d["state"]["revealed"][p])
    with pytest.raises(StateError) as e:
        State.from_json(json.dumps(d))
    assert str(e.value).startswith("state.")


@pytest.mark.parametrize("text", [
    '{"format": "feudo-state/1", "turn": ' + "9" * 5000 + "}",
    "[" * 100_000 + "]" * 100_000,
    b'{"format": "feudo-state/1", "x": "\xff\xfe"}',
    '{"format": "feudo-state/1", "turn": NaN}',
])
def test_json_level_problems_are_state_errors(text):
    with pytest.raises(StateError) as e:
        State.from_json(text)
    assert str(e.value).startswith("state: ")


def test_huge_map_cell_coordinates_are_refused():
    game_map = load_map(None, seed=1)
    d = game_map.to_dict()
    d["territories"][0]["cells"] = [[10**9, 10**9]]
    from engine import GameMap

    with pytest.raises(DataFileError, match=r"territories\[0\]\.cells\[0\]"):
        GameMap.from_dict(d)


@pytest.mark.parametrize("path,value,field", [
    (("options",), {"virulent": True}, "options.virulent"),
    (("army", 0), "extra", "army[0].colour"),
    (("king",), {"threshold": 10, "help": 1, "halp": 2}, "king.halp"),
    ((), "extra", "extra"),
])
def test_ruleset_unknown_fields_are_refused_naming_known_ones(path, value, field):
    d = load_ruleset().to_dict()
    if path == ("army", 0):
        d["army"][0]["colour"] = "red"
    elif path == ():
        d["extra"] = 1
    else:
        d[path[0]] = value
    with pytest.raises(DataFileError) as e:
        ruleset_from_dict(d, "mine.json")
    msg = str(e.value)
    assert msg.startswith(f"mine.json: {field}: unknown field (expected one of")


@pytest.mark.parametrize("kwargs,word", [
    ({"c": math.nan}, "c"), ({"c": math.inf}, "c"), ({"playout_turns": 2**40}, "playout_turns"),
    ({"iterations": 300_000_000}, "iterations"), ({"seconds": math.inf}, "seconds"),
    ({"threads": 64, "max_nodes": 8_000_000, "seconds": 1.0}, "memory limit"),
])
def test_search_options_are_capped(kwargs, word):
    from feudo_ai.settings import SearchOptions  # the one place search options are checked

    with pytest.raises(ValueError, match=word):
        SearchOptions(**kwargs)


def test_default_node_pools_fit_the_memory_limit():
    from feudo_ai.settings import MAX_SEARCH_BYTES, NODE_BYTES
    from feudo_ai.search.c_backend import _default_nodes

    for threads in (1, 2, 8, 64):
        timed = _default_nodes(0, True, 4, 8, threads)
        counted = _default_nodes(100_000_000 // threads, False, 4, 8, threads)
        assert threads * max(timed, counted) * NODE_BYTES <= MAX_SEARCH_BYTES


def test_python_search_options_are_capped():
    from feudo_ai.settings import SearchOptions

    for bad in ({"c": math.nan}, {"playout_turns": 2**40}, {"iterations": 3 * 10**8}, {"max_nodes": 10**9},
                {"threads": 64, "max_nodes": 100_000}):
        with pytest.raises(ValueError):
            SearchOptions(backend="python", **bad)
