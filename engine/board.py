"""The Feudo map: territories, adjacency, Castle sites, the plague lattice and distances.

Maps are data (R3): a player who owns the box must be able to correct the layout in JSON without touching code,
so everything here is loaded from files and validated with messages that name the file, the field and what was
expected. Three file formats exist:

* ``feudo-board/1`` -- one 5x5 mapboard in local orientation (row 0 and column 0 are the map's outer edges,
  cell (4,4) is the board's share of the Central Hill).
* ``feudo-map/1`` -- an assembly: four board files placed 2x2 in a seeded random order around the Central Hill.
* ``feudo-map-graph/1`` -- an explicit territory graph (any shape), also the output of :meth:`GameMap.to_dict`.

Assembly is turned into the graph format and goes through the same validation, so both routes give maps with the
same guarantees. A :class:`GameMap` is immutable; the engine compiles it into arrays elsewhere.
"""

from __future__ import annotations

import enum
import json
import numbers
import os
import random
import re
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping, NoReturn

from .errors import DataFileError
from .checker import MAX_CELL, Checker, json_type, read_json_file

__all__ = [
    "Kind", "DIRECTIONS", "Territory", "CastleSite", "GameMap", "load_map", "assemble",
    "MAPS_DIR", "BOARD_FORMAT", "ASSEMBLY_FORMAT", "GRAPH_FORMAT", "territory_labels", "castle_site_labels",
    "find_castle_site", "castle_site_cells", "grid_size", "cell_name",
]

MAPS_DIR = Path(__file__).resolve().parent / "data" / "maps"
BOARD_FORMAT = "feudo-board/1"
ASSEMBLY_FORMAT = "feudo-map/1"
GRAPH_FORMAT = "feudo-map-graph/1"


class Kind(enum.IntEnum):
    """Territory types (rulebook "The Map"); the Central Hill holds the Convent (R10)."""

    HILL = 0
    WOOD = 1
    MOUNTAIN = 2
    VILLAGE = 3
    CITY = 4
    CENTRAL_HILL = 5


#: Order of the lattice steps in :attr:`GameMap.village_next` (R18: plague movement cards).
DIRECTIONS = ("N", "E", "S", "W")

_KIND_BY_TEXT = {k.name.lower(): k for k in Kind}


@dataclass(frozen=True)
class Territory:
    """One territory of the map.

    ``id`` is the index in :attr:`GameMap.territories`; ``neighbors`` are sorted ids and symmetric. ``cross`` marks
    the Hills hit by the Cross plague card (R18); ``joined_corner`` the outer-edge territories formed by two boards
    meeting at the map edge (one territory for movement, two Castle sites, R3). ``board`` is the quadrant index of
    the board the territory lies on (for a joined corner: the board of its first cell; -1 for the Central Hill).
    """

    id: int
    name: str
    kind: Kind
    neighbors: tuple[int, ...]
    outer_edge: bool
    joined_corner: bool
    cross: bool
    board: int
    cells: tuple[tuple[int, int], ...]


@dataclass(frozen=True)
class CastleSite:
    """A place where a player may put his Castle (R21): one per outer-edge Hill cell, so a joined corner gives two
    sites (one per board) on the same territory."""

    id: int
    territory: int
    board: int


