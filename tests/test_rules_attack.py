"""Rules of the Attack and Advance Phases and of victory points: R11-R17.

Hand-built positions on the default map (seed 0); see test_rules_movement.py for the layout of board C.
Blue's Castle is C0-0, White's A0-0.
"""

from __future__ import annotations

from collections import deque

import pytest

from engine.state import CASTLE, DEAD, Phase

from helpers import (BARON, BLUE, FK, FOUR, INF1, INF2, INF3, KN1, KN2, MER1, MILADY, TWO, WHITE, YELLOW,
                     ZERO, act, at, attack, attack_targets, legal_strings, make, move_options, put,
                     set_turn, tid, touch)


@pytest.fixture
def s():
    st = make(2)
    set_turn(st, 2, order=[BLUE, WHITE])
    return st


def bfs(m, a, b):
    dist = {a: 0}
    q = deque([a])
    while q:
        x = q.popleft()
        for y in m.territories[x].neighbors:
            if y not in dist:
                dist[y] = dist[x] + 1
                q.append(y)
    return dist[b]


def kill_all_but(st, p, keep):
    for t in range(10):
        if t not in keep:
            st.loc[p][t] = DEAD
    touch(st)


# ------------------------------------------------------------------------------------------------------ R11

def test_r11_target_must_be_adjacent(s):
    put(s, BLUE, KN1, "C2-2")
    put(s, WHITE, INF1, "C2-4")
    assert attack_targets(s, BLUE) == set()
    put(s, WHITE, INF1, "C2-3")
    assert attack_targets(s, BLUE) == {"C2-3"}


def test_r11_win_eliminates_defender_immediately(s):
    put(s, BLUE, KN1, "C2-2")
    put(s, WHITE, INF1, "C2-3")
    attack_targets(s, BLUE)
    attack(s, BLUE, "C2-3", [KN1])
    assert s.loc[WHITE][INF1] == DEAD and at(s, BLUE, KN1) in ("C2-2", "C2-3")
    assert s.vp == [2, 0]


def test_r11_tie_is_a_lost_attack(s):
    put(s, BLUE, KN1, "C2-2")
    put(s, WHITE, KN2, "C2-3")
    attack_targets(s, BLUE)
    attack(s, BLUE, "C2-3", [KN1])  # 3 against 3
    assert s.loc[BLUE][KN1] == DEAD and at(s, WHITE, KN2) == "C2-3"
    assert s.vp == [0, 3]  # the defender scores the eliminated attacker (R15)


def test_r11_weaker_attack_is_legal_and_lost(s):
    put(s, BLUE, INF1, "C2-2")
    put(s, WHITE, FK, "C2-3")
    assert attack_targets(s, BLUE) == {"C2-3"}
    attack(s, BLUE, "C2-3", [INF1])
    assert s.loc[BLUE][INF1] == DEAD and s.vp == [0, 2]


def test_r11_village_defence_three(s):
    put(s, BLUE, FK, "C2-3")
    put(s, WHITE, INF1, "C3-3")  # Village: 2 + 3 = 5
    attack_targets(s, BLUE)
    attack(s, BLUE, "C3-3", [FK])
    assert s.loc[BLUE][FK] == DEAD and s.vp == [0, 5]
    st = make(2)
    set_turn(st, 2, order=[BLUE, WHITE])
    put(st, BLUE, FK, "C2-3")
    put(st, BLUE, KN1, "C3-2")
    put(st, WHITE, INF1, "C3-3")
    attack_targets(st, BLUE)
    attack(st, BLUE, "C3-3", [FK, KN1])  # 8 > 5: Knights may attack into a Village
    assert st.loc[WHITE][INF1] == DEAD and st.vp == [2, 0]


