"""Pictures of maps and positions: text for terminals, SVG (and PNG through cairosvg) for screens and files.

    from engine.render import position_svg, svg_to_png, render_text
    svg = position_svg(state, seat=0)     # what seat 0 sees: its own selection, nobody else's hidden cards
    svg_to_png(svg, "position.png")
    print(render_text(state))

What a player recognises at a glance (R3 map, R22 information): the four mapboards with thick seams between them
(a joined corner is one territory split by a dashed seam, R24), terrain colours, City names, Castle sites and
Castles in the players' colours, every token as a disc of its owner's colour with its kind letter and current
number (a plague-stricken token is drawn black with a coloured ring), the Plague Token, the Convent, the players'
VP, the turn and phase, and a legend. Hidden information is never drawn: without ``seat`` the picture is the public
view; with ``seat`` it adds that seat's own selection only.

Geometry: every territory of a map with cells is drawn as its grid cells; a map without cells (a graph file) is
drawn as a ring of territories joined by their adjacencies. Map coordinates are bounded by the map loader.

``str(state)`` is :func:`render_text`: this module sits above :mod:`engine.state` and installs it there when
imported (see :func:`engine.state.install_view`).
"""

from __future__ import annotations

import html
import math
from typing import Any, Mapping

from .board import GameMap, Kind, castle_site_cells, cell_name
from .schema import CASTLE, DEAD, Phase
from .state import State, install_view

__all__ = ["PLAYER_COLOURS", "TERRAIN_COLOURS", "TOKEN_LETTERS", "map_ascii", "map_svg", "position_svg",
           "svg_to_png", "render_text", "token_marks", "legend_text", "board_segments", "segments_text",
           "tokens_text", "TERRAIN_STYLES", "PLAYER_STYLES"]


def escape(text: str) -> str:
    """``&``, ``<`` and ``>`` as XML entities, exactly as ``xml.sax.saxutils.escape``: that module's import pulls in
    urllib and http, and this module is imported with the engine (it installs ``str(state)``)."""
    return html.escape(text, quote=False)


#: Fill of each player's tokens and Castles, in seat order (the names of engine.actions.PLAYER_NAMES).
PLAYER_COLOURS = ("#2f6fd0", "#f4f4f4", "#f2c52e", "#d2352b")
#: Text drawn on a token of each player's colour (dark on light colours).
_INK = ("#ffffff", "#111111", "#111111", "#ffffff")
TERRAIN_COLOURS = {Kind.HILL: "#d6e9b0", Kind.WOOD: "#3f7d3a", Kind.MOUNTAIN: "#9a9a9a", Kind.VILLAGE: "#e8bd6a",
                   Kind.CITY: "#c86b55", Kind.CENTRAL_HILL: "#f3ecd2"}
#: One symbol per terrain on the text board: none of them is a player's initial (B, W, Y, R) or another mark.
_ASCII = {Kind.HILL: ".", Kind.WOOD: "%", Kind.MOUNTAIN: "^", Kind.VILLAGE: "v", Kind.CITY: "C",
          Kind.CENTRAL_HILL: "+"}
#: Styles of the text board on a colour terminal (rich style names): terrain symbols, and each seat's marks.
TERRAIN_STYLES = {Kind.HILL: "green", Kind.WOOD: "bold green", Kind.MOUNTAIN: "bright_black", Kind.VILLAGE: "yellow",
                  Kind.CITY: "bold magenta", Kind.CENTRAL_HILL: "bold white"}
PLAYER_STYLES = ("bold blue", "bold white", "bold yellow", "bold red")
_TERRAIN_WORD = {Kind.HILL: "Hill", Kind.WOOD: "Wood", Kind.MOUNTAIN: "Mountain", Kind.VILLAGE: "Village",
                 Kind.CITY: "City", Kind.CENTRAL_HILL: "Central Hill (Convent)"}
#: One letter per token kind (R1), on the board and in the text picture.
TOKEN_LETTERS = {"baron": "B", "milady": "M", "first_knight": "F", "knight": "K", "mercenary": "$",
                 "infantryman": "i"}
_PLAGUE = "#6a2c8c"
_SEAM = "#5a3a1a"
CELL = 64  # pixels per grid cell


# ---------------------------------------------------------------------------------------------------------------
# Text
# ---------------------------------------------------------------------------------------------------------------
def _grid(game_map: GameMap) -> tuple[int, int, dict[tuple[int, int], int]]:
    owner = {cell: t.id for t in game_map.territories for cell in t.cells}
    rows = 1 + max((r for r, _ in owner), default=-1)
    cols = 1 + max((c for _, c in owner), default=-1)
    return rows, cols, owner