class _ReadOnlyDict(dict):  # type: ignore[type-arg]
    """A ``dict`` that refuses mutation, so :attr:`GameMap.village_next` keeps the dict type of the interface while
    the map stays immutable."""

    def _readonly(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise TypeError("GameMap.village_next is read-only")

    __setitem__ = __delitem__ = clear = pop = popitem = setdefault = update = _readonly  # type: ignore[assignment]
    __ior__ = _readonly  # type: ignore[assignment]

    def __reduce__(self) -> tuple[Any, ...]:
        return (_ReadOnlyDict, (dict(self),))


# --------------------------------------------------------------------------------------------------------------
# validation helpers
# --------------------------------------------------------------------------------------------------------------

# One validation layer for rulesets, maps and states (its primitives: engine.checker); the short names keep this
# module's code.
_json_type = json_type
_Checker = Checker


def _read_json(path: Path) -> Any:
    """Read a JSON file; every failure becomes a :class:`DataFileError` naming the file (and line)."""
    return read_json_file(path, DataFileError)


def _bfs(adj: list[tuple[int, ...]], start: int) -> list[int]:
    """Hop counts from ``start`` over every territory, whatever its type (R15); -1 where unreachable."""
    dist = [-1] * len(adj)
    dist[start] = 0
    queue = deque([start])
    while queue:
        x = queue.popleft()
        for y in adj[x]:
            if dist[y] < 0:
                dist[y] = dist[x] + 1
                queue.append(y)
    return dist


# --------------------------------------------------------------------------------------------------------------
# the map
# --------------------------------------------------------------------------------------------------------------

class GameMap:
    """An immutable, validated Feudo map.

    Build it with :func:`load_map`, :func:`assemble` or :meth:`from_dict`; the constructor trusts its arguments.
    Two maps are equal when their :meth:`to_dict` forms are equal (the ``source`` is not part of identity).
    """

    name: str
    territories: tuple[Territory, ...]
    castle_sites: tuple[CastleSite, ...]
    central_hill: int | None
    plague_start: int
    village_next: dict[int, tuple[int, int, int, int]]
    distance: tuple[tuple[int, ...], ...]
    num_boards: int
    source: str
    cities: tuple[int, ...]
    villages: tuple[int, ...]
    border_hills: frozenset[int]
    cross_hills: frozenset[int]

    def __init__(self, *, name: str, territories: Iterable[Territory], castle_sites: Iterable[CastleSite],
                 central_hill: int | None, plague_start: int,
                 village_next: Mapping[int, tuple[int, int, int, int]], num_boards: int,
                 source: str = "<dict>") -> None:
        terr = tuple(territories)
        set_ = object.__setattr__
        set_(self, "name", name)
        set_(self, "territories", terr)
        set_(self, "castle_sites", tuple(castle_sites))
        set_(self, "central_hill", central_hill)
        set_(self, "plague_start", plague_start)
        set_(self, "village_next", _ReadOnlyDict(sorted((int(k), tuple(v)) for k, v in village_next.items())))
        set_(self, "num_boards", num_boards)
        set_(self, "source", source)
        adj = [t.neighbors for t in terr]
        set_(self, "distance", tuple(tuple(_bfs(adj, i)) for i in range(len(terr))))  # R15
        set_(self, "cities", tuple(t.id for t in terr if t.kind == Kind.CITY))
        set_(self, "villages", tuple(t.id for t in terr if t.kind == Kind.VILLAGE))
        # R18 Border: outer-edge Hills except the joined corners. Cross: flagged Hills (seams, around the Convent).
        set_(self, "border_hills", frozenset(t.id for t in terr
                                             if t.kind == Kind.HILL and t.outer_edge and not t.joined_corner))
        set_(self, "cross_hills", frozenset(t.id for t in terr if t.cross and t.kind == Kind.HILL))
        set_(self, "_by_name", {t.name: t.id for t in terr})
        set_(self, "_canonical", json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":")))

    # immutability: the engine shares one map between many states and processes
    def __setattr__(self, key: str, value: Any) -> NoReturn:
        raise AttributeError(f"GameMap is immutable (cannot set {key!r})")

    def __delattr__(self, key: str) -> NoReturn:
        raise AttributeError(f"GameMap is immutable (cannot delete {key!r})")

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild, (self.to_dict(), self.source))

    # immutable, so copies may share the original (states are cloned often during search)
    def __copy__(self) -> "GameMap":
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> "GameMap":
        return self

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, GameMap):
            return NotImplemented
        return bool(self._canonical == other._canonical)  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash(self._canonical)  # type: ignore[attr-defined]

    def __repr__(self) -> str:
        return (f"GameMap(name={self.name!r}, territories={len(self.territories)}, "
                f"castle_sites={len(self.castle_sites)}, source={self.source!r})")

    # ------------------------------------------------------------------------------------------------ lookup
    def territory(self, name_or_id: int | str) -> Territory:
        """The territory with this id or name; ``ValueError`` naming it when there is none."""
        if isinstance(name_or_id, numbers.Integral) and not isinstance(name_or_id, bool):
            i = int(name_or_id)
            if 0 <= i < len(self.territories):
                return self.territories[i]
            raise ValueError(f"map {self.name!r}: no territory with id {i} "
                             f"(ids are 0..{len(self.territories) - 1})")
        if isinstance(name_or_id, str):
            i2 = self._by_name.get(name_or_id)  # type: ignore[attr-defined]
            if i2 is not None:
                return self.territories[i2]
            if name_or_id in self.labels:  # the name a player reads on the board ("Wood C2")
                return self.territories[self.labels.index(name_or_id)]
            raise ValueError(f"map {self.name!r}: no territory named {name_or_id!r}")
        raise ValueError(f"map {self.name!r}: {name_or_id!r} is neither a territory id nor a name")

    # ------------------------------------------------------------------------------------------ player names
    @property
    def labels(self) -> tuple[str, ...]:
        """Per territory, the name a player finds on the board (:func:`territory_labels`, e.g. "Wood C2",
        "City I5 Evesham", "Hill E1/F1"): the one naming of places of action texts, pictures and narration.
        Computed once per map (maps are immutable)."""
        cached = self.__dict__.get("_labels")
        if cached is None:
            cached = tuple(territory_labels(self))
            object.__setattr__(self, "_labels", cached)
        return cached

    @property
    def site_labels(self) -> tuple[str, ...]:
        """Per Castle site, its cell's terrain and coordinate (:func:`castle_site_labels`, e.g. "Hill E1")."""
        cached = self.__dict__.get("_site_labels")
        if cached is None:
            cached = tuple(castle_site_labels(self))
            object.__setattr__(self, "_site_labels", cached)
        return cached

    # ------------------------------------------------------------------------------------------- graph format
    def to_dict(self) -> dict[str, Any]:
        """The self-contained graph form (``feudo-map-graph/1``); ``from_dict(m.to_dict()) == m``."""
        names = [t.name for t in self.territories]
        return {
            "format": GRAPH_FORMAT,
            "name": self.name,
            "num_boards": self.num_boards,
            "territories": [
                {"name": t.name, "kind": t.kind.name.lower(), "neighbors": [names[n] for n in t.neighbors],
                 "outer_edge": t.outer_edge, "joined_corner": t.joined_corner, "cross": t.cross,
                 "board": t.board, "cells": [[r, c] for r, c in t.cells]}
                for t in self.territories],
            "castle_sites": [{"territory": names[s.territory], "board": s.board} for s in self.castle_sites],
            "central_hill": None if self.central_hill is None else names[self.central_hill],
            "plague_start": names[self.plague_start],
            "village_lattice": {names[v]: {d: names[n] for d, n in zip(DIRECTIONS, nxt)}
                                for v, nxt in self.village_next.items()},
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any], source: str = "<dict>") -> "GameMap":
        """Build a map from the graph format, validating every field (see module docstring)."""
        return _parse_graph(d, str(source))

    # -------------------------------------------------------------------------------------------- rendering


