"""Pictures of a Fief 2 position: text (families, villages with their tokens, fiefs, the crown) and SVG (and PNG
through cairosvg) drawn from the map data: :func:`render_text`, :func:`render_svg`, :func:`render_png`."""

from __future__ import annotations

import html
import math


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


# ---------------------------------------------------------------------------------------------------------------
# SVG (and PNG through cairosvg)
# ---------------------------------------------------------------------------------------------------------------
#: Each family's colour, in seat order: the Okabe-Ito palette (told apart with the common colour-vision
#: deficiencies); every token also carries its family's number, so no information is in the colour alone.
FAMILY_COLOURS = ("#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#CC79A7")
_FAMILY_INK = ("#111111", "#111111", "#111111", "#111111", "#ffffff", "#111111")
_FAMILY_WORDS = ("orange", "sky blue", "green", "yellow", "blue", "pink")
#: Fief tints behind the villages, by the map file's cosmetic colour word (F6); an unknown word is drawn grey.
_FIEF_TINTS = {"blue": "#9ec5e8", "red": "#eda5a0", "green": "#a9d8a0", "yellow": "#f3e08f", "purple": "#c9b1de",
               "orange": "#f5c18e", "grey": "#cfcfcf", "gray": "#cfcfcf", "brown": "#d2b48c", "pink": "#f4b6cf"}
_MOB_FILL, _MOB_INK = "#3b3b3b", "#ffffff"
_CELL_W, _CELL_H, _BOX_W, _BOX_H = 214, 176, 190, 152
_CHAR_W = 0.6  # average advance of a DejaVu Sans glyph, in font sizes


def _esc(text: object) -> str:
    """Text and attribute values as XML: ``&``, ``<``, ``>`` and quotes escaped."""
    return html.escape(str(text), quote=True)


def _text(x: float, y: float, text: str, size: float, width: float | None = None, anchor: str = "start",
          fill: str = "#1b1b1b", weight: str = "normal", cls: str = "", data: str = "") -> str:
    """A ``<text>``; one too long for ``width`` gets a smaller font (cairosvg, the PNG path, ignores
    ``textLength``)."""
    if width is not None and _CHAR_W * size * len(text) > width:
        size = max(size * width / (_CHAR_W * size * len(text)), 5.0)
    klass = f' class="{cls}"' if cls else ""
    return (f'<text{klass}{data} x="{x:.1f}" y="{y:.1f}" font-size="{size:.1f}" font-weight="{weight}" '
            f'text-anchor="{anchor}" fill="{fill}">{_esc(text)}</text>')


