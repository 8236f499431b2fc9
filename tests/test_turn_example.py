"""The rulebook's "A Game Turn Example", replayed move by move on engine/data/maps/turn_example.json.

WHITE (seat 1) has the fewest VP and decides the order: BLUE (seat 0) first. Token slots (basic ruleset):
BLUE  Baron William le Blund, Milady, Knight 1 William le Mauduit, Infantryman 1 Geoffrey of Clinton,
      Infantryman 2 Robert of Roudiche; Blue owns Winterbourne (8 territories from its Castle).
WHITE Baron Urse d'Abetot, Mercenary 1 Robert Dispenser, Knight 1 Gilbert de Clare, First Knight William de
      Beauchamp, Infantryman 1 John of Botley (the token the plague strikes: made White's here).
"""

from __future__ import annotations

import pytest

from engine.state import CASTLE, DEAD, Phase

from helpers import (BARON, BLUE, FK, INF1, INF2, KN1, MER1, MILADY, WHITE, act, at, chance_action,
                     legal_strings, make, put, tid, touch)

GEOFFREY, ROUDICHE = INF1, INF2  # Blue's Infantrymen
GILBERT, DISPENSER, BEAUCHAMP, JOHN = KN1, MER1, FK, INF1  # White's tokens


@pytest.fixture
def start():
    st = make(2, castles=[10, 16], map_name="turn_example")  # Blue Castle, White Castle
    m = st.game.map
    assert m.distance[tid(m, "Blue Castle")][tid(m, "Todenham")] == 4
    assert m.distance[tid(m, "White Castle")][tid(m, "Winterbourne")] == 5
    assert m.distance[tid(m, "Blue Castle")][tid(m, "Winterbourne")] == 8
    # end of turn 2: everyone has played the 4-shilling card and one 0-shilling card
    st.turn = 2
    st.vp = [6, 2]
    st.owner[tid(st, "Winterbourne")] = BLUE
    for p in (BLUE, WHITE):
        st.trade_held[p] = [False, True, False, True, True]
        st.entered[p] = [True] * 10  # (nobody is a coward; the King does not intervene in the example)
    put(st, BLUE, BARON, "Blue Baron Hill")
    put(st, BLUE, KN1, "Blue Knight Hill")
    put(st, BLUE, GEOFFREY, "Winterbourne")
    put(st, BLUE, MILADY, "Milady Start")
    put(st, BLUE, ROUDICHE, "Roudiche Hill")
    put(st, WHITE, BARON, "White Baron Hill")
    put(st, WHITE, DISPENSER, "Dispenser Start")
    put(st, WHITE, GILBERT, "Gilbert Start")
    put(st, WHITE, BEAUCHAMP, "Beauchamp Start")
    put(st, WHITE, JOHN, "Botley Hill")
    for p in (BLUE, WHITE):
        for t in range(10):
            if st.loc[p][t] == CASTLE:
                st.loc[p][t] = DEAD  # the other tokens are not in the example
                st.army_held[p][t] = False
    st.phase = int(Phase.CHOOSE_ORDER)
    touch(st)
    st._start_turn()  # start of turn 3, Diplomacy (R4, R5)
    return st