def _rebuild(d: dict[str, Any], source: str) -> GameMap:
    """Pickle support: maps travel to worker processes as their graph form."""
    return GameMap.from_dict(d, source)


# --------------------------------------------------------------------------------------------------------------
# graph format
# --------------------------------------------------------------------------------------------------------------

_GRAPH_KEYS = ("format", "name", "description", "num_boards", "territories", "castle_sites", "central_hill",
               "plague_start", "village_lattice")
_TERR_KEYS = ("name", "kind", "neighbors", "outer_edge", "joined_corner", "cross", "board", "cells")


def _parse_graph(d: Any, source: str) -> GameMap:
    ck = _Checker(source)
    ck.obj(d, "", _GRAPH_KEYS,
           required=("format", "name", "territories", "castle_sites", "plague_start", "village_lattice"))
    ck.fmt(d, GRAPH_FORMAT)
    name = ck.string(d["name"], "name")
    if "description" in d:
        ck.string(d["description"], "description", nonempty=False)
    num_boards = ck.integer(d["num_boards"], "num_boards", lo=0) if "num_boards" in d else None
    raw = ck.array(d["territories"], "territories", nonempty=True)

    # pass 1: names, kinds and scalar fields
    ids: dict[str, int] = {}
    rows: list[dict[str, Any]] = []
    cell_owner: dict[tuple[int, int], int] = {}
    for i, t in enumerate(raw):
        p = f"territories[{i}]"
        ck.obj(t, p, _TERR_KEYS, required=("name", "kind", "neighbors"))
        tname = ck.string(t["name"], f"{p}.name")
        if tname in ids:
            ck.fail(f"{p}.name", f"duplicate territory name {tname!r} (also territories[{ids[tname]}])")
        ids[tname] = i
        ktext = t["kind"]
        if not isinstance(ktext, str) or ktext not in _KIND_BY_TEXT:
            ck.fail(f"{p}.kind", f"expected one of {'|'.join(_KIND_BY_TEXT)}, got {_json_type(ktext)}")
        kind = _KIND_BY_TEXT[ktext]
        outer = ck.boolean(t.get("outer_edge", False), f"{p}.outer_edge")
        joined = ck.boolean(t.get("joined_corner", False), f"{p}.joined_corner")
        cross = ck.boolean(t.get("cross", False), f"{p}.cross")
        board = ck.integer(t.get("board", -1), f"{p}.board", lo=-1,
                           hi=None if num_boards is None else num_boards - 1)
        if joined and not outer:
            ck.fail(f"{p}.joined_corner", "a joined corner must also have outer_edge true (R3)")
        if cross and kind != Kind.HILL:
            ck.fail(f"{p}.cross", f"only Hills are hit by the Cross card (R18), but this is a {ktext}")
        cells: list[tuple[int, int]] = []
        for j, cell in enumerate(ck.array(t.get("cells", []), f"{p}.cells")):
            cp = f"{p}.cells[{j}]"
            if (not isinstance(cell, list) or len(cell) != 2
                    or any(isinstance(x, bool) or not isinstance(x, int) or not 0 <= x <= MAX_CELL for x in cell)):
                # bounded: rendering walks every row and column of the grid
                ck.fail(cp, f"expected [row, col] with two integers in [0, {MAX_CELL}], got {json.dumps(cell)[:40]}")
            rc = (cell[0], cell[1])
            if rc in cell_owner:
                ck.fail(cp, f"cell {list(rc)} already belongs to territories[{cell_owner[rc]}]")
            cell_owner[rc] = i
            cells.append(rc)
        rows.append({"name": tname, "kind": kind, "outer": outer, "joined": joined, "cross": cross,
                     "board": board, "cells": tuple(cells)})

    def ref(v: Any, path: str) -> int:
        if not isinstance(v, str):
            ck.fail(path, f"expected a territory name, got {_json_type(v)}")
        if v not in ids:
            ck.fail(path, f"unknown territory {v!r}")
        return ids[v]

    # pass 2: adjacency (symmetric, no self loops, no duplicates)
    nbrs: list[set[int]] = []
    for i, t in enumerate(raw):
        p = f"territories[{i}].neighbors"
        found: set[int] = set()
        for v in ck.array(t["neighbors"], p):
            n = ref(v, p)
            if n == i:
                ck.fail(p, f"territory {rows[i]['name']!r} lists itself as a neighbour")
            if n in found:
                ck.fail(p, f"neighbour {v!r} listed twice")
            found.add(n)
        nbrs.append(found)
    for i, found in enumerate(nbrs):
        for n in sorted(found):
            if i not in nbrs[n]:
                ck.fail(f"territories[{i}].neighbors",
                        f"{rows[i]['name']!r} lists {rows[n]['name']!r} but territories[{n}].neighbors does not "
                        f"list {rows[i]['name']!r} (adjacency must be symmetric)")

    kinds = [r["kind"] for r in rows]

    # Central Hill: at most one, and the field must agree with the kinds (R10)
    centrals = [i for i, k in enumerate(kinds) if k == Kind.CENTRAL_HILL]
    if len(centrals) > 1:
        ck.fail(f"territories[{centrals[1]}].kind",
                f"expected at most one central_hill, found {len(centrals)} "
                f"({', '.join(rows[i]['name'] for i in centrals)})")
    ch_raw = d.get("central_hill")
    if ch_raw is None:
        if centrals:
            ck.fail("central_hill", f"expected {rows[centrals[0]]['name']!r} (the central_hill territory), got null")
        central: int | None = None
    else:
        central = ref(ch_raw, "central_hill")
        if kinds[central] != Kind.CENTRAL_HILL:
            ck.fail("central_hill", f"expected a central_hill territory, {ch_raw!r} is a {kinds[central].name.lower()}")

    # Castle sites: outer-edge Hills, each with a board (R21: one Castle per board)
    sites_raw = ck.array(d["castle_sites"], "castle_sites", nonempty=True)
    site_boards = [s.get("board") for s in sites_raw if isinstance(s, dict)]
    if num_boards is None:
        all_boards = [r["board"] for r in rows] + [b for b in site_boards if isinstance(b, int)]
        num_boards = max(0, 1 + max(all_boards, default=-1))
    sites: list[CastleSite] = []
    seen_sites: set[tuple[int, int]] = set()
    for j, s in enumerate(sites_raw):
        p = f"castle_sites[{j}]"
        ck.obj(s, p, ("territory", "board"), required=("territory", "board"))
        t = ref(s["territory"], f"{p}.territory")
        b = ck.integer(s["board"], f"{p}.board", lo=0, hi=num_boards - 1)
        if kinds[t] != Kind.HILL or not rows[t]["outer"]:
            where = "" if rows[t]["outer"] else " not on the outer edge"
            ck.fail(f"{p}.territory", f"expected an outer-edge Hill (rulebook: Castles), {s['territory']!r} is "
                                      f"a {kinds[t].name.lower()}{where}")
        if (t, b) in seen_sites:
            ck.fail(p, f"duplicate castle site ({s['territory']!r}, board {b})")
        seen_sites.add((t, b))
        sites.append(CastleSite(id=j, territory=t, board=b))

    # plague start and lattice (R18)
    plague = ref(d["plague_start"], "plague_start")
    if kinds[plague] != Kind.VILLAGE:
        ck.fail("plague_start", f"expected a Village, {d['plague_start']!r} is a {kinds[plague].name.lower()}")
    lat_raw = d["village_lattice"]
    if not isinstance(lat_raw, dict):
        ck.fail("village_lattice", f"expected an object mapping Village names to {{N, E, S, W}}, "
                                   f"got {_json_type(lat_raw)}")
    lattice: dict[int, tuple[int, int, int, int]] = {}
    for vname, steps in lat_raw.items():
        p = f"village_lattice.{vname}"
        v = ref(vname, "village_lattice")
        if kinds[v] != Kind.VILLAGE:
            ck.fail(p, f"expected a Village, {vname!r} is a {kinds[v].name.lower()}")
        ck.obj(steps, p, DIRECTIONS, required=DIRECTIONS)
        nxt = []
        for dname in DIRECTIONS:
            n = ref(steps[dname], f"{p}.{dname}")
            if kinds[n] != Kind.VILLAGE:
                ck.fail(f"{p}.{dname}", f"expected a Village, {steps[dname]!r} is a {kinds[n].name.lower()}")
            nxt.append(n)
        lattice[v] = (nxt[0], nxt[1], nxt[2], nxt[3])
    for i, k in enumerate(kinds):
        if k == Kind.VILLAGE and i not in lattice:
            ck.fail("village_lattice", f"missing entry for Village {rows[i]['name']!r}")
    names = [r["name"] for r in rows]
    for v, (n, e, s, w) in lattice.items():  # a step and its opposite must undo each other (wrapping lines, R18)
        if lattice[n][2] != v:
            ck.fail(f"village_lattice.{names[v]}.N",
                    f"expected the S step of {names[n]!r} to lead back to {names[v]!r}, got {names[lattice[n][2]]!r}")
        if lattice[e][3] != v:
            ck.fail(f"village_lattice.{names[v]}.E",
                    f"expected the W step of {names[e]!r} to lead back to {names[v]!r}, got {names[lattice[e][3]]!r}")

    # connectivity (R15 distances must exist between every Castle and every City)
    adj = [tuple(sorted(n)) for n in nbrs]
    reach = _bfs(adj, 0)
    if min(reach) < 0:
        lost = [names[i] for i, x in enumerate(reach) if x < 0]
        ck.fail("territories", f"expected a connected map, but {names[0]!r} cannot reach "
                               f"{', '.join(repr(x) for x in lost[:5])}{' ...' if len(lost) > 5 else ''}")

    territories = [Territory(id=i, name=r["name"], kind=r["kind"], neighbors=adj[i], outer_edge=r["outer"],
                             joined_corner=r["joined"], cross=r["cross"], board=r["board"], cells=r["cells"])
                   for i, r in enumerate(rows)]
    return GameMap(name=name, territories=territories, castle_sites=sites, central_hill=central,
                   plague_start=plague, village_next=lattice, num_boards=num_boards, source=source)