def test_r11_wood_defence_five(s):
    put(s, BLUE, FK, "C2-2")
    put(s, BLUE, INF2, "C1-3")
    put(s, WHITE, INF1, "C1-2")  # Wood: 2 + 5 = 7
    attack_targets(s, BLUE)
    attack(s, BLUE, "C1-2", [FK, INF2])  # 7: lost
    assert s.loc[BLUE][FK] == DEAD and s.loc[BLUE][INF2] == DEAD and s.vp == [0, 7]
    st = make(2)
    set_turn(st, 2, order=[BLUE, WHITE])
    put(st, BLUE, FK, "C2-2")
    put(st, BLUE, KN1, "C1-3")
    put(st, WHITE, INF1, "C1-2")
    attack_targets(st, BLUE)
    attack(st, BLUE, "C1-2", [FK, KN1])  # 8 > 7
    assert st.loc[WHITE][INF1] == DEAD


def test_r11_hill_no_bonus_and_defence_only(s):
    put(s, BLUE, INF1, "C2-2")
    put(s, WHITE, MILADY, "C2-3")
    put(s, WHITE, INF1, "C2-3", stricken=True)  # 1 on a Hill
    attack_targets(s, BLUE)
    attack(s, BLUE, "C2-3", [INF1])  # 2 > 1
    assert s.loc[WHITE][INF1] == DEAD and s.vp == [1, 0]  # VP = current number
    assert at(s, WHITE, MILADY) == "C2-3"  # Milady is never attacked


def test_r11_milady_neither_attacks_nor_is_attacked(s):
    put(s, BLUE, MILADY, "C2-2")
    put(s, WHITE, INF1, "C2-3")
    put(s, WHITE, MILADY, "C3-2")
    assert attack_targets(s, BLUE) == set()  # Milady cannot attack C2-3; C3-2 holds only a Milady
    put(s, BLUE, KN1, "C4-2")
    assert attack_targets(s, BLUE) == set()  # C3-2: only Milady (and free Pershore needs an Infantryman)
    put(s, BLUE, KN1, "C2-4")
    assert attack_targets(s, BLUE) == {"C2-3"}
    s.apply_action(s.game.layout.ATTACK + tid(s, "C2-3"))
    assert "join Milady" not in legal_strings(s)


def test_r11_each_token_attacks_once_per_turn(s):
    put(s, BLUE, FK, "C2-3")
    put(s, WHITE, INF1, "C2-2")
    put(s, WHITE, INF2, "C2-4")
    attack_targets(s, BLUE)
    attack(s, BLUE, "C2-2", [FK])
    assert s.loc[WHITE][INF1] == DEAD
    assert s.attacked[BLUE][FK]
    # Blue has no other attacker: C2-4 is not offered any more; White (next) attacks or the turn goes on
    assert not (s.phase == Phase.ATTACK and s.current_player() == BLUE)


def test_r11_joined_attack_sums_forces_and_attack_order(s):
    put(s, BLUE, KN1, "C2-2")
    put(s, BLUE, INF1, "C3-3")
    put(s, WHITE, FK, "C2-3")  # 5
    put(s, WHITE, KN1, "C2-1")  # never mind the Mountain: White's attacker on Blue's C2-2
    s.order = [WHITE, BLUE]
    assert attack_targets(s, WHITE) == {"C2-2", "C3-3"}
    s.cursor = 0
    touch(s)
    assert s.current_player() == WHITE  # the first in order of play attacks first
    act(s, "pass")
    assert s.current_player() == BLUE and s.phase == Phase.ATTACK
    act(s, "attack C2-3")
    assert legal_strings(s) == ["join Knight 1", "join Infantryman 1"]  # launch needs a joiner
    act(s, "join Knight 1")
    assert "pass" in legal_strings(s)
    act(s, "join Infantryman 1")
    act(s, "pass")  # 3 + 2 = 5: tie, lost
    assert s.loc[BLUE][KN1] == DEAD and s.loc[BLUE][INF1] == DEAD and s.vp == [0, 5]


