"""Rulings R23 (stopping with an enemy Milady), R24 (Castles on both halves of a joined corner) and R25 (the
decision sequence never betrays hidden cards).

Hand-built positions on the default map (seed 0); see test_rules_movement.py for the layout of board C. Every
position is checked on the reference and on the compiled core (``CoreState.from_reference``): same legal
actions, same player to act, same phase.
"""

from __future__ import annotations

import pytest

from engine import new_game
from engine.state import CASTLE, DEAD, Phase

from helpers import (RS, BARON, BLUE, FK, FOUR, INF1, INF2, KN1, KN2, MER1, MER2, MILADY, TWO, WHITE, YELLOW,
                     ZERO, act, attack, attack_targets, game_map, legal_strings, make, move_options, put, set_turn,
                     tid, touch)

try:
    from engine import _core
except ImportError as e:  # pragma: no cover - CI builds the extension
    _core = None
    _IMPORT_ERROR = e

CORNER = "C0-4/A4-0"  # one territory for movement, two Castle sites: 4 (board C) and 5 (board A)


def core_of(st):
    """The core's copy of a reference position (a test failure, never a skip, when it is not built)."""
    if _core is None:
        pytest.fail(f"engine._core is not built ({_IMPORT_ERROR}): run `pip install -e .`", pytrace=False)
    return _core.CoreState.from_reference(st)


def same_on_core(st) -> list[str]:
    """Legal actions of a reference position as text, after checking the core agrees on them."""
    c = core_of(st)
    assert c.legal_actions() == st.legal_actions()
    assert c.current_player() == st.current_player() and c.phase == st.phase
    return legal_strings(st)


def moves(st, p, t, **kw) -> set[str]:
    out = move_options(st, p, t, **kw)
    same_on_core(st)
    return out


@pytest.fixture
def s():
    st = make(2)  # Blue Castle C0-0, White Castle A0-0
    set_turn(st, 2)
    return st


# ------------------------------------------------------------------------------------------------------ R23

def test_r23_no_stop_where_own_baron_shares_with_enemy_milady(s):
    put(s, BLUE, KN1, "C2-2")
    put(s, WHITE, MILADY, "C2-3")
    assert {"C2-3", "C2-4"} <= moves(s, BLUE, KN1)  # she is alone there: share or pass (R8)
    put(s, BLUE, BARON, "C2-3")  # the Baron joins her (Baron + enemy Milady: two tokens)
    opts = moves(s, BLUE, KN1)
    assert "C2-3" not in opts  # a third token may not stop there, even the Baron's companion
    assert "C2-4" in opts  # crossing is unchanged
    # without the enemy Milady the Knight may join its Baron (R8 stacking)
    put(s, WHITE, MILADY, CASTLE)
    assert "C2-3" in moves(s, BLUE, KN1)


def test_r23_own_milady_may_not_join_own_token_beside_enemy_milady(s):
    put(s, BLUE, MILADY, "C2-2")
    put(s, BLUE, KN2, "C2-3")
    assert "C2-3" in moves(s, BLUE, MILADY)  # Milady may join an own army token (R8)
    put(s, WHITE, MILADY, "C2-3")
    opts = moves(s, BLUE, MILADY)
    assert "C2-3" not in opts and "C2-4" in opts


def test_r23_two_enemy_miladies_are_not_one_token():
    st = make(3)  # Blue C0-0, White A0-0, Yellow B0-0
    set_turn(st, 2)
    put(st, BLUE, INF1, "C2-2")
    put(st, WHITE, MILADY, "C2-3")
    put(st, YELLOW, MILADY, "C2-3")
    opts = moves(st, BLUE, INF1)
    assert "C2-3" not in opts and "C2-4" in opts
    put(st, YELLOW, MILADY, CASTLE)
    assert "C2-3" in moves(st, BLUE, INF1)