# --------------------------------------------------------------------------------------------------------------
# boards and assembly
# --------------------------------------------------------------------------------------------------------------

BOARD_SIZE = 5
_LEGEND = "HWMVCX"
_BOARD_KIND = {"H": Kind.HILL, "W": Kind.WOOD, "M": Kind.MOUNTAIN, "V": Kind.VILLAGE, "C": Kind.CITY,
               "X": Kind.CENTRAL_HILL}
_INNER = (BOARD_SIZE - 1, BOARD_SIZE - 1)             # the board's share of the Central Hill
_JOINED_LOCAL = ((0, BOARD_SIZE - 1), (BOARD_SIZE - 1, 0))  # cells that meet the neighbouring boards at the edge
_CELL_KEY = re.compile(r"^\s*(\d+)\s*,\s*(\d+)\s*$")
QUADRANTS = ("TL", "TR", "BR", "BL")


def _to_global(q: int, lr: int, lc: int) -> tuple[int, int]:
    """Rotate a board's local cell into quadrant ``q`` so its inner corner faces the centre (R3)."""
    n = 2 * BOARD_SIZE - 1
    if q == 0:
        return lr, lc
    if q == 1:
        return lc, n - lr
    if q == 2:
        return n - lr, n - lc
    return n - lc, lr


