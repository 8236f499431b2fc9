"""What one action did, as structured facts: the outcomes a front-end draws without diffing positions.

    for o in outcomes(before, action, after, viewer=0):
        print(o)            # Fight(...), Plague(...), Reveal(...), Move(...), PhaseChange(...), TurnEnd(...), ...

:func:`outcomes` compares the position before one action with the position after it (consecutive reference
states, or compiled ones: they are converted) and names what happened, in the order it happened: the action's
own effect (a Castle placed, an order chosen, a pick, a reveal, a move or march or advance, a charm or infection,
a fight, a plague draw), the Trading Cards it turned over, VP changes outside fights (the King and the Cowards,
R16), the end of the turn with every player's VP, the end of the game, and the phase or turn now under way.

Honesty (R22): an outcome states only what every player sees at that moment. The one exception is a Strategy
pick (R6), whose card is named only when ``viewer`` is the picking seat (``reveal_all`` names every pick, for an
omniscient record); everything else is read from public fields of the two positions (locations, strickenings,
VP, Cities, the plague, revealed cards), never from another seat's selection. :func:`feudo_ai.people.narrate`
tells the same facts in words.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Union

from .actions import ActionInfo, action_info
from .schema import CASTLE, DEAD, Phase

__all__ = ["Stage", "stage_of", "Loss", "Fighter", "VpChange", "Fight", "Plague", "Reveal", "TradingCardReveal",
           "Move", "Milady", "CastlePlaced", "OrderChosen", "Pick", "ChanceDraw", "PhaseChange", "TurnEnd",
           "GameEnd", "Outcome", "outcomes"]

#: The rulebook's stages of the game (R4), each engine phase in one of them.
STAGES = ("SETUP", "DIPLOMACY", "STRATEGY", "PLAGUE", "MOVEMENT", "ATTACK", "ADVANCE", "GAME_OVER")
_STAGE_OF_PHASE = {
    Phase.CHANCE_PLACER: "SETUP", Phase.PLACE_CASTLE: "SETUP",
    Phase.CHANCE_DECIDER: "DIPLOMACY", Phase.CHOOSE_ORDER: "DIPLOMACY",
    Phase.SELECT: "STRATEGY", Phase.CHANCE_PLAGUE: "PLAGUE",
    Phase.REVEAL: "MOVEMENT", Phase.MOVE: "MOVEMENT", Phase.MILADY: "MOVEMENT", Phase.MARCH: "MOVEMENT",
    Phase.ATTACK: "ATTACK", Phase.ATTACK_JOIN: "ATTACK", Phase.ADVANCE: "ADVANCE", Phase.TERMINAL: "GAME_OVER",
}
Stage = str


def stage_of(phase: int) -> Stage:
    """The rulebook stage (one of :data:`STAGES`) an engine phase belongs to."""
    return _STAGE_OF_PHASE[Phase(int(phase))]


@dataclass(frozen=True)
class Loss:
    """A token hit: ``result`` is "eliminated", "wounded" (a Baron back to his Castle, R12) or "stricken"
    (plague, R18; infection, R13). ``territory`` is where it stood (-1: its Castle)."""

    player: int
    token: int
    territory: int
    result: str


@dataclass(frozen=True)
class Fighter:
    """A token in a fight with its strength (current number, R1/R17) when the attack was launched."""

    player: int
    token: int
    strength: int


@dataclass(frozen=True)
class VpChange:
    """A change of a player's VP (R15, R16): ``reason`` is "elimination", "city_conquered", "city_lost" or
    "king_cowards"; ``vp`` the total after it; ``text`` the engine's words ("defeats White Knight 1")."""

    player: int
    delta: int
    vp: int
    reason: str
    text: str


@dataclass(frozen=True)
class Fight:
    """An attack launched (R11): who fought whom with what strength, who won, what each side lost, the VP."""

    attacker: int
    territory: int
    attackers: tuple[Fighter, ...]
    defenders: tuple[Fighter, ...]
    attack_strength: int
    defence_strength: int  # the defenders' strengths plus the territory's bonus
    terrain_bonus: int  # Wood 5, Village 3, City 7, otherwise 0 (R11)
    attacker_won: bool
    winner: int  # the attacker, the defending player (or the City's owner), -1: nobody (an empty free City)
    city_owner_before: int  # -1: not a City, or a free one
    attackers_lost: tuple[Loss, ...]
    defenders_lost: tuple[Loss, ...]
    vp_changes: tuple[VpChange, ...]


@dataclass(frozen=True)
class Plague:
    """A plague card drawn (R18, R20): where the Plague Token went, the territories struck, the victims."""

    card: int
    name: str
    effect: str
    village_before: int  # -1: no Plague Token
    village_after: int
    struck: tuple[int, ...]  # territories struck (tokens in Castles, Cities and the Convent are safe)
    victims: tuple[Loss, ...]  # stricken or eliminated tokens, friars of a Fog included