def _marks(game_map: GameMap, marks: Mapping[int, str] | None) -> dict[int, str]:
    out: dict[int, str] = {}
    for k, v in (marks or {}).items():
        tid = game_map.territory(k).id
        if v:
            out[tid] = str(v)
    return out


def map_ascii(game_map: GameMap, marks: Mapping[int, str] | None = None, coordinates: bool = False) -> str:
    """A text picture of a map (R3 "renderable"): one character per grid cell by kind (``.`` hill, ``%`` wood,
    ``^`` mountain, ``v`` village, ``C`` city, ``+`` central hill), or the first character of ``marks[id]`` on every
    cell of a marked territory; ``coordinates`` adds the column letters and row numbers of the territories' labels
    ("Wood C2" is column C, row 2). Territories without cells are listed with their neighbours.

    :raises KeyError: a mark for a territory the map does not have.
    """
    mk = _marks(game_map, marks)
    rows, cols, owner = _grid(game_map)
    lines: list[str] = []
    if coordinates and owner:
        lines.append("    " + " ".join(cell_name(0, c)[:-1].ljust(1) for c in range(cols)).rstrip())
    for r in range(rows):
        chars = []
        for c in range(cols):
            t = owner.get((r, c))
            chars.append(" " if t is None else mk.get(t, _ASCII[game_map.territories[t].kind])[0])
        row = " ".join(chars).rstrip()
        lines.append(f"{r + 1:>3} {row}" if coordinates else row)
    for t in game_map.territories:
        if not t.cells:
            tag = f" [{mk[t.id]}]" if t.id in mk else ""
            nbrs = ", ".join(game_map.labels[n] for n in t.neighbors)
            lines.append(f"{t.id:3d} {game_map.labels[t.id]} ({t.kind.name.lower()}){tag}: {nbrs}")
    if coordinates and owner:
        lines.append("    " + "  ".join(f"{sym} {_TERRAIN_WORD[k].split(' (')[0].lower()}" for k, sym in _ASCII.items()))
    return "\n".join(lines)


def token_marks(state: "State") -> dict[int, str]:
    """Per territory, a short mark of who stands there: player initial + token letters, e.g. ``bBK``; ``*`` marks
    the Plague Token's Village when nobody stands there."""
    g = state.game
    marks: dict[int, str] = {}
    for p in range(g.num_players):
        initial = g.player_name(p)[0].lower()
        for t, x in enumerate(state.loc[p]):
            if x >= 0:
                marks[x] = marks.get(x, initial) + TOKEN_LETTERS[g.token_kind[t]]
    if state.plague_village >= 0:
        marks.setdefault(state.plague_village, "*")
    return marks


#: A line of styled text: (text, rich style or None) pieces.
Segments = list[tuple[str, "str | None"]]


def _cell_marks(state: "State") -> dict[int, Segments]:
    """Per territory, what stands on it besides its terrain and Castles: each player's tokens (initial + how
    many), the Plague Token (``*``)."""
    g = state.game
    out: dict[int, Segments] = {}
    for p in range(g.num_players):
        count: dict[int, int] = {}
        for x in state.loc[p]:
            if x >= 0:
                count[x] = count.get(x, 0) + 1
        for x, n in count.items():
            out.setdefault(x, []).append((f"{g.player_name(p)[0]}{n}", PLAYER_STYLES[p % 4]))
    if state.plague_village >= 0:
        out.setdefault(state.plague_village, []).append(("*", "bold magenta"))
    return out


