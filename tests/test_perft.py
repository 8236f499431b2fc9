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