def test_turn_example(start):
    st = start
    # Diplomacy Phase: WHITE has the fewest VP and decides: BLUE first, WHITE second.
    assert st.turn == 3 and st.phase == Phase.CHOOSE_ORDER and st.current_player() == WHITE
    act(st, "order Blue,White")
    # Strategy Phase
    assert st.current_player() == BLUE
    for card in ("Baron", "Milady", "Infantryman 1"):  # Geoffrey of Clinton
        act(st, f"select {card}")
    act(st, "select trading card 0")
    assert st.current_player() == WHITE
    for card in ("Baron", "Knight 1", "Mercenary 1"):  # Gilbert de Clare, Robert Dispenser
        act(st, f"select {card}")
    act(st, "select trading card 2")
    # Plague Phase: the Plague Token moves 1 East, infecting John of Botley (now worth 1, not 2)
    assert st.phase == Phase.CHANCE_PLAGUE
    st.apply_action(chance_action(st, "East 1"))
    assert at(st, WHITE, JOHN) == "Botley Hill" and st.stricken[WHITE][JOHN] and st.number(WHITE, JOHN) == 1
    assert st.game.map.territories[st.plague_village].name == "Plague East"
    assert sum(st.stricken[BLUE]) == 0 and sum(st.stricken[WHITE]) == 1
    # Movement Phase
    assert st.current_player() == BLUE
    act(st, "reveal Baron")
    act(st, "move Baron to Blue Knight Hill")  # 1, onto his Knight William le Mauduit
    assert st.current_player() == WHITE
    act(st, "reveal Mercenary 1")
    act(st, "move Mercenary 1 to White Baron Hill")  # 2 spaces, with his Baron
    assert st.merc_moved[WHITE] == 1
    act(st, "reveal Infantryman 1")
    assert "move Infantryman 1 to Clinton Wood" in legal_strings(st)
    act(st, "move Infantryman 1 to Clinton Wood")  # out of his City, 2 spaces into the Wood
    act(st, "reveal Knight 1")
    act(st, "move Knight 1 to Gilbert Hill")  # 1 space, alongside Winterbourne
    act(st, "reveal Milady")
    act(st, "move Milady to Milady End")  # 2 spaces towards the enemy Baron (not next to him: no charm)
    assert st.phase == Phase.REVEAL and st.current_player() == WHITE
    act(st, "reveal Baron")
    assert st.phase == Phase.MOVE
    act(st, "pass")  # does not move
    # Trading Cards: Blue's has no shillings; White's 2 shillings: 1 pays the Mercenary, 1 marches Beauchamp
    assert st.phase == Phase.MARCH and st.current_player() == WHITE and st.shillings == 1
    act(st, "march First Knight to Beauchamp Hill")  # 1 territory north, below Robert of Roudiche
    assert st.trade_revealed == [True, True]
    positions = {(p, t): at(st, p, t) for p in (BLUE, WHITE) for t in range(10) if st.loc[p][t] >= 0}
    assert positions == {
        (BLUE, BARON): "Blue Knight Hill", (BLUE, KN1): "Blue Knight Hill", (BLUE, GEOFFREY): "Clinton Wood",
        (BLUE, MILADY): "Milady End", (BLUE, ROUDICHE): "Roudiche Hill",
        (WHITE, BARON): "White Baron Hill", (WHITE, DISPENSER): "White Baron Hill",
        (WHITE, GILBERT): "Gilbert Hill", (WHITE, BEAUCHAMP): "Beauchamp Hill", (WHITE, JOHN): "Botley Hill"}
    # Attack Phase: BLUE attacks the free City of Todenham with force 9 (Baron 4 + Knight 3 + Roudiche 2) > 7
    assert st.phase == Phase.ATTACK and st.current_player() == BLUE
    assert "attack Todenham" in legal_strings(st)
    act(st, "attack Todenham")
    act(st, "join Baron")
    assert set(st.joiners) == {BARON, KN1}  # the Knight with him comes along (R11)
    act(st, "join Infantryman 2")
    act(st, "pass")
    assert st.owner[tid(st, "Todenham")] == BLUE
    assert st.vp == [6 + 4, 2]  # 4 territories from Blue's Castle
    if st.current_player() == BLUE and st.phase == Phase.ATTACK:
        act(st, "pass")
    # WHITE attacks the enemy City of Winterbourne with 10 (Baron 4 + Mercenary 3 + Knight 3) > 7
    assert st.phase == Phase.ATTACK and st.current_player() == WHITE
    act(st, "attack Winterbourne")
    act(st, "join Mercenary 1")
    assert set(st.joiners) == {BARON, DISPENSER}
    act(st, "join Knight 1")
    act(st, "pass")
    assert st.owner[tid(st, "Winterbourne")] == WHITE
    assert st.vp == [10 - 8, 2 + 5]  # White +5 (from its Castle), Blue -8 (from its Castle)
    # ... and the First Knight William de Beauchamp eliminates Robert of Roudiche: 5 > 2, +2
    act(st, "attack Roudiche Hill")
    act(st, "join First Knight")
    act(st, "pass")
    assert st.loc[BLUE][ROUDICHE] == DEAD
    assert st.vp == [2, 9]
    # Advance Phase: Blue declines; White's Mercenary enters the conquered City (free)
    assert st.phase == Phase.ADVANCE and st.current_player() == BLUE
    # only the Baron may enter the City (the Knight may not; Roudiche is dead)
    assert legal_strings(st) == ["pass", "advance Baron"]
    act(st, "pass")
    assert st.phase == Phase.ADVANCE and st.current_player() == WHITE
    assert "advance Knight 1" not in legal_strings(st)  # Knights never enter a City
    act(st, "advance Mercenary 1")
    while st.phase == Phase.ADVANCE:
        act(st, "pass")  # the Baron stays; Beauchamp stays below Roudiche Hill
    # End of turn: Roudiche's Army Card is discarded, and the played Trading Cards
    assert st.turn == 4
    assert at(st, WHITE, DISPENSER) == "Winterbourne" and at(st, WHITE, BARON) == "White Baron Hill"
    assert at(st, BLUE, BARON) == "Blue Knight Hill" and at(st, BLUE, KN1) == "Blue Knight Hill"
    assert at(st, WHITE, BEAUCHAMP) == "Beauchamp Hill"
    assert not st.army_held[BLUE][ROUDICHE] and st.army_held[BLUE][GEOFFREY]
    assert st.trade_held[BLUE] == [False, True, False, False, True]
    assert st.trade_held[WHITE] == [False, False, False, True, True]
    assert st.vp == [2, 9] and not st.king
    assert [(p, d) for p, d, _ in st.vp_log] == [(BLUE, 4), (WHITE, 5), (BLUE, -8), (WHITE, 2)]
    # John of Botley was struck in the Plague Phase and stays stricken (only the Convent heals him)
    assert st.stricken[WHITE][JOHN]


def test_turn_example_defence_arithmetic(start):
    """The reasoning in the example: Geoffrey in the City would defend with 9 and lose to 10."""
    st = start
    assert st.number(BLUE, GEOFFREY) + st.game.ruleset.defence_city == 9
    assert st.number(WHITE, BARON) + st.number(WHITE, DISPENSER) + st.number(WHITE, GILBERT) == 10