def board_segments(state: "State") -> list[Segments]:
    """The text board of a position, line by line as styled pieces: column letters and row numbers (the
    coordinates of every place's name, "Wood C2" is column C, row 2), each cell its terrain symbol followed by
    the Castles (``#B``: Blue's), the tokens (``W3``: three of White's) and the Plague Token (``*``) on it. A
    territory of several cells (a joined corner, the Central Hill) shows its marks on its first cell. A map
    without cells lists its territories instead."""
    state = state.to_reference() if hasattr(state, "to_reference") else state
    g = state.game
    m = g.map
    rows, cols, owner = _grid(m)
    marks = _cell_marks(state)
    if not owner:
        lines: list[Segments] = []
        for p in range(g.num_players):
            if state.castle[p] >= 0:
                marks.setdefault(m.castle_sites[state.castle[p]].territory, []).insert(
                    0, ("#" + g.player_name(p)[0], PLAYER_STYLES[p % 4]))
        for t in m.territories:
            segs: Segments = [(f"{m.labels[t.id]} ({t.kind.name.lower()})", TERRAIN_STYLES[t.kind])]
            for text, style in marks.get(t.id, []):
                segs += [(" ", None), (text, style)]
            lines.append(segs)
        return lines
    castles: dict[tuple[int, int], Segments] = {}  # on the site's own cell (a joined corner has two, R24)
    site_cells = castle_site_cells(m)
    for p in range(g.num_players):
        site = state.castle[p]
        if site >= 0 and site_cells[site] is not None:
            castles.setdefault(site_cells[site], []).append(("#" + g.player_name(p)[0], PLAYER_STYLES[p % 4]))
    cell: dict[tuple[int, int], Segments] = {}
    for (r, c), t in owner.items():
        kind = m.territories[t].kind
        segs = [(_ASCII[kind], TERRAIN_STYLES[kind])] + castles.get((r, c), [])
        if (r, c) == min(m.territories[t].cells):
            segs += marks.get(t, [])
        cell[(r, c)] = segs
    width = max(3, max(sum(len(x) for x, _ in segs) for segs in cell.values()))
    head: Segments = [("    ", None)]
    for c in range(cols):
        head.append((cell_name(0, c)[:-1].ljust(width + 1), "dim"))
    lines = [head]
    for r in range(rows):
        line: Segments = [(f"{r + 1:>3} ", "dim")]
        for c in range(cols):
            segs = cell.get((r, c), [(" ", None)])
            used = sum(len(x) for x, _ in segs)
            line += segs + [(" " * (width + 1 - used), None)]
        line.append((f"{r + 1}", "dim"))
        lines.append(line)
    return lines


def segments_text(lines: list[Segments]) -> str:
    """Styled lines as plain text (trailing spaces dropped)."""
    return "\n".join("".join(text for text, _ in segs).rstrip() for segs in lines)


def tokens_text(state: "State", p: int) -> str:
    """Where player ``p``'s tokens are, by place: "Hill A1: Baron 4, Knight 1 3; Wood C2: Infantryman 2 1
    (stricken); in the Castle: Milady" (the number after a name is the token's current number, R1)."""
    state = state.to_reference() if hasattr(state, "to_reference") else state
    g = state.game
    at: dict[int, list[str]] = {}
    for t, x in enumerate(state.loc[p]):
        if x == DEAD:
            continue
        name = f"{g.ruleset.army[t].name} {state.number(p, t)}" + (" (stricken)" if state.stricken[p][t] else "")
        at.setdefault(x, []).append(name)
    parts = [f"{g.map.labels[x]}: {', '.join(names)}" for x, names in sorted(at.items()) if x >= 0]
    if CASTLE in at:
        parts.append(f"in the Castle: {', '.join(at[CASTLE])}")
    return "; ".join(parts) or "no tokens left"


def legend_text(state: "State") -> str:
    """The legend of the text board: every symbol it can show, and nothing it cannot (the terrains of this map
    only; the Plague Token once it is on the board)."""
    g = state.game
    kinds = {t.kind for t in g.map.territories if t.cells}
    terrain = "  ".join(f"{sym} {_TERRAIN_WORD[k]}" for k, sym in _ASCII.items() if k in kinds)
    plague = "  * Plague Token" if state.plague_village >= 0 else ""
    players = ", ".join(f"{g.player_name(p)[0]} {g.player_name(p)}" for p in range(g.num_players))
    return (f"Legend: {terrain}{plague}\n"
            f"        players {players}: #B Blue's Castle, B3 three of Blue's tokens (listed by place below the "
            f"board); places are named by column letter and row number, e.g. {g.map.labels[min(len(g.map.labels) - 1, 11)]}")