def _validate_board(b: Any, source: str) -> tuple[str, list[str], dict[tuple[int, int], str]]:
    """Check one ``feudo-board/1`` dict; return (name, rows, {local cell: city name})."""
    ck = _Checker(source)
    ck.obj(b, "", ("format", "name", "description", "rows", "cities"), required=("format", "name", "rows", "cities"))
    ck.fmt(b, BOARD_FORMAT)
    name = ck.string(b["name"], "name")
    if "description" in b:
        ck.string(b["description"], "description", nonempty=False)
    rows = ck.array(b["rows"], "rows")
    if len(rows) != BOARD_SIZE:
        ck.fail("rows", f"expected {BOARD_SIZE} rows, got {len(rows)}")
    for r, row in enumerate(rows):
        if not isinstance(row, str) or len(row) != BOARD_SIZE or any(ch not in _LEGEND for ch in row):
            shown = json.dumps(row) if isinstance(row, str) else _json_type(row)
            ck.fail(f"rows[{r}]", f'expected {BOARD_SIZE} characters from "{_LEGEND}", got {shown}')
    for r in range(BOARD_SIZE):
        for c in range(BOARD_SIZE):
            ch = rows[r][c]
            if ch == "X" and (r, c) != _INNER:
                ck.fail(f"rows[{r}]", f"'X' (central hill corner) only at column {_INNER[1]} of row {_INNER[0]}, "
                                      f"found at column {c}")
    if rows[_INNER[0]][_INNER[1]] != "X":
        ck.fail(f"rows[{_INNER[0]}]", f"expected 'X' (central hill corner) at column {_INNER[1]}")
    for r, c in _JOINED_LOCAL:  # two boards' corner cells merge into one territory, so both must be Hills (R3)
        if rows[r][c] != "H":
            ck.fail(f"rows[{r}]", f"expected 'H' at column {c}: joined corners where boards meet are Hills (R3)")
    villages = sum(row.count("V") for row in rows)
    if villages != 4:
        ck.fail("rows", f"expected 4 Villages ('V') on a board (R3: 16 on the map), got {villages}")
    cities_raw = b["cities"]
    if not isinstance(cities_raw, dict):
        ck.fail("cities", f'expected an object {{"row,col": "City name"}}, got {_json_type(cities_raw)}')
    cities: dict[tuple[int, int], str] = {}
    for key, cname in cities_raw.items():
        p = f"cities[{json.dumps(key)}]"
        m = _CELL_KEY.match(key) if isinstance(key, str) else None
        if not m:
            ck.fail(p, 'expected a key "row,col"')
        rc = (int(m.group(1)), int(m.group(2)))
        if not (rc[0] < BOARD_SIZE and rc[1] < BOARD_SIZE) or rows[rc[0]][rc[1]] != "C":
            ck.fail(p, f"expected the cell of a 'C' in rows, cell {key!r} is not a City")
        if rc in cities:
            ck.fail(p, f"cell {key!r} named twice")
        cname = ck.string(cname, p)
        if cname in cities.values():
            ck.fail(p, f"duplicate City name {cname!r}")
        cities[rc] = cname
    for r in range(BOARD_SIZE):
        for c in range(BOARD_SIZE):
            if rows[r][c] == "C" and (r, c) not in cities:
                ck.fail("cities", f'expected a name for the City at "{r},{c}"')
    return name, list(rows), cities