def test_r11_baron_and_companion_attack_and_defend_together(s):
    put(s, BLUE, BARON, "C2-2")
    put(s, BLUE, KN1, "C2-2")
    put(s, BLUE, MILADY, "C3-2")
    put(s, WHITE, FK, "C2-3")
    attack_targets(s, BLUE)
    act(s, "attack C2-3")
    act(s, "join Knight 1")
    assert set(s.joiners) == {KN1, BARON}  # the Knight brings the Baron
    act(s, "pass")  # 7 > 5
    assert s.loc[WHITE][FK] == DEAD and s.vp == [5, 0]
    # defending together: 4 + 3 = 7 on a Hill
    st = make(2)
    set_turn(st, 2, order=[WHITE, BLUE])
    put(st, BLUE, BARON, "C2-2")
    put(st, BLUE, KN1, "C2-2")
    put(st, BLUE, MILADY, "C2-2")
    put(st, WHITE, FK, "C2-3")
    put(st, WHITE, INF1, "C3-2")
    attack_targets(st, WHITE)
    attack(st, WHITE, "C2-2", [FK, INF1])  # 7 against 7: lost
    assert st.loc[WHITE][FK] == DEAD and st.loc[WHITE][INF1] == DEAD and st.vp == [7, 0]


def test_r11_city_attack_needs_mercenary_or_infantryman(s):
    put(s, BLUE, FK, "C3-3")
    put(s, BLUE, KN1, "C4-2")
    assert attack_targets(s, BLUE) == set()  # free Pershore, no Infantryman/Mercenary among possible attackers
    put(s, BLUE, BARON, "D3-4")
    assert attack_targets(s, BLUE) == set()  # the Baron only counts once no Infantryman/Mercenary is left
    put(s, BLUE, BARON, CASTLE)
    put(s, BLUE, INF1, "D3-4")
    assert attack_targets(s, BLUE) == {"Pershore"}
    act(s, "attack Pershore")
    act(s, "join First Knight")
    act(s, "join Knight 1")
    assert "pass" not in legal_strings(s)  # cannot launch without the Infantryman
    act(s, "join Infantryman 1")
    act(s, "pass")  # 10 > 7
    assert s.owner[tid(s, "Pershore")] == BLUE and s.vp == [7, 0]  # 7 territories from C0-0


def test_r11_city_attack_with_baron_when_no_mercenary_or_infantryman_left(s):
    kill_all_but(s, BLUE, {BARON, MILADY, FK, KN1, KN2})
    put(s, BLUE, FK, "C3-3")
    put(s, BLUE, KN1, "C4-2")
    assert attack_targets(s, BLUE) == set()
    put(s, BLUE, BARON, "D3-4")
    assert attack_targets(s, BLUE) == {"Pershore"}
    act(s, "attack Pershore")
    act(s, "join First Knight")
    assert "pass" not in legal_strings(s)
    act(s, "join Baron")  # 4 non-Milady tokens left: not desperate, force 4
    act(s, "pass")  # 5 + 4 = 9 > 7
    assert s.owner[tid(s, "Pershore")] == BLUE


def test_r11_city_defence_seven_plus_tokens(s):
    p = tid(s, "Pershore")
    s.owner[p] = WHITE
    put(s, WHITE, INF1, "Pershore")  # 2 + 7 = 9
    put(s, BLUE, FK, "C3-3")
    put(s, BLUE, INF1, "D3-4")
    put(s, BLUE, KN1, "C4-2", stricken=True)
    attack_targets(s, BLUE)
    attack(s, BLUE, "Pershore", [FK, INF1, KN1])  # 5 + 2 + 1 = 8: lost
    assert s.owner[p] == WHITE and s.vp == [0, 8]
    st = make(2)
    set_turn(st, 2, order=[BLUE, WHITE])
    st.owner[p] = WHITE
    st.vp = [0, 9]
    put(st, WHITE, INF1, "Pershore")
    put(st, BLUE, FK, "C3-3")
    put(st, BLUE, INF1, "D3-4")
    put(st, BLUE, KN1, "C4-2")
    attack_targets(st, BLUE)
    attack(st, BLUE, "Pershore", [FK, INF1, KN1])  # 10 > 9 (rulebook example: "at least 10")
    assert st.owner[p] == BLUE and st.loc[WHITE][INF1] == DEAD
    assert st.vp == [2 + 7, 9 - 9]  # R15: +2 token, +7 distance for Blue; White loses 9 (A0-0 to Pershore)