def render_text(state: "State", legend: bool = True) -> str:
    """A text picture of a position: turn, phase and player to act, the board with coordinates, Castles, tokens
    and the Plague Token, a line per player (VP, Cities, tokens by place)."""
    state = state.to_reference() if hasattr(state, "to_reference") else state
    g = state.game
    lines = [f"Turn {state.turn}{' (tie-break %d)' % state.tiebreak if state.tiebreak else ''}  "
             f"phase: {Phase(state.phase).name.lower().replace('_', ' ')}  to act: {state._actor_text()}"]
    if state.order:
        lines.append("Order of play: " + ", ".join(g.player_name(p) for p in state.order))
    lines.append(segments_text(board_segments(state)))
    if state.plague_village >= 0:
        lines.append(f"Plague Token: {g.map.labels[state.plague_village]}")
    for p in range(g.num_players):
        cities = [g.map.labels[x] for x, o in enumerate(state.owner) if o == p]
        castle = (f", Castle {g.map.site_labels[state.castle[p]]}" if state.castle[p] >= 0 else "")
        lines.append(f"{g.player_name(p)}: {state.vp[p]} VP{castle}"
                     + (f", cities {', '.join(cities)}" if cities else "") + "; " + tokens_text(state, p))
    if legend:
        lines.append(legend_text(state))
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------------------------
# SVG
# ---------------------------------------------------------------------------------------------------------------
def _cell_boards(game_map: GameMap, owner: Mapping[tuple[int, int], int]) -> dict[tuple[int, int], int]:
    """The mapboard of every cell: its territory's board, and for a territory spanning boards (a joined corner,
    the Central Hill) the board most of its cell's outside neighbours lie on."""
    single = {cell: game_map.territories[t].board for cell, t in owner.items()
              if len(game_map.territories[t].cells) == 1}
    out = dict(single)
    for cell, t in owner.items():
        if cell in out:
            continue
        r, c = cell
        votes: dict[int, int] = {}
        for dr, dc in ((-1, 0), (1, 0), (0, -1), (0, 1), (-1, -1), (-1, 1), (1, -1), (1, 1)):
            b = single.get((r + dr, c + dc))
            if b is not None and b >= 0:
                votes[b] = votes.get(b, 0) + (2 if dr == 0 or dc == 0 else 1)
        out[cell] = max(votes, key=lambda b: (votes[b], -b)) if votes else game_map.territories[t].board
    return out


def _fit(text: str, width: float, size: float) -> str:
    """The ``font-size`` (and length) attributes of a ``<text>`` that keep ``text`` inside ``width`` (labels stay
    inside their cells). A text that would overflow gets a smaller font, not only ``textLength``: cairosvg (the
    PNG path) ignores ``textLength``, so squeezing alone would let the PNG overflow."""
    approx = _CHAR_WIDTH * size * len(text)
    if approx <= width:
        return f' font-size="{size:g}"'
    fitted = max(size * width / approx, 4.0)
    return f' font-size="{fitted:.1f}" textLength="{width:.0f}" lengthAdjust="spacingAndGlyphs"'


_CHAR_WIDTH = 0.62  # a generous average advance of a sans-serif glyph, in font sizes (bold digits and capitals)


def _wrap(text: str, width: float, size: float) -> list[str]:
    """``text`` cut after its commas into lines that fit ``width`` (continuation lines indented); a single part
    too long for a line is left to :func:`_fit` to shrink."""
    if _CHAR_WIDTH * size * len(text) <= width:
        return [text]
    out: list[str] = []
    line = ""
    for part in text.split(", "):
        candidate = f"{line}, {part}" if line else part
        if line and _CHAR_WIDTH * size * (len(candidate) + 1) > width:
            out.append(line + ",")
            line = "   " + part
        else:
            line = candidate
    out.append(line)
    return out


def _label(x: float, y: float, text: str, size: float, width: float, fill: str = "#1b1b1b",
           weight: str = "normal") -> str:
    return (f'<text x="{x:.1f}" y="{y:.1f}"{_fit(text, width, size)} font-weight="{weight}" text-anchor="middle" '
            f'fill="{fill}">{escape(text)}</text>')


def _castle_icon(x: float, y: float, size: float, fill: str, stroke: str, dashed: bool = False, cls: str = "") -> str:
    """A small crenellated tower with its lower-left corner at (x, y + size)."""
    u = size / 5
    pts = [(0, 5), (0, 1), (1, 1), (1, 0), (2, 0), (2, 1), (3, 1), (3, 0), (4, 0), (4, 1), (5, 1), (5, 5)]
    path = " ".join(f"{x + a * u:.1f},{y + b * u:.1f}" for a, b in pts)
    dash = ' stroke-dasharray="2,2"' if dashed else ""
    klass = f' class="{cls}"' if cls else ""
    return f'<polygon{klass} points="{path}" fill="{fill}" stroke="{stroke}" stroke-width="1.2"{dash}/>'


def _token(x: float, y: float, r: float, p: int, letter: str, number: int, stricken: bool,
           cls: str = "token") -> str:
    """A token disc; ``cls`` is "token" on the board ("legend" in the legend), with the owner as ``p<seat>``."""
    colour, ink = PLAYER_COLOURS[p % 4], _INK[p % 4]
    if stricken:  # the black side up (R1): black disc, the owner's colour as a thick ring, white number
        disc = (f'<circle class="{cls} p{p}" cx="{x:.1f}" cy="{y:.1f}" r="{r:.1f}" fill="#151515" stroke="{colour}" '
                f'stroke-width="{r * 0.28:.1f}"/>')
        ink = "#ffffff"
    else:
        disc = (f'<circle class="{cls} p{p}" cx="{x:.1f}" cy="{y:.1f}" r="{r:.1f}" fill="{colour}" stroke="#222" '
                f'stroke-width="1.2"/>')
    size = r * 0.95
    return disc + (f'<text x="{x:.1f}" y="{y + size * 0.36:.1f}" font-size="{size:.1f}" font-weight="bold" '
                   f'text-anchor="middle" fill="{ink}">{escape(letter)}{number}</text>')


