"""Regenerate tests/data/perft.json: action-sequence counts to depth 3 from fixed positions.

    python tests/make_perft.py

perft(state, d) counts the action sequences of length d from ``state`` (chance outcomes count as branches, each
outcome once, whatever its probability); a sequence that reaches the end of the game earlier counts once.
The positions are stored as full state JSON, so the golden file does not depend on how they were reached.
Regenerate only after a deliberate rules change, and say why in the commit. The counts come from the engine
itself, so a regenerated file proves nothing alone: tests/test_perft_by_hand.py holds counts worked out by hand.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from engine import State, load_map, load_ruleset, new_game  # noqa: E402
from engine.perft import divide, perft  # noqa: E402,F401  (re-exported for test_perft)
from engine.record import sample_chance  # noqa: E402
from engine.state import Phase  # noqa: E402

OUT = Path(__file__).resolve().parent / "data" / "perft.json"
DEPTH = 3


def seeded_until(players: int, seed: int, stop) -> State:
    """A seeded random game (Castles at fixed sites) played until stop(state)."""
    rs, m = load_ruleset(), load_map(None, seed=0)
    st = new_game(rs, players, seed=0, game_map=m, castles=[0, 9, 34, 26][:players])
    rng = random.Random(seed)
    while not stop(st):
        assert not st.is_terminal(), "the game ended before the wanted position"
        st.apply_action(sample_chance(st, rng) if st.is_chance_node() else rng.choice(st.legal_actions()))
    return st


def positions() -> dict[str, State]:
    rs, m = load_ruleset(), load_map(None, seed=0)
    return {
        "4p_turn1_order_choice": new_game(rs, 4, seed=0, game_map=m, castles=[0, 9, 34, 26]),
        "4p_mid_movement_revealed_token": seeded_until(
            4, 7, lambda s: s.turn >= 3 and s.phase == Phase.MOVE and len(s.legal_actions()) >= 12),
        "4p_attack_phase": seeded_until(
            4, 7, lambda s: s.turn >= 3 and s.phase == Phase.ATTACK and len(s.legal_actions()) >= 4),
    }


def main() -> None:
    data = {"depth": DEPTH, "positions": []}
    for name, st in positions().items():
        entry = {"name": name, "state": json.loads(st.to_json()),
                 "counts": [perft(st, d) for d in range(1, DEPTH + 1)], "divide": divide(st, DEPTH)}
        print(name, entry["counts"])
        data["positions"].append(entry)
    OUT.write_text(json.dumps(data, indent=1) + "\n")
    print("wrote", OUT)


if __name__ == "__main__":
    main()