def test_r11_lost_attack_on_empty_enemy_city_scores_for_owner(s):
    p = tid(s, "Pershore")
    s.owner[p] = WHITE
    put(s, BLUE, INF1, "D3-4")
    put(s, BLUE, FK, "C3-3")
    attack_targets(s, BLUE)
    attack(s, BLUE, "Pershore", [FK, INF1])  # 7: not more than the walls
    assert s.vp == [0, 7] and s.owner[p] == WHITE
    st = make(2)
    set_turn(st, 2, order=[BLUE, WHITE])
    put(st, BLUE, INF1, "D3-4")
    attack_targets(st, BLUE)
    attack(st, BLUE, "Pershore", [INF1])  # free City: nobody scores
    assert st.vp == [0, 0] and st.loc[BLUE][INF1] == DEAD


def test_r11_own_city_not_a_target_and_tokens_in_castle_do_not_attack(s):
    s.owner[tid(s, "Pershore")] = BLUE
    put(s, BLUE, INF1, "D3-4")
    assert attack_targets(s, BLUE) == set()
    put(s, WHITE, INF1, "C0-1")  # next to Blue's Castle: tokens inside cannot attack
    assert attack_targets(s, BLUE) == set()


def test_r11_knights_attack_city_but_cannot_advance_into_it(s):
    put(s, BLUE, KN1, "C4-2")
    put(s, BLUE, FK, "C3-3")
    put(s, BLUE, INF1, "D3-4")
    attack_targets(s, BLUE)
    attack(s, BLUE, "Pershore", [FK, KN1, INF1])
    assert s.phase == Phase.ADVANCE and s.current_player() == BLUE
    assert legal_strings(s) == ["pass", "advance Infantryman 1"]


# ------------------------------------------------------------------------------------------------------ R12

def test_r12_baron_defeated_is_wounded_companion_dies_milady_survives(s):
    put(s, WHITE, BARON, "C2-3", stricken=True)  # 2
    put(s, WHITE, KN1, "C2-3")  # 3: together 5
    put(s, WHITE, MILADY, "C2-3")
    put(s, BLUE, FK, "C2-2")
    put(s, BLUE, INF1, "C2-4")
    attack_targets(s, BLUE)
    attack(s, BLUE, "C2-3", [FK, INF1])  # 7 > 5
    assert s.loc[WHITE][BARON] == CASTLE and s.loc[WHITE][KN1] == DEAD
    assert at(s, WHITE, MILADY) == "C2-3"
    assert s.vp == [2 + 3, 0]  # the Baron's current (black) number
    assert s.rest_until[WHITE][BARON] == 3


def test_r12_wounded_baron_rests_one_turn_then_moves_from_castle(s):
    s.loc[WHITE][BARON] = CASTLE
    s.entered[WHITE][BARON] = True
    s.rest_until[WHITE][BARON] = 3  # wounded on turn 2
    s.turn = 3
    assert move_options(s, WHITE, BARON) == set()
    s.turn = 4
    opts = move_options(s, WHITE, BARON)
    assert opts and "A1-0" in opts  # from his Castle A0-0


def test_r12_baron_losing_own_attack_is_wounded_and_scores_defender(s):
    put(s, BLUE, BARON, "C2-2")
    put(s, WHITE, FK, "C2-3")
    attack_targets(s, BLUE)
    attack(s, BLUE, "C2-3", [BARON])  # 4 < 5
    assert s.loc[BLUE][BARON] == CASTLE and s.vp == [0, 4]