def test_r23_advance_follows_the_same_stopping_rule(s):
    # R14 advance uses the R8/R23 stopping rule: a won territory holding an enemy Milady and another token
    # of the winner's (there by the Baron's pair rule) cannot be entered; the check is the same as a move's.
    put(s, BLUE, KN1, "C2-2")
    put(s, WHITE, INF1, "C2-3")
    put(s, WHITE, MILADY, "C2-3")
    attack_targets(s, BLUE)
    attack(s, BLUE, "C2-3", [KN1])  # 3 > 2: the Infantryman falls, Milady takes no part and stays
    assert s.loc[WHITE][MILADY] == tid(s, "C2-3")
    assert s.phase == Phase.ADVANCE
    assert same_on_core(s) == ["pass", "advance Knight 1"]  # she is now alone there: sharing is allowed
    put(s, BLUE, MILADY, "C2-3")  # hypothetically Blue's Milady stood there too
    # no advance decision is left: the phase moved on (nothing to advance), or only pass remains
    assert "advance Knight 1" not in same_on_core(s)


# ------------------------------------------------------------------------------------------------------ R24

def test_r24_both_halves_of_a_joined_corner_take_castles():
    st = make(2, castles=[4, 5])  # Blue on board C's half, White on board A's half of C0-4/A4-0
    assert st.castle == [4, 5]
    assert st.castle_territory(BLUE) == st.castle_territory(WHITE) == tid(st, CORNER)
    core_of(st)  # the core loads it too
    # during placement the other half stays a legal site once one half is taken
    g = new_game(RS, 2, seed=0, game_map=game_map())
    act(g, "chance: Blue")
    act(g, "castle at C0-4/A4-0 (site 4)")
    act(g, "chance: White")
    sites = [a - g.game.layout.PLACE for a in g.legal_actions()]
    assert 5 in sites and 4 not in sites and 0 not in sites  # board C is taken, board A's half is free
    assert same_on_core(g) == legal_strings(g)


def test_r24_tokens_of_both_castles_enter_onto_the_shared_territory():
    st = make(2, castles=[4, 5])
    set_turn(st, 2)
    blue = moves(st, BLUE, KN1)
    white = moves(st, WHITE, KN1)
    # each enters on the corner at no cost (R7) and moves 3 from there; neither may stop on it (R8)
    assert CORNER not in blue and CORNER not in white
    for opts in (blue, white):
        assert {"C0-3", "C1-4", "A3-0", "A2-0", "C0-2"} <= opts  # both boards reachable from the corner
    # the usual enemy-token rule applies on the way out: a White token on A3-0 blocks Blue there
    put(st, WHITE, INF1, "A3-0")
    blue = moves(st, BLUE, KN1)
    assert "A3-0" not in blue and "A2-0" not in blue and "C0-3" in blue


def test_r24_shared_castle_territory_is_own_for_both_and_enemy_for_others():
    st = make(3, castles=[4, 5, 34])  # Yellow's Castle on board B
    set_turn(st, 2)
    # Blue's token on the map passes its own Castle territory (R8) although White's Castle is there too
    put(st, BLUE, KN1, "C0-3")
    opts = moves(st, BLUE, KN1)
    assert CORNER not in opts and "A3-0" in opts
    put(st, BLUE, KN1, CASTLE)
    put(st, WHITE, KN1, "A3-0")
    opts = moves(st, WHITE, KN1)
    assert CORNER not in opts and "C0-3" in opts
    # for a third player both Castles are enemy Castles: neither entered nor passed
    put(st, YELLOW, KN1, "C0-3")
    put(st, WHITE, KN1, CASTLE)
    opts = moves(st, YELLOW, KN1)
    assert CORNER not in opts and "A3-0" not in opts


