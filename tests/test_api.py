"""The OpenSpiel-style API contract of engine.State, state JSON validation, game records, and a golden game."""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path

import pytest

from engine import (DataFileError, FeudoError, GameRecord, IllegalActionError, State, StateError, load_map,
                    load_ruleset, new_game, play_game)
from engine.state import CHANCE, TERMINAL, Phase

from helpers import BLUE, KN1, RS, game_map, make, move_options, put, random_chooser, set_turn

GOLDEN = json.loads((Path(__file__).resolve().parent / "data" / "golden_game.json").read_text())


def seeded_states(players=3, seed=4, every=1):
    """Every ``every``-th state of a seeded random game, with the action taken there."""
    rng = random.Random(seed)
    st = new_game(RS, players, seed=0, game_map=game_map())
    i = 0
    while not st.is_terminal():
        if st.is_chance_node():
            from engine.record import sample_chance
            a = sample_chance(st, rng)
        else:
            a = rng.choice(st.legal_actions())
        if i % every == 0:
            yield st, a
        st.apply_action(a)
        i += 1
    yield st, None


# ------------------------------------------------------------------------------------------ illegal actions

def test_illegal_action_names_action_and_phase_and_changes_nothing():
    st = make(2)
    set_turn(st, 2)
    put(st, BLUE, KN1, "C2-2")
    move_options(st, BLUE, KN1)
    before = st.canonical()
    legal = st.legal_actions()
    L = st.game.layout
    bad = L.MOVE + st.game.map.territory("C2-1").id  # the Mountain
    assert bad not in legal
    with pytest.raises(IllegalActionError) as e:
        st.apply_action(bad)
    msg = str(e.value)
    mountain = st.game.map.labels[st.game.map.territory("C2-1").id]  # named as on the board, "Mountain B3"
    assert "MOVE" in msg and str(bad) in msg and mountain in msg and "Blue" in msg
    assert st.canonical() == before and st.legal_actions() == legal
    st.apply_action(legal[-1])  # still usable afterwards
    assert st.canonical() != before


@pytest.mark.parametrize("bad", ["3", 3.0, True, None, -1, 10**9, [0], object()])
def test_wrong_types_and_out_of_range_raise_illegal_action(bad):
    st = make(2)
    before = st.canonical()
    with pytest.raises(IllegalActionError) as e:
        st.apply_action(bad)
    assert "CHOOSE_ORDER" in str(e.value) and repr(bad)[:10] in str(e.value)
    assert st.canonical() == before


def test_illegal_at_every_phase_of_a_game_changes_nothing():
    rng = random.Random(0)
    phases = set()
    for st, a in seeded_states(every=7):
        legal = set(st.legal_actions())
        illegal = [x for x in rng.sample(range(st.game.num_distinct_actions), 20) if x not in legal]
        before = st.canonical()
        for x in illegal[:3]:
            with pytest.raises(IllegalActionError) as e:
                st.apply_action(x)
            assert Phase(st.phase).name in str(e.value)
        assert st.canonical() == before
        phases.add(Phase(st.phase))
    assert Phase.TERMINAL in phases and Phase.MOVE in phases and Phase.SELECT in phases


def test_terminal_state_accepts_nothing():
    *_, (final, _) = seeded_states(players=2, seed=1)
    assert final.is_terminal() and final.current_player() == TERMINAL and final.legal_actions() == []
    with pytest.raises(IllegalActionError, match="TERMINAL"):
        final.apply_action(0)


def test_legal_actions_for_other_players_are_empty():
    st = make(3)
    assert st.current_player() == 2
    assert st.legal_actions(0) == [] and st.legal_actions(2) == st.legal_actions()


# ------------------------------------------------------------------------------------------ strings, chance, returns