# ------------------------------------------------------------------------------------------------------ R13

def milady_turn(st, p=BLUE):
    """p's Milady revealed in round 0, Blue first."""
    return move_options(st, p, MILADY)


def test_r13_milady_charms_adjacent_baron(s):
    put(s, BLUE, MILADY, "C2-2")
    put(s, WHITE, BARON, "C3-2")
    put(s, WHITE, INF1, "C2-4")
    s.sel_army[WHITE] = [t in (BARON, INF1, KN1) for t in range(10)]
    milady_turn(s)
    act(s, "pass")  # she stays where she is, next to the Baron
    assert s.phase == Phase.MILADY and legal_strings(s) == ["pass", "charm White"]
    act(s, "charm White")
    assert s.charmed[WHITE] and s.loc[BLUE][MILADY] == CASTLE
    assert s.rest_until[BLUE][MILADY] == s.turn + 1
    assert s.phase == Phase.REVEAL and s.current_player() == WHITE
    act(s, "reveal Infantryman 1")  # charmed: moves nothing
    assert s.phase != Phase.MOVE and at(s, WHITE, INF1) == "C2-4"
    assert move_options(s, WHITE, BARON) == set()


def test_r13_no_charm_of_a_player_outside_the_tiebreak():
    st = make(3)
    set_turn(st, 11, order=[BLUE, WHITE])
    st.tiebreak, st.active = 1, [True, True, False]
    put(st, BLUE, MILADY, "C2-2")
    put(st, YELLOW, BARON, "C2-3")
    move_options(st, BLUE, MILADY)
    act(st, "pass")
    assert st.phase != Phase.MILADY  # Yellow does not play this turn (engine ruling for R13 with R19)
    st.active = [True, True, True]
    st.order = [BLUE, WHITE, YELLOW]
    move_options(st, BLUE, MILADY)
    act(st, "pass")
    assert "charm Yellow" in legal_strings(st)


def test_r13_charmed_player_still_attacks(s):
    put(s, WHITE, BARON, "C2-3")
    put(s, BLUE, INF1, "C2-2", stricken=True)
    s.charmed[WHITE] = True
    assert attack_targets(s, WHITE) == {"C2-2"}


def test_r13_milady_moves_then_charms_and_rests_a_full_turn(s):
    put(s, BLUE, MILADY, "C2-2")
    put(s, WHITE, BARON, "C2-4")
    milady_turn(s)
    assert s.phase == Phase.MOVE
    act(s, "move Milady to C2-3")
    assert "charm White" in legal_strings(s)
    act(s, "charm White")
    s.turn = 3
    assert move_options(s, BLUE, MILADY) == set()  # resting the next full turn
    s.turn = 4
    assert "C0-1" in move_options(s, BLUE, MILADY)  # then again from her Castle


def test_r13_baron_in_castle_immune_and_stricken_milady_cannot_charm(s):
    put(s, BLUE, MILADY, "A1-0")
    milady_turn(s)  # White's Baron is in his Castle A0-0, next to A1-0
    act(s, "pass")
    assert s.phase != Phase.MILADY
    st = make(2)
    set_turn(st, 2)
    put(st, BLUE, MILADY, "C2-2", stricken=True)
    put(st, WHITE, BARON, "C2-3")
    milady_turn(st)
    act(st, "pass")
    assert st.phase != Phase.MILADY  # no charm, and nothing to infect (Barons are immune)


