"""The compiled Fief 2 core (fief2/_core.pyx) against the reference rules (fief2/state.py, rulings F1-F53).

Random games are stepped in lockstep: after every action the current player, the legal actions (decisions) or
chance outcomes (a dealt card, F10; a die) and every field of the state (:func:`fief2._core.reference_dump` vs
:meth:`Fief2Core.dump`) must be equal, and the returns at the end (F51). Games mix 3-6 players, the normal game
(turn limit, F51) and the scored game (F50), and two random policies: uniform, and an "eager" one that mostly
avoids the lowest action (usually "end", "refuse" or "stop") so that battles, consents, retreats, loss choices
and elections are reached more often.

The default run plays 24 full games (about 40 s); ``-m slow`` plays ``FIEF2_CORE_DIFF_GAMES`` (default 2000).
"""

from __future__ import annotations

import inspect
import os
import random

import pytest
import test_fief2_rules as rules_tests

from engine.errors import IllegalActionError, StateError
from fief2 import new_game, sample_chance
from fief2.state import FR_DEAL, FR_DICE, State

core = pytest.importorskip("fief2._core", reason="fief2._core is not built: python setup.py build_ext --inplace")
Fief2Core, reference_dump = core.Fief2Core, core.reference_dump


def _pick(legal: list[int], rng: random.Random, policy: str) -> int:
    if policy == "eager" and len(legal) > 1 and rng.random() < 0.75:
        return rng.choice(legal[1:])
    return rng.choice(legal)


