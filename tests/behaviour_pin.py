"""The behaviour pin: a set of searches and whole bot games whose results must not change when the code is
reorganised (``tests/test_behaviour_pin.py`` replays them against ``tests/data/behaviour_pin.json``).

The expected values were recorded by running this file with ``--write`` at commit d1195c9, before the settings,
the position and the modules were reorganised; they are the old code's answers, so the new code reproduces the old
behaviour exactly (same seed and iterations, same advice; same bot specs and seed, same game record). Only this
file's *calls* may follow the new API; ``PIN`` below names every case by what it means, not by how it is called.

    python tests/behaviour_pin.py --write    # record (only when a change of behaviour is intended and stated)

Recorded again once, for the intended change stated in ``tests/test_behaviour_pin.py`` (the 2-player product's
action prior): only the entries that play the product in 2 players changed.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

DATA = HERE / "data" / "behaviour_pin.json"

# Whole games between bots: (players, seed, one bot spec per seat). Each bot is made with the seed the command line
# gives it (seed * 1000 + seat), and the game is played by engine.play_game on the compiled core.
GAMES = [
    (2, 3, ["ismcts:iterations=150", "greedy"]),
    (4, 5, ["ismcts:iterations=100", "pimc:iterations=100", "ismcts-v1:iterations=100", "hard:iterations=100"]),
    (3, 2, ["max:iterations=120", "medium", "easy"]),
    (2, 4, ["ismcts:iterations=100:follow_plan=false:bank=false", "pimc:iterations=120:worlds=4"]),
    (4, 7, ["ismcts:iterations=80:sampler=weighted", "ismcts:iterations=80:playout_greedy=0:playout_turns=0",
            "ismcts:iterations=80:margin_weight=0", "random"]),
    (2, 8, ["ismcts:iterations=80:evaluation=learned", "ismcts-py:iterations=25"]),
    (3, 9, ["pimc-py:iterations=20:worlds=2", "greedy:epsilon=0.3", "hard:iterations=60"]),
]

# Searches from positions of seeded random games: (players, game seed, decisions played at random first, seat or
# None for the player to act). A seat given out of turn asks for its pending secret selection (R6).
POSITIONS = [
    (2, 11, 6, None),
    (2, 12, 30, None),
    (3, 13, 17, None),
    (4, 14, 10, 2),  # turn 1's selection asked by seat 2 while an earlier seat selects
    (4, 15, 45, None),
    (4, 16, 90, None),
]

# Search settings per case, by meaning: "product" adds the product's options for the game's player count.
SEARCHES = [
    {"iterations": 400, "seed": 1},
    {"iterations": 400, "seed": 2, "algorithm": "pimc"},
    {"iterations": 400, "seed": 3, "threads": 2},
    {"iterations": 300, "seed": 4, "product": True},
    {"iterations": 300, "seed": 5, "sampler": "weighted", "c": 0.4, "exp3_gamma": 0.3, "temperature": 0.5},
    {"iterations": 200, "seed": 6, "playout": "random"},
    {"iterations": 200, "seed": 7, "playout": "eval", "max_nodes": 4096},
    {"iterations": 40, "seed": 8, "backend": "python"},
    {"iterations": 30, "seed": 9, "backend": "python", "algorithm": "pimc", "worlds": 3, "engine": "reference"},
]


def position(players: int, seed: int, decisions: int):
    from engine import new_game, sample_chance

    rng = random.Random(seed)
    state = new_game(players=players, seed=seed)
    made = 0
    while True:
        if state.is_chance_node():
            state.apply_action(sample_chance(state, rng))
            continue
        legal = state.legal_actions()
        if made >= decisions and len(legal) > 1:
            return state
        state.apply_action(rng.choice(legal))
        made += 1


def advice_record(advice) -> dict:
    return {
        "seat": advice.seat, "decision": advice.decision, "plan": [p.action for p in advice.plan],
        "plan_text": [p.text for p in advice.plan],
        "alternatives": [[a.action, a.visits, round(a.win_probability, 9)] for a in advice.alternatives],
        "beliefs": [[b.player, b.card, round(b.probability, 9)] for b in advice.beliefs],
        "iterations": advice.stats.iterations, "nodes": advice.stats.nodes, "searches": advice.stats.searches,
    }


def run_search(state, seat, case: dict):
    from feudo_ai.search import advise
    from feudo_ai.settings import resolve

    fields = {k: v for k, v in case.items() if k != "product"}
    return advise(state, seat, resolve("product" if case.get("product") else "default", state.num_players, fields))


def run_game(players: int, seed: int, specs: list[str]) -> dict:
    from engine import new_fast_game, play_game
    from feudo_ai.bots import make_bot

    state = new_fast_game(players=players, seed=seed)
    bots = [make_bot(spec, seed * 1000 + p) for p, spec in enumerate(specs)]
    record, final = play_game(bots, state, seed=seed)
    return {"actions": list(record.actions), "vp": list(final.vp), "turn": final.turn}


# Searches through the Advisor service (an in-process server, the client of feudo_ai.client): (position index in
# POSITIONS, iterations, seed, algorithm). The service searches with the product's options for the MO-ISMCTS.
SERVICE = [(0, 300, 21, "ismcts"), (2, 300, 22, "ismcts"), (4, 300, 23, "ismcts"), (5, 200, 24, "pimc")]


def run_service(cases) -> list:
    from service_helpers import running_server

    from feudo_ai.client import AdvisorClient

    out = []
    with running_server() as server, AdvisorClient(server.address) as client:
        for index, iterations, seed, algorithm in cases:
            players, game_seed, decisions, seat = POSITIONS[index]
            state = position(players, game_seed, decisions)
            seat = state.current_player() if seat is None else seat
            advice = client.suggest(state, seat, iterations=iterations, seed=seed, algorithm=algorithm)
            out.append({"case": [index, iterations, seed, algorithm], **advice_record(advice)})
    return out


def record_all() -> dict:
    out: dict = {"games": [], "searches": [], "service": run_service(SERVICE)}
    for players, seed, specs in GAMES:
        out["games"].append({"players": players, "seed": seed, "bots": specs, **run_game(players, seed, specs)})
    for players, seed, decisions, seat in POSITIONS:
        state = position(players, seed, decisions)
        for case in SEARCHES:
            advice = run_search(state, seat, case)
            out["searches"].append({"position": [players, seed, decisions, seat], "case": case,
                                    **advice_record(advice)})
    return out


if __name__ == "__main__":
    if "--write" not in sys.argv[1:]:
        sys.exit("usage: python tests/behaviour_pin.py --write")
    DATA.write_text(json.dumps(record_all(), indent=None, separators=(",", ":")) + "\n")
    print(f"wrote {DATA}")