def _slots(cells: list[tuple[int, int]], count: int, left: float, top: float) -> list[tuple[float, float, float]]:
    """(x, y, radius) of ``count`` tokens spread over a territory's cells, at most 4 a cell, leaving the top of
    each cell for its name."""
    per = max(1, math.ceil(count / max(1, len(cells))))
    out: list[tuple[float, float, float]] = []
    for i, (r, c) in enumerate(sorted(cells)):
        k = min(per, count - len(out))
        if k <= 0:
            break
        x0, y0 = left + c * CELL, top + r * CELL
        if k == 1:
            out.append((x0 + CELL / 2, y0 + CELL * 0.58, CELL * 0.24))
        elif k == 2:
            out += [(x0 + CELL * 0.29, y0 + CELL * 0.6, CELL * 0.2), (x0 + CELL * 0.71, y0 + CELL * 0.6, CELL * 0.2)]
        else:
            grid = math.ceil(math.sqrt(k))
            step = CELL * 0.8 / grid
            for j in range(k):
                gr, gc = divmod(j, grid)
                out.append((x0 + CELL * 0.1 + step * (gc + 0.5), y0 + CELL * 0.22 + step * 0.8 * (gr + 0.5),
                            step * 0.42))
    return out


def map_svg(game_map: GameMap, marks: Mapping[int, str] | None = None) -> str:
    """An SVG picture of a map alone (R3): terrain, seams, City names, Castle sites, optional text marks.

    :raises KeyError: a mark for a territory the map does not have.
    """
    return _svg(game_map, None, None, _marks(game_map, marks))


def position_svg(state: Any, seat: int | None = None) -> str:
    """An SVG picture of a position (a reference ``State`` or a ``CoreState``): the public view, plus ``seat``'s own
    selection when ``seat`` is given (never another seat's hidden cards, R22).

    :raises ValueError: ``seat`` is not a seat of the game.
    """
    state = state.to_reference() if hasattr(state, "to_reference") else state
    if seat is not None and (not isinstance(seat, int) or isinstance(seat, bool)
                             or not 0 <= seat < state.num_players):
        raise ValueError(f"seat: expected an integer in [0, {state.num_players}) or None, got {seat!r}")
    return _svg(state.game.map, state, seat, {})


