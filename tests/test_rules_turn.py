"""Components, turn structure, plague, end of game, options, setup and information: R1-R6, R18-R22.

(R3's map geometry is tested in test_map.py; here only how the state uses it.)
"""

from __future__ import annotations

import json
import random

import pytest

from engine import Game, StateError, new_game
from engine.state import CHANCE, DEAD, TERMINAL, Phase

from helpers import (BARON, BLUE, FK, FOUR, INF1, INF2, INF3, KN1, KN2, MER1, MER2, MILADY, RS, TWO, WHITE,
                     YELLOW, ZERO, act, at, chance_action, game_map, legal_strings, make, move_options,
                     play_until, put, random_chooser, set_turn, tid, touch)


def plague(st, card: str, order=(BLUE, WHITE)):
    """Draw the named plague card now; Blue has a card to reveal afterwards so the turn stops at REVEAL."""
    st.order = list(order)
    if st.turn == 0:
        st.turn = 1
    st.sel_army[BLUE][INF3] = True
    st.phase = int(Phase.CHANCE_PLAGUE)
    touch(st)
    st.apply_action(chance_action(st, card))
    assert st.phase in (Phase.REVEAL, Phase.MOVE)


# ------------------------------------------------------------------------------------------------------ R1

def test_r1_army_roster_and_numbers():
    army = RS.army
    assert len(army) == 10
    by_kind = {}
    for t in army:
        by_kind.setdefault(t.kind, []).append((t.red, t.black))
    assert by_kind == {"baron": [(4, 2)], "milady": [(2, 1)], "first_knight": [(5, 2)], "knight": [(3, 1)] * 2,
                       "mercenary": [(3, 1)] * 2, "infantryman": [(2, 1)] * 3}
    assert RS.trading_cards == (4, 2, 0, 0, 0)
    assert (RS.desperate_red, RS.desperate_black) == (6, 3)
    st = make(2)
    assert [st.number(BLUE, t) for t in range(10)] == [4, 2, 5, 3, 3, 3, 3, 2, 2, 2]
    for t in range(10):
        st.stricken[BLUE][t] = True
    assert [st.number(BLUE, t) for t in range(10)] == [2, 1, 2, 1, 1, 1, 1, 1, 1, 1]


# ------------------------------------------------------------------------------------------------------ R2

def test_r2_plague_deck_and_draw_probabilities():
    cards = RS.plague_cards
    assert sum(c.count for c in cards) == 20
    moves = [c for c in cards if c.effect == "move"]
    assert sum(c.count for c in moves) == 16
    for d in "NESW":
        assert sorted((c.steps, c.count) for c in moves if c.direction == d) == [(1, 2), (2, 2)]
    assert sorted(c.effect for c in cards if c.effect != "move") == ["border", "cross", "fog", "lingering"]
    st = make(2)
    st.phase = int(Phase.CHANCE_PLAGUE)
    touch(st)
    out = dict(st.chance_outcomes())
    assert len(out) == 12 and abs(sum(out.values()) - 1) < 1e-12
    assert out[chance_action(st, "Fog")] == pytest.approx(1 / 20)
    assert out[chance_action(st, "East 1")] == pytest.approx(2 / 20)
    st.plague_drawn[cards[-1].index] = 1  # Fog drawn
    st.plague_drawn[2] = 1  # one East 1 drawn
    out = dict(st.chance_outcomes())
    assert len(out) == 11 and out[chance_action(st, "East 1")] == pytest.approx(1 / 18)


def test_r2_basic_game_draws_ten_distinct_deck_cards():
    from engine import play_game
    rng = random.Random(3)
    rec, final = play_game([random_chooser(rng)] * 2, make(2), seed=3)
    assert len(final.plague_history) == 10  # no plague cards in tie-break turns (R19)
    counts = [final.plague_history.count(c.index) for c in RS.plague_cards]
    assert all(n <= c.count for n, c in zip(counts, RS.plague_cards))


# ------------------------------------------------------------------------------------------------------ R4

