"""Rules of the Movement Phase: reveals (R7), paths and stacking (R8), Trading Cards (R9), the Convent (R10).

Positions are hand-built on the default map (seed 0), whose board C is the top-left quadrant:

    row 0  C0-0(Blue Castle) C0-1   C0-2      C0-3   C0-4/A4-0(joined corner)
    row 1  C1-0              C1-1v  C1-2Wood  C1-3v  C1-4      Todenham
    row 2  C2-0              C2-1^  C2-2      C2-3   C2-4
    row 3  C3-0              C3-1v  C3-2      C3-3v  C3-4
    row 4  C4-0/D0-4         C4-1   C4-2      Pershore(City)  Central Hill
"""

from __future__ import annotations

import pytest

from engine import IllegalActionError
from engine.state import CASTLE, Phase

from helpers import (BARON, BLUE, FK, FOUR, INF1, INF2, INF3, KN1, KN2, MER1, MILADY, TWO, WHITE, ZERO, act, at,
                     attack_targets, legal_strings, make, move_options, play_until, put, set_turn, tid, touch)


@pytest.fixture
def s():
    st = make(2)  # Blue Castle C0-0, White Castle A0-0
    set_turn(st, 2)
    return st


def to_traders(st, trades: dict[int, int], order=(BLUE, WHITE)):
    """Finish the Army Card reveals: the next action (PASS) starts the Trading Card reveals (R7, R9)."""
    st.order = list(order)
    last = order[-1]
    for p, c in trades.items():
        st.sel_trade[p] = c
    for p in order:
        st.sel_army[p] = [False] * 10
        st.revealed[p] = [False] * 10
    st.sel_army[last][INF3] = st.revealed[last][INF3] = True
    st.phase = int(Phase.MOVE)
    st.round = 2
    st.cursor = len(order) - 1
    st.token = INF3
    touch(st)
    st.apply_action(0)  # the last Army Card stays: Trading Cards follow


# ------------------------------------------------------------------------------------------------------ R7

def test_r7_castle_entry_is_free_and_must_move_off(s):
    # Infantryman (2) enters on C0-0 at no cost, then moves 1 or 2; never ends on the Castle territory.
    assert move_options(s, BLUE, INF1) == {"C0-1", "C0-2", "C1-0", "C1-1", "C2-0"}
    # Knight (3): no Villages, so C1-1 is excluded and the Wood C1-2 is reached round it.
    assert move_options(s, BLUE, KN1) == {"C0-1", "C0-2", "C0-3", "C1-0", "C1-2", "C2-0", "C3-0"}


def test_r7_castle_entry_staying_keeps_token_in_castle(s):
    move_options(s, BLUE, KN1)
    s.apply_action(0)  # PASS: the token does not enter
    assert s.loc[BLUE][KN1] == CASTLE and not s.entered[BLUE][KN1]


def test_r7_move_up_to_current_number(s):
    put(s, BLUE, FK, "C2-2")
    far = move_options(s, BLUE, FK)
    assert "C4-2" in far and "C2-4" in far  # 2 steps
    put(s, BLUE, FK, "C2-2", stricken=True)  # black 2
    assert move_options(s, BLUE, FK) == {"C1-2", "C2-3", "C3-2", "C2-4", "C4-2"}  # 2 steps, no Villages
    put(s, BLUE, KN1, "C2-2", stricken=True)  # a stricken Knight moves 1
    assert move_options(s, BLUE, KN1) == {"C1-2", "C2-3", "C3-2"}
    put(s, BLUE, KN1, "C2-2")  # healthy: 3
    assert {"C2-4", "C3-4", "C4-2"} <= move_options(s, BLUE, KN1)


