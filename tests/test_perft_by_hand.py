"""Perft counts derived by hand from the rules and the map data, not from the engine.

The counts stored in tests/data/perft.json are produced by the engine itself (tests/make_perft.py), so they can
only show that something changed. The counts here are worked out from the rulebook, the rulings and the data
files (each comment shows the arithmetic), then compared with what the engine generates. They cover decisions
that rulings R23-R25 do not touch, and the Castle positions are chosen off the joined corners so that R24's
change to Castle placement does not move them either.
"""

from __future__ import annotations

import json
from math import comb, factorial

import pytest

from engine import load_map, load_ruleset, new_game
from engine.board import MAPS_DIR
from engine.perft import perft
from engine.state import Phase

from helpers import FOUR, make, touch


def _outer_edge_hills(board_file: str) -> int:
    """Castle sites of one board, counted from its rows: R21 allows any outer-edge Hill, and a board's outer
    edges are its row 0 and its column 0 (feudo-board/1); the corner cell (0, 0) is counted once."""
    rows = json.loads((MAPS_DIR / board_file).read_text())["rows"]
    edge = [rows[0][c] for c in range(5)] + [rows[r][0] for r in range(1, 5)]
    return edge.count("H")


def test_castle_sites_counted_from_the_board_files() -> None:
    # board_a "HHHHH" + column 0 "HHHH" = 9; board_b "HHHMH" (a Mountain at (0,3)) + "HHHH" = 8;
    # board_c 5 + 4 = 9; board_d 5 + 4 = 9: 35 sites. A joined corner (local (0,4) of one board, (4,0) of its
    # neighbour) is one territory but two sites, one per board (R3), so both halves are counted.
    per_board = [_outer_edge_hills(f"board_{b}.json") for b in "abcd"]
    assert per_board == [9, 8, 9, 9]
    assert len(load_map(None, seed=0).castle_sites) == sum(per_board) == 35


def test_perft_first_castle_placement_by_hand() -> None:
    """From the start of a 4-player game: chance picks who places first (4 outcomes, R21), that player may use
    any of the 35 sites (no Castle on the map yet), then chance picks the next placer among the 3 left."""
    st = new_game(load_ruleset(), 4, seed=0, game_map=load_map(None, seed=0))
    assert st.is_chance_node()
    assert [perft(st, d) for d in (1, 2, 3)] == [4, 4 * 35, 4 * 35 * 3]


def test_perft_second_castle_placement_by_hand() -> None:
    """After a Castle on site 0 (C0-0: board 0's outer corner, not a joined corner), the next placer may not use
    board 0 (R21: one Castle per board): 35 - 9 = 26 sites on the three other boards. Two players are left for
    the chance node before it."""
    st = new_game(load_ruleset(), 4, seed=0, game_map=load_map(None, seed=0))
    m = st.game.map
    site = m.castle_sites[0]
    assert not m.territories[site.territory].joined_corner and site.board == 0
    on_board_0 = sum(1 for s in m.castle_sites if s.board == 0)
    assert on_board_0 == 9  # board_c's 9 outer-edge Hills (board 0 of the seed-0 assembly is board C)
    st.apply_action(st.game.layout.CHANCE_PLAYER + 0)
    st.apply_action(st.game.layout.PLACE + 0)
    assert [perft(st, d) for d in (1, 2)] == [3, 3 * (35 - 9)]


@pytest.mark.parametrize("players", [2, 3, 4])
def test_perft_order_of_play_by_hand(players: int) -> None:
    """Turn 1 Diplomacy (R5): the last Castle placer picks any order of all players: players! orders."""
    st = make(players)
    assert st.phase == Phase.CHOOSE_ORDER
    assert perft(st, 1) == factorial(players) == {2: 2, 3: 6, 4: 24}[players]


def _first_selector() -> object:
    st = make(2)
    st.apply_action(st.legal_actions()[0])  # any order of play
    assert st.phase == Phase.SELECT and st.current_player() == 0
    return st


def test_perft_full_selection_by_hand() -> None:
    """R6: three of the 10 Army Cards, picked in ascending order (a set is one sequence), then one Trading Card
    among the distinct values held (4, 2 and three 0s: 3 choices).
    depth 1: the lowest card of the set may be any of cards 0..7 (two higher ones must remain): 8;
    depth 2: pairs a < b with a card above b left: sum over b of b = sum(range(1, 9)) = 36 = C(9, 2);
    depth 3: C(10, 3) = 120 sets; depth 4: 120 x 3 = 360 selections."""
    st = _first_selector()
    assert [perft(st, d) for d in (1, 2, 3, 4)] == [8, 36, comb(10, 3), comb(10, 3) * 3]
    assert comb(10, 3) * 3 == 360 and sum(range(1, 9)) == comb(9, 2) == 36


def test_perft_selection_with_fewer_cards_by_hand() -> None:
    """R6 with cards gone: min(3, held) Army Cards. 4 Army Cards held: C(4, 3) = 4 sets; the 4-shilling card
    discarded: values 2 and 0 left, 2 choices: 4 x 2 = 8 selections. 2 Army Cards held: the only set is both
    cards (1), x 2 = 2 selections of 3 actions."""
    st = _first_selector()
    st.army_held[0] = [t in (1, 4, 6, 9) for t in range(10)]
    st.trade_held[0][FOUR] = False
    touch(st)
    assert perft(st, 4) == comb(4, 3) * 2 == 8
    st = _first_selector()
    st.army_held[0] = [t in (2, 7) for t in range(10)]
    st.trade_held[0][FOUR] = False
    touch(st)
    assert [perft(st, d) for d in (1, 2, 3)] == [1, 1, 2]


def test_first_plague_draw_by_hand() -> None:
    """R2: the full deck has 8 movement kinds of 2 copies and 4 special cards of 1: 20 cards, 12 kinds. Nothing is
    drawn yet, so the first Plague phase has 12 outcomes, 2/20 for a movement card, 1/20 for a special one."""
    st = make(2)
    while st.phase != Phase.CHANCE_PLAGUE:
        st.apply_action(st.legal_actions()[0])
    outcomes = st.chance_outcomes()
    assert perft(st, 1) == len(outcomes) == 12
    probs = sorted(round(p * 20) for _, p in outcomes)
    assert probs == [1] * 4 + [2] * 8