def test_r24_city_vp_measured_from_each_players_own_castle():
    st = make(2, castles=[4, 5])
    set_turn(st, 2, order=[BLUE, WHITE])
    # Todenham borders the corner (hand-checked on the map: neighbours C0-4/A4-0, C1-4, A3-1, A4-2)
    m = st.game.map
    assert tid(st, "Todenham") in m.territory(CORNER).neighbors
    put(st, BLUE, BARON, "C1-4")
    put(st, BLUE, KN1, "C1-4")
    put(st, BLUE, INF1, "A3-1")
    attack_targets(st, BLUE)
    attack(st, BLUE, "Todenham", [BARON, INF1])  # Baron 4 + Knight 3 (his companion) + Infantryman 2 > 7
    assert st.owner[tid(st, "Todenham")] == BLUE and st.vp == [1, 0]  # 1 territory from Blue's Castle
    # White retakes it: 1 VP for White, Blue loses 1 (R15), both measured from the shared territory
    st.loc[BLUE] = [CASTLE] * 10
    for t in range(10):
        st.attacked[WHITE][t] = False
    put(st, WHITE, BARON, "A3-1")
    put(st, WHITE, FK, "A4-2")
    put(st, WHITE, INF2, "C1-4")
    st.phase, st.cursor, st.round = int(Phase.ATTACK), 1, st.game.ruleset.army_cards_selected
    touch(st)
    same_on_core(st)
    assert "attack Todenham" in legal_strings(st)
    attack(st, WHITE, "Todenham", [BARON, FK, INF2])  # 4 + 5 + 2 = 11 > 7
    assert st.owner[tid(st, "Todenham")] == WHITE and st.vp == [0, 1]


# ------------------------------------------------------------------------------------------------------ R25

def _at_reveal(st, p, cards, trade):
    """Player p to reveal in round 0 (order Blue, White), with these Army Cards and this Trading Card
    selected; the other player holds Knight 1, Knight 2, Infantryman 1 and the 2 card unless already set."""
    st.phase = int(Phase.REVEAL)
    st.order, st.cursor, st.round = [BLUE, WHITE], [BLUE, WHITE].index(p), 0
    st.sel_army[p] = [t in cards for t in range(10)]
    st.revealed[p] = [False] * 10
    st.sel_trade[p] = trade
    q = 1 - p
    if not any(st.sel_army[q]):
        st.sel_army[q] = [t in (KN1, KN2, INF1) for t in range(10)]
        st.sel_trade[q] = TWO
    st.sel_done = [True, True]
    touch(st)


@pytest.mark.parametrize("trade", [FOUR, TWO, ZERO])
def test_r25_revealed_mercenary_always_gets_its_move_decision(s, trade):
    put(s, BLUE, MER1, "C2-2")
    _at_reveal(s, BLUE, (MER1, KN1, INF1), trade)
    act(s, "reveal Mercenary 1")
    assert s.phase == Phase.MOVE and s.current_player() == BLUE
    legal = same_on_core(s)
    if trade == ZERO:
        assert legal == ["pass"]  # the 0 card cannot pay (R7): staying is the only choice
    else:
        assert legal[0] == "pass" and "move Mercenary 1 to C2-3" in legal
    act(s, "pass")
    assert s.phase == Phase.REVEAL and s.current_player() == WHITE


def test_r25_unpaid_mercenary_in_castle_or_dead_still_decides(s):
    _at_reveal(s, BLUE, (MER1, MER2, KN1), ZERO)
    s.loc[BLUE][MER2] = DEAD  # eliminated by the plague after the selection: the card still reveals
    touch(s)
    for name in ("Mercenary 1", "Mercenary 2"):
        act(s, f"reveal {name}")
        assert s.phase == Phase.MOVE and same_on_core(s) == ["pass"]
        act(s, "pass")
        s.phase, s.cursor = int(Phase.REVEAL), 0  # Blue again, as in the next round
        touch(s)
    # a Knight with no move (wounded, R12) still skips: that depends on public facts only
    s.rest_until[BLUE][KN1] = 2
    s.loc[BLUE][KN1] = CASTLE
    touch(s)
    act(s, "reveal Knight 1")
    assert s.phase == Phase.REVEAL and s.current_player() == WHITE


def test_r25_decision_shape_does_not_depend_on_the_trading_card(s):
    """Two positions differing only in Blue's hidden Trading Card: White sees the same decisions."""
    put(s, BLUE, MER1, "C2-2")
    put(s, WHITE, KN1, "A2-2")
    shapes = []
    for trade in (FOUR, ZERO):
        st = s.clone()
        _at_reveal(st, BLUE, (MER1, KN1, INF1), trade)
        seq = []
        for text in ("reveal Mercenary 1", "pass", "reveal Knight 1"):
            act(st, text)
            seq.append((st.current_player(), int(st.phase), st.observation(WHITE)))
        shapes.append(seq)
    assert shapes[0] == shapes[1]