@dataclass(frozen=True)
class Reveal:
    """An Army Card revealed (R7)."""

    player: int
    token: int
    territory: int  # where its token stands (-1: in its Castle)


@dataclass(frozen=True)
class TradingCardReveal:
    """A Trading Card turned over (R7, R9): its shillings for the player now (the King's Help included, R16)."""

    player: int
    card: int
    value: int
    shillings: int


@dataclass(frozen=True)
class Move:
    """A token moved: ``how`` is "move" (its Army Card, R7/R8), "march" (shillings, R9) or "advance" (R14).
    ``origin`` -1: from its Castle. ``cost``: path length (a march: shillings spent; an advance: 0)."""

    player: int
    token: int
    how: str
    origin: int
    destination: int
    cost: int
    shillings_left: int  # a march: shillings left to march with; otherwise 0


@dataclass(frozen=True)
class Milady:
    """A Milady's act (R13): ``charmed`` the player whose Baron she charmed (-1: she infected), ``infected`` the
    tokens she made stricken."""

    player: int
    territory: int
    charmed: int
    infected: tuple[Loss, ...]


@dataclass(frozen=True)
class CastlePlaced:
    player: int
    site: int
    territory: int


@dataclass(frozen=True)
class OrderChosen:
    decider: int
    order: tuple[int, ...]


@dataclass(frozen=True)
class Pick:
    """A secret Strategy pick (R6). ``token`` / ``trading_card`` are named only to the picking seat (-1 else)."""

    player: int
    token: int = -1
    trading_card: int = -1
    done: bool = False  # the pick completed the player's selection


@dataclass(frozen=True)
class ChanceDraw:
    """Chance picks a player: ``purpose`` "castle_placer" (R21) or "order_decider" (R5)."""

    purpose: str
    player: int


@dataclass(frozen=True)
class PhaseChange:
    """The stage (or turn) now under way, and the engine phase of its first decision."""

    turn: int
    tiebreak: int
    stage: Stage
    phase: int
    stage_before: Stage
    turn_before: int


@dataclass(frozen=True)
class TurnEnd:
    """A turn over (R4): every player's VP then; ``tiebreak_players`` the tied leaders who play an extra turn
    alone (R19), empty otherwise."""

    turn: int
    vp: tuple[int, ...]
    tiebreak_players: tuple[int, ...] = ()


@dataclass(frozen=True)
class GameEnd:
    winners: tuple[int, ...]
    vp: tuple[int, ...]


Outcome = Union[Fight, Plague, Reveal, TradingCardReveal, Move, Milady, CastlePlaced, OrderChosen, Pick, ChanceDraw,
                PhaseChange, TurnEnd, GameEnd, VpChange]


def _ref(state: Any) -> Any:
    return state.to_reference() if hasattr(state, "to_reference") else state


def _reason(text: str) -> str:
    if text.startswith("conquers"):
        return "city_conquered"
    if text.startswith("loses"):
        return "city_lost"
    if text.startswith("the King"):
        return "king_cowards"
    return "elimination"


def _vp_changes(b: Any, a: Any) -> list[VpChange]:
    """The VP changes between two positions, from the engine's VP log (R15: every change is logged)."""
    new = a.vp_log[len(b.vp_log):] if len(a.vp_log) >= len(b.vp_log) else []
    running = list(b.vp)
    out = []
    for p, delta, text in new:
        running[p] += delta
        out.append(VpChange(player=p, delta=delta, vp=running[p], reason=_reason(text), text=text))
    return out


def _losses(b: Any, a: Any, tokens: Any = None) -> list[Loss]:
    """Tokens eliminated, wounded or stricken between two positions (public: locations and black sides)."""
    g = b.game
    out = []
    for q in range(g.num_players):
        for t in range(g.num_tokens):
            if tokens is not None and (q, t) not in tokens:
                continue
            was, now = b.loc[q][t], a.loc[q][t]
            where = was if was >= 0 else -1
            if was != DEAD and now == DEAD:
                out.append(Loss(q, t, where, "eliminated"))
            elif t == g.baron and was >= 0 and now == CASTLE:
                out.append(Loss(q, t, where, "wounded"))
            elif now != DEAD and not b.stricken[q][t] and a.stricken[q][t]:
                out.append(Loss(q, t, where, "stricken"))
    return out