def assemble(boards: list[dict[str, Any]], order: list[int], name: str, plague_start_near: str,
             source: str) -> GameMap:
    """Place ``boards[order[q]]`` in quadrant ``q`` (TL, TR, BR, BL) and build the map (R3).

    Cells are orthogonally adjacent on the 10x10 grid; the four inner corners form one Central Hill; each pair of
    corner cells where two boards meet at the outer edge is one territory (``joined_corner``) but two Castle sites.
    Every outer-edge Hill cell is a Castle site of its board (R21). The plague lattice links each Village to the
    next one in its row/column, wrapping (R18). The plague starts at the Village closest to ``plague_start_near``.
    """
    source = str(source)
    ck = _Checker(source)
    if not isinstance(boards, list) or len(boards) != len(QUADRANTS):
        ck.fail("boards", f"expected {len(QUADRANTS)} boards, got "
                          f"{len(boards) if isinstance(boards, list) else _json_type(boards)}")
    if (not isinstance(order, (list, tuple)) or not all(isinstance(x, int) for x in order)
            or sorted(order) != list(range(len(QUADRANTS)))):
        ck.fail("boards", f"board order must be a permutation of 0..{len(QUADRANTS) - 1}, got {order}")
    parsed = [_validate_board(b, f"{source}: boards[{i}]") for i, b in enumerate(boards)]
    seen: dict[str, int] = {}
    for i, (bname, _, _) in enumerate(parsed):
        if bname in seen:
            ck.fail(f"boards[{i}]", f"duplicate board name {bname!r} (also boards[{seen[bname]}])")
        seen[bname] = i
    city_names = [c for _, _, cities in parsed for c in cities.values()]
    dup = {c for c in city_names if city_names.count(c) > 1}
    if dup:
        ck.fail("boards", f"City names must be unique across boards, repeated: {', '.join(sorted(dup))}")
    if plague_start_near not in city_names:
        ck.fail("plague_start_near", f"expected the name of a City on the boards ({', '.join(city_names)}), "
                                     f"got {plague_start_near!r}")

    n = 2 * BOARD_SIZE
    char: dict[tuple[int, int], str] = {}
    quad: dict[tuple[int, int], int] = {}
    label: dict[tuple[int, int], str] = {}
    for q in range(len(QUADRANTS)):
        bname, rows, cities = parsed[order[q]]
        for lr in range(BOARD_SIZE):
            for lc in range(BOARD_SIZE):
                g = _to_global(q, lr, lc)
                char[g], quad[g] = rows[lr][lc], q
                label[g] = cities.get((lr, lc), f"{bname}{lr}-{lc}")

    # group cells into territories: the Central Hill and the joined corners span several cells
    group: dict[tuple[int, int], tuple[int, int]] = {g: g for g in char}
    centre = [g for g in char if char[g] == "X"]
    for g in centre:
        group[g] = min(centre)
    joined_groups: set[tuple[int, int]] = set()
    for q in range(len(QUADRANTS)):
        # local (0, 4) of quadrant q meets local (4, 0) of the next quadrant clockwise at the outer edge
        a = _to_global(q, *_JOINED_LOCAL[0])
        b = _to_global((q + 1) % len(QUADRANTS), *_JOINED_LOCAL[1])
        group[a] = group[b] = min(a, b)
        joined_groups.add(min(a, b))
    members: dict[tuple[int, int], list[tuple[int, int]]] = {}
    for g in sorted(char):
        members.setdefault(group[g], []).append(g)
    keys = sorted(members, key=lambda k: min(members[k]))
    tid = {k: i for i, k in enumerate(keys)}
    cell_tid = {g: tid[group[g]] for g in char}

    def on_edge(g: tuple[int, int]) -> bool:
        return g[0] in (0, n - 1) or g[1] in (0, n - 1)

    seam = {BOARD_SIZE - 1, BOARD_SIZE}
    centre_tid = cell_tid[centre[0]] if centre else None
    territories: list[dict[str, Any]] = []
    adj: list[set[int]] = [set() for _ in keys]
    for g in char:
        for dr, dc in ((1, 0), (0, 1), (-1, 0), (0, -1)):
            h = (g[0] + dr, g[1] + dc)
            if h in char and cell_tid[h] != cell_tid[g]:
                adj[cell_tid[g]].add(cell_tid[h])
    for k in keys:
        cells = members[k]
        ch = char[cells[0]]
        i = tid[k]
        kind = _BOARD_KIND[ch]
        if ch == "X":
            tname = "Central Hill"
        else:
            tname = "/".join(label[c] for c in cells)
        # R18 Cross: Hills on a seam between two boards (global row/col 4 or 5, incl. joined corners) and Hills
        # bordering the Central Hill
        cross = kind == Kind.HILL and (any(r in seam or c in seam for r, c in cells)
                                       or (centre_tid is not None and centre_tid in adj[i]))
        territories.append({
            "name": tname, "kind": kind.name.lower(), "neighbors": [], "outer_edge": any(on_edge(c) for c in cells),
            "joined_corner": k in joined_groups, "cross": cross, "board": -1 if ch == "X" else quad[cells[0]],
            "cells": [list(c) for c in cells]})
    for i, t in enumerate(territories):
        t["neighbors"] = [territories[j]["name"] for j in sorted(adj[i])]

    # R21: one Castle site per outer-edge Hill cell, on that cell's board
    sites = [{"territory": territories[cell_tid[g]]["name"], "board": quad[g]}
             for g in sorted(char, key=lambda g: (cell_tid[g], quad[g])) if on_edge(g) and char[g] == "H"]

    # R18: village lattice from the global geometry; next Village along the row/column, wrapping
    vcells = sorted(g for g in char if char[g] == "V")
    lattice: dict[str, dict[str, str]] = {}
    for r, c in vcells:
        row = sorted(x for x in vcells if x[0] == r)
        col = sorted(x for x in vcells if x[1] == c)
        i_r, i_c = row.index((r, c)), col.index((r, c))
        step = {"N": col[i_c - 1], "E": row[(i_r + 1) % len(row)], "S": col[(i_c + 1) % len(col)],
                "W": row[i_r - 1]}
        lattice[territories[cell_tid[(r, c)]]["name"]] = {d: territories[cell_tid[x]]["name"]
                                                          for d, x in step.items()}

    # plague start: the Village closest to the named City (ties: lowest territory id)
    adj_t = [tuple(sorted(a)) for a in adj]
    near = next(i for i, t in enumerate(territories) if t["name"] == plague_start_near)
    dist = _bfs(adj_t, near)
    vids = sorted({cell_tid[g] for g in vcells})
    reachable = [v for v in vids if dist[v] >= 0]
    if not reachable:
        ck.fail("plague_start_near", f"no Village is connected to {plague_start_near!r}")
    start = min(reachable, key=lambda v: (dist[v], v))

    graph = {"format": GRAPH_FORMAT, "name": name, "num_boards": len(QUADRANTS), "territories": territories,
             "castle_sites": sites, "central_hill": "Central Hill" if centre else None,
             "plague_start": territories[start]["name"], "village_lattice": lattice}
    return _parse_graph(graph, source)


