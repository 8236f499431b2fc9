"""Fief 2 random play: invariants over seeded games of 3-6 families, privacy (F46) by twin states, records and
replay, state validation. ``pytest -m slow tests/test_fief2_random.py`` runs the 200 six-family games."""

from __future__ import annotations

import json
import random

import pytest

from engine.errors import IllegalActionError, StateError
from fief2 import GameRecord, State, new_game, play_random, sample_chance
from fief2.invariants import check_invariants
from fief2.state import Game

from fief2_helpers import act, at_card_turn, board, cid, pid


@pytest.mark.parametrize("seed", range(30))
def test_random_games_keep_invariants(seed):
    players = 3 + seed % 4
    rec = play_random(players, seed, check=check_invariants)
    st = rec.final
    assert st.is_terminal() and st.winners
    assert abs(sum(st.returns()) - 1.0) < 1e-9  # F51: 1/k to each of k winners


@pytest.mark.slow
def test_200_six_family_games_without_error():
    for seed in range(200):
        rec = play_random(6, 10_000 + seed, check=check_invariants)
        assert rec.final.is_terminal()


def test_scored_game_random_play_ends_at_its_turn():
    rec = play_random(game=Game(new_game(5, scored_turns=10).game.ruleset, players=5), seed=7,
                      check=check_invariants)
    assert rec.final.turn == 10 and rec.final.tally != [0] * 5


def test_record_replay_round_trip():
    rec = play_random(6, 3)
    again = GameRecord.from_json(rec.to_json())
    assert again.replay().to_dict() == rec.final.to_dict()
    assert json.loads(rec.to_json())["format"] == "fief2-game/1"


def test_record_errors_name_the_field():
    rec = play_random(3, 1)
    d = json.loads(rec.to_json())
    d["actions"][5] = -3
    with pytest.raises(Exception, match=r"actions\[5\]"):
        GameRecord.from_dict(d)
    d = json.loads(rec.to_json())
    d["actions"] = d["actions"][:40] + [d["actions"][40] + 1] + d["actions"][41:]
    r = GameRecord.from_dict(d)
    try:
        r.replay()
    except IllegalActionError as e:
        assert "actions[" in str(e)


def test_state_round_trip_and_errors_name_the_field():
    rec = play_random(4, 2, max_actions=800)
    st = rec.final
    d = json.loads(json.dumps(st.to_dict()))
    back = State.from_dict(d, st.game)
    assert back.to_dict() == st.to_dict() and back.legal_actions() == st.legal_actions()
    d["cash"][2] = "lots"
    with pytest.raises(StateError, match=r"state\.cash\[2\]"):
        State.from_dict(d, st.game)
    d = st.to_dict()
    d["owner"] = d["owner"][:3]
    with pytest.raises(StateError, match=r"state\.owner: expected an array of 24"):
        State.from_dict(d, st.game)


def test_clone_is_independent():
    st = board()
    c = st.clone()
    c.cash[0] = 9999
    c.sold[0][0][0] = 77
    assert st.cash[0] == 300 and st.sold[0][0][0] != 77


def test_f46_twin_states_give_identical_observations_to_other_seats():
    rng = random.Random(5)
    for trial in range(20):
        rec = play_random(4, 100 + trial, max_actions=rng.randrange(50, 3000))
        st = rec.final
        if st.is_terminal():
            continue
        f = rng.randrange(4)
        twin = st.clone()
        # swap one card of f's hand for a deck card: a state differing only in a hidden hand
        deck = twin.deck()
        if not twin.hands[f] or not deck:
            continue
        twin.hands[f][0] = deck[0]
        twin.hands[f].sort()
        for q in range(4):
            if q != f:
                assert st.observation(q) == twin.observation(q)
        assert st.observation(f) != twin.observation(f)


def test_f46_observation_shows_counts_not_cards():
    st = board()
    st.hands[1] = [cid(st, "B35"), cid(st, "B36")]
    at_card_turn(st, 0, [])
    obs = st.observation(0)
    assert obs["hands"][1] == [] and obs["hand_counts"][1] == 2
    assert obs["deck_count"] == len(st.deck())
    assert st.observation(1)["hands"][1] == st.hands[1]
    with pytest.raises(StateError, match="seat"):
        st.observation(7)


def test_f53_11_gift_card_seen_only_by_the_two_families():
    st = board()
    st.fam[pid(st, "L13")], st.loc[pid(st, "L13")] = 1, 5
    st._marry(pid(st, "L01"), pid(st, "L13"))
    st.hands[0], st.hands[1] = [cid(st, "B35")], []
    from fief2.state import FR_CARDTURN
    st.stack, st._legal = [[FR_CARDTURN, 0, 3]], None
    act(st, "give B35")
    assert st.observation(2)["stack"][-1][4] == -1 and st.observation(1)["stack"][-1][4] == cid(st, "B35")
    act(st, "refuse")
    assert cid(st, "B35") in st.observation(1)["seen_cards"][1]  # F53.11: kept knowledge
    assert st.observation(2)["seen_cards"][1] == []


def test_actions_have_stable_readable_names():
    st = new_game(3)
    L = st.game.layout
    assert st.action_to_string(L.a("village", 7)) == "village V08 Hautefort"
    assert st.action_to_string(L.a("group", 14)) == "group at V15 Puyguilhem"
    assert st.action_to_string(L.a("play", 34)) == "play B35 assassin"
    a = st.legal_actions()[0]
    assert st.string_to_action(st.action_to_string(a)) == a
    with pytest.raises(IllegalActionError):
        st.apply_action(L.a("village", 0))


def test_chance_nodes_use_explicit_seeds():
    a, b = play_random(5, 11), play_random(5, 11)
    assert a.actions == b.actions
    st = new_game(3)
    assert not st.is_chance_node()
    rng = random.Random(0)
    while not st.is_chance_node():
        st.apply_action(rng.choice(st.legal_actions()))
    assert sample_chance(st, random.Random(1)) in st.legal_actions()


def test_package_docstring_example_runs():
    import doctest

    import fief2
    result = doctest.testmod(fief2)
    assert result.attempted > 0 and result.failed == 0
