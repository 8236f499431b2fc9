"""Text picture of a Fief 2 position: families, villages with their tokens, fiefs, the crown."""

from __future__ import annotations


def render_text(st) -> str:
    from .state import PHASE_NAMES, FRAME_NAMES
    g = st.game
    m = g.map
    lines = [f"Fief 2 - turn {st.turn}, {PHASE_NAMES[st.phase]}, first player {st.first}"
             + (f", deciding: {FRAME_NAMES[st.stack[-1][0]]} ({st.current_player()})" if st.stack else "")]
    for f in range(st.num_players):
        persons = ", ".join(
            g.ruleset.person_names[p] + (" (prisoner)" if st.captor[p] >= 0 else "")
            + ("".join(f" {m.fief_ids[y]}" for y in st.fief_titles(p)))
            + (" King" if p == st.king else "") + (" Queen" if p == st.queen else "")
            + (" Prince" if p == st.prince else "") + (f" Bishop {m.bishopric_ids[st.bishop[p]]}" if st.bishop[p] >= 0 else "")
            + (" Cardinal" if st.cardinal[p] else "") + (" d'Arc" if st.darc[p] else "")
            for p in st.persons_of(f))
        status = "" if st.alive[f] else " (eliminated)"
        lines.append(f"family {f}{status}: {st.cash[f]} florins, {len(st.hands[f])} cards, persons: {persons or '-'}")
    for v in range(m.num_villages):
        parts = []
        for f in range(st.num_players):
            n = st.soldiers_at(f, v)
            ps = [g.ruleset.person_initials[p] for p in st.free_at(f, v)]
            if n or ps:
                parts.append(f"f{f}:{n}{''.join(ps)}")
        if st.mob_in(v):
            parts.append(f"mob:{st.mob_n}")
        imp = ("C" if st.castle[v] else "") + ("CITY" if st.city[v] else "") + "M" * st.mills[v] + "W" * st.presses[v]
        if parts or imp or st.owner[v] >= 0:
            owner = f"owner {st.owner[v]}" if st.owner[v] >= 0 else "unowned"
            lines.append(f"  {g.village_name(v):20s} {m.fief_ids[m.village_fief[v]]} {owner:8s} {imp:6s} "
                         + " ".join(parts))
    for y in range(len(m.fief_ids)):
        f = st.fief_family(y)
        extra = (" bad weather" if st.bad_weather[y] >= 0 else "") + (" famine" if st.famine[y] >= 0 else "")
        lines.append(f"  fief {m.fief_ids[y]}: " + (f"held by family {f}" if f >= 0 else "in the supply") + extra)
    if st.winners:
        lines.append(f"winners: {st.winners}")
    return "\n".join(lines)