def _config(i: int) -> tuple[int, int | None, str]:
    """Game i: players 3..6 in turn, the scored game (10 or 15 turns, F50) every third game, eager every other."""
    players = 3 + i % 4
    scored = (10, 15)[(i // 3) % 2] if i % 3 == 2 else None
    policy = "eager" if i % 2 else "uniform"
    return players, scored, policy


def _diff(ref: dict, got: dict) -> str:
    keys = [k for k in ref if ref[k] != got.get(k)]
    return "; ".join(f"{k}: reference {ref[k]!r} core {got.get(k)!r}" for k in keys[:4])


def lockstep(seed: int, players: int, scored: int | None, policy: str, max_actions: int | None = None) -> int:
    """Play one random game with both implementations; assert they agree at every step. Returns the actions."""
    rng = random.Random(seed)
    st = new_game(players=players, scored_turns=scored)
    c = Fief2Core.from_state(st)
    steps = 0
    where = f"seed {seed}, {players} players, scored {scored}, {policy}"
    while True:
        ref, got = reference_dump(st), c.dump()
        assert ref == got, f"{where}, after {steps} actions: {_diff(ref, got)}"
        assert c.error == 0, f"{where}: a fixed size of the core overflowed after {steps} actions"
        assert c.current_player() == st.current_player(), where
        if st.is_terminal():
            assert c.is_terminal() and c.returns() == st.returns(), where
            return steps
        assert not c.is_terminal()
        legal = st.legal_actions()
        assert c.legal_actions() == legal, f"{where}, after {steps} actions, frame {st.stack[-1]}"
        if st.is_chance_node():
            assert c.is_chance_node()
            mine, theirs = c.chance_outcomes(), st.chance_outcomes()
            assert [a for a, _ in mine] == [a for a, _ in theirs]
            assert [p for _, p in mine] == pytest.approx([p for _, p in theirs])
            a = sample_chance(st, rng)
        else:
            assert not c.is_chance_node()
            a = _pick(legal, rng, policy)
        st.apply_action(a)
        c.apply_action(a)
        steps += 1
        if max_actions is not None and steps >= max_actions:
            return steps


@pytest.mark.parametrize("i", range(24))
def test_core_matches_reference_in_random_games(i):
    players, scored, policy = _config(i)
    assert lockstep(7000 + i, players, scored, policy) > 500  # a whole game (F8: 30 turns or the scored turns)


@pytest.mark.slow
def test_core_matches_reference_in_thousands_of_random_games():
    games = int(os.environ.get("FIEF2_CORE_DIFF_GAMES", "2000"))
    total = 0
    for i in range(games):
        players, scored, policy = _config(i)
        total += lockstep(100_000 + i, players, scored, policy)
        if (i + 1) % 100 == 0:
            print(f"{i + 1} games, {total} actions compared", flush=True)
    print(f"{games} games, {total} actions compared")


def test_round_trip_and_clone_are_independent_copies():
    rng = random.Random(5)
    st = new_game(players=5)
    for _ in range(400):  # into the first turns: hands, purchases, movement
        a = sample_chance(st, rng) if st.is_chance_node() else rng.choice(st.legal_actions())
        st.apply_action(a)
    c = Fief2Core.from_state(st)
    back = c.to_state()
    assert reference_dump(back) == reference_dump(st)
    assert back.legal_actions() == st.legal_actions()
    twin = c.clone()
    a = c.legal_actions()[-1]
    c.apply_action(a)
    st.apply_action(a)
    assert reference_dump(st) == c.dump()
    assert twin.dump() == reference_dump(back)  # the clone did not move


def test_illegal_actions_are_refused_by_name():
    c = Fief2Core.from_state(new_game(players=3))
    legal = c.legal_actions()
    bad = max(legal) + 1
    with pytest.raises(IllegalActionError, match=f"action {bad} is not legal"):
        c.apply_action(bad)
    with pytest.raises(IllegalActionError, match="expected an integer"):
        c.apply_action("end")
    assert c.legal_actions() == legal  # unchanged


def test_out_of_range_fields_are_refused_by_name():
    st = new_game(players=3)
    st.sold[0][0][0] = 500  # stored in 8 bits in the core
    with pytest.raises(StateError, match=r"state\.sold: 500 is outside"):
        Fief2Core.from_state(st)
    st = new_game(players=3)
    st.stack = [list(st.stack[-1]) + [0] * 20]
    with pytest.raises(StateError, match="fixed sizes"):
        Fief2Core.from_state(st)


def test_core_chance_sampling_and_playouts_stay_legal():
    """The core's own draws (the search's generator) are legal outcomes, and a random playout ends the game with
    one share per winner (F51) and no overflow."""
    st = new_game(players=4)
    c = Fief2Core.from_state(st)
    for seed in range(3):
        w = c.clone()
        steps = w.playout(seed)
        assert w.is_terminal() and w.error == 0 and steps > 500
        r = w.returns()
        assert sum(r) == pytest.approx(1.0) and all(x in (0.0, r[r.index(max(r))]) for x in r)
    rng = random.Random(3)
    seen_deal = seen_die = False
    w = c.clone()
    while not w.is_terminal() and not (seen_deal and seen_die):
        if w.is_chance_node():
            kind = w.to_state().stack[-1][0]
            a = w.sample_chance(rng.randrange(2 ** 63))
            assert a in w.legal_actions()
            seen_deal |= kind == FR_DEAL
            seen_die |= kind == FR_DICE
        else:
            a = rng.choice(w.legal_actions())
        w.apply_action(a)
    assert seen_deal and seen_die


# ---------------------------------------------------------------------------------------------------------------
# The hand-built positions of the rules tests (tests/test_fief2_rules.py: one or more per ruling, the rare ones
# included: F26.4 exit consent, F35.4 safe conduct, F53.17, F49...), replayed with the core checked at every action.
# ---------------------------------------------------------------------------------------------------------------

RULES_TESTS = [name for name, fn in inspect.getmembers(rules_tests, inspect.isfunction)
               if name.startswith("test_") and fn.__module__ == rules_tests.__name__]


def _checked_apply(original, counter):
    def apply_action(self, action):
        c = Fief2Core.from_state(self)
        assert c.current_player() == self.current_player()
        assert c.legal_actions() == self.legal_actions(), f"frame {self.stack[-1] if self.stack else None}"
        original(self, action)  # raises on an illegal action, before the core is touched
        c.apply_action(action)
        ref, got = reference_dump(self), c.dump()
        assert ref == got, f"after {action} at frame {self.stack[-1] if self.stack else None}: {_diff(ref, got)}"
        assert c.error == 0
        counter[0] += 1
    return apply_action


@pytest.mark.parametrize("name", RULES_TESTS)
def test_rules_positions_in_lockstep(name, monkeypatch):
    fn = getattr(rules_tests, name)
    counter = [0]
    monkeypatch.setattr(State, "apply_action", _checked_apply(State.apply_action, counter))
    marks = [m for m in getattr(fn, "pytestmark", []) if m.name == "parametrize"]
    if marks:  # one parametrized argument: every value
        argname, values = marks[0].args[0], marks[0].args[1]
        for value in values:
            fn(**{argname: value})
    else:
        fn()
    source = inspect.getsource(fn)
    if "act(" in source or "apply_action" in source:  # (a test of derived facts only applies nothing)
        assert counter[0] > 0, f"{name} applied no action through the checked path"