def test_r4_phase_order_of_a_turn():
    st = make(2)
    rng = random.Random(5)
    seen = []
    while st.turn == 1:
        ph = Phase(st.phase)
        if not seen or seen[-1] != ph:
            seen.append(ph)
        st.apply_action(rng.choice(st.legal_actions()) if not st.is_chance_node() else st.chance_outcomes()[0][0])
    rank = {Phase.CHOOSE_ORDER: 0, Phase.SELECT: 1, Phase.CHANCE_PLAGUE: 2, Phase.REVEAL: 3, Phase.MOVE: 3,
            Phase.MILADY: 3, Phase.MARCH: 4, Phase.ATTACK: 5, Phase.ATTACK_JOIN: 5, Phase.ADVANCE: 6}
    ranks = [rank[p] for p in seen]
    assert ranks == sorted(ranks) and ranks[:4] == [0, 1, 2, 3]


def test_r4_start_of_turn_recoveries_and_trading_card_refresh():
    st = make(2)
    play_until(st, lambda s: s.turn == 5 and s.phase == Phase.SELECT)
    assert sum(st.trade_held[BLUE]) == 1 and sum(st.trade_held[WHITE]) == 1  # 4 cards discarded
    play_until(st, lambda s: s.turn == 6)
    assert st.trade_held == [[True] * 5, [True] * 5]  # turn 6: all 5 back
    play_until(st, lambda s: s.turn == 7)
    assert sum(st.trade_held[BLUE]) == 4


def test_r4_end_of_turn_discards_cards_of_eliminated_tokens():
    st = make(2)
    put(st, BLUE, INF1, DEAD)
    play_until(st, lambda s: s.turn == 2)
    assert not st.army_held[BLUE][INF1] and all(st.army_held[WHITE])
    assert st.sel_army == [[False] * 10] * 2 and st.sel_trade == [-1, -1]


# ------------------------------------------------------------------------------------------------------ R5

def test_r5_turn_one_last_castle_placer_decides_any_order():
    st = new_game(RS, 3, seed=0)
    for p, site in ((2, 0), (0, 9), (1, 34)):
        st.apply_action(st.game.layout.CHANCE_PLAYER + p)
        st.apply_action(st.game.layout.PLACE + site)
    assert st.phase == Phase.CHOOSE_ORDER and st.current_player() == 1
    assert len(st.legal_actions()) == 6
    act(st, "order Yellow,Blue,White")
    assert st.order == [YELLOW, BLUE, WHITE]


def test_r5_fewest_vp_decides_and_tie_chance():
    st = make(3)
    st.vp = [4, 1, 6]
    play_until(st, lambda s: s.turn == 2)
    assert st.phase == Phase.CHOOSE_ORDER and st.current_player() == WHITE
    st = make(3)
    st.vp = [2, 5, 2]
    play_until(st, lambda s: s.turn == 2)
    assert st.phase == Phase.CHANCE_DECIDER and st.current_player() == CHANCE
    out = st.chance_outcomes()
    assert [st.action_to_string(a) for a, _ in out] == ["chance: Blue", "chance: Yellow"]
    assert [p for _, p in out] == [0.5, 0.5]
    act(st, "chance: Yellow")
    assert st.phase == Phase.CHOOSE_ORDER and st.current_player() == YELLOW


# ------------------------------------------------------------------------------------------------------ R6

def test_r6_select_exactly_three_and_one_trading_card():
    st = make(2)
    act(st, "order Blue,White")
    assert st.phase == Phase.SELECT and st.current_player() == BLUE
    assert all(s.startswith("select ") and "trading" not in s for s in legal_strings(st))
    act(st, "select Baron")
    assert "select Baron" not in legal_strings(st)  # ascending picks
    act(st, "select Milady")
    assert "select Infantryman 3" in legal_strings(st)
    act(st, "select Infantryman 3")
    assert legal_strings(st) == ["select trading card 4", "select trading card 2", "select trading card 0"]
    act(st, "select trading card 2")
    assert st.sel_army[BLUE] == [True, True] + [False] * 7 + [True] and st.sel_trade[BLUE] == TWO
    assert st.current_player() == WHITE and st.sel_done[BLUE]


def test_r6_min_three_held_and_discarded_trading_cards():
    st = make(2)
    st.army_held[BLUE] = [t in (KN1, INF2) for t in range(10)]
    st.trade_held[BLUE] = [False, True, False, False, True]
    act(st, "order Blue,White")
    assert legal_strings(st) == ["select Knight 1"]  # 2 cards needed of 2 held: the first must be Knight 1
    act(st, "select Knight 1")
    act(st, "select Infantryman 2")
    assert legal_strings(st) == ["select trading card 2", "select trading card 0"]