def _resolve(path_or_name: str | os.PathLike[str] | None) -> Path:
    """None/"default" -> packaged default; a bare name -> packaged ``<name>.json``; anything else is a path."""
    if path_or_name is None:
        return MAPS_DIR / "default.json"
    if isinstance(path_or_name, str) and re.fullmatch(r"[A-Za-z0-9_\-]+", path_or_name):
        packaged = MAPS_DIR / f"{path_or_name}.json"
        if packaged.is_file():
            return packaged
        if not Path(path_or_name).exists():
            known = sorted(p.stem for p in MAPS_DIR.glob("*.json") if not p.stem.startswith("board_"))
            raise DataFileError(f"{path_or_name}: unknown map (packaged maps: {', '.join(known)}; "
                                f"or give a path to a .json file)")
    return Path(path_or_name)


def load_map(path_or_name: str | os.PathLike[str] | None = None, seed: int = 0,
             order: list[int] | None = None) -> GameMap:
    """Load a map file (R3). Assemblies (``feudo-map/1``) are put together in the board order drawn from
    ``random.Random(seed)``, or in the given ``order`` (``order[q]``: the board in quadrant q, TL, TR, BR, BL,
    as at a real table); graph files (``feudo-map-graph/1``) ignore both."""
    path = _resolve(path_or_name)
    data = _read_json(path)
    ck = _Checker(str(path))
    if not isinstance(data, dict):
        ck.fail("top level", f"expected an object, got {_json_type(data)}")
    fmt = data.get("format")
    if fmt == GRAPH_FORMAT:
        return _parse_graph(data, str(path))
    if fmt == BOARD_FORMAT:
        ck.fail("format", f"this is a single mapboard; load an assembly ({ASSEMBLY_FORMAT!r}) that lists it")
    if fmt != ASSEMBLY_FORMAT:
        ck.fail("format", f"expected {ASSEMBLY_FORMAT!r} or {GRAPH_FORMAT!r}, got {_json_type(fmt)}")
    ck.obj(data, "", ("format", "name", "description", "boards", "plague_start_near"),
           required=("format", "name", "boards", "plague_start_near"))
    name = ck.string(data["name"], "name")
    if "description" in data:
        ck.string(data["description"], "description", nonempty=False)
    near = ck.string(data["plague_start_near"], "plague_start_near")
    files = ck.array(data["boards"], "boards")
    if len(files) != len(QUADRANTS):
        ck.fail("boards", f"expected {len(QUADRANTS)} board files (2x2 around the Central Hill), got {len(files)}")
    boards = []
    for i, f in enumerate(files):
        ck.string(f, f"boards[{i}]")
        bpath = path.parent / f
        if not bpath.is_file():
            ck.fail(f"boards[{i}]", f"file {f!r} not found (looked in {path.parent})")
        b = _read_json(bpath)
        _validate_board(b, str(bpath))  # report problems against the board's own file
        boards.append(b)
    if order is None:
        order = list(range(len(QUADRANTS)))
        random.Random(seed).shuffle(order)  # R3: boards assembled in random order; rotation follows the quadrant
    return assemble(boards, list(order), name, near, str(path))


# ---------------------------------------------------------------------------------------------------------------
# Names a player finds on the board: terrain and grid coordinate (the engine's names stay as they are)
# ---------------------------------------------------------------------------------------------------------------
_TERRAIN = {Kind.HILL: "Hill", Kind.WOOD: "Wood", Kind.MOUNTAIN: "Mountain", Kind.VILLAGE: "Village",
            Kind.CITY: "City", Kind.CENTRAL_HILL: "Central Hill"}