def test_r7_reveal_rounds_follow_order_of_play():
    st = make(2)
    act(st, "order White,Blue")
    for p in (BLUE, WHITE):  # seat order selection
        assert st.current_player() == p and st.phase == Phase.SELECT
        for t in (BARON, KN1, INF1):
            act(st, f"select {st.game.ruleset.army[t].name}")
        act(st, "select trading card 0")
    assert st.phase == Phase.CHANCE_PLAGUE
    st.apply_action(st.chance_outcomes()[0][0])
    actors, shown = [], set()
    while st.phase in (Phase.REVEAL, Phase.MOVE, Phase.MILADY):
        if st.phase == Phase.REVEAL:
            actors.append(st.current_player())
            a = st.legal_actions()[0]
            shown.add((st.current_player(), a - st.game.layout.REVEAL))
            st.apply_action(a)
        else:
            st.apply_action(0)
    assert actors == [WHITE, BLUE, WHITE, BLUE, WHITE, BLUE]
    assert shown == {(p, t) for p in (0, 1) for t in (BARON, KN1, INF1)}
    assert st.turn == 2  # nothing entered the map, so no attack: the turn ended after the Trading Cards


def test_r7_reveal_only_selected_unrevealed_cards(s):
    s.phase = int(Phase.REVEAL)
    s.order, s.cursor, s.round = [BLUE, WHITE], 0, 0
    s.sel_army[BLUE] = [t in (BARON, KN2, INF3) for t in range(10)]
    s.revealed[BLUE][KN2] = True
    touch(s)
    assert legal_strings(s) == ["reveal Baron", "reveal Infantryman 3"]
    with pytest.raises(IllegalActionError):
        act(s, "reveal Knight 2")


def test_r7_mercenary_must_be_paid(s):
    put(s, BLUE, MER1, "C2-2")
    assert move_options(s, BLUE, MER1, trade=ZERO) == set()
    assert "C2-3" in move_options(s, BLUE, MER1, trade=TWO)
    # the 2-shilling card pays for two Mercenaries, not three
    s.merc_moved[BLUE] = 1
    assert move_options(s, BLUE, MER1, trade=TWO)
    s.merc_moved[BLUE] = 2
    assert move_options(s, BLUE, MER1, trade=TWO) == set()
    assert move_options(s, BLUE, MER1, trade=FOUR)
    # with the King's Help (R16) the fewest-VP player's 2-shilling card pays 4
    s.king, s.vp = True, [0, 5]
    s.merc_moved[BLUE] = 3
    assert move_options(s, BLUE, MER1, trade=TWO)
    s.vp = [5, 0]
    assert move_options(s, BLUE, MER1, trade=TWO) == set()


def test_r7_moved_mercenary_is_counted_and_paid_first(s):
    put(s, BLUE, MER1, "C2-2")
    move_options(s, BLUE, MER1, trade=TWO)
    act(s, "move Mercenary 1 to C2-3")
    assert s.merc_moved[BLUE] == 1
    put(s, BLUE, KN1, "C3-2")
    to_traders(s, {BLUE: TWO, WHITE: ZERO})
    assert s.phase == Phase.MARCH and s.current_player() == BLUE
    assert s.shillings == 1  # 2 printed - 1 Mercenary


def test_r7_wounded_baron_card_reveals_but_moves_nothing(s):
    s.rest_until[BLUE][BARON] = 2  # wounded on turn 1 (R12)
    assert move_options(s, BLUE, BARON) == set()
    s.turn = 3
    assert move_options(s, BLUE, BARON)


# ------------------------------------------------------------------------------------------------------ R8

def test_r8_plague_village_blocks(s):
    put(s, BLUE, INF1, "C1-0")
    assert "C1-1" in move_options(s, BLUE, INF1)
    s.plague_village = tid(s, "C1-1")
    opts = move_options(s, BLUE, INF1)
    assert "C1-1" not in opts and "C2-1" not in opts
    assert "C1-2" not in opts  # the only 2-step way to the Wood was through the plague Village