def test_r6_cards_of_tokens_that_cannot_move_may_be_picked():
    st = make(2)
    st.rest_until[BLUE][BARON] = 1
    st.rest_until[BLUE][MILADY] = 1
    act(st, "order Blue,White")
    assert "select Baron" in legal_strings(st)
    act(st, "select Baron")
    assert "select Milady" in legal_strings(st)


# ------------------------------------------------------------------------------------------------------ R18

def test_r18_move_card_moves_plague_and_hits_village_and_neighbours():
    st = make(2)
    assert at(st, BLUE, BARON) == "castle" and st.game.map.territories[st.plague_village].name == "A1-3"
    put(st, WHITE, INF1, "C3-1")  # the Village itself
    put(st, BLUE, KN1, "C3-0")  # neighbour
    put(st, BLUE, INF1, "C3-2", stricken=True)  # already stricken neighbour: eliminated
    put(st, BLUE, INF2, "C2-2")  # not adjacent
    plague(st, "East 1")  # A1-3 (row 3, col 8) -> wraps round the East edge to C3-1 (row 3, col 1)
    assert st.game.map.territories[st.plague_village].name == "C3-1"
    assert st.stricken[WHITE][INF1] and st.stricken[BLUE][KN1]
    assert st.loc[BLUE][INF1] == DEAD and not st.stricken[BLUE][INF2]
    assert st.vp == [0, 0]


def test_r18_two_steps_and_safe_places():
    st = make(2)
    st.owner[tid(st, "Pershore")] = BLUE
    put(st, BLUE, INF1, "Pershore")  # City next to C3-3: safe
    put(st, BLUE, KN1, "C3-4", stricken=True)  # neighbour, stricken: dies
    put(st, WHITE, KN1, "C2-3")
    plague(st, "East 2")  # A1-3 -> C3-1 -> C3-3
    assert st.game.map.territories[st.plague_village].name == "C3-3"
    assert not st.stricken[BLUE][INF1] and st.loc[BLUE][KN1] == DEAD and st.stricken[WHITE][KN1]


@pytest.mark.parametrize("card,start,expect", [
    ("North 1", "A1-3", "A1-1"), ("South 1", "A1-3", "B3-1"), ("West 1", "A1-3", "A3-3"),
    ("North 2", "C1-1", "D1-3"), ("West 2", "C1-1", "A3-1"), ("South 2", "D1-1", "C3-1")])
def test_r18_lattice_moves_with_wrap(card, start, expect):
    st = make(2)
    st.plague_village = tid(st, start)
    plague(st, card)
    assert st.game.map.territories[st.plague_village].name == expect


def test_r18_plague_village_itself_reachable_only_as_the_hit_token_leaves():
    st = make(2)
    put(st, BLUE, INF1, "C3-1")
    plague(st, "East 1")
    assert st.plague_village == tid(st, "C3-1") and st.stricken[BLUE][INF1]
    assert move_options(st, BLUE, INF1)  # hit there, it may leave (R8 forbids entering, not leaving)
    put(st, BLUE, INF2, "C3-0")
    assert "C3-1" not in move_options(st, BLUE, INF2)


def test_r18_border():
    st = make(2)
    put(st, BLUE, KN1, "C0-2")  # outer-edge Hill
    put(st, BLUE, KN2, "C0-4/A4-0")  # joined corner: spared
    put(st, BLUE, INF1, "C1-2")  # not on the edge (Wood)
    put(st, WHITE, INF1, "A1-0")  # outer-edge Hill next to White's Castle
    village = st.plague_village
    plague(st, "Border")
    assert st.plague_village == village
    assert st.stricken[BLUE][KN1] and st.stricken[WHITE][INF1]
    assert not st.stricken[BLUE][KN2] and not st.stricken[BLUE][INF1]
    assert not any(st.stricken[BLUE][t] for t in (BARON, MILADY))  # in the Castle