def _svg(game_map: GameMap, state: "State | None", seat: int | None, marks: dict[int, str]) -> str:
    rows, cols, owner = _grid(game_map)
    if not owner:
        return _ring_svg(game_map, state, marks)
    margin, panel, band = 16, (300 if state is not None else 190), 18  # band: the coordinates around the map
    map_w, map_h = cols * CELL, rows * CELL
    width = margin * 3 + band + map_w + panel
    height = max(map_h + band + margin * 2, 560 if state is not None else 0)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" font-family="DejaVu Sans, Verdana, sans-serif">',
           f"<title>{escape(game_map.name)}</title>",
           f'<rect width="{width}" height="{height}" fill="#fbf8ef"/>']
    left, top = margin + band, margin + band
    terr = game_map.territories
    labels = game_map.labels
    # coordinates: column letters above, row numbers to the left (the names of places: "Wood C2")
    for c in range(cols):
        out.append(f'<text class="coord" x="{left + c * CELL + CELL / 2:.1f}" y="{top - 5}" font-size="12" '
                   f'font-weight="bold" text-anchor="middle" fill="#5a3a1a">{cell_name(0, c)[:-1]}</text>')
    for r in range(rows):
        out.append(f'<text class="coord" x="{left - 5}" y="{top + r * CELL + CELL / 2 + 4:.1f}" font-size="12" '
                   f'font-weight="bold" text-anchor="end" fill="#5a3a1a">{r + 1}</text>')
    # terrain
    for (r, c), t in sorted(owner.items()):
        out.append(f'<rect x="{left + c * CELL}" y="{top + r * CELL}" width="{CELL}" height="{CELL}" '
                   f'fill="{TERRAIN_COLOURS[terr[t].kind]}"><title>{escape(labels[t])}</title></rect>')
    # territory borders (thin) and mapboard seams (thick; dashed through a joined corner, one territory)
    boards = _cell_boards(game_map, owner)
    for (r, c), t in sorted(owner.items()):
        for (r2, c2), x1, y1, x2, y2 in (((r, c + 1), c + 1, r, c + 1, r + 1), ((r + 1, c), c, r + 1, c + 1, r + 1)):
            t2 = owner.get((r2, c2))
            if t2 is None:
                continue
            seam = boards[(r, c)] != boards[(r2, c2)] and terr[t].kind != Kind.CENTRAL_HILL \
                and terr[t2].kind != Kind.CENTRAL_HILL
            coords = (f'x1="{left + x1 * CELL}" y1="{top + y1 * CELL}" x2="{left + x2 * CELL}" '
                      f'y2="{top + y2 * CELL}"')
            if seam:
                dash = ' stroke-dasharray="6,4"' if t2 == t else ""
                out.append(f'<line {coords} stroke="{_SEAM}" stroke-width="4"{dash}/>')
            elif t2 != t:
                out.append(f'<line {coords} stroke="#5b5b5b" stroke-width="1"/>')
    out.append(f'<rect x="{left}" y="{top}" width="{map_w}" height="{map_h}" fill="none" stroke="{_SEAM}" '
               f'stroke-width="4"/>')
    # names: Cities, the Convent, marks
    for t in terr:
        if not t.cells:
            continue
        r, c = min(t.cells)
        x = left + c * CELL + CELL / 2
        label = marks.get(t.id)
        if label is None and t.kind == Kind.CITY:
            label = t.name
        elif label is None and t.kind == Kind.CENTRAL_HILL:
            label = "Convent"
            rs = [rr for rr, _ in t.cells]
            cs = [cc for _, cc in t.cells]
            x = left + (min(cs) + max(cs) + 1) / 2 * CELL
            out.append(_label(x, top + min(rs) * CELL + 14, label, 11, CELL * 1.8, weight="bold"))
            continue
        if label:
            out.append(_label(x, top + r * CELL + 12, label, 10, CELL - 6, weight="bold"))
    # Castle sites (dashed outline) and Castles (the owner's colour), on the site's own board's cell (R24)
    castles = {} if state is None else {s: p for p, s in enumerate(state.castle) if s >= 0}
    for site in game_map.castle_sites:
        cells = sorted(terr[site.territory].cells)
        cell = next((cl for cl in cells if boards.get(cl) == site.board), cells[0] if cells else None)
        if cell is None:
            continue
        r, c = cell
        x, y = left + c * CELL + 3, top + r * CELL + CELL - 19
        if site.id in castles:
            p = castles[site.id]
            out.append(_castle_icon(x, y, 16, PLAYER_COLOURS[p % 4], "#111", cls=f"castle p{p}"))
        elif state is None or state.phase <= Phase.PLACE_CASTLE:
            out.append(_castle_icon(x, y, 12, "none", "#444", dashed=True, cls="castle-site"))
    if state is not None:
        _draw_tokens(out, state, left, top)
        _draw_panel(out, state, seat, left + map_w + margin * 2, top, panel)
    else:
        _draw_map_legend(out, left + map_w + margin * 2, top)
    out.append("</svg>")
    return "\n".join(out)


def _draw_tokens(out: list[str], state: "State", left: float, top: float) -> None:
    g = state.game
    terr = g.map.territories
    here: dict[int, list[tuple[int, int]]] = {}
    for p in range(g.num_players):
        for t, x in enumerate(state.loc[p]):
            if x >= 0:
                here.setdefault(x, []).append((p, t))
    plague = state.plague_village
    for x, tokens in here.items():
        cells = list(terr[x].cells)
        if not cells:
            continue
        extra = 1 if x == plague else 0
        spots = _slots(cells, len(tokens) + extra, left, top)
        for (p, t), (cx, cy, rad) in zip(tokens, spots):
            out.append(_token(cx, cy, rad, p, TOKEN_LETTERS[g.token_kind[t]], state.number(p, t),
                              bool(state.stricken[p][t])))
        if extra:
            cx, cy, rad = spots[len(tokens)]
            out.append(_plague_token(cx, cy, rad))
    if plague >= 0 and plague not in here and terr[plague].cells:
        (cx, cy, rad), = _slots(list(terr[plague].cells), 1, left, top)
        out.append(_plague_token(cx, cy, rad))


def _plague_token(x: float, y: float, r: float, cls: str = "plague-token") -> str:
    return (f'<rect class="{cls}" x="{x - r:.1f}" y="{y - r:.1f}" width="{2 * r:.1f}" height="{2 * r:.1f}" rx="3" '
            f'fill="{_PLAGUE}" stroke="#111" transform="rotate(45 {x:.1f} {y:.1f})"/>'
            f'<text x="{x:.1f}" y="{y + r * 0.35:.1f}" font-size="{r:.1f}" font-weight="bold" text-anchor="middle" '
            f'fill="#fff">P</text>')


