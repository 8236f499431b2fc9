"""The code's behaviour is pinned across reorganisations: the searches and bot games of ``tests/behaviour_pin.py``
give exactly the answers and game records recorded before the settings, the position and the modules were
reorganised (``tests/data/behaviour_pin.json``, recorded at commit d1195c9): same seed and iterations, same advice;
same bot specs and seed, same game.

The ``plan_text`` entries alone were rewritten once since, when action texts began to name places by board
coordinates ("move First Knight to Hill C7" for "move First Knight to C2-3"): a one-off conversion mapped each
recorded plan's action ids through the new ``action_to_string`` (replaying the plan from its pinned position), no
search was run again, and every id, visit count, probability and game record stayed byte-identical.

One intended change of behaviour since: the product's 2-player search took the tree's action prior (the
``product`` profile's 2-player rule, docs/search-history.md "The prior turned on"). The entries that play it were
recorded again then with ``--write`` (the games of ``ismcts`` in 2 players, the product searches of the two
2-player positions, the service search of position 0); every other entry was byte-identical before and after."""

from __future__ import annotations

import json

import pytest

import behaviour_pin as pin

EXPECTED = json.loads(pin.DATA.read_text())


@pytest.mark.parametrize("i", range(len(pin.GAMES)), ids=[",".join(g[2]) for g in pin.GAMES])
def test_bot_games_are_unchanged(i):
    players, seed, specs = pin.GAMES[i]
    want = EXPECTED["games"][i]
    assert (want["players"], want["seed"], want["bots"]) == (players, seed, specs)
    got = pin.run_game(players, seed, specs)
    assert got["actions"] == want["actions"]
    assert (got["vp"], got["turn"]) == (want["vp"], want["turn"])


@pytest.mark.parametrize("p", range(len(pin.POSITIONS)), ids=[str(p) for p in pin.POSITIONS])
def test_searches_give_the_same_advice(p):
    players, seed, decisions, seat = pin.POSITIONS[p]
    state = pin.position(players, seed, decisions)
    wants = [w for w in EXPECTED["searches"] if w["position"] == [players, seed, decisions, seat]]
    assert len(wants) == len(pin.SEARCHES)
    for case, want in zip(pin.SEARCHES, wants):
        assert want["case"] == case
        got = pin.advice_record(pin.run_search(state, seat, case))
        assert got == {k: v for k, v in want.items() if k not in ("position", "case")}, case


def test_service_answers_are_unchanged():
    got = pin.run_service(pin.SERVICE)
    assert len(got) == len(EXPECTED["service"])
    for g, want in zip(got, EXPECTED["service"]):
        assert json.loads(json.dumps(g)) == want