def test_r18_cross():
    st = make(2)
    put(st, BLUE, KN1, "C3-4")  # borders the Central Hill
    put(st, BLUE, KN2, "C0-4/A4-0")  # where two boards meet
    put(st, BLUE, INF1, "C4-2")  # seam Hill
    put(st, BLUE, INF2, "C2-2")  # inside the board
    put(st, WHITE, INF1, "Central Hill", stricken=True)  # Convent: safe
    village = st.plague_village
    plague(st, "Cross")
    assert st.plague_village == village
    assert st.stricken[BLUE][KN1] and st.stricken[BLUE][KN2] and st.stricken[BLUE][INF1]
    assert not st.stricken[BLUE][INF2] and st.loc[WHITE][INF1] == tid(st, "Central Hill")


def test_r18_lingering():
    st = make(2)
    st.plague_village = tid(st, "C3-3")
    put(st, BLUE, KN1, "C2-3")
    put(st, BLUE, INF1, "C3-3", stricken=True)
    plague(st, "Lingering Plague")
    assert st.plague_village == tid(st, "C3-3")
    assert st.stricken[BLUE][KN1] and st.loc[BLUE][INF1] == DEAD


def test_r18_fog_friars_and_one_territory_limit():
    st = make(2)
    put(st, BLUE, KN1, "Central Hill", stricken=True)
    put(st, WHITE, INF1, "Central Hill", stricken=True)
    put(st, BLUE, FK, "C2-2")
    put(st, WHITE, INF2, "A1-0")  # near the plague village: nobody is hit under Fog
    village = st.plague_village
    plague(st, "Fog")
    assert st.loc[BLUE][KN1] == DEAD and st.loc[WHITE][INF1] == DEAD and st.vp == [0, 0]
    assert st.plague_village == village and not st.stricken[WHITE][INF2]
    assert move_options(st, BLUE, FK) == {"C1-2", "C2-3", "C3-2"}  # 1 territory under Fog
    assert move_options(st, BLUE, KN2) == {"C0-1", "C1-0"}  # from the Castle too
    # shillings march as normal
    st.sel_army = [[False] * 10, [False] * 10]
    st.revealed = [[False] * 10, [False] * 10]
    st.sel_army[WHITE][INF3] = st.revealed[WHITE][INF3] = True
    st.sel_trade = [FOUR, ZERO]
    st.phase, st.round, st.cursor, st.token = int(Phase.MOVE), 2, 1, INF3
    touch(st)
    st.apply_action(0)
    assert st.phase == Phase.MARCH and "march First Knight to C2-4" in legal_strings(st)


def test_r18_stricken_baron_recovers_next_turn_anywhere():
    st = make(2)
    put(st, BLUE, BARON, "C2-2", stricken=True)
    put(st, BLUE, KN1, "C2-3", stricken=True)
    play_until(st, lambda s: s.turn == 2)
    assert not st.stricken[BLUE][BARON] and st.stricken[BLUE][KN1]


# ------------------------------------------------------------------------------------------------------ R19

def play_to_end(st):
    play_until(st, lambda s: False)
    assert st.is_terminal()


def test_r19_most_vp_wins():
    st = make(2)
    st.vp = [3, 5]
    st.turn = 9
    play_until(st, lambda s: s.turn == 10)
    play_to_end(st)
    assert st.turn == 10 and st.winners == [WHITE] and st.returns() == [0.0, 1.0]
    assert st.current_player() == TERMINAL and st.legal_actions() == []


def test_r19_tiebreak_leaders_play_alone_without_plague():
    st = make(3)
    st.vp = [5, 5, 2]
    st.turn = 9
    play_until(st, lambda s: s.turn == 11)
    assert st.tiebreak == 1 and st.active == [True, True, False] and st.plague_village == -1
    assert st.trade_held == [[True] * 5] * 3  # refreshed
    assert st.phase == Phase.CHANCE_DECIDER  # the two leaders are tied for fewest VP among the active
    play_until(st, lambda s: s.phase == Phase.CHOOSE_ORDER)
    assert len(st.legal_actions()) == 2  # orders of the two active players only
    play_until(st, lambda s: s.phase == Phase.SELECT)
    seen = set()
    play_until(st, lambda s: (seen.add((s.phase, s.current_player())), s.turn == 12)[1])
    assert (Phase.CHANCE_PLAGUE, CHANCE) not in seen
    assert not any(ph == Phase.SELECT and p == YELLOW for ph, p in seen)