def test_string_round_trip_for_every_legal_action_along_games():
    for seed in (1, 2):
        for st, _ in seeded_states(players=2 + seed, seed=seed):
            texts = [st.action_to_string(a) for a in st.legal_actions()]
            assert len(set(t.lower() for t in texts)) == len(texts), texts
            for a, t in zip(st.legal_actions(), texts):
                assert st.string_to_action(t) == a
                assert st.string_to_action("  " + t.upper().replace(" ", "  ") + " ") == a


def test_string_to_action_rejects_unknown_text():
    st = make(2)
    before = st.canonical()
    with pytest.raises(IllegalActionError, match="CHOOSE_ORDER"):
        st.string_to_action("order Red,Blue")
    assert st.canonical() == before


def test_chance_outcomes_sum_to_one_and_match_legal_actions():
    n = 0
    for st, _ in seeded_states(players=4, seed=3):
        if st.is_chance_node():
            out = st.chance_outcomes()
            assert st.current_player() == CHANCE and out
            assert abs(sum(p for _, p in out) - 1.0) < 1e-9 and all(p > 0 for _, p in out)
            assert [a for a, _ in out] == st.legal_actions()
            n += 1
        else:
            assert st.chance_outcomes() == []
    assert n >= 10 + 4  # plague draws and Castle placers at least


def test_returns_zero_until_the_end():
    for st, _ in seeded_states(players=3, seed=5, every=25):
        r = st.returns()
        assert len(r) == 3
        if st.is_terminal():
            assert abs(sum(r) - 1) < 1e-9 and max(r) > 0
            assert [p for p in range(3) if r[p] > 0] == st.winners
        else:
            assert r == [0.0, 0.0, 0.0]


def test_clone_is_deep():
    st = make(2)
    c = st.clone()
    c.loc[0][0] = 5
    c.vp[1] = 7
    c.apply_action(c.legal_actions()[0])
    assert st.loc[0][0] == -1 and st.vp == [0, 0] and st.phase == Phase.CHOOSE_ORDER


# ------------------------------------------------------------------------------------------ JSON

@pytest.fixture(scope="module")
def mid_game_doc():
    for st, _ in seeded_states(players=3, seed=6):
        if st.turn == 4 and st.phase == Phase.MOVE:
            return json.loads(st.to_json()), st
    raise AssertionError("no such state")


def test_json_round_trip(mid_game_doc):
    doc, st = mid_game_doc
    back = State.from_json(json.dumps(doc))
    assert back.canonical() == st.canonical() and back.vp_log == st.vp_log
    assert State.from_json(doc).legal_actions() == st.legal_actions()


def _mutated(doc, path, value):
    d = copy.deepcopy(doc)
    obj = d
    for k in path[:-1]:
        obj = obj[k]
    if value is KeyError:
        del obj[path[-1]]
    else:
        obj[path[-1]] = value
    return d


@pytest.mark.parametrize("path,value,field", [
    (("state", "vp"), [0, 0], "state.vp"),
    (("state", "vp"), [0, "1", 0], "state.vp[1]"),
    (("state", "loc"), [[0] * 10, [0] * 10, [0] * 9], "state.loc[2]"),
    (("state", "loc"), [[0] * 10, [0] * 10, [0] * 9 + [1000]], "state.loc[2][9]"),
    (("state", "phase"), 99, "state.phase"),
    (("state", "turn"), KeyError, "state.turn"),
    (("state", "king"), 1, "state.king"),
    (("state", "order"), [0, 0, 1], "state.order"),
    (("state", "plague_drawn"), [3] + [0] * 11, "state.plague_drawn[0]"),
    (("state", "won"), [[0, 1, [0]]], "state.won[0]"),
    (("state", "stricken"), None, "state.stricken"),
    (("state", "vp_log"), [[0, [1], "x"]], "state.vp_log"),
    (("state", "vp_log"), [[7, 1, "x"]], "state.vp_log"),
    (("state",), KeyError, "state"),
    (("format",), "feudo-state/0", "format"),
    (("players",), 9, "players"),
    (("ruleset", "turns"), "ten", "state.ruleset"),
    (("map", "territories"), [], "state.map"),
])
def test_from_json_malformed_names_the_field(mid_game_doc, path, value, field):
    doc, _ = mid_game_doc
    with pytest.raises(StateError) as e:
        State.from_json(json.dumps(_mutated(doc, path, value)))
    assert field in str(e.value)