def test_r8_mountains_block(s):
    put(s, BLUE, KN1, "C2-0")
    opts = move_options(s, BLUE, KN1)
    assert "C2-1" not in opts  # Mountain
    assert "C2-2" not in opts  # 2 steps only through the Mountain or Villages
    put(s, BLUE, INF1, "C2-0")
    assert "C2-2" not in move_options(s, BLUE, INF1)  # Villages allowed, but 3 steps (C1-1/C3-1 route)
    put(s, BLUE, MER1, "C2-0")
    assert "C3-2" in move_options(s, BLUE, MER1, trade=TWO)  # 3 steps through the Village C3-1
    assert "C3-2" not in move_options(s, BLUE, KN1)  # a Knight would need the Mountain or a Village


def test_r8_central_hill_only_for_stricken(s):
    put(s, BLUE, KN1, "C3-4")
    assert "Central Hill" not in move_options(s, BLUE, KN1)
    put(s, BLUE, FK, "C2-4", stricken=True)
    opts = move_options(s, BLUE, FK)
    assert "Central Hill" in opts


def test_r8_free_and_enemy_cities_block_own_cities_only_for_town_tokens(s):
    put(s, BLUE, INF1, "C4-2")
    assert "Pershore" not in move_options(s, BLUE, INF1)  # free
    s.owner[tid(s, "Pershore")] = WHITE
    assert "Pershore" not in move_options(s, BLUE, INF1)  # enemy
    s.owner[tid(s, "Pershore")] = BLUE
    assert "Pershore" in move_options(s, BLUE, INF1)  # own
    assert "C3-3" in move_options(s, BLUE, INF1)  # Village
    put(s, BLUE, INF1, "C3-2")
    # own City may be passed: C3-2 -> C4-2 -> Pershore -> D3-4 is 3, but an Infantryman moves 2
    put(s, BLUE, KN1, "C4-2")
    opts = move_options(s, BLUE, KN1)
    assert "Pershore" not in opts and "C3-3" not in opts  # Knights never enter Cities or Villages
    put(s, BLUE, BARON, "C4-2")
    assert {"Pershore", "D3-4"} <= move_options(s, BLUE, BARON)  # own City passed
    s.owner[tid(s, "Pershore")] = -1
    assert "Pershore" not in move_options(s, BLUE, BARON)


def test_r8_enemy_castle_blocks():
    st = make(2, castles=[0, 5])  # White's Castle on the joined corner C0-4/A4-0 (board A's site)
    set_turn(st, 2)
    put(st, BLUE, BARON, "C0-3")
    opts = move_options(st, BLUE, BARON)
    assert "C0-4/A4-0" not in opts
    assert "A3-0" not in opts  # only reachable through the enemy Castle within 4
    assert "Todenham" not in opts


def test_r8_enemy_tokens_block_passing_and_stopping(s):
    put(s, BLUE, KN1, "C2-2")
    assert {"C2-3", "C2-4"} <= move_options(s, BLUE, KN1)
    put(s, WHITE, INF1, "C2-3")
    opts = move_options(s, BLUE, KN1)
    assert "C2-3" not in opts
    assert "C2-4" not in opts  # would need to pass the enemy (C1-3 and C3-3 are Villages)
    put(s, BLUE, KN1, CASTLE)
    put(s, BLUE, INF1, "C2-2")
    opts = move_options(s, BLUE, INF1)
    assert "C2-3" not in opts and "C3-3" in opts  # blocked there, the Infantryman still reaches a Village
    put(s, WHITE, INF1, CASTLE)
    assert "C2-3" in move_options(s, BLUE, INF1)


def test_r8_enemy_milady_alone_can_be_passed_and_shared(s):
    put(s, BLUE, KN1, "C2-2")
    put(s, WHITE, MILADY, "C2-3")
    opts = move_options(s, BLUE, KN1)
    assert "C2-3" in opts and "C2-4" in opts
    put(s, WHITE, INF1, "C2-3")  # no longer alone
    opts = move_options(s, BLUE, KN1)
    assert "C2-3" not in opts and "C2-4" not in opts