def test_r13_stricken_milady_infects_adjacent_enemies_with_immunities(s):
    c = tid(s, "C3-2")
    put(s, BLUE, MILADY, "C3-2", stricken=True)
    put(s, WHITE, INF1, "C2-2")  # infected
    put(s, WHITE, KN1, "C3-3")  # infected (Village is not immune)
    put(s, WHITE, BARON, "C4-2")  # Baron: immune
    put(s, WHITE, MILADY, "C3-1")  # Milady: immune
    put(s, WHITE, INF2, "C4-2")
    put(s, WHITE, INF2, CASTLE)
    put(s, BLUE, INF1, "C2-2")
    put(s, BLUE, INF1, CASTLE)
    milady_turn(s)
    act(s, "pass")
    assert legal_strings(s) == ["pass", "infect"]
    act(s, "infect")
    assert s.stricken[WHITE][INF1] and s.stricken[WHITE][KN1]
    assert not s.stricken[WHITE][BARON] and not s.stricken[WHITE][MILADY]
    assert s.loc[BLUE][MILADY] == c  # she stays


def test_r13_infection_spares_stricken_city_and_convent_tokens(s):
    put(s, BLUE, MILADY, "D3-4", stricken=True)  # borders Pershore and the Central Hill
    s.owner[tid(s, "Pershore")] = WHITE
    put(s, WHITE, INF1, "Central Hill")  # healthy in the Convent (healed at the start of the turn): immune
    put(s, WHITE, MER1, "Pershore")  # in a City: immune
    put(s, WHITE, INF2, "D2-4", stricken=True)  # already stricken: immune (and not killed)
    milady_turn(s)
    act(s, "pass")
    assert s.phase != Phase.MILADY  # nobody to infect
    put(s, WHITE, INF3, "D3-3")
    milady_turn(s)
    act(s, "pass")
    act(s, "infect")
    assert s.stricken[WHITE][INF3] and not s.stricken[WHITE][INF1] and not s.stricken[WHITE][MER1]
    assert at(s, WHITE, INF2) == "D2-4" and s.stricken[WHITE][INF2]


# ------------------------------------------------------------------------------------------------------ R14

def test_r14_advance_one_participant_into_emptied_territory(s):
    put(s, BLUE, KN1, "C2-2")
    put(s, BLUE, INF1, "C2-4")
    put(s, WHITE, INF2, "C2-3")
    attack_targets(s, BLUE)
    attack(s, BLUE, "C2-3", [KN1, INF1])
    assert s.phase == Phase.ADVANCE
    assert legal_strings(s) == ["pass", "advance Knight 1", "advance Infantryman 1"]
    act(s, "advance Infantryman 1")
    assert at(s, BLUE, INF1) == "C2-3" and at(s, BLUE, KN1) == "C2-2"
    assert s.turn == 3  # only one token advances: the turn is over


def test_r14_baron_plus_one(s):
    put(s, BLUE, BARON, "C2-2")
    put(s, BLUE, KN1, "C2-2")
    put(s, BLUE, INF1, "C2-4")
    put(s, WHITE, INF2, "C2-3")
    attack_targets(s, BLUE)
    attack(s, BLUE, "C2-3", [INF1, KN1])
    act(s, "advance Infantryman 1")
    assert legal_strings(s) == ["pass", "advance Baron"]  # the second must be the Baron
    act(s, "advance Baron")
    assert at(s, BLUE, BARON) == "C2-3" and at(s, BLUE, INF1) == "C2-3" and at(s, BLUE, KN1) == "C2-2"


def test_r14_advance_into_wood_only_one_and_towns_only_for_town_tokens(s):
    put(s, BLUE, BARON, "C2-2")
    put(s, BLUE, KN1, "C2-2")
    put(s, WHITE, INF2, "C1-2")
    put(s, BLUE, FK, "C1-3")
    attack_targets(s, BLUE)
    attack(s, BLUE, "C1-2", [BARON, FK])  # 4 + 3 + 5 = 12 > 7
    act(s, "advance Knight 1")
    assert s.turn == 3 and at(s, BLUE, BARON) == "C2-2"  # a Wood holds one token
    st = make(2)
    set_turn(st, 2, order=[BLUE, WHITE])
    put(st, BLUE, FK, "C2-3")
    put(st, BLUE, KN1, "C3-2")
    put(st, WHITE, INF1, "C3-3")
    attack_targets(st, BLUE)
    attack(st, BLUE, "C3-3", [FK, KN1])
    assert st.turn == 3  # a Village: no Knight may advance, so no advance decision at all