def _draw_panel(out: list[str], state: "State", seat: int | None, x: float, y: float, width: float) -> None:
    g = state.game
    rs = g.ruleset
    lines: list[tuple[str, float, str, str]] = []  # text, size, weight, colour

    def add(text: str, size: float = 11, weight: str = "normal", colour: str = "#1b1b1b") -> None:
        for part in _wrap(text, width, size):  # a long list of cards goes on over several lines
            lines.append((part, size, weight, colour))

    turn = f"Turn {state.turn} of {rs.turns}" if state.turn else "Setup"
    if state.tiebreak:
        turn += f" (tie-break {state.tiebreak})"
    add(turn, 15, "bold")
    phase = Phase(state.phase).name.replace("_", " ").title()
    add(f"{phase}: {state._actor_text()} to act" if not state.is_terminal() else "Game over", 11)
    if seat is not None:
        add(f"Seen by {g.player_name(seat)}", 11, "bold", "#444")
    for p in range(g.num_players):
        lines.append(("", 6, "normal", "#000"))
        mark = " (wins)" if p in state.winners else ""
        add(f"{g.player_name(p)}: {state.vp[p]} VP{mark}", 12, "bold")
        revealed = [rs.army[t].name for t in range(g.num_tokens) if state.revealed[p][t]]
        if state.trade_revealed[p] and state.sel_trade[p] >= 0:
            revealed.append(f"{rs.trading_cards[state.sel_trade[p]]} shillings")
        if revealed:
            add("revealed: " + ", ".join(revealed), 10)
        if p == seat and (any(state.sel_army[p]) or state.sel_trade[p] >= 0):
            own = [rs.army[t].name for t in range(g.num_tokens) if state.sel_army[p][t] and not state.revealed[p][t]]
            if state.sel_trade[p] >= 0 and not state.trade_revealed[p]:
                own.append(f"{rs.trading_cards[state.sel_trade[p]]} shillings")
            if own:
                add("your selection: " + ", ".join(own), 10, "normal", "#7a2b00")
        elif p != seat and state.phase == Phase.SELECT and state.sel_done[p]:
            add("has made its secret selection", 10, "normal", "#444")
        cities = [g.map.labels[xx] for xx, o in enumerate(state.owner) if o == p]
        if cities:
            add("cities: " + ", ".join(cities), 10)
        lost = sum(1 for t in range(g.num_tokens) if state.loc[p][t] == DEAD)
        home = sum(1 for t in range(g.num_tokens) if state.loc[p][t] == CASTLE)
        add(f"in Castle {home}, eliminated {lost}" + (", Baron desperate" if state.desperate(p) else ""), 10)
    lines.append(("", 6, "normal", "#000"))
    if rs.has_plague:
        drawn = len(state.plague_history)
        card = rs.plague_cards[state.plague_card].name if state.plague_card >= 0 else "none yet"
        add(f"Plague card this turn: {card}; drawn so far: {drawn}", 10)
    if state.king:
        add("The King has intervened (R16)", 10)
    cy = y + 4
    for text, size, weight, colour in lines:  # noqa: B007
        cy += size + 4
        if text:
            out.append(f'<text x="{x:.1f}" y="{cy:.1f}"{_fit(text, width, size)} font-weight="{weight}" '
                       f'fill="{colour}">{escape(text)}</text>')
    _draw_legend(out, state, x, cy + 30, width)


def _draw_map_legend(out: list[str], x: float, y: float) -> None:
    cy = y + 14
    out.append(f'<text x="{x}" y="{cy}" font-size="13" font-weight="bold">Legend</text>')
    for kind in Kind:
        cy += 20
        out.append(f'<rect x="{x}" y="{cy - 12}" width="16" height="16" fill="{TERRAIN_COLOURS[kind]}" '
                   f'stroke="#555"/>')
        out.append(f'<text x="{x + 24}" y="{cy + 1}" font-size="11">{kind.name.replace("_", " ").title()}</text>')
    cy += 22
    out.append(_castle_icon(x, cy - 12, 14, "none", "#444", dashed=True))
    out.append(f'<text x="{x + 24}" y="{cy + 1}" font-size="11">Castle site</text>')
    cy += 20
    out.append(f'<line x1="{x}" y1="{cy - 4}" x2="{x + 16}" y2="{cy - 4}" stroke="{_SEAM}" stroke-width="4"/>')
    out.append(f'<text x="{x + 24}" y="{cy + 1}" font-size="11">mapboard seam</text>')


