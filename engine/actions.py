"""Action encoding: every decision of Feudo as one int (OpenSpiel style).

Large choices are decomposed into sequences of small decisions so that search trees stay narrow:

==============  ==========================  =========================================================
range           phase                       meaning
==============  ==========================  =========================================================
PASS (0)        many                        stay / decline / stop marching / launch attack / done
PLACE + s       PLACE_CASTLE (R21)          put my Castle on castle site ``s``
ORDER + i       CHOOSE_ORDER (R5)           order of play = i-th permutation of the active players
SELECT + t      SELECT (R6)                 add Army Card ``t`` to my secret selection (ascending t)
TRADE + c       SELECT (R6)                 select Trading Card ``c`` (the first held card of a value)
REVEAL + t      REVEAL (R7)                 reveal selected Army Card ``t``
MOVE + x        MOVE (R7, R8)               the revealed token ends its move on territory ``x``
CHARM + q       MILADY (R13)                my healthy Milady charms player ``q``'s Baron
INFECT          MILADY (R13)                my plague-stricken Milady infects her neighbours
MARCH + t*T+x   MARCH (R9)                  spend shillings to march token ``t`` to ``x`` (cost = path)
ATTACK + x      ATTACK (R11)                declare an attack on territory ``x``
JOIN + t        ATTACK_JOIN (R11)           token ``t`` joins the declared attack (PASS launches it)
ADVANCE + t     ADVANCE (R14)               token ``t`` advances into the won territory
CHANCE_PLAYER+q chance (R5, R21)            chance picks player ``q`` (Castle placer / order decider)
PLAGUE + k      chance (R18)                the plague card of kind ``k`` is drawn
==============  ==========================  =========================================================

``T`` is the number of territories. The layout depends only on (ruleset, map, players), so an action int
means the same thing in every state of a game; its text form (``action_to_string``) is for the edges only.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

PLAYER_NAMES = ("Blue", "White", "Yellow", "Red")


@dataclass(frozen=True)
class ActionLayout:
    """Offsets of each action range (see module docstring)."""

    sites: int
    players: int
    tokens: int
    trading: int
    territories: int
    plague_kinds: int

    PASS = 0

    @property
    def PLACE(self) -> int:
        return 1

    @property
    def ORDER(self) -> int:
        return self.PLACE + self.sites

    @property
    def SELECT(self) -> int:
        return self.ORDER + math.factorial(self.players)

    @property
    def TRADE(self) -> int:
        return self.SELECT + self.tokens

    @property
    def REVEAL(self) -> int:
        return self.TRADE + self.trading

    @property
    def MOVE(self) -> int:
        return self.REVEAL + self.tokens

    @property
    def CHARM(self) -> int:
        return self.MOVE + self.territories

    @property
    def INFECT(self) -> int:
        return self.CHARM + self.players

    @property
    def MARCH(self) -> int:
        return self.INFECT + 1

    @property
    def ATTACK(self) -> int:
        return self.MARCH + self.tokens * self.territories

    @property
    def JOIN(self) -> int:
        return self.ATTACK + self.territories

    @property
    def ADVANCE(self) -> int:
        return self.JOIN + self.tokens

    @property
    def CHANCE_PLAYER(self) -> int:
        return self.ADVANCE + self.tokens

    @property
    def PLAGUE(self) -> int:
        return self.CHANCE_PLAYER + self.players

    @property
    def num_distinct_actions(self) -> int:
        return self.PLAGUE + self.plague_kinds

    def ranges(self) -> list[tuple[str, int, int]]:
        """(name, first, size) of every range, in order."""
        return list(self._ranges())

    def _ranges(self) -> tuple[tuple[str, int, int], ...]:
        # computed once per layout: every offset is a chain of the properties above, and decode (every
        # action_to_string) needs them all; the layout is frozen, so the cache cannot go stale
        cached = self.__dict__.get("_ranges_cache")
        if cached is None:
            names = ["PASS", "PLACE", "ORDER", "SELECT", "TRADE", "REVEAL", "MOVE", "CHARM", "INFECT", "MARCH",
                     "ATTACK", "JOIN", "ADVANCE", "CHANCE_PLAYER", "PLAGUE"]
            starts = [0] + [getattr(self, n) for n in names[1:]] + [self.num_distinct_actions]
            cached = tuple((n, starts[i], starts[i + 1] - starts[i]) for i, n in enumerate(names))
            object.__setattr__(self, "_ranges_cache", cached)
        return cached

    def decode(self, action: int) -> tuple[str, int]:
        """(range name, offset within the range) of an action int; ValueError if out of range."""
        ranges = self._ranges()
        end = ranges[-1][1] + ranges[-1][2]  # num_distinct_actions
        if not isinstance(action, int) or isinstance(action, bool) or not 0 <= action < end:
            raise ValueError(f"action {action!r} is not in [0, {end})")
        for name, first, size in ranges:
            if first <= action < first + size:
                return name, action - first
        raise AssertionError("unreachable")  # the ranges tile [0, num_distinct_actions)


def permutations_of(players: tuple[int, ...]) -> list[tuple[int, ...]]:
    """Orders of play for the given (sorted) active players, in lexicographic order (R5)."""
    return list(itertools.permutations(players))