def test_from_json_inconsistent_and_not_json(mid_game_doc):
    doc, _ = mid_game_doc
    bad = _mutated(doc, ("state", "order"), [])  # MOVE phase without an order of play
    with pytest.raises(StateError, match=r"^state\.order: expected an order of the players taking part in phase MOVE"):
        State.from_json(bad)
    with pytest.raises(StateError, match="line 1"):
        State.from_json("{not json")
    with pytest.raises(StateError):
        State.from_json([1, 2])


def test_from_json_fuzz_never_raw_errors(mid_game_doc):
    doc, _ = mid_game_doc
    rng = random.Random(0)
    junk = [None, True, -3, 0, 2, 10**7, "x", [], [0], [[0]], {}, {"a": 1}, 1.5, [True, False]]
    fields = list(doc["state"])
    for i in range(600):
        d = copy.deepcopy(doc)
        for _ in range(rng.randint(1, 2)):
            key = rng.choice(fields)
            val = d["state"].get(key)
            r = rng.random()
            if r < 0.15:
                d["state"].pop(key, None)
            elif r < 0.6 or not isinstance(val, list) or not val:
                d["state"][key] = rng.choice(junk)
            else:  # damage one element of a list field
                j = rng.randrange(len(val))
                if isinstance(val[j], list) and val[j] and rng.random() < 0.5:
                    val[j][rng.randrange(len(val[j]))] = rng.choice(junk)
                else:
                    val[j] = rng.choice(junk)
        try:
            st = State.from_json(d)
        except StateError:
            continue
        except FeudoError as e:  # pragma: no cover - reported below
            pytest.fail(f"case {i}: {type(e).__name__} instead of StateError: {e}")
        st.legal_actions()  # an accepted state must be usable


# ------------------------------------------------------------------------------------------ records

def test_game_record_save_load_replay(tmp_path):
    rng = random.Random(8)
    st = new_game(RS, 2, seed=0, game_map=game_map())
    record, final = play_game([random_chooser(rng)] * 2, st, seed=8)
    record.bots = ["random", "random"]
    path = tmp_path / "game.json"
    record.save(path)
    loaded = GameRecord.load(path)
    assert loaded.actions == record.actions and loaded.seed == 8 and loaded.players == 2
    assert loaded.ruleset == record.ruleset and loaded.game_map == record.game_map and loaded.bots == record.bots
    replayed = loaded.replay()
    assert replayed.canonical() == final.canonical() and replayed.is_terminal()
    states = list(loaded.states())
    assert len(states) == len(record.actions) + 1 and states[-1].canonical() == final.canonical()


def test_game_record_errors(tmp_path):
    rng = random.Random(9)
    record, _ = play_game([random_chooser(rng)] * 2, new_game(RS, 2, seed=0, game_map=game_map()), seed=9)
    d = record.to_dict()
    for key in ("format", "actions", "players", "seed"):
        bad = dict(d)
        del bad[key]
        with pytest.raises(DataFileError, match=key):
            GameRecord.from_dict(bad)
    with pytest.raises(DataFileError, match="actions"):
        GameRecord.from_dict({**d, "actions": [1, "2"]})
    with pytest.raises(DataFileError, match="players"):
        GameRecord.from_dict({**d, "players": 7})
    broken = GameRecord.from_dict({**d, "actions": d["actions"][:5] + [10**6]})
    with pytest.raises(IllegalActionError, match=r"actions\[5\]"):
        broken.replay()
    (tmp_path / "bad.json").write_text("{")
    with pytest.raises(DataFileError, match="bad.json"):
        GameRecord.load(tmp_path / "bad.json")