def test_r19_tiebreak_refreshes_trading_cards_after_any_game_length():
    rs = RS.with_options(turns=3)
    st = make(2, ruleset=rs)
    st.vp = [4, 4]
    play_until(st, lambda s: s.turn == 4)
    assert st.tiebreak == 1 and st.trade_held == [[True] * 5] * 2  # turn 4 is no regular refresh turn


def test_r19_tiebreak_cap_shares_the_win():
    st = make(3)
    st.vp = [5, 5, 2]
    st.turn = 9
    play_to_end(st)
    assert st.tiebreak == RS.tiebreak_max_turns == 5 and st.turn == 15
    assert st.winners == [BLUE, WHITE] and st.returns() == [0.5, 0.5, 0.0]


def test_r19_tiebreak_ends_when_one_leads():
    st = make(2)
    st.vp = [5, 5]
    st.turn = 9
    play_until(st, lambda s: s.turn == 11 and s.phase == Phase.SELECT)
    st.vp = [6, 5]  # as if Blue had scored during the extra turn
    play_to_end(st)
    assert st.turn == 11 and st.winners == [BLUE] and st.returns() == [1.0, 0.0]


# ------------------------------------------------------------------------------------------------------ R20

def test_r20_virulent_plague_kills_non_baron():
    rs = RS.with_options(virulent_plague=True)
    st = make(2, ruleset=rs)
    put(st, BLUE, KN1, "C3-0")
    put(st, BLUE, BARON, "C3-2")
    put(st, WHITE, INF1, "C3-1")
    plague(st, "East 1")
    assert st.loc[BLUE][KN1] == DEAD and st.loc[WHITE][INF1] == DEAD
    assert at(st, BLUE, BARON) == "C3-2" and st.stricken[BLUE][BARON]
    assert st.vp == [0, 0]


def test_r20_virulent_no_convent_no_friars_baron_flips_back():
    rs = RS.with_options(virulent_plague=True)
    st = make(2, ruleset=rs)
    put(st, BLUE, BARON, "C3-4", stricken=True)
    assert "Central Hill" not in move_options(st, BLUE, BARON)
    put(st, WHITE, KN1, "Central Hill")  # (cannot happen; checks that Fog kills nobody)
    plague(st, "Fog")
    assert st.loc[WHITE][KN1] == tid(st, "Central Hill")
    st2 = make(2, ruleset=rs)
    put(st2, BLUE, BARON, "C2-2", stricken=True)
    play_until(st2, lambda s: s.turn == 2)
    assert not st2.stricken[BLUE][BARON]


def test_r20_strategy_only_no_plague_no_convent():
    rs = RS.with_options(strategy_only=True, turns=3)
    st = make(2, ruleset=rs)
    assert st.plague_village == -1
    st.vp = [1, 0]
    phases = set()
    play_until(st, lambda s: (phases.add(s.phase), False)[1])
    assert Phase.CHANCE_PLAGUE not in phases and st.plague_history == [] and st.turn == 3
    st = make(2, ruleset=rs)
    put(st, BLUE, KN1, "C3-4", stricken=True)
    assert "Central Hill" not in move_options(st, BLUE, KN1)


def test_r20_longer_game_reshuffles_and_refreshes():
    rs = RS.with_options(turns=15)
    assert rs.refreshes_trading_cards(11) and rs.refreshes_trading_cards(16) and not rs.refreshes_trading_cards(10)
    st = make(2, ruleset=rs)
    play_until(st, lambda s: s.turn == 11 and s.phase == Phase.SELECT)
    assert len(st.plague_history) == 10 and st.plague_drawn == [0] * 12  # reshuffled from all 20
    assert st.trade_held == [[True] * 5] * 2
    play_until(st, lambda s: s.turn == 11 and s.phase == Phase.CHANCE_PLAGUE)
    assert sum(p for _, p in st.chance_outcomes()) == pytest.approx(1) and len(st.chance_outcomes()) == 12
    st.vp = [1, 0]
    play_until(st, lambda s: False)
    assert st.turn == 15 and len(st.plague_history) == 15


def test_r20_two_to_four_players():
    m = game_map()
    for n in (2, 3, 4):
        assert Game(RS, m, n).num_players == n
        st = make(n)
        assert len(st.legal_actions()) == [2, 6, 24][n - 2]
    for n in (1, 5, "2"):
        with pytest.raises(StateError, match="players"):
            Game(RS, m, n)


# ------------------------------------------------------------------------------------------------------ R21

