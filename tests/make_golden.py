"""Regenerate tests/data/golden_game.json: one seeded 3-player game as action strings plus its final state.

    python tests/make_golden.py

test_api.py replays the strings through State.string_to_action and compares the final canonical encoding, so
any change in legal actions, their text, or the rules' outcome shows up. Regenerate only after a deliberate
rules change, and say why in the commit. The record is the engine's own play, so replaying it shows only that
nothing changed; test_golden_game_follows_the_end_rules checks it against the rules (R15, R19).
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engine import load_map, load_ruleset, new_game  # noqa: E402
from engine.record import sample_chance  # noqa: E402

OUT = Path(__file__).resolve().parent / "data" / "golden_game.json"
PLAYERS, MAP_SEED, PLAY_SEED = 3, 2, 2035  # a game with VP changes and 2 tie-break turns (rules R1-R25)


def play():
    st = new_game(load_ruleset(), PLAYERS, seed=MAP_SEED, game_map=load_map(None, seed=MAP_SEED))
    rng = random.Random(PLAY_SEED)
    actions, strings = [], []
    while not st.is_terminal():
        a = sample_chance(st, rng) if st.is_chance_node() else rng.choice(st.legal_actions())
        actions.append(a)
        strings.append(st.action_to_string(a))
        st.apply_action(a)
    return st, actions, strings


def main() -> None:
    st, actions, strings = play()
    data = {"players": PLAYERS, "map_seed": MAP_SEED, "play_seed": PLAY_SEED, "actions": actions,
            "action_strings": strings, "final_vp": st.vp, "winners": st.winners, "final_turn": st.turn,
            "final_canonical": st.canonical()}
    OUT.write_text(json.dumps(data, indent=0) + "\n")
    print(f"wrote {OUT}: {len(actions)} actions, turn {st.turn}, vp {st.vp}, winners {st.winners}")


if __name__ == "__main__":
    main()