@pytest.mark.parametrize("plague_there", [False, True])
def test_r14_advance_follows_r8_plague_village(s, plague_there):
    put(s, WHITE, INF1, "C3-1", stricken=True)  # 1 + Village 3
    put(s, BLUE, INF1, "C3-2")
    put(s, BLUE, KN1, "C3-0")
    if plague_there:
        s.plague_village = tid(s, "C3-1")  # the Infantryman was hit there
    attack_targets(s, BLUE)
    attack(s, BLUE, "C3-1", [INF1, KN1])  # 5 > 4
    assert s.loc[WHITE][INF1] == DEAD
    if plague_there:
        assert s.turn == 3  # nobody may advance into the plague Village
    else:
        assert legal_strings(s) == ["pass", "advance Infantryman 1"]


def test_r14_advance_in_order_of_play_and_optional(s):
    s.order = [WHITE, BLUE]
    put(s, BLUE, KN1, "C2-2")
    put(s, WHITE, INF1, "C2-3", stricken=True)
    put(s, WHITE, FK, "A1-0")
    put(s, BLUE, INF1, "A2-0", stricken=True)
    attack_targets(s, WHITE)
    attack(s, WHITE, "A2-0", [FK])
    assert s.phase == Phase.ATTACK and s.current_player() == WHITE  # White's Infantryman could attack C2-2
    act(s, "pass")
    assert s.phase == Phase.ATTACK and s.current_player() == BLUE
    attack(s, BLUE, "C2-3", [KN1])
    assert s.phase == Phase.ADVANCE and s.current_player() == WHITE
    act(s, "pass")
    assert s.current_player() == BLUE
    act(s, "advance Knight 1")
    assert at(s, WHITE, FK) == "A1-0" and at(s, BLUE, KN1) == "C2-3"


# ------------------------------------------------------------------------------------------------------ R15

def test_r15_city_distance_ignores_territory_types():
    st = make(2)
    m = st.game.map
    for a, b in (("C0-0", "Pershore"), ("A0-0", "Pershore"), ("C0-0", "Todenham"), ("C0-0", "Tewkesbury")):
        assert m.distance[tid(m, a)][tid(m, b)] == bfs(m, tid(m, a), tid(m, b))
    assert m.distance[tid(m, "C0-0")][tid(m, "Pershore")] == 7
    assert m.distance[tid(m, "C0-0")][tid(m, "Todenham")] == 5  # the joined corner is one territory


def test_r15_plague_deaths_give_no_vp_and_vp_may_go_negative(s):
    put(s, WHITE, INF1, "C1-0", stricken=True)
    s.plague_village = tid(s, "C3-1")
    s.phase = int(Phase.CHANCE_PLAGUE)
    touch(s)
    s.apply_action(next(a for a, _ in s.chance_outcomes() if s.action_to_string(a) == "plague: North 1"))
    assert at(s, WHITE, INF1) == "dead" and s.vp == [0, 0]
    st = make(2)
    set_turn(st, 2, order=[BLUE, WHITE])
    st.owner[tid(st, "Pershore")] = WHITE
    put(st, BLUE, INF1, "D3-4")
    put(st, BLUE, FK, "C3-3")
    put(st, BLUE, KN1, "C4-2")
    attack_targets(st, BLUE)
    attack(st, BLUE, "Pershore", [INF1, FK, KN1])
    assert st.vp == [7, -9]