def test_r8_milady_may_not_pass_enemy_tokens_but_may_share_enemy_milady(s):
    put(s, BLUE, MILADY, "C2-2")
    put(s, WHITE, KN1, "C2-3")
    opts = move_options(s, BLUE, MILADY)
    assert "C2-3" not in opts and "C2-4" not in opts
    put(s, WHITE, KN1, CASTLE)
    put(s, WHITE, MILADY, "C2-3")
    assert {"C2-3", "C2-4"} <= move_options(s, BLUE, MILADY)


def test_r8_own_tokens_passable_stacking_only_with_baron_or_milady(s):
    put(s, BLUE, KN1, "C2-2")
    put(s, BLUE, KN2, "C2-3")
    opts = move_options(s, BLUE, KN1)
    assert "C2-3" not in opts  # two army tokens may not share
    assert "C2-4" in opts  # but may pass
    put(s, BLUE, BARON, "C2-3")
    put(s, BLUE, KN2, CASTLE)
    assert "C2-3" in move_options(s, BLUE, KN1)  # with the Baron
    put(s, BLUE, BARON, CASTLE)
    put(s, BLUE, MILADY, "C2-3")
    assert "C2-3" in move_options(s, BLUE, KN1)  # with Milady
    assert "C2-2" in move_options(s, BLUE, MILADY)  # Milady joins an army token
    put(s, BLUE, BARON, "C2-4")
    put(s, BLUE, MILADY, "C2-4")
    opts = move_options(s, BLUE, KN1)
    assert "C2-4" not in opts  # at most 2 tokens
    put(s, BLUE, BARON, "C3-2")
    put(s, BLUE, MILADY, "C3-3")  # illegal for Milady (Village) but only used as an occupant here
    assert "C3-2" in move_options(s, BLUE, KN1)


def test_r8_first_knight_always_alone(s):
    put(s, BLUE, FK, "C2-2")
    put(s, BLUE, BARON, "C2-3")
    put(s, BLUE, MILADY, "C3-2")
    opts = move_options(s, BLUE, FK)
    assert "C2-3" not in opts and "C3-2" not in opts and "C2-4" in opts  # passes own tokens
    assert "C2-2" not in move_options(s, BLUE, BARON)  # nobody joins the First Knight
    assert "C2-2" not in move_options(s, BLUE, MILADY)
    put(s, WHITE, MILADY, "C2-4")
    assert "C2-4" not in move_options(s, BLUE, FK)  # ruling: not even with an enemy Milady


def test_r8_villages_and_cities_only_for_baron_mercenary_infantryman(s):
    put(s, BLUE, FK, "C2-2")
    s.owner[tid(s, "Pershore")] = BLUE
    for t in (FK, KN1, MILADY):
        put(s, BLUE, FK, CASTLE)
        put(s, BLUE, t, "C3-2")
        opts = move_options(s, BLUE, t)
        assert not {"C3-1", "C3-3", "Pershore"} & opts, t
        put(s, BLUE, t, CASTLE)
    for t in (BARON, MER1, INF1):
        put(s, BLUE, t, "C3-2")
        opts = move_options(s, BLUE, t, trade=FOUR)
        assert {"C3-1", "C3-3"} <= opts, t
        put(s, BLUE, t, CASTLE)
    put(s, BLUE, INF1, "C4-2")
    assert "Pershore" in move_options(s, BLUE, INF1)


def test_r8_wood_holds_one_and_ends_the_move(s):
    put(s, BLUE, FK, "C0-2")
    opts = move_options(s, BLUE, FK)
    # C2-2 is 2 steps through the Wood C1-2, which ends the move; round it (no Villages) it is 6 steps.
    assert "C1-2" in opts and "C2-2" not in opts and "C2-3" in opts
    put(s, BLUE, KN1, "C0-2")
    put(s, BLUE, FK, CASTLE)
    assert "C2-2" not in move_options(s, BLUE, KN1)  # would pass through the Wood
    assert "C1-2" in move_options(s, BLUE, KN1)
    put(s, WHITE, MILADY, "C1-2")
    assert "C1-2" not in move_options(s, BLUE, KN1)  # a Wood holds 1 token, even with an enemy Milady
    put(s, WHITE, MILADY, CASTLE)
    put(s, BLUE, BARON, "C1-2")
    assert "C1-2" not in move_options(s, BLUE, KN1)  # not even with the own Baron


