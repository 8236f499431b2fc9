"""What happened, in words a player at the table would use: one action's public consequences.

    for line in narrate(before, action, after, viewer=0):
        print(line)

``narrate`` describes an action and what it caused as the ``viewer`` may know it (R22): another seat's secret
Strategy pick is "selects a card (hidden)"; fights ("White's Knight 1 (3) attacks City G6 Pershore: 3 against 5,
repelled") and plague casualties ("Red's Infantryman 2 is stricken") are public. ``viewer=None`` is a spectator:
no secret pick is named at all.
"""

from __future__ import annotations

from typing import Any

from engine.state import DEAD, Phase

__all__ = ["narrate", "describe_action"]


def _ref(state: Any) -> Any:
    return state.to_reference() if hasattr(state, "to_reference") else state


def describe_action(state: Any, action: int, viewer: int | None, reveal_all: bool = False) -> str:
    """The action as ``viewer`` sees it, with who took it: ``"White: reveal Knight 1"``, ``"plague: North 2"``,
    or ``"Red: selects a card (hidden)"`` for another seat's secret pick (R22); ``reveal_all`` names every pick
    (an omniscient spectator of a bot game)."""
    if state.is_chance_node():
        if state.phase in (Phase.CHANCE_PLACER, Phase.CHANCE_DECIDER):  # say what chance decided (R21, R5)
            who = state.game.player_name(action - state.game.layout.CHANCE_PLAYER)
            what = "places the next Castle" if state.phase == Phase.CHANCE_PLACER else "decides the order of play"
            return f"chance: {who} {what}"
        return state.action_to_string(action)
    p = state.current_player()
    name = state.game.player_name(p)
    if state.phase == Phase.SELECT and p != viewer and not reveal_all:
        return f"{name}: selects a card (hidden)"
    return f"{name}: {state.action_to_string(action)}"


def narrate(before: Any, action: int, after: Any, viewer: int | None = None, reveal_all: bool = False) -> list[str]:
    """Lines describing ``action`` (applied to ``before``, giving ``after``) and its public consequences.

    :raises StateError: never for a legal action (``before`` and ``after`` must be consecutive states).
    """
    b, a = _ref(before), _ref(after)
    g = b.game
    lines = [describe_action(b, action, viewer, reveal_all)]
    army = g.ruleset.army
    pname = g.player_name
    if b.phase == Phase.ATTACK_JOIN and action == g.layout.PASS:  # the attack is launched (R11)
        p = b.current_player()
        force, defence = b.attack_odds()
        who = " + ".join(f"{army[t].name} ({b.number(p, t)})" for t in b.joiners)
        target = g.map.labels[b.target]
        outcome = "wins" if force > defence else "repelled, the attackers are eliminated"
        lines.append(f"  {pname(p)}'s {who} attack {target}: {force} against {defence}, {outcome}")
    # Deaths and strickenings (plague, fights, friars, infection), and Castles/Convent moves they cause
    for q in range(g.num_players):
        for t in range(g.num_tokens):
            was, now = b.loc[q][t], a.loc[q][t]
            if was != DEAD and now == DEAD:
                place = g.map.labels[was] if was >= 0 else "the Castle"
                lines.append(f"  {pname(q)}'s {army[t].name} is eliminated at {place}")
            elif t == g.baron and was >= 0 and now < 0:
                lines.append(f"  {pname(q)}'s {army[t].name} is wounded and returns to his Castle (R12)")
            elif now != DEAD and not b.stricken[q][t] and a.stricken[q][t]:
                lines.append(f"  {pname(q)}'s {army[t].name} is stricken by the plague")
    if b.plague_village != a.plague_village and a.plague_village >= 0:
        lines.append(f"  the Plague Token moves to {g.map.labels[a.plague_village]}")
    for q in range(g.num_players):
        if a.vp[q] != b.vp[q]:
            delta = a.vp[q] - b.vp[q]
            lines.append(f"  {pname(q)} {'gains' if delta > 0 else 'loses'} {abs(delta)} VP ({a.vp[q]})")
        if not b.charmed[q] and a.charmed[q]:
            lines.append(f"  {pname(q)}'s Baron is charmed: {pname(q)} moves nothing more this turn (R13)")
    if not b.king and a.king:
        lines.append("  The King intervenes (R16)")
    if a.is_terminal() and not b.is_terminal():
        names = ", ".join(pname(w) for w in a.winners)
        lines.append(f"  Game over: {names} win{'s' if len(a.winners) == 1 else ''}, VP {a.vp}")
    return lines