_CODE_NAME = re.compile(r"([A-Z]\d+-\d+)(/[A-Z]\d+-\d+)*|r\d+c\d+|Central Hill")


def grid_size(game_map: GameMap) -> tuple[int, int]:
    """(rows, columns) of the grid the territories' cells lie on; (0, 0) for a map without cells."""
    cells = [c for t in game_map.territories for c in t.cells]
    if not cells:
        return 0, 0
    return max(r for r, _ in cells) + 1, max(c for _, c in cells) + 1


def cell_name(row: int, col: int) -> str:
    """A grid cell as a player reads it: the column a letter from A (AA after Z), the row a number from 1."""
    letters, c = "", col
    while True:
        letters = chr(ord("A") + c % 26) + letters
        c = c // 26 - 1
        if c < 0:
            break
    return f"{letters}{row + 1}"


def territory_labels(game_map: GameMap) -> list[str]:
    """Per territory (id order): terrain and grid coordinate, e.g. "Wood C2", "City F2 Todenham", "Hill E1/F1"
    (a joined corner), "Central Hill E5-F6"; a territory named by its map (not by a board code) adds its name.
    Unique in the map (a territory without cells keeps its engine name)."""
    out = []
    for t in game_map.territories:
        if not t.cells:
            out.append(t.name)
            continue
        terrain = _TERRAIN[t.kind]
        cells = sorted(t.cells)
        if t.kind == Kind.CENTRAL_HILL and len(cells) > 2:
            where = f"{cell_name(*cells[0])}-{cell_name(*cells[-1])}"
        else:
            where = "/".join(cell_name(*c) for c in cells)
        label = f"{terrain} {where}"
        if not _CODE_NAME.fullmatch(t.name):
            label += f" {t.name}"
        out.append(label)
    seen: dict[str, int] = {}
    for label in out:
        seen[label] = seen.get(label, 0) + 1
    return [f"{label} #{i}" if seen[label] > 1 else label for i, label in enumerate(out)]


def castle_site_cells(game_map: GameMap) -> list[tuple[int, int] | None]:
    """Per Castle site (id order): its cell, or None for a map without cells. A territory with one site gives its
    first cell; the halves of a joined corner (R24) are told apart by the board of the cells next to them."""
    board_of: dict[tuple[int, int], int] = {}
    for t in game_map.territories:
        if len(t.cells) == 1 and t.board >= 0:
            board_of[t.cells[0]] = t.board
    out: list[tuple[int, int] | None] = []
    for s in game_map.castle_sites:
        cells = game_map.territories[s.territory].cells
        if not cells:
            out.append(None)
            continue
        pick = cells[0]
        if len(cells) > 1:
            for r, c in cells:
                near = {board_of.get((r + dr, c + dc)) for dr, dc in ((1, 0), (-1, 0), (0, 1), (0, -1))}
                if s.board in near:
                    pick = (r, c)
                    break
        out.append(pick)
    return out


def find_castle_site(game_map: GameMap, name: str) -> int:
    """The Castle site a player names: its id ("25"), its label ("Hill A10", :func:`castle_site_labels`), its
    cell alone ("A10"), or the label of a territory with a single site ("Hill A10"); case and spacing do not
    matter. :raises ValueError: no such site, or a joined corner's territory ("Hill E1/F1", R24), whose two sites
    are named by their cells."""
    text = " ".join(name.split())
    if text.isdigit():
        i = int(text)
        if i < len(game_map.castle_sites):
            return i
        raise ValueError(f"{text}: no Castle site has that id (ids 0-{len(game_map.castle_sites) - 1})")
    key = text.casefold()
    labels = game_map.site_labels
    for i, label in enumerate(labels):
        if key in (label.casefold(), label.split(" ")[-1].casefold()):
            return i
    for t, label in enumerate(game_map.labels):
        if key == label.casefold():
            sites = [s.id for s in game_map.castle_sites if s.territory == t]
            if len(sites) == 1:
                return sites[0]
            if sites:
                raise ValueError(f"{label} has {len(sites)} Castle sites, {' and '.join(labels[i] for i in sites)} "
                                 f"(a joined corner, R24): name one")
            raise ValueError(f"{label} has no Castle site")
    raise ValueError(f"{name.strip()!r} is no Castle site: expected a site as the board names it (e.g. "
                     f"{labels[0]!r}, or {labels[0].split(' ')[-1]!r}) or a site id")


def castle_site_labels(game_map: GameMap) -> list[str]:
    """Per Castle site (id order): its cell's terrain and coordinate ("Hill A1"; the two halves of a joined corner
    name their own cells); unique in the map."""
    labels = territory_labels(game_map)
    out = []
    for s, cell in zip(game_map.castle_sites, castle_site_cells(game_map)):
        t = game_map.territories[s.territory]
        out.append(f"{_TERRAIN[t.kind]} {cell_name(*cell)}" if cell is not None else f"{labels[t.id]} site {s.id}")
    seen: dict[str, int] = {}
    for label in out:
        seen[label] = seen.get(label, 0) + 1
    return [f"{label} site {i}" if seen[label] > 1 else label for i, label in enumerate(out)]