def test_r8_wood_exit_is_free(s):
    put(s, BLUE, KN1, "C1-2")
    assert {"C2-2", "C3-2", "C2-3", "C0-1"} <= move_options(s, BLUE, KN1)


def test_r8_own_castle_territory_pass_through_no_stop(s):
    put(s, BLUE, KN1, "C0-1")
    opts = move_options(s, BLUE, KN1)
    assert "C0-0" not in opts
    assert "C1-0" in opts  # only via the Castle territory (C1-1 is a Village)
    put(s, BLUE, KN1, "C1-0")
    s.stricken[BLUE][KN1] = True  # moves 1
    assert "C0-0" not in move_options(s, BLUE, KN1)


def test_r8_token_on_map_never_reenters_castle(s):
    put(s, BLUE, INF1, "C0-1")
    move_options(s, BLUE, INF1)
    assert len(s.legal_actions()) > 2
    for a in s.legal_actions():
        if a != 0:
            c = s.clone()
            c.apply_action(a)
            assert c.loc[BLUE][INF1] >= 0 and c.loc[BLUE][INF1] != c.castle_territory(BLUE)


def test_r3_joined_corner_is_one_territory_for_movement(s):
    # R3: the joined corner C0-4/A4-0 links board C to board A for movement
    put(s, BLUE, KN1, "C0-3")
    assert {"C0-4/A4-0", "A3-0", "A2-0"} <= move_options(s, BLUE, KN1)


# ------------------------------------------------------------------------------------------------------ R9

def test_r9_shillings_march_tokens_on_map(s):
    put(s, BLUE, KN1, "C2-2")
    put(s, BLUE, INF1, "C3-2")
    to_traders(s, {BLUE: FOUR, WHITE: ZERO})
    assert s.phase == Phase.MARCH and s.shillings == 4
    opts = legal_strings(s)
    assert "march Knight 1 to C2-4" in opts  # 2 shillings
    assert not any("Knight 2" in o for o in opts)  # in the Castle: not on the map
    act(s, "march Knight 1 to C2-4")
    assert s.shillings == 2 and at(s, BLUE, KN1) == "C2-4"
    act(s, "march Infantryman 1 to C3-3")
    assert s.shillings == 1
    act(s, "march Knight 1 to C3-4")
    assert s.shillings == 0 and s.phase != Phase.MARCH  # all spent: White's 0 card, then attacks


def test_r9_unused_shillings_are_lost(s):
    put(s, BLUE, KN1, "C2-2")
    to_traders(s, {BLUE: FOUR, WHITE: ZERO})
    act(s, "pass")
    assert s.shillings == 0 and s.phase != Phase.MARCH
    assert at(s, BLUE, KN1) == "C2-2"
    assert s.turn == 3 and not s.trade_held[BLUE][FOUR]  # the card is discarded at the end of the turn


def test_r9_wood_ends_marching(s):
    put(s, BLUE, KN1, "C2-2")
    put(s, BLUE, INF1, "C3-2")
    to_traders(s, {BLUE: FOUR, WHITE: ZERO})
    act(s, "march Knight 1 to C1-2")
    assert s.march_over[BLUE][KN1] and s.shillings == 3
    opts = legal_strings(s)
    assert opts and not any("Knight 1" in o for o in opts)  # the Knight's marching is over
    assert "march Infantryman 1 to C3-1" in opts


def test_r9_zero_card_no_march_and_king_help_only_for_printed_shillings(s):
    put(s, BLUE, KN1, "C2-2")
    to_traders(s, {BLUE: ZERO, WHITE: ZERO})
    assert s.phase != Phase.MARCH  # nothing to march with
    st = make(2)
    set_turn(st, 2)
    put(st, BLUE, KN1, "C2-2")
    st.king, st.vp = True, [0, 3]
    to_traders(st, {BLUE: ZERO, WHITE: ZERO})
    assert st.phase != Phase.MARCH  # R16: no help with a card without shillings
    st = make(2)
    set_turn(st, 2)
    put(st, BLUE, KN1, "C2-2")
    st.king, st.vp = True, [0, 3]
    to_traders(st, {BLUE: TWO, WHITE: ZERO})
    assert st.shillings == 4  # 2 + the King's 2