def test_r15_every_vp_change_is_logged(s):
    put(s, BLUE, KN1, "C2-2")
    put(s, WHITE, INF1, "C2-3")
    attack_targets(s, BLUE)
    attack(s, BLUE, "C2-3", [KN1])
    assert s.vp_log[-1][:2] == (BLUE, 2)


# ------------------------------------------------------------------------------------------------------ R16

def test_r16_king_and_cowards_once(s):
    # Blue: an Infantryman (2) and a Knight (3) never entered; White: everything entered except Milady (2)
    for t in range(10):
        s.entered[BLUE][t] = t not in (INF2, KN2)
        s.entered[WHITE][t] = t != MILADY
    s.vp = [0, 10]
    put(s, WHITE, FK, "C2-2")
    put(s, BLUE, INF1, "C2-3", stricken=True)
    put(s, BLUE, INF3, "C1-0", stricken=True)
    put(s, WHITE, KN1, "C2-0")
    s.order = [WHITE, BLUE]
    attack_targets(s, WHITE)
    attack(s, WHITE, "C2-3", [FK])  # White reaches 11: nothing yet
    assert not s.king and s.vp == [0, 11]
    attack(s, WHITE, "C1-0", [KN1])  # exactly 12: the King
    assert s.king
    assert s.vp == [-5, 10 + 1 + 1 - 2]  # rulebook example: Blue loses 2 + 3; White loses Milady's 2
    assert (BLUE, -5, "the King and the Cowards") in s.vp_log
    # once per game
    put(s, WHITE, KN2, "C0-2")
    put(s, BLUE, INF2, "C0-3")
    s.attacked[WHITE] = [False] * 10
    attack_targets(s, WHITE)
    attack(s, WHITE, "C0-3", [KN2])
    assert s.vp == [-5, 12]
    assert sum(1 for e in s.vp_log if e[2] == "the King and the Cowards") == 2  # one entry per player, once


def test_r16_kings_help_for_fewest_vp_ties_all(s):
    s.king = True
    s.vp = [3, 3]
    assert s.shillings_of(BLUE, TWO) == 4 and s.shillings_of(WHITE, FOUR) == 6
    assert s.shillings_of(BLUE, ZERO) == 0
    s.vp = [3, 4]
    assert s.shillings_of(BLUE, TWO) == 4 and s.shillings_of(WHITE, TWO) == 2
    s.king = False
    assert s.shillings_of(BLUE, TWO) == 2


# ------------------------------------------------------------------------------------------------------ R17

def test_r17_force_of_the_desperate(s):
    assert s.number(BLUE, BARON) == 4
    kill_all_but(s, BLUE, {BARON, MILADY, FK, KN1})  # Baron, First Knight, Knight: 3 < 4
    assert s.living_soldiers(BLUE) == 3 and s.desperate(BLUE)
    assert s.number(BLUE, BARON) == 6
    s.stricken[BLUE][BARON] = True
    assert s.number(BLUE, BARON) == 3
    s.stricken[BLUE][BARON] = False
    put(s, BLUE, BARON, "C2-2")
    assert "C2-4" in move_options(s, BLUE, BARON) and len(move_options(s, BLUE, BARON)) > 10
    st = make(2)
    kill_all_but(st, BLUE, {BARON, MILADY, FK, KN1, KN2})  # 4 non-Milady tokens: not yet
    assert not st.desperate(BLUE) and st.number(BLUE, BARON) == 4
    assert st.number(WHITE, BARON) == 4


def test_r17_desperate_baron_scores_six_when_defeated(s):
    kill_all_but(s, WHITE, {BARON, MILADY, INF1})
    put(s, WHITE, BARON, "C2-3")
    put(s, BLUE, FK, "C2-2")
    put(s, BLUE, KN1, "C2-4")
    put(s, BLUE, INF1, "C1-3")
    attack_targets(s, BLUE)
    attack(s, BLUE, "C2-3", [FK, KN1])  # 8 > 6
    assert s.vp == [6, 0] and s.loc[WHITE][BARON] == CASTLE
