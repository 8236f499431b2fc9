"""Perft: the number of action sequences to depth 3 (chance outcomes count as branches) from fixed positions,
compared with tests/data/perft.json (regenerate with ``python tests/make_perft.py`` after a deliberate rules
change). On a mismatch the per-first-action counts are printed, python-chess "perft divide" style.

The stored counts were produced by this engine (tests/make_perft.py), so they only show that move generation
changed; counts derived by hand from the rules and the map files are checked in tests/test_perft_by_hand.py."""

from __future__ import annotations

import json
from math import comb
from pathlib import Path

import pytest

from engine import State

from make_perft import divide, perft, positions

DATA = json.loads((Path(__file__).resolve().parent / "data" / "perft.json").read_text())
NAMES = [p["name"] for p in DATA["positions"]]


@pytest.mark.parametrize("entry", DATA["positions"], ids=NAMES)
def test_perft(entry):
    st = State.from_json(entry["state"])
    depth = DATA["depth"]
    counts = [perft(st, d) for d in range(1, depth + 1)]
    if counts != entry["counts"]:
        got = divide(st, depth)
        want = entry["divide"]
        lines = [f"perft {entry['name']}: got {counts}, expected {entry['counts']}", "divide (got / expected):"]
        for key in sorted(set(got) | set(want), key=lambda k: int(k.split()[0])):
            g, w = got.get(key, "-"), want.get(key, "-")
            lines.append(f"  {key}: {g} / {w}" + ("" if g == w else "   <-- differs"))
        print("\n".join(lines))
        pytest.fail("\n".join(lines[:1] + [ln for ln in lines[2:] if "differs" in ln]))
    assert sum(entry["divide"].values()) == counts[-1]


def test_perft_positions_are_still_reached_the_same_way():
    """make_perft's seeded positions still arise (a change in the random game path shows up here first)."""
    for name, st in positions().items():
        stored = next(p for p in DATA["positions"] if p["name"] == name)
        assert st.canonical() == State.from_json(stored["state"]).canonical(), name


def test_perft_order_choice_by_hand():
    """Depth 3 from the 4-player order choice: 4! orders, then the first selector's first two Army Cards in
    ascending order with room left for a third: 8 first picks, sum(8 - t for t in 0..7) = 36 pairs."""
    entry = next(p for p in DATA["positions"] if p["name"] == "4p_turn1_order_choice")
    assert entry["counts"] == [24, 24 * 8, 24 * 36]
    assert 36 == sum(8 - t for t in range(8)) == comb(9, 2)


def test_perft_movement_position_by_hand():
    """Depth 1 of the mid-movement position, counted on the rendered map (board C, Blue's Castle C0-0): Blue's
    Baron (4) enters from the Castle at no cost (R7). Reachable within 4 and legal to end on (R8): row 0 to the
    joined corner (C0-1..C0-4/A4-0); C1-0, C2-0 (beside his Infantryman 3), C3-0, C4-0/D0-4 down column 0; the
    Villages C1-1 (beside his Mercenary 2), C1-3 and C3-1 (the Baron enters Villages); the Wood C1-2 (entering
    ends the move). Not C2-1 (Mountain), nor C2-2/C2-3/C1-4/C4-1 (5 away: the Wood and the Mountain cut the
    shorter paths). 12 destinations + pass."""
    entry = next(p for p in DATA["positions"] if p["name"] == "4p_mid_movement_revealed_token")
    st = State.from_json(entry["state"])
    want = {"C0-1", "C0-2", "C0-3", "C0-4/A4-0", "C1-0", "C2-0", "C3-0", "C4-0/D0-4", "C1-1", "C1-3", "C3-1", "C1-2"}
    got = {st.action_to_string(a).removeprefix("move Baron to ") for a in st.legal_actions() if a != 0}
    assert got == {st.game.map.labels[st.game.map.territory(n).id] for n in want}  # the texts name board labels
    assert entry["counts"][0] == 1 + len(want)