def test_r9_charmed_player_forfeits_trading_card(s):
    put(s, BLUE, KN1, "C2-2")
    s.charmed[BLUE] = True
    to_traders(s, {BLUE: FOUR, WHITE: ZERO})
    assert s.phase != Phase.MARCH and at(s, BLUE, KN1) == "C2-2"
    assert s.turn == 3 and not s.trade_held[BLUE][FOUR]  # shown and discarded


def test_r9_march_cost_is_path_length_and_respects_r8(s):
    put(s, BLUE, KN1, "C2-2")
    put(s, WHITE, INF1, "C2-3")
    to_traders(s, {BLUE: TWO, WHITE: ZERO})
    opts = legal_strings(s)
    assert "march Knight 1 to C2-3" not in opts and "march Knight 1 to C2-4" not in opts
    assert "march Knight 1 to C4-2" in opts


# ------------------------------------------------------------------------------------------------------ R10

def test_r10_convent_entry_ends_move_and_needs_stricken(s):
    put(s, BLUE, FK, "C2-4", stricken=True)  # moves 2: C3-4 then the Central Hill
    opts = move_options(s, BLUE, FK)
    assert "Central Hill" in opts
    put(s, BLUE, KN1, "C3-4", stricken=True)  # moves 1
    assert "Central Hill" in move_options(s, BLUE, KN1)
    put(s, BLUE, BARON, "C3-4")  # healthy Baron: 4 moves, never through the Central Hill
    opts = move_options(s, BLUE, BARON)
    assert "Central Hill" not in opts and "B4-3" not in opts


def test_r10_convent_does_not_let_a_stricken_token_pass(s):
    put(s, BLUE, BARON, "C3-4", stricken=True)  # black 2
    opts = move_options(s, BLUE, BARON)
    assert "Central Hill" in opts
    assert "A3-4" not in opts and "D3-4" not in opts  # both 2 steps only through the Central Hill


def test_r10_convent_no_limit_friend_or_enemy(s):
    c = "Central Hill"
    put(s, BLUE, INF1, c, stricken=True)
    put(s, BLUE, INF2, c, stricken=True)
    put(s, WHITE, INF1, c, stricken=True)
    put(s, BLUE, FK, "C3-4", stricken=True)
    assert c in move_options(s, BLUE, FK)  # even the First Knight
    put(s, WHITE, KN1, "A3-4", stricken=True)
    assert c in move_options(s, WHITE, KN1)


def test_r10_leaving_costs_one_and_recovery_at_start_of_turn(s):
    c = "Central Hill"
    put(s, BLUE, KN1, c, stricken=True)
    opts = move_options(s, BLUE, KN1)  # black 1: only neighbours of the Central Hill
    assert opts == {"C3-4", "A3-4", "D3-4", "B4-3", "D4-3", "B3-4"}  # not Mountain A4-3, not City Pershore
    # the start of the next turn heals it (R4, R10)
    st = make(2)
    put(st, BLUE, KN1, c, stricken=True)
    put(st, BLUE, KN2, "C2-2", stricken=True)
    play_until(st, lambda x: x.turn == 2)
    assert not st.stricken[BLUE][KN1] and st.stricken[BLUE][KN2]


def test_r10_convent_safe_from_attack_and_cannot_attack(s):
    put(s, BLUE, FK, "C3-4")
    put(s, WHITE, INF1, "Central Hill", stricken=True)
    assert "Central Hill" not in attack_targets(s, BLUE)
    put(s, WHITE, INF1, "D3-4")
    put(s, BLUE, FK, "Central Hill")
    assert attack_targets(s, BLUE) == set()
