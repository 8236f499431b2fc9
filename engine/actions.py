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


# ---------------------------------------------------------------------------------------------------------------
# Structured actions: what an action int means in a position, as fields (so that no client parses the text)
# ---------------------------------------------------------------------------------------------------------------
#: The kinds of :class:`ActionInfo`, one per meaning (PASS has a different meaning in each phase). The wire's
#: ``feudo.v1.ActionKind`` has the same names with the prefix ``ACTION_KIND_``.
ACTION_KINDS = (
    "PLACE_CASTLE",         # PLACE + s (R21)
    "CHOOSE_ORDER",         # ORDER + i (R5)
    "SELECT_ARMY_CARD",     # SELECT + t (R6)
    "SELECT_TRADING_CARD",  # TRADE + c (R6)
    "REVEAL",               # REVEAL + t (R7)
    "MOVE",                 # MOVE + x (R7, R8)
    "STAY",                 # PASS in MOVE: the revealed token does not move
    "CHARM",                # CHARM + q (R13)
    "INFECT",               # INFECT (R13)
    "MILADY_PASS",          # PASS in MILADY: neither charm nor infect
    "MARCH",                # MARCH + t*T+x (R9)
    "END_MARCH",            # PASS in MARCH: stop marching (the shillings left are lost)
    "ATTACK_DECLARE",       # ATTACK + x (R11)
    "NO_ATTACK",            # PASS in ATTACK: declare no (further) attack this turn
    "ATTACK_JOIN",          # JOIN + t (R11)
    "ATTACK_LAUNCH",        # PASS in ATTACK_JOIN: launch the declared attack
    "ADVANCE",              # ADVANCE + t (R14)
    "NO_ADVANCE",           # PASS in ADVANCE: advance no (further) token
    "CHANCE_CASTLE_PLACER",  # CHANCE_PLAYER + q in CHANCE_PLACER (R21)
    "CHANCE_ORDER_DECIDER",  # CHANCE_PLAYER + q in CHANCE_DECIDER (R5)
    "CHANCE_PLAGUE_CARD",   # PLAGUE + k (R18)
)

_PASS_KIND = {7: "STAY", 8: "MILADY_PASS", 9: "END_MARCH", 10: "NO_ATTACK", 11: "ATTACK_LAUNCH", 12: "NO_ADVANCE"}


@dataclass(frozen=True)
class ActionInfo:
    """One action of a position as fields (:func:`action_info`). -1 (or empty) means "does not apply".

    ``player`` acts (-1: chance). ``token`` is the Army Card / token index (SELECT_ARMY_CARD, REVEAL, MOVE, STAY,
    MARCH, ATTACK_JOIN, ADVANCE; the Milady for CHARM, INFECT, MILADY_PASS). ``from_territory`` is where the token
    stands (-1 with ``from_castle``: in its Castle, a move then starts on the Castle's territory at no cost);
    ``to_territory`` where it ends (MOVE, MARCH, ADVANCE) or the territory attacked (ATTACK_DECLARE,
    ATTACK_JOIN, ATTACK_LAUNCH). ``cost`` is the length of the shortest legal path (MOVE: of the token's movement,
    MARCH: shillings spent; ADVANCE: 0). ``target_player`` is the charmed player, or the player chance picks.
    """

    kind: str
    player: int
    token: int = -1
    trading_card: int = -1
    from_territory: int = -1
    from_castle: bool = False
    to_territory: int = -1
    cost: int = -1
    castle_site: int = -1
    order: tuple[int, ...] = ()
    target_player: int = -1
    plague_card: int = -1


def action_info(state, action: int) -> ActionInfo:
    """The meaning of a legal ``action`` in ``state`` (a reference ``State``; a ``CoreState`` is converted), by the
    layout's decoding and the position's context (the revealed token, the attack declared, the won attack).

    Private facts appear only where the action itself carries them: a Strategy pick names its card (which is why
    another seat's pick is never sent, R22); every other field is public in ``state``.
    :raises ValueError: an action outside the layout, or one that means nothing in this phase.
    """
    s = state.to_reference() if hasattr(state, "to_reference") else state
    g = s.game
    L, T = g.layout, g.num_territories
    name, i = L.decode(action)
    p = s.current_player()
    phase = int(s.phase)

    def located(t: int, **kw) -> ActionInfo:
        x = s.loc[p][t]
        return ActionInfo(player=p, token=t, from_territory=x if x >= 0 else -1, from_castle=x == -1, **kw)

    if name == "PASS":
        kind = _PASS_KIND.get(phase)
        if kind is None:
            raise ValueError(f"action {action}: PASS means nothing in phase {phase}")
        if kind == "STAY":
            return located(s.token, kind=kind)
        if kind == "MILADY_PASS":
            return located(g.milady, kind=kind)
        if kind == "ATTACK_LAUNCH":
            return ActionInfo(kind=kind, player=p, to_territory=s.target)
        if kind == "NO_ADVANCE":
            return ActionInfo(kind=kind, player=p, to_territory=s.won[s.round][1])
        return ActionInfo(kind=kind, player=p)
    if name == "PLACE":
        return ActionInfo(kind="PLACE_CASTLE", player=p, castle_site=i,
                          to_territory=g.map.castle_sites[i].territory)
    if name == "ORDER":
        active = tuple(q for q in range(g.num_players) if s.active[q])
        return ActionInfo(kind="CHOOSE_ORDER", player=p, order=tuple(permutations_of(active)[i]))
    if name == "SELECT":
        return ActionInfo(kind="SELECT_ARMY_CARD", player=p, token=i)
    if name == "TRADE":
        return ActionInfo(kind="SELECT_TRADING_CARD", player=p, trading_card=i)
    if name == "REVEAL":
        return located(i, kind="REVEAL")
    if name == "MOVE":
        steps = s.army_move_steps(p, s.token)
        return located(s.token, kind="MOVE", to_territory=i, cost=s.destinations(p, s.token, steps).get(i, -1))
    if name == "CHARM":
        return located(g.milady, kind="CHARM", target_player=i)
    if name == "INFECT":
        return located(g.milady, kind="INFECT")
    if name == "MARCH":
        t, x = divmod(i, T)
        return located(t, kind="MARCH", to_territory=x, cost=s.destinations(p, t, s.shillings).get(x, -1))
    if name == "ATTACK":
        return ActionInfo(kind="ATTACK_DECLARE", player=p, to_territory=i)
    if name == "JOIN":
        return located(i, kind="ATTACK_JOIN", to_territory=s.target)
    if name == "ADVANCE":
        return located(i, kind="ADVANCE", to_territory=s.won[s.round][1], cost=0)
    if name == "CHANCE_PLAYER":
        kind = "CHANCE_CASTLE_PLACER" if phase == 0 else "CHANCE_ORDER_DECIDER"
        return ActionInfo(kind=kind, player=-1, target_player=i)
    return ActionInfo(kind="CHANCE_PLAGUE_CARD", player=-1, plague_card=i)
