"""Bots: anything that picks an action for the player to act. One interface, many players.

A bot is called only for its own decisions (never at chance nodes) and must return one of
``state.legal_actions()``. Every bot takes an explicit seed: the same seed gives the same choices.
"""

from __future__ import annotations

import random
from typing import Callable

from engine import State


class Bot:
    """Base class: ``choose(state)`` returns a legal action of ``state.current_player()``."""

    name = "bot"

    def __init__(self, seed: int = 0):
        self.seed = seed
        self.rng = random.Random(seed)

    def choose(self, state: State) -> int:  # pragma: no cover - interface
        raise NotImplementedError

    def __call__(self, state: State) -> int:
        legal = state.legal_actions()
        if len(legal) == 1:
            return legal[0]  # decisions with one legal action are never searched
        return self.choose(state)


class RandomBot(Bot):
    """Uniformly random legal actions."""

    name = "random"

    def choose(self, state: State) -> int:
        return self.rng.choice(state.legal_actions())


BOTS: dict[str, Callable[[int], Bot]] = {"random": RandomBot}


def register(name: str, factory: Callable[[int], Bot]) -> None:
    BOTS[name] = factory


def make_bot(name: str, seed: int) -> Bot:
    """A bot by name (see :data:`BOTS`); ValueError naming the known bots for an unknown one."""
    if name not in BOTS:
        raise ValueError(f"unknown bot {name!r}; known bots: {', '.join(sorted(BOTS))}")
    return BOTS[name](seed)
