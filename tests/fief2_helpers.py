"""Helpers for the Fief 2 tests: positions built by hand or reached by random play, actions by their text."""

from __future__ import annotations

import random

from fief2 import sample_chance
from fief2.state import FR_CARDTURN, MOVEMENT, State, new_game

VILLAGES = ("V01", "V06", "V19", "V24", "V11", "V15")


def vid(st: State, name: str) -> int:
    return st.game.map.village_ids.index(name)


def pid(st: State, name: str) -> int:
    return st.game.ruleset.person_ids.index(name)


def fid(st: State, name: str) -> int:
    return st.game.map.fief_ids.index(name)


def cid(st: State, name: str) -> int:
    return [c.id for c in st.game.ruleset.cards].index(name)


def act(st: State, text: str) -> None:
    """Apply the legal action whose text starts with ``text``."""
    hits = [a for a in st.legal_actions() if st.action_to_string(a).startswith(text)]
    assert hits, f"no legal action {text!r}; legal: {[st.action_to_string(a) for a in st.legal_actions()]}"
    st.apply_action(hits[0])


def texts(st: State) -> list[str]:
    return [st.action_to_string(a) for a in st.legal_actions()]


def set_up(players: int = 3, **opts) -> State:
    """Seat f picks L0(f+1) and places on VILLAGES[f]; returns the state at the first deal (a chance node)."""
    st = new_game(players, **opts)
    for f in range(players):
        act(st, f"person L{f + 1:02d}")
        act(st, f"village {VILLAGES[f]}")
    return st


def board(players: int = 3, **opts) -> State:
    """After setup, with no pending decision: the caller pushes the frame it wants to test."""
    st = set_up(players, **opts)
    st.stack = []
    st.phase, st.step = MOVEMENT, players  # past every movement turn: the driver goes on to combat
    return st


def at_card_turn(st: State, f: int, hand: list[int]) -> None:
    st.hands[f] = sorted(hand)
    st.stack = [[FR_CARDTURN, f, 3]]
    st._legal = None


def played(seed: int, players: int = 4, until=None, max_actions: int = 4000) -> State | None:
    """A random game of ``seed`` played until ``until(state)`` holds at a decision (or None)."""
    rng = random.Random(seed)
    st = new_game(players=players)
    for _ in range(max_actions):
        if st.is_terminal():
            return None
        if st.is_chance_node():
            st.apply_action(sample_chance(st, rng))
            continue
        if until(st):
            return st
        st.apply_action(rng.choice(st.legal_actions()))
    return None


def hidden_twin(st: State, seat: int) -> State:
    """The same position with one card of another family's hand swapped for a card of the deck (F46: hidden
    from ``seat``): ``seat``'s observation is the same, the hands are not."""
    twin = st.clone()
    q = next(q for q in range(st.num_players) if q != seat and st.hands[q])
    into = twin.deck()[0]
    twin.hands[q] = sorted(twin.hands[q][1:] + [into])
    twin._legal = None
    assert twin.hands[q] != st.hands[q] and twin.observation(seat) == st.observation(seat)
    return twin