def _draw_legend(out: list[str], state: "State", x: float, y: float, width: float) -> None:
    g = state.game
    cy = y
    out.append(f'<text x="{x}" y="{cy}" font-size="12" font-weight="bold">Legend</text>')
    cy += 8
    col = 0
    for kind in Kind:
        bx = x + (col % 2) * (width / 2)
        if col % 2 == 0:
            cy += 18
        out.append(f'<rect x="{bx}" y="{cy - 11}" width="14" height="14" fill="{TERRAIN_COLOURS[kind]}" '
                   f'stroke="#555"/>')
        out.append(f'<text x="{bx + 20}" y="{cy}" font-size="10">{kind.name.replace("_", " ").title()}</text>')
        col += 1
    cy += 22
    for p in range(g.num_players):
        bx = x + (p % 2) * (width / 2)
        if p and p % 2 == 0:
            cy += 26
        out.append(_token(bx + 9, cy - 4, 9, p, "B", 4, False, cls="legend"))
        out.append(_castle_icon(bx + 22, cy - 12, 14, PLAYER_COLOURS[p % 4], "#111", cls="legend"))
        out.append(f'<text x="{bx + 42}" y="{cy}" font-size="10">{escape(g.player_name(p))}</text>')
    cy += 28
    out.append(_token(x + 9, cy - 4, 9, 0, "K", 1, True, cls="legend"))
    out.append(f'<text x="{x + 24}" y="{cy}" font-size="10">plague-stricken (black side)</text>')
    out.append(_plague_token(x + width / 2 + 40, cy - 4, 8, cls="legend"))
    out.append(f'<text x="{x + width / 2 + 54}" y="{cy}" font-size="10">Plague Token</text>')
    letters = [f"{v} {k.replace('_', ' ').title()}" for k, v in TOKEN_LETTERS.items()]
    for part in (", ".join(letters[:3]), ", ".join(letters[3:])):
        cy += 16
        out.append(f'<text x="{x}" y="{cy}"{_fit(part, width, 10)}>{escape(part)}</text>')
    cy += 16
    out.append(f'<text x="{x}" y="{cy}" font-size="10">number on a token: its current number (R1)</text>')
    cy += 18
    out.append(f'<line x1="{x}" y1="{cy - 4}" x2="{x + 16}" y2="{cy - 4}" stroke="{_SEAM}" stroke-width="4"/>')
    out.append(f'<text x="{x + 24}" y="{cy}" font-size="10">mapboard seam (dashed: a joined corner)</text>')


def _ring_svg(game_map: GameMap, state: "State | None", marks: dict[int, str]) -> str:
    """Maps without geometry: a ring of territories joined by their adjacencies, tokens listed in the labels."""
    n = max(1, len(game_map.territories))
    radius = 30 * n / math.pi + 40
    size = int(2 * radius + 80)
    pos = [(size / 2 + radius * math.cos(2 * math.pi * i / n), size / 2 + radius * math.sin(2 * math.pi * i / n))
           for i in range(n)]
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{size}" height="{size}" viewBox="0 0 {size} {size}" '
           f'font-family="DejaVu Sans, Verdana, sans-serif">', f"<title>{escape(game_map.name)}</title>"]
    if state is not None:
        marks = {**token_marks(state), **marks}
    for t in game_map.territories:
        for nb in t.neighbors:
            if nb > t.id:
                (x1, y1), (x2, y2) = pos[t.id], pos[nb]
                out.append(f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" stroke="#888"/>')
    for t in game_map.territories:
        x, y = pos[t.id]
        out.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="14" fill="{TERRAIN_COLOURS[t.kind]}" stroke="#444"/>')
        label = marks.get(t.id, game_map.labels[t.id])
        out.append(f'<text x="{x:.1f}" y="{y + 26:.1f}" font-size="9" text-anchor="middle">{escape(label)}</text>')
    out.append("</svg>")
    return "\n".join(out)


def svg_to_png(svg: str, path: str | None = None, scale: float = 2.0) -> bytes:
    """Rasterise an SVG picture with cairosvg; writes ``path`` when given and returns the PNG bytes.

    :raises ImportError: cairosvg (or the cairo library it needs) is not installed.
    """
    try:
        import cairosvg  # only PNG output needs it (and the cairo C library): loaded on first use
    except (ImportError, OSError) as e:  # OSError: cairosvg installed but the cairo library is missing
        raise ImportError(f"PNG output needs cairosvg and the cairo library ({e}); `pip install cairosvg`") from None
    data = cairosvg.svg2png(bytestring=svg.encode("utf-8"), scale=scale)
    if path is not None:
        with open(path, "wb") as f:
            f.write(data)
    return data


install_view("text", render_text)  # str(state): State cannot import this module, which draws it
