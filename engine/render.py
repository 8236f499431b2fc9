"""Text pictures of a state: the map with tokens, and a per-player summary (for the CLI and humans)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .state import CASTLE, DEAD, Phase

if TYPE_CHECKING:  # pragma: no cover
    from .state import State

_TOKEN_LETTER = {"baron": "B", "milady": "M", "first_knight": "F", "knight": "K", "mercenary": "$",
                 "infantryman": "i"}


def token_marks(state: "State") -> dict[int, str]:
    """Per territory, a short mark of who stands there: player initial + token letters, e.g. ``bBK``."""
    g = state.game
    marks: dict[int, str] = {}
    for p in range(g.num_players):
        initial = g.player_name(p)[0].lower()
        for t, x in enumerate(state.loc[p]):
            if x >= 0:
                marks[x] = marks.get(x, initial) + _TOKEN_LETTER[g.token_kind[t]]
    if state.plague_village >= 0:
        marks.setdefault(state.plague_village, "*")
    return marks


def render_text(state: "State") -> str:
    g = state.game
    lines = [f"Turn {state.turn}{' (tie-break %d)' % state.tiebreak if state.tiebreak else ''}  "
             f"phase {Phase(state.phase).name}  to act: {state._actor_text()}"]
    if state.order:
        lines.append("Order of play: " + ", ".join(g.player_name(p) for p in state.order))
    lines.append(g.map.render_ascii(token_marks(state)))
    for p in range(g.num_players):
        where = []
        for t, x in enumerate(state.loc[p]):
            name = g.ruleset.army[t].name
            if x == DEAD:
                continue
            place = "castle" if x == CASTLE else g.map.territories[x].name
            where.append(f"{name}{'*' if state.stricken[p][t] else ''}@{place}")
        cities = [g.map.territories[x].name for x, o in enumerate(state.owner) if o == p]
        lines.append(f"{g.player_name(p)}: {state.vp[p]} VP"
                     + (f", cities {', '.join(cities)}" if cities else "") + "; " + ", ".join(where))
    return "\n".join(lines)