def _layout(m) -> list[tuple[int, int]]:
    """Grid places (column, row) of the villages: the map file's x, y (F6) ranked per axis, so the picture has no
    empty columns; a map whose places collide is laid out row by row in village order instead."""
    xs = sorted({x for x, _ in m.xy})
    ys = sorted({y for _, y in m.xy})
    places = [(xs.index(x), ys.index(y)) for x, y in m.xy]
    if len(set(places)) == len(places):
        return places
    cols = max(1, math.ceil(math.sqrt(len(places))))
    return [(i % cols, i // cols) for i in range(len(places))]


def _fam_fill(f: int) -> tuple[str, str]:
    return FAMILY_COLOURS[f % len(FAMILY_COLOURS)], _FAMILY_INK[f % len(_FAMILY_INK)]


def _stacks(st) -> tuple[dict, dict]:
    """Tokens by place, read from the state: ``inside[v]`` and ``roads[(v, from)]`` map a family (or MOB) to
    (ordinary Soldiers, Queen's Guard, King's Guard, free persons, prisoners it holds)."""
    from .state import MOB
    g = st.game
    inside: dict = {}
    roads: dict = {}

    def slot(v: int, frm: int, f: int) -> list:
        table = inside.setdefault(v, {}) if frm < 0 else roads.setdefault((v, frm), {})
        return table.setdefault(f, [0, 0, 0, [], []])

    for f in range(st.num_players):
        for v in range(g.V):
            if sum(st.sold[f][v]):
                slot(v, -1, f)[0] += sum(st.sold[f][v])
    for a in st.assaults:  # Soldiers waiting on a road (F26.3)
        if a[0] != MOB and a[2] >= 0 and a[4]:
            slot(a[1], a[2], a[0])[0] += a[4]
    for leader, strength, i in ((st.qg_leader(), st.qg, 1), (st.kg_leader(), st.kg, 2)):
        if leader >= 0 and strength > 0 and st.captor[leader] < 0:  # a prisoner's Guard is off the board (F36.4)
            slot(st.loc[leader], st.onroad[leader], st.fam[leader])[i] += strength
    for p in range(g.P):
        if st.fam[p] < 0:
            continue
        if st.captor[p] < 0:
            slot(st.loc[p], st.onroad[p], st.fam[p])[3].append(p)
        else:
            slot(st.loc[p], st.onroad[p], st.captor[p])[4].append(p)
    if st.mob_n > 0 and st.mob_v >= 0:
        (inside.setdefault(st.mob_v, {}) if st.mob_road < 0 else roads.setdefault((st.mob_v, st.mob_road), {}))[
            MOB] = [st.mob_n, 0, 0, [], []]
    return inside, roads


def _stack_label(st, f: int, tokens: list, frm: int) -> str:
    from .state import MOB
    ini = st.game.ruleset.person_initials
    n, qg, kg, persons, prisoners = tokens
    road = f" from {st.game.map.village_ids[frm]}" if frm >= 0 else ""
    if f == MOB:
        ctrl = f" (F{st.mob_ctrl})" if st.mob_ctrl >= 0 else ""
        return f"Mob{road}: {n} Peasants{ctrl}"
    parts = [f"{n} Soldier{'s' if n != 1 else ''}"] if n else []
    if qg:
        parts.append(f"QG {qg}")
    if kg:
        parts.append(f"KG {kg}")
    if persons:
        parts.append(" ".join(ini[p] for p in persons))
    if prisoners:
        parts.append("holds " + " ".join(f"[{ini[p]}]" for p in prisoners))
    return f"F{f}{road}: " + ", ".join(parts)


def _stack_svg(st, f: int, tokens: list, x: float, y: float, w: float, h: float, v: int, frm: int) -> str:
    """One family's (or the mob's) tokens in one place: a pill in its colour with its number written (dashed for
    tokens waiting on the road from ``frm`` to assault ``v``, F26.3), the counts as data attributes
    (``data-soldiers`` ordinary, ``data-queens-guard``, ``data-kings-guard``)."""
    from .state import MOB
    rs = st.game.ruleset
    n, qg, kg, persons, prisoners = tokens
    fill, ink = (_MOB_FILL, _MOB_INK) if f == MOB else _fam_fill(f)
    who = "mob" if f == MOB else str(f)
    ids = st.game.map.village_ids
    cls, extra, dash = "stack", f' data-village="{_esc(ids[v])}"', ""
    if frm >= 0:
        cls, extra, dash = "road-stack", extra + f' data-from="{_esc(ids[frm])}"', ' stroke-dasharray="4,2"'
    out = [f'<g class="{cls}" data-family="{who}" data-soldiers="{n}" data-queens-guard="{qg}" '
           f'data-kings-guard="{kg}"{extra}>',
           f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" rx="{h / 2:.1f}" fill="{fill}" '
           f'stroke="#222" stroke-width="{1.6 if frm >= 0 else 0.8}"{dash}/>',
           _text(x + 6, y + h * 0.72, _stack_label(st, f, tokens, frm), h * 0.62, w - 10, fill=ink,
                 weight="bold")]
    for p in persons:  # one element per person, for anyone reading the picture with a program
        out.append(f'<desc class="person" data-person="{_esc(rs.person_ids[p])}" data-family="{st.fam[p]}">'
                   f'{_esc(rs.person_names[p])}</desc>')
    for p in prisoners:
        out.append(f'<desc class="prisoner" data-person="{_esc(rs.person_ids[p])}" data-family="{st.fam[p]}" '
                   f'data-captor="{f}">{_esc(rs.person_names[p])}</desc>')
    out.append("</g>")
    return "".join(out)


def _castle(x: float, y: float, s: float, cls: str, fill: str) -> str:
    u = s / 5
    pts = [(0, 5), (0, 1), (1, 1), (1, 0), (2, 0), (2, 1), (3, 1), (3, 0), (4, 0), (4, 1), (5, 1), (5, 5)]
    path = " ".join(f"{x + a * u:.1f},{y + b * u:.1f}" for a, b in pts)
    return f'<polygon class="{cls}" points="{path}" fill="{fill}" stroke="#222" stroke-width="1"/>'


def _person_line(st, p: int) -> str:
    g, m = st.game, st.game.map
    bits = [f"{g.ruleset.person_initials[p]} {g.ruleset.person_names[p]}"]
    bits += [f"{m.fief_ids[y]} {m.fief_rank[y].capitalize()}" for y in st.fief_titles(p)]
    if p == st.king:
        bits.append("King")
    if p == st.queen:
        bits.append("Queen (Regent)" if st.regent else "Queen")
    if p == st.prince:
        bits.append("Prince")
    if st.bishop[p] >= 0:
        bits.append(("Cardinal, " if st.cardinal[p] else "") + f"Bishop of {m.bishopric_ids[st.bishop[p]]}")
    if st.darc[p]:
        bits.append("d'Arc")
    if st.spouse[p] >= 0:
        bits.append(f"married to {g.ruleset.person_names[st.spouse[p]]} (F{st.fam[st.spouse[p]]})")
    where = m.village_ids[st.loc[p]] + (" (road)" if st.onroad[p] >= 0 else "")
    bits.append(f"prisoner of F{st.captor[p]} at {where}" if st.captor[p] >= 0 else f"at {where}")
    return ", ".join(bits)


def _panel(st, seat: int | None) -> list[tuple[str, str, int, str]]:
    """The side panel as lines (text, colour swatch or "", indent, css class)."""
    from .state import FRAME_NAMES, PHASE_NAMES
    g, m, rs = st.game, st.game.map, st.game.ruleset
    lines: list[tuple[str, str, int, str]] = []
    head = f"Turn {st.turn}, {PHASE_NAMES[st.phase]}; First Player: Family {st.first}"
    lines.append((head, "", 0, "head"))
    if st.stack:
        lines.append((f"deciding: {FRAME_NAMES[st.stack[-1][0]]} ({_actor_name(st)})", "", 0, ""))
    if st.winners:
        lines.append(("winners: " + ", ".join(f"Family {w}" for w in st.winners), "", 0, "head"))
    lines.append(("Families", "", 0, "section"))
    for f in range(st.num_players):
        status = "" if st.alive[f] else " (eliminated)"
        lines.append((f"Family {f} ({_FAMILY_WORDS[f % 6]}){status}: {st.cash[f]} florins, "
                      f"{len(st.hands[f])} cards" + (f", tally {st.tally[f]}" if rs.scored_turns else ""),
                      _fam_fill(f)[0], 0, f"family f{f}"))
        for p in st.persons_of(f):
            lines.append((_person_line(st, p), "", 1, "person-line"))
        allies = [q for q in range(st.num_players) if st.allied[f][q]]
        if allies:
            lines.append(("allied with " + ", ".join(f"Family {q}" for q in allies), "", 1, ""))
    lines.append(("The crown", "", 0, "section"))

    def person(p: int) -> str:
        return f"{rs.person_names[p]} (Family {st.fam[p]})" if p >= 0 else "none"
    lines.append((f"King: {person(st.king)}" + (f", King's Guard {st.kg}" if st.kg >= 0 else ""), "", 1, "king"))
    lines.append((f"Queen: {person(st.queen)}" + (" Regent" if st.regent else "")
                  + (f", Queen's Guard {st.qg}" if st.qg >= 0 else ""), "", 1, "queen"))
    lines.append((f"Prince: {person(st.prince)}", "", 1, "prince"))
    lines.append(("Fiefs", "", 0, "section"))
    for y in range(g.NF):
        f = st.fief_family(y)
        if st.title[y] >= 0:
            holder = f"{rs.person_names[st.title[y]]} (Family {f})"
        elif st.pending[y] >= 0:
            holder = f"pending for Family {f}"
        elif st.retained[y] >= 0:
            holder = f"retained by Family {f}"
        else:
            holder = "in the supply"
        extra = (f", capital {m.village_ids[st.capital[y]]}" if st.capital[y] >= 0 else "") \
            + (", Bad Weather" if st.bad_weather[y] >= 0 else "") + (", Famine" if st.famine[y] >= 0 else "") \
            + (", Tax" if st.tax[y] >= 0 else "")
        lines.append((f"{m.fief_ids[y]} {m.fief_names[y]} ({m.fief_rank[y]}): {holder}{extra}",
                      _tint(m.fief_colour[y]), 1, "fief"))
    lines.append(("Bishoprics", "", 0, "section"))
    for b in range(len(m.bishopric_ids)):
        bishops = [p for p in range(g.P) if st.fam[p] >= 0 and st.bishop[p] == b]
        who = person(bishops[0]) if bishops else "no Bishop"
        lines.append((f"{m.bishopric_ids[b]} {m.bishopric_names[b]}: {who}"
                      + (", Tithe" if st.tithe[b] >= 0 else ""), "", 1, "bishopric"))
    if st.mob_n > 0:
        where = m.village_ids[st.mob_v] + (f" (on the road from {m.village_ids[st.mob_road]})"
                                           if st.mob_road >= 0 else "")
        lines.append((f"Mob: {st.mob_n} Peasants at {where}, moved by "
                      + (f"Family {st.mob_ctrl}" if st.mob_ctrl >= 0 else "nobody"), _MOB_FILL, 0, "mob"))
    if seat is not None:  # F46: the seat's own hand, nobody else's
        lines.append((f"Hand of Family {seat}: " + (", ".join(g.card_name(c) for c in st.hands[seat]) or "empty"),
                      _fam_fill(seat)[0], 0, "hand"))
    lines.append(("Key", "", 0, "section"))
    lines.append(("Name band: the owner's colour and number (- unowned). Tinted areas: fiefs.", "", 1, "legend"))
    lines.append(("Pill: family F<n>, its Soldiers, Queen's (QG) and King's (KG) Guard, its persons' initials,",
                  "", 1, "legend"))
    lines.append(("[X] a prisoner it holds. A dashed pill waits on a road to assault that village.", "", 1,
                  "legend"))
    return lines


def _actor_name(st) -> str:
    from .state import CHANCE
    p = st.current_player()
    return "chance" if p == CHANCE else f"Family {p}"


def _tint(word: str) -> str:
    return _FIEF_TINTS.get(word.strip().lower(), _FIEF_TINTS["grey"])


def render_svg(st, seat: int | None = None) -> str:
    """An SVG picture of a Fief 2 position, drawn from the map data (F6: villages at the map file's x, y; roads;
    fiefs as tinted areas; bishoprics): each village's owner (its name band in the owner's colour, "F<n>"
    written), Castles, Cities, Mills and Wine Presses, each family's Soldiers, Guards and persons (initials) and
    the prisoners it holds, tokens waiting on roads, the mob; a panel with the families, titles, fief holders,
    the King, Queen, Prince, Bishops and alliances. Only public facts (F46) are drawn, plus ``seat``'s own hand
    when ``seat`` is given.

    :raises ValueError: ``seat`` is not a seat of the game.
    """
    if seat is not None and (not isinstance(seat, int) or isinstance(seat, bool)
                             or not 0 <= seat < st.num_players):
        raise ValueError(f"seat: expected an integer in [0, {st.num_players}) or None, got {seat!r}")
    from .state import MOB
    g, m = st.game, st.game.map
    places = _layout(m)
    cols = 1 + max(c for c, _ in places)
    rows = 1 + max(r for _, r in places)
    margin, top = 20, 20
    map_w, map_h = cols * _CELL_W, rows * _CELL_H
    panel_x, panel_w, line_h = margin * 2 + map_w, 560, 15
    panel = _panel(st, seat)
    width = panel_x + panel_w + margin
    height = max(top + map_h + margin, top + len(panel) * line_h + margin * 2)

    def centre(v: int) -> tuple[float, float]:
        c, r = places[v]
        return margin + c * _CELL_W + _CELL_W / 2, top + r * _CELL_H + _CELL_H / 2

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" font-family="DejaVu Sans, Verdana, sans-serif">',
           f"<title>Fief 2, map {_esc(m.name)}, turn {st.turn}</title>",
           f'<rect width="{width}" height="{height}" fill="#fbf8ef"/>']
    # fiefs: a tinted cell behind each village, so a fief's villages make one coloured area
    for v in range(g.V):
        c, r = places[v]
        y = m.village_fief[v]
        out.append(f'<rect class="fief-area" data-fief="{_esc(m.fief_ids[y])}" x="{margin + c * _CELL_W}" '
                   f'y="{top + r * _CELL_H}" width="{_CELL_W}" height="{_CELL_H}" fill="{_tint(m.fief_colour[y])}" '
                   f'fill-opacity="0.55"/>')
    for a, b in m.roads:
        (x1, y1), (x2, y2) = centre(a), centre(b)
        out.append(f'<line class="road" data-from="{_esc(m.village_ids[a])}" data-to="{_esc(m.village_ids[b])}" '
                   f'x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" stroke="#6b5a3a" stroke-width="5"/>')
    inside, roads = _stacks(st)
    for v in range(g.V):
        cx, cy = centre(v)
        x0, y0 = cx - _BOX_W / 2, cy - _BOX_H / 2
        o = st.owner[v]
        band, ink = _fam_fill(o) if o >= 0 else ("#ffffff", "#1b1b1b")
        y = m.village_fief[v]
        out.append(f'<g class="village" id="village-{_esc(m.village_ids[v])}" '
                   f'data-village="{_esc(m.village_ids[v])}" data-owner="{o}" '
                   f'data-fief="{_esc(m.fief_ids[y])}" '
                   f'data-bishopric="{_esc(m.bishopric_ids[m.village_bishopric[v]])}">')
        out.append(f'<rect x="{x0:.1f}" y="{y0:.1f}" width="{_BOX_W}" height="{_BOX_H}" rx="8" fill="#fffdf6" '
                   f'stroke="#4a3b22" stroke-width="1.5"/>')
        out.append(f'<rect class="owner-band" x="{x0:.1f}" y="{y0:.1f}" width="{_BOX_W}" height="22" rx="8" '
                   f'fill="{band}" stroke="#4a3b22" stroke-width="1.5"/>')
        out.append(_text(x0 + 7, y0 + 16, f"{m.village_ids[v]} {m.village_names[v]}", 12, _BOX_W - 48,
                         fill=ink, weight="bold", cls="village-name"))
        out.append(_text(x0 + _BOX_W - 7, y0 + 16, f"F{o}" if o >= 0 else "-", 12, fill=ink, weight="bold",
                         anchor="end", cls="owner"))
        sub = f"{m.fief_ids[y]} {m.fief_rank[y]}" + (" capital" if st.capital[y] == v else "") \
            + f" / {m.bishopric_ids[m.village_bishopric[v]]}"
        out.append(_text(x0 + 7, y0 + 35, sub, 10, _BOX_W - 14, fill="#3a3a3a"))
        # improvements
        ix = x0 + 7
        if st.city[v]:
            out.append(_castle(ix, y0 + 42, 18, "city", "#8a4fbf"))
            out.append(_text(ix + 21, y0 + 56, "City", 10, weight="bold"))
            ix += 50
        elif st.castle[v]:
            out.append(_castle(ix, y0 + 42, 16, "castle", "#9b9b9b"))
            out.append(_text(ix + 19, y0 + 56, "Castle", 10, weight="bold"))
            ix += 58
        for _ in range(st.mills[v]):
            out.append(f'<circle class="mill" cx="{ix + 8:.1f}" cy="{y0 + 51:.1f}" r="8" fill="#e7d8b0" '
                       f'stroke="#222"/>' + _text(ix + 8, y0 + 55, "M", 10, anchor="middle", weight="bold"))
            ix += 20
        for _ in range(st.presses[v]):
            out.append(f'<rect class="press" x="{ix:.1f}" y="{y0 + 43:.1f}" width="16" height="16" rx="3" '
                       f'fill="#b88ac9" stroke="#222"/>' + _text(ix + 8, y0 + 55, "W", 10, anchor="middle",
                                                                  weight="bold"))
            ix += 20
        # tokens in the village, then those waiting on its roads to assault it (F26.3)
        here = inside.get(v, {})
        pills = [(f, -1, here[f]) for f in sorted(here, key=lambda f: (f == MOB, f))]
        pills += [(f, frm, table[f]) for (w, frm), table in sorted(roads.items()) if w == v
                  for f in sorted(table, key=lambda f: (f == MOB, f))]
        if pills:
            h = min(19.0, (_BOX_H - 66) / len(pills) - 1)
            for i, (f, frm, tokens) in enumerate(pills):
                out.append(_stack_svg(st, f, tokens, x0 + 5, y0 + 64 + i * (h + 1), _BOX_W - 10, h, v, frm))
        out.append("</g>")
    # the panel
    y = top + 4
    for text, swatch, indent, cls in panel:
        x = panel_x + 14 * indent
        if swatch:
            out.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="11" height="11" fill="{swatch}" stroke="#222"/>')
            x += 15
        size = 13 if cls in ("head", "section") else 11
        weight = "bold" if cls in ("head", "section") or cls.startswith("family") else "normal"
        out.append(_text(x, y + 10, text, size, panel_x + panel_w - x, weight=weight,
                         cls=f"panel {cls}".strip()))
        y += line_h
    out.append("</svg>")
    return "\n".join(out)


def render_png(st, path: str | None = None, seat: int | None = None, scale: float = 1.5) -> bytes:
    """The picture of :func:`render_svg` as PNG (cairosvg, as Feudo's pictures); writes ``path`` when given.

    :raises ImportError: cairosvg (or the cairo library it needs) is not installed.
    """
    from engine.render import svg_to_png  # the one place pictures are rasterised
    return svg_to_png(render_svg(st, seat=seat), path, scale=scale)