def test_r21_castle_placement_is_a_decision_with_chance_order():
    st = new_game(RS, 4, seed=0)
    m = st.game.map
    assert st.phase == Phase.CHANCE_PLACER and st.current_player() == CHANCE
    out = st.chance_outcomes()
    assert [p for _, p in out] == [0.25] * 4
    act(st, "chance: Yellow")
    assert st.current_player() == YELLOW and st.phase == Phase.PLACE_CASTLE
    sites = [a - st.game.layout.PLACE for a in st.legal_actions()]
    assert len(sites) == len(m.castle_sites) == 35
    for s in sites:
        terr = m.territories[m.castle_sites[s].territory]
        assert terr.kind.name == "HILL" and terr.outer_edge
    st.apply_action(st.game.layout.PLACE + 4)  # board 0's site on the joined corner C0-4/A4-0
    assert [p for _, p in st.chance_outcomes()] == [1 / 3] * 3
    act(st, "chance: Blue")
    left = [a - st.game.layout.PLACE for a in st.legal_actions()]
    assert all(m.castle_sites[s].board != 0 for s in left)  # not on a board with another Castle
    assert 5 in left  # R24: board 1's half of the same joined corner is a separate Castle site
    assert 6 in left
    assert len(left) == 35 - 9  # all but board 0: its row 0 (5 cells) and column 0 (4 more)


def test_r21_given_placements_and_bad_placements():
    st = new_game(RS, 2, seed=0, castles=[4, 9])
    assert st.castle == [4, 9] and st.placed == [BLUE, WHITE] and st.decider == WHITE and st.turn == 1
    with pytest.raises(StateError, match=r"castles\[1\]"):
        new_game(RS, 2, seed=0, castles=[0, 3])  # same board
    with pytest.raises(StateError, match="castles"):
        new_game(RS, 2, seed=0, castles=[0])


# ------------------------------------------------------------------------------------------------------ R22

def _select(st, p, tokens, card):
    for t in sorted(tokens):
        act(st, f"select {st.game.ruleset.army[t].name}")
    act(st, f"select trading card {card}")


def test_r22_observation_hides_opponent_selection():
    views = []
    for tokens, card in (((BARON, KN1, INF1), 4), ((FK, MER1, MER2), 0)):
        st = make(2)
        act(st, "order Blue,White")
        _select(st, BLUE, tokens, card)
        assert st.current_player() == WHITE
        obs = st.observation(WHITE)
        assert obs["sel_army"][BLUE] == [False] * 10 and obs["sel_trade"][BLUE] == -1
        assert obs["selected_count"][BLUE] == 3
        own = st.observation(BLUE)
        assert [t for t in range(10) if own["sel_army"][BLUE][t]] == list(tokens)
        views.append(st.information_state_string(WHITE))
    assert views[0] == views[1]  # White cannot tell the two selections apart


def test_r22_revealed_cards_become_public_and_no_deck_in_state():
    st = make(2)
    act(st, "order Blue,White")
    _select(st, BLUE, (BARON, KN1, INF1), 2)
    _select(st, WHITE, (BARON, KN1, INF1), 0)
    obs = st.observation(BLUE)
    assert "deck" not in json.dumps(obs) and set(obs) >= {"plague_drawn", "plague_history"}
    assert obs["trade_held"] == st.trade_held and obs["army_held"] == st.army_held  # public (R22)
    st.apply_action(chance_action(st, "Border"))
    act(st, "reveal Knight 1")
    obs = st.observation(WHITE)
    assert obs["sel_army"][BLUE] == [t == KN1 for t in range(10)]
    assert obs["plague_history"] == [st.game.ruleset.plague_cards[8].index]
    with pytest.raises(StateError):
        st.observation(2)


def test_r22_mercenary_move_is_public_evidence():
    st = make(2)
    set_turn(st, 2)
    put(st, BLUE, MER1, "C2-2")
    st.sel_army[WHITE][INF3] = True  # White still has a card to reveal: the Trading Cards are not shown yet
    move_options(st, BLUE, MER1, trade=TWO)
    act(st, "move Mercenary 1 to C2-3")
    assert st.phase == Phase.REVEAL and st.current_player() == WHITE
    obs = st.observation(WHITE)
    assert obs["merc_moved"][BLUE] == 1 and obs["sel_trade"][BLUE] == -1