# ------------------------------------------------------------------------------------------ golden game
# tests/data/golden_game.json is produced by this engine (tests/make_golden.py): replaying it only shows that
# nothing changed. test_golden_game_follows_the_end_rules checks the game against the rules instead.

def test_golden_playthrough():
    g = GOLDEN
    st = new_game(load_ruleset(), g["players"], seed=g["map_seed"], game_map=load_map(None, seed=g["map_seed"]))
    for i, (text, a) in enumerate(zip(g["action_strings"], g["actions"])):
        try:
            got = st.string_to_action(text)
        except IllegalActionError as e:
            pytest.fail(f"golden action {i} ({text!r}) no longer legal at turn {st.turn}: {e}")
        assert got == a, f"action {i}: {text!r} is now {got}, was {a}"
        st.apply_action(got)
    assert st.is_terminal()
    assert st.vp == g["final_vp"] and st.winners == g["winners"] and st.turn == g["final_turn"]
    assert st.canonical() == g["final_canonical"]


def test_golden_game_is_regenerated_identically():
    from make_golden import play
    st, actions, strings = play()
    assert actions == GOLDEN["actions"] and strings == GOLDEN["action_strings"]


def test_golden_game_follows_the_end_rules():
    """Checks of the golden game that do not trust the stored outcome (R15, R19): every VP total is the sum of
    the logged VP changes; the regular turns are the ruleset's; an extra turn is played only by players tied for
    the lead when the previous turn ended, and only while the cap allows; the winners are the players with the
    most VP at the end."""
    g = GOLDEN
    rs = load_ruleset()
    st = new_game(rs, g["players"], seed=g["map_seed"], game_map=load_map(None, seed=g["map_seed"]))
    turn = st.turn
    for a in g["actions"]:
        st.apply_action(a)
        if st.turn != turn and not st.is_terminal():
            turn = st.turn
            if turn > rs.turns:  # a tie-break turn has just started: its players were tied leaders (R19)
                assert 1 <= st.tiebreak <= rs.tiebreak_max_turns
                top = max(st.vp)
                assert [p for p in range(st.num_players) if st.active[p]] == \
                    [p for p in range(st.num_players) if st.vp[p] == top]
                assert sum(st.active) >= 2
    assert st.is_terminal()
    for p in range(st.num_players):
        assert st.vp[p] == sum(d for q, d, _ in st.vp_log if q == p)
    top = max(st.vp)
    assert st.winners == [p for p in range(st.num_players) if st.vp[p] == top]
    assert st.turn == rs.turns + st.tiebreak
    assert len(st.winners) == 1 or st.tiebreak == rs.tiebreak_max_turns


def test_golden_game_gives_every_revealed_mercenary_its_decision():
    """R25, checked on the golden game's action texts: right after ``reveal Mercenary k`` the same player decides
    (``pass`` or ``move Mercenary k to ...``), whether or not the hidden Trading Card could pay; the game also
    holds reveals where staying was the only choice, and two tie-break turns (R19)."""
    g = GOLDEN
    st = new_game(load_ruleset(), g["players"], seed=g["map_seed"], game_map=load_map(None, seed=g["map_seed"]))
    texts = g["action_strings"]
    reveals = forced = 0
    for i, (text, a) in enumerate(zip(texts, g["actions"])):
        p = st.current_player()
        st.apply_action(a)
        if text.startswith("reveal Mercenary"):
            reveals += 1
            nxt = texts[i + 1]
            assert st.current_player() == p, (i, text, nxt)
            assert nxt == "pass" or nxt.startswith("move " + text[len("reveal "):] + " to "), (i, text, nxt)
            forced += st.legal_actions() == [0]
    assert reveals >= 10 and forced >= 1
    assert g["final_turn"] == 12 == load_ruleset().turns + 2