def _fight(b: Any, a: Any, vp: list[VpChange]) -> Fight:
    g, rs = b.game, b.game.ruleset
    p, x = b.current_player(), b.target
    force, defence = b.attack_odds()
    defenders = b._defenders(p, x)
    kind = int(g.kind[x])
    from .board import Kind
    bonus = {Kind.WOOD: rs.defence_wood, Kind.VILLAGE: rs.defence_village, Kind.CITY: rs.defence_city}.get(
        Kind(kind), 0)
    won = force > defence
    owner = b.owner[x] if kind == Kind.CITY else -1
    winner = p if won else (defenders[0][0] if defenders else b.owner[x])
    attackers = {(p, t) for t in b.joiners}
    return Fight(
        attacker=p, territory=x,
        attackers=tuple(Fighter(p, t, b.number(p, t)) for t in b.joiners),
        defenders=tuple(Fighter(q, u, b.number(q, u)) for q, u in defenders),
        attack_strength=force, defence_strength=defence, terrain_bonus=bonus, attacker_won=won, winner=winner,
        city_owner_before=owner,
        attackers_lost=tuple(_losses(b, a, attackers)), defenders_lost=tuple(_losses(b, a, set(defenders))),
        vp_changes=tuple(v for v in vp if v.reason != "king_cowards"))


def outcomes(before: Any, action: int, after: Any, viewer: int | None = None,
             reveal_all: bool = False) -> list[Outcome]:
    """What ``action`` (applied to ``before``, giving ``after``) did, as ``viewer`` may know it (R22; ``None``: a
    spectator). See the module docstring for the kinds and their order."""
    b, a = _ref(before), _ref(after)
    g = b.game
    out: list[Outcome] = []
    info: ActionInfo = action_info(b, action)
    kind, p = info.kind, info.player
    vp = _vp_changes(b, a)
    if kind == "PLACE_CASTLE":
        out.append(CastlePlaced(p, info.castle_site, info.to_territory))
    elif kind == "CHOOSE_ORDER":
        out.append(OrderChosen(p, info.order))
    elif kind in ("SELECT_ARMY_CARD", "SELECT_TRADING_CARD"):
        own = reveal_all or viewer == p
        out.append(Pick(p, info.token if own else -1, info.trading_card if own else -1,
                        done=bool(a.sel_done[p]) and not b.sel_done[p]))
    elif kind in ("CHANCE_CASTLE_PLACER", "CHANCE_ORDER_DECIDER"):
        out.append(ChanceDraw("castle_placer" if kind == "CHANCE_CASTLE_PLACER" else "order_decider",
                              info.target_player))
    elif kind == "CHANCE_PLAGUE_CARD":
        card = g.ruleset.plague_cards[info.plague_card]
        village, struck = b.plague_strikes(info.plague_card)
        out.append(Plague(card=card.index, name=card.name, effect=card.effect, village_before=b.plague_village,
                          village_after=a.plague_village, struck=tuple(sorted(struck)), victims=tuple(_losses(b, a))))
    elif kind == "REVEAL":
        out.append(Reveal(p, info.token, info.from_territory))
    elif kind in ("MOVE", "MARCH", "ADVANCE"):
        out.append(Move(p, info.token, kind.lower(), info.from_territory, info.to_territory, info.cost,
                        a.shillings if kind == "MARCH" and a.phase == Phase.MARCH else 0))
    elif kind in ("CHARM", "INFECT"):
        out.append(Milady(p, info.from_territory, info.target_player if kind == "CHARM" else -1,
                          tuple(_losses(b, a)) if kind == "INFECT" else ()))
    elif kind == "ATTACK_LAUNCH":
        out.append(_fight(b, a, vp))
    # Trading Cards turned over by this action (R7, R9): public from then on
    for q in range(g.num_players):
        if a.trade_revealed[q] and not b.trade_revealed[q] and a.sel_trade[q] >= 0:
            c = a.sel_trade[q]
            out.append(TradingCardReveal(q, c, g.ruleset.trading_cards[c], a.shillings_of(q, c)))
    # VP changes outside a fight: the King and the Cowards (R16)
    out.extend(v for v in vp if kind != "ATTACK_LAUNCH" or v.reason == "king_cowards")
    # the end of the turn (R4) and of the game (R19)
    ended = b.turn >= 1 and (a.turn > b.turn or (a.is_terminal() and not b.is_terminal()))
    if ended:
        extra = tuple(q for q in range(g.num_players) if a.active[q]) if a.tiebreak > b.tiebreak else ()
        out.append(TurnEnd(b.turn, tuple(a.vp), extra))
    if a.is_terminal() and not b.is_terminal():
        out.append(GameEnd(tuple(a.winners), tuple(a.vp)))
    sb, sa = stage_of(b.phase), stage_of(a.phase)
    if sa != sb or a.turn != b.turn:
        out.append(PhaseChange(turn=a.turn, tiebreak=a.tiebreak, stage=sa, phase=int(a.phase), stage_before=sb,
                               turn_before=b.turn))
    return out
