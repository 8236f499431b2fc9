"""The shape of a Feudo position: its phases, sentinel values and fields, with no rules attached.

These facts are shared by the reference state (:mod:`engine.state`), the validator (:mod:`engine.validate`), the
reader and writer of state documents (:mod:`engine.serialize`), the pictures (:mod:`engine.render`) and the C core
(``engine/_core.pxd`` mirrors the numbers). They sit here, below all of them, so that each can import them without
importing the rules. :mod:`engine.state` re-exports every name (``from engine.state import Phase`` works).
"""

from __future__ import annotations

from enum import IntEnum

CHANCE = -1  # current_player() at a chance node (OpenSpiel's kChancePlayerId)
TERMINAL = -4  # current_player() once the game is over (OpenSpiel's kTerminalPlayerId)

CASTLE = -1  # token location: in its Castle, off the map (never entered, or wounded Baron / resting Milady)
DEAD = -2  # token location: eliminated


class Phase(IntEnum):
    CHANCE_PLACER = 0  # chance: who places the next Castle (R21)
    PLACE_CASTLE = 1
    CHANCE_DECIDER = 2  # chance: which of the tied players with fewest VP decides the order (R5)
    CHOOSE_ORDER = 3
    SELECT = 4  # secret Strategy selection (R6), players in seat order
    CHANCE_PLAGUE = 5  # chance: the plague card drawn (R18)
    REVEAL = 6  # choose which selected Army Card to reveal (R7)
    MOVE = 7  # where the revealed token goes (R7, R8)
    MILADY = 8  # charm or infect (R13)
    MARCH = 9  # shilling marches (R9)
    ATTACK = 10  # declare an attack or pass (R11)
    ATTACK_JOIN = 11  # choose the tokens of the declared attack
    ADVANCE = 12  # advance into won territories (R14)
    TERMINAL = 13


# Fields of the state, in a fixed order: the canonical encoding and the JSON form both follow it (public:
# the serialiser, the validator and the core read it).
STATE_FIELDS = (
    "turn", "phase", "tiebreak", "active", "order", "castle", "placed", "decider", "vp",
    "loc", "stricken", "entered", "rest_until", "army_held", "trade_held",
    "sel_army", "sel_trade", "sel_done", "revealed", "trade_revealed",
    "owner", "plague_village", "plague_drawn", "plague_history", "plague_card", "king",
    "charmed", "merc_moved", "march_over", "attacked", "won",
    "cursor", "round", "token", "shillings", "target", "joiners", "advanced", "winners",
)

#: The ``format`` of a self-contained state document (:meth:`engine.state.State.to_json`).
STATE_FORMAT = "feudo-state/1"
