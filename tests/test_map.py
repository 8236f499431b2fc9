"""Tests of the map model (engine/board.py): default map facts (R3), plague lattice and card sets (R18),
distances (R15), Castle sites (R21), the graph format and error reporting for bad map files."""

from __future__ import annotations

import copy
import itertools
import json
import pickle
from collections import Counter, deque
from pathlib import Path

import pytest

from engine.board import (DIRECTIONS, MAPS_DIR, GameMap, Kind, assemble, load_map)
from engine.render import map_ascii
from engine.errors import DataFileError, FeudoError

N, E, S, W = range(4)
SEEDS = range(21)
CITY_NAMES = {"Evesham", "Todenham", "Winterbourne", "Pershore", "Tewkesbury"}


@pytest.fixture(scope="module")
def default_map() -> GameMap:
    return load_map()


@pytest.fixture(scope="module")
def turn_map() -> GameMap:
    return load_map("turn_example")


@pytest.fixture(scope="module")
def board_dicts() -> list[dict]:
    return [json.loads((MAPS_DIR / f"board_{x}.json").read_text()) for x in "abcd"]


def kinds(m: GameMap) -> Counter:
    return Counter(t.kind for t in m.territories)


# ---------------------------------------------------------------------------------------------------- R3 counts

def test_r3_default_map_counts(default_map: GameMap) -> None:
    m = default_map
    k = kinds(m)
    assert len(m.territories) == 100 - 3 - 4 == 93
    assert k[Kind.VILLAGE] == 16 and len(m.villages) == 16
    assert k[Kind.CITY] == 5 and {m.territories[c].name for c in m.cities} == CITY_NAMES
    assert k[Kind.WOOD] == 4
    assert k[Kind.MOUNTAIN] == 6
    assert k[Kind.CENTRAL_HILL] == 1 and m.central_hill is not None
    assert m.territories[m.central_hill].kind == Kind.CENTRAL_HILL
    assert len(m.territories[m.central_hill].cells) == 4
    assert k[Kind.HILL] == 93 - 16 - 5 - 4 - 6 - 1
    assert m.num_boards == 4
    per_board = {kind: Counter(t.board for t in m.territories if t.kind == kind)
                 for kind in (Kind.MOUNTAIN, Kind.WOOD, Kind.CITY, Kind.VILLAGE)}
    assert sorted(per_board[Kind.MOUNTAIN].values()) == [1, 1, 2, 2]
    assert sorted(per_board[Kind.WOOD].values()) == [1, 1, 1, 1]
    assert sorted(per_board[Kind.CITY].values()) == [1, 1, 1, 2]
    assert sorted(per_board[Kind.VILLAGE].values()) == [4, 4, 4, 4]
    evesham = m.territory("Evesham")
    assert per_board[Kind.CITY][evesham.board] == 2  # Evesham shares its board with another City
    joined = [t for t in m.territories if t.joined_corner]
    assert len(joined) == 4 and all(len(t.cells) == 2 and t.outer_edge and t.kind == Kind.HILL for t in joined)
    # Castle sites: one per outer-edge Hill cell (a joined corner gives two, one per board)
    edge_hill_cells = sum(1 for t in m.territories if t.kind == Kind.HILL for r, c in t.cells
                          if r in (0, 9) or c in (0, 9))
    assert len(m.castle_sites) == edge_hill_cells == 35
    assert [s.id for s in m.castle_sites] == list(range(len(m.castle_sites)))
    for t in joined:
        boards = sorted(s.board for s in m.castle_sites if s.territory == t.id)
        assert len(boards) == 2 and boards[0] != boards[1]
    assert {s.board for s in m.castle_sites} == {0, 1, 2, 3}


def test_r3_cities_and_woods_not_on_outer_edge(default_map: GameMap) -> None:
    assert not [t.name for t in default_map.territories if t.kind in (Kind.CITY, Kind.WOOD) and t.outer_edge]


def test_r3_territory_structure(default_map: GameMap) -> None:
    m = default_map
    names = [t.name for t in m.territories]
    assert len(set(names)) == len(names)
    cells = [cell for t in m.territories for cell in t.cells]
    assert sorted(cells) == [(r, c) for r in range(10) for c in range(10)]
    for t in m.territories:
        assert m.territories[t.id] is t
        assert list(t.neighbors) == sorted(set(t.neighbors)) and t.id not in t.neighbors
        for n in t.neighbors:
            assert t.id in m.territories[n].neighbors
        # adjacency is exactly orthogonal contact between cells of different territories
        touching = {o.id for o in m.territories if o.id != t.id
                    and any(abs(r - r2) + abs(c - c2) == 1 for r, c in t.cells for r2, c2 in o.cells)}
        assert set(t.neighbors) == touching


# ------------------------------------------------------------------------------------------- R3/R18 lattice

def test_r3_every_village_in_line_with_three_others(default_map: GameMap) -> None:
    m = default_map
    pos = {v: m.territories[v].cells[0] for v in m.villages}
    for v, (r, c) in pos.items():
        same_row = [u for u, (r2, _) in pos.items() if r2 == r and u != v]
        same_col = [u for u, (_, c2) in pos.items() if c2 == c and u != v]
        assert len(same_row) == 3 and len(same_col) == 3
        # the lattice visits exactly those villages along the line
        east, south = set(), set()
        x = y = v
        for _ in range(3):
            x, y = m.village_next[x][E], m.village_next[y][S]
            east.add(x)
            south.add(y)
        assert east == set(same_row) and south == set(same_col)


def test_r18_lattice_wraps(default_map: GameMap) -> None:
    m = default_map
    assert set(m.village_next) == set(m.villages)
    for v in m.villages:
        nxt = m.village_next[v]
        assert len(nxt) == len(DIRECTIONS) == 4
        assert all(m.territories[x].kind == Kind.VILLAGE and x != v for x in nxt)
        assert m.village_next[nxt[N]][S] == v and m.village_next[nxt[S]][N] == v
        assert m.village_next[nxt[E]][W] == v and m.village_next[nxt[W]][E] == v
        for d in range(4):
            x = v
            for _ in range(4):
                x = m.village_next[x][d]
            assert x == v  # four steps in one direction go round the whole line
    # stepping off the edge reappears on the other side of the same line
    for v in m.villages:
        r, c = m.territories[v].cells[0]
        if c == 8:
            er, ec = m.territories[m.village_next[v][E]].cells[0]
            assert (er, ec) == (r, 1)
        if r == 1:
            nr, nc = m.territories[m.village_next[v][N]].cells[0]
            assert (nr, nc) == (8, c)
        if c == 1:
            assert m.territories[m.village_next[v][E]].cells[0] == (r, 3)


# ---------------------------------------------------------------------------------------- R3 reachability

def _reach(m: GameMap, start: int) -> set[int]:
    """Territories reachable from ``start`` without entering Mountains, the Central Hill or Cities (R8)."""
    blocked = (Kind.MOUNTAIN, Kind.CENTRAL_HILL, Kind.CITY)
    seen, queue = {start}, deque([start])
    while queue:
        x = queue.popleft()
        for y in m.territories[x].neighbors:
            if y not in seen and m.territories[y].kind not in blocked:
                seen.add(y)
                queue.append(y)
    return seen


@pytest.mark.parametrize("seed", SEEDS)
def test_r3_every_city_and_castle_site_reachable(seed: int) -> None:
    m = load_map(seed=seed)
    for site in m.castle_sites:
        seen = _reach(m, site.territory)
        for c in m.cities:
            assert set(m.territories[c].neighbors) & seen, (seed, site, m.territories[c].name)
        for other in m.castle_sites:
            assert other.territory in seen, (seed, site, other)


def test_r3_reachable_for_every_board_order(board_dicts: list[dict]) -> None:
    for order in itertools.permutations(range(4)):
        m = assemble(board_dicts, list(order), "default", "Evesham", "test")
        start = m.castle_sites[0].territory
        seen = _reach(m, start)
        assert all(s.territory in seen for s in m.castle_sites)
        assert all(set(m.territories[c].neighbors) & seen for c in m.cities)


def test_r3_assembly_random_order_depends_on_seed(board_dicts: list[dict]) -> None:
    maps = [load_map(seed=s) for s in SEEDS]
    assert load_map(seed=3) == maps[3]  # same seed, same map
    layouts = {map_ascii(m) for m in maps}
    assert len(layouts) >= 5
    # a board keeps its own content and only its quadrant/rotation changes: Evesham and Todenham stay on one board
    for m in maps:
        assert m.territory("Evesham").board == m.territory("Todenham").board
        assert kinds(m) == kinds(maps[0])
    # the assembly puts boards[order[q]] in quadrant q, rotated so its inner corner faces the centre
    m = assemble(board_dicts, [1, 0, 2, 3], "x", "Evesham", "test")
    assert m.territory("Winterbourne").cells == ((2, 2),)  # board B in the top-left, unrotated
    assert m.territory("Evesham").cells == ((4, 8),)        # board A top-right: local (1,4) -> (4, 9-1)
    assert m.territory("Todenham").cells == ((1, 5),)       # local (4,1) -> (1, 9-4)
    m2 = assemble(board_dicts, [2, 3, 0, 1], "x", "Evesham", "test")
    assert m2.territory("Evesham").cells == ((8, 5),)       # board A bottom-right: (9-1, 9-4)
    assert m != m2


def test_r3_plague_start_closest_to_evesham() -> None:
    for seed in SEEDS:
        m = load_map(seed=seed)
        ev = m.territory("Evesham").id
        best = min(m.distance[ev][v] for v in m.villages)
        assert m.territories[m.plague_start].kind == Kind.VILLAGE
        assert m.distance[ev][m.plague_start] == best
        assert m.plague_start == min(v for v in m.villages if m.distance[ev][v] == best)
        assert m.territory(m.plague_start).name == "A1-3"  # the default boards give a unique closest Village


def test_plague_start_near_other_city(board_dicts: list[dict]) -> None:
    m = assemble(board_dicts, [0, 1, 2, 3], "x", "Winterbourne", "test")
    w = m.territory("Winterbourne").id
    best = min(m.distance[w][v] for v in m.villages)
    tied = [v for v in m.villages if m.distance[w][v] == best]
    assert len(tied) == 4  # Winterbourne sits diagonally between its board's four Villages
    assert m.plague_start == min(tied)  # ties: lowest territory id
    assert m.territory(m.plague_start).name.startswith("B")


# ------------------------------------------------------------------------------------ R18 Border and Cross

def test_r18_border_and_cross_sets(default_map: GameMap) -> None:
    m = default_map
    centre = m.central_hill
    assert len(m.border_hills) == 27
    assert len(m.cross_hills) == 20
    for t in m.territories:
        on_edge = any(r in (0, 9) or c in (0, 9) for r, c in t.cells)
        on_seam = any(r in (4, 5) or c in (4, 5) for r, c in t.cells)
        assert t.outer_edge == on_edge
        expect_border = t.kind == Kind.HILL and on_edge and not t.joined_corner
        assert (t.id in m.border_hills) == expect_border, t.name
        expect_cross = t.kind == Kind.HILL and (on_seam or centre in t.neighbors)
        assert (t.id in m.cross_hills) == expect_cross == t.cross, t.name
    assert not (m.border_hills & m.cross_hills)
    assert all(t.id in m.cross_hills for t in m.territories if t.joined_corner)
    around = [n for n in m.territories[centre].neighbors if m.territories[n].kind == Kind.HILL]
    assert around and set(around) <= m.cross_hills


# --------------------------------------------------------------------------------------------- R15 distance

def test_r15_distance_ignores_type(default_map: GameMap) -> None:
    m = default_map
    n = len(m.territories)
    for i in range(n):
        assert m.distance[i][i] == 0
        for j in range(n):
            assert m.distance[i][j] == m.distance[j][i] >= 1 or i == j
        for j in m.territories[i].neighbors:
            assert m.distance[i][j] == 1
    # through a Mountain: its opposite neighbours are 2 apart
    for t in m.territories:
        if t.kind != Kind.MOUNTAIN:
            continue
        (r, c), = t.cells
        cell_of = {cell: o.id for o in m.territories for cell in o.cells}
        a, b = cell_of.get((r - 1, c)), cell_of.get((r + 1, c))
        if a is not None and b is not None:
            assert m.distance[a][b] == 2
    # through the Central Hill: single-cell territories on opposite sides of it
    cell_of = {cell: o.id for o in m.territories for cell in o.cells}
    assert m.distance[cell_of[(3, 4)]][cell_of[(6, 4)]] == 2
    # opposite corners: 18 cell steps, minus one for each of the two joined corners on the way (one territory each)
    assert m.distance[cell_of[(0, 0)]][cell_of[(9, 9)]] == 16
    # a graph map where the only link is a Mountain
    g = {"format": "feudo-map-graph/1", "name": "m",
         "territories": [{"name": "a", "kind": "hill", "neighbors": ["m"], "outer_edge": True},
                         {"name": "m", "kind": "mountain", "neighbors": ["a", "v"]},
                         {"name": "v", "kind": "village", "neighbors": ["m"]}],
         "castle_sites": [{"territory": "a", "board": 0}], "plague_start": "v",
         "village_lattice": {"v": {"N": "v", "E": "v", "S": "v", "W": "v"}}}
    assert GameMap.from_dict(g).distance[0][2] == 2


# --------------------------------------------------------------------------------------------- graph format

def test_graph_round_trip(default_map: GameMap, turn_map: GameMap) -> None:
    for m in (default_map, turn_map, load_map(seed=7)):
        d = m.to_dict()
        again = GameMap.from_dict(d)
        assert again == m and hash(again) == hash(m)
        assert again.to_dict() == d
        assert GameMap.from_dict(json.loads(json.dumps(d))) == m  # survives JSON text
        assert pickle.loads(pickle.dumps(m)) == m
        assert again.distance == m.distance and again.village_next == m.village_next
        assert again.territories == m.territories and again.castle_sites == m.castle_sites
    assert default_map != turn_map
    d = default_map.to_dict()
    d["territories"][5]["cross"] = not d["territories"][5]["cross"] if d["territories"][5]["kind"] == "hill" else False
    if d["territories"][5]["kind"] == "hill":
        assert GameMap.from_dict(d) != default_map


def test_graph_defaults_and_file_load(tmp_path: Path) -> None:
    g = {"format": "feudo-map-graph/1", "name": "tiny",
         "territories": [{"name": "a", "kind": "hill", "neighbors": ["b"], "outer_edge": True},
                         {"name": "b", "kind": "village", "neighbors": ["a"]}],
         "castle_sites": [{"territory": "a", "board": 0}], "plague_start": "b",
         "village_lattice": {"b": {"N": "b", "E": "b", "S": "b", "W": "b"}}}
    p = tmp_path / "tiny.json"
    p.write_text(json.dumps(g))
    m = load_map(p)
    assert m.source == str(p) and m.central_hill is None and m.num_boards == 1
    b = m.territory("b")
    assert (b.outer_edge, b.joined_corner, b.cross, b.board, b.cells) == (False, False, False, -1, ())
    assert load_map(str(p)) == m
    assert m.border_hills == frozenset({0}) and m.cross_hills == frozenset()


def test_map_is_immutable(default_map: GameMap) -> None:
    with pytest.raises(AttributeError):
        default_map.name = "x"  # type: ignore[misc]
    with pytest.raises(TypeError):
        default_map.village_next[default_map.villages[0]] = (0, 0, 0, 0)
    with pytest.raises(Exception):
        default_map.territories[0].kind = Kind.CITY  # type: ignore[misc]
    assert isinstance(default_map.village_next, dict)


def test_territory_lookup(default_map: GameMap) -> None:
    m = default_map
    assert m.territory("Evesham").kind == Kind.CITY
    assert m.territory(m.territory("Evesham").id).name == "Evesham"
    with pytest.raises(ValueError, match="Atlantis"):
        m.territory("Atlantis")
    with pytest.raises(ValueError, match="999"):
        m.territory(999)
    with pytest.raises(ValueError):
        m.territory(-1)


# -------------------------------------------------------------------------------------------- turn example

def test_turn_example_distances(turn_map: GameMap) -> None:
    m = turn_map
    d = lambda a, b: m.distance[m.territory(a).id][m.territory(b).id]  # noqa: E731
    assert d("Blue Castle", "Todenham") == 4       # "the City is 4 territories away from his Castle"
    assert d("White Castle", "Winterbourne") == 5
    assert d("Blue Castle", "Winterbourne") == 8
    blue, white = m.territory("Blue Castle"), m.territory("White Castle")
    site_boards = {t: {s.board for s in m.castle_sites if s.territory == t.id} for t in (blue, white)}
    assert site_boards[blue] == {0} and site_boards[white] == {1}
    for t in (blue, white):
        assert t.kind == Kind.HILL and t.outer_edge


def test_turn_example_adjacencies(turn_map: GameMap) -> None:
    m = turn_map
    T = m.territory
    adj = lambda a, b: T(b).id in T(a).neighbors  # noqa: E731
    dist = lambda a, b: m.distance[T(a).id][T(b).id]  # noqa: E731
    hills = ["Blue Castle", "White Castle", "Blue Knight Hill", "Blue Baron Hill", "Gilbert Start", "Gilbert Hill",
             "White Baron Hill", "Dispenser Start", "Beauchamp Start", "Beauchamp Hill", "Roudiche Hill",
             "Botley Hill", "Milady Start", "Milady End", "Milady Path", "Dispenser Path", "Clinton Path"]
    assert all(T(h).kind == Kind.HILL for h in hills)
    assert T("Todenham").kind == T("Winterbourne").kind == Kind.CITY
    assert T("Clinton Wood").kind == Kind.WOOD
    assert T("Plague West").kind == T("Plague East").kind == Kind.VILLAGE
    # BLUE: Baron moves 1 onto the Knight beside Todenham; force 9 = Baron + Knight + Roudiche (Infantryman)
    assert adj("Blue Knight Hill", "Todenham") and adj("Blue Baron Hill", "Blue Knight Hill")
    assert adj("Roudiche Hill", "Todenham")
    # Clinton leaves Winterbourne and reaches the Wood in 2 steps through a Hill
    assert dist("Winterbourne", "Clinton Wood") == 2
    assert adj("Winterbourne", "Clinton Path") and adj("Clinton Path", "Clinton Wood")
    # WHITE: Gilbert 1 step to beside Winterbourne, Dispenser 2 steps onto the Baron beside Winterbourne
    assert adj("Gilbert Start", "Gilbert Hill") and adj("Gilbert Hill", "Winterbourne")
    assert adj("White Baron Hill", "Winterbourne")
    assert dist("Dispenser Start", "White Baron Hill") == 2
    assert adj("Dispenser Start", "Dispenser Path") and adj("Dispenser Path", "White Baron Hill")
    # Beauchamp moves 1 north to the Hill below Roudiche
    bs, bh, rh = T("Beauchamp Start").cells[0], T("Beauchamp Hill").cells[0], T("Roudiche Hill").cells[0]
    assert bh == (bs[0] - 1, bs[1]) and rh == (bh[0] - 1, bh[1])
    assert adj("Beauchamp Start", "Beauchamp Hill") and adj("Beauchamp Hill", "Roudiche Hill")
    # Plague: 1 east from Plague West to Plague East hits Botley and nobody else
    assert m.plague_start == T("Plague West").id
    assert m.village_next[T("Plague West").id][E] == T("Plague East").id
    assert adj("Botley Hill", "Plague East") and not adj("Botley Hill", "Plague West")
    # Milady moves 2 towards the White Baron without ending next to him
    assert dist("Milady Start", "Milady End") == 2
    assert adj("Milady Start", "Milady Path") and adj("Milady Path", "Milady End")
    assert dist("Milady End", "White Baron Hill") < dist("Milady Start", "White Baron Hill")
    assert not adj("Milady End", "White Baron Hill") and not adj("Milady Start", "White Baron Hill")
    # the token squares never touch unless the example says so
    spots = ["Blue Castle", "White Castle", "Blue Knight Hill", "Blue Baron Hill", "Gilbert Start", "Gilbert Hill",
             "White Baron Hill", "Dispenser Start", "Beauchamp Start", "Beauchamp Hill", "Roudiche Hill",
             "Botley Hill", "Milady Start", "Milady End", "Clinton Wood", "Winterbourne", "Plague East",
             "Plague West"]
    stated = {frozenset(p) for p in [("Blue Knight Hill", "Blue Baron Hill"), ("Gilbert Start", "Gilbert Hill"),
                                      ("Gilbert Hill", "Winterbourne"), ("White Baron Hill", "Winterbourne"),
                                      ("Beauchamp Start", "Beauchamp Hill"), ("Beauchamp Hill", "Roudiche Hill"),
                                      ("Botley Hill", "Plague East")]}
    assert len(set(spots)) == len(spots)
    for a, b in itertools.combinations(spots, 2):
        assert adj(a, b) == (frozenset((a, b)) in stated), (a, b)
    # the listed paths avoid Mountains and Villages
    for p in ("Milady Path", "Dispenser Path", "Clinton Path"):
        assert T(p).kind == Kind.HILL


# ---------------------------------------------------------------------------------------------- bad inputs

def _graph() -> dict:
    return load_map("turn_example").to_dict()


def _corrupt(path: str, value: object) -> dict:
    """Set a dotted/indexed path in a fresh copy of the turn example's graph dict."""
    d = _graph()
    obj: object = d
    parts = path.replace("]", "").replace("[", ".").split(".")
    for key in parts[:-1]:
        obj = obj[int(key)] if isinstance(obj, list) else obj[key]  # type: ignore[index]
    last = parts[-1]
    if value is _DELETE:
        del obj[last]  # type: ignore[union-attr]
    elif isinstance(obj, list):
        obj[int(last)] = value
    else:
        obj[last] = value  # type: ignore[index]
    return d


_DELETE = object()

BAD_GRAPHS = [
    ("format", "feudo-map/9", "format"),
    ("name", 3, "name"),
    ("territories", {}, "territories"),
    ("territories[4].kind", "swamp", "territories[4].kind"),
    ("territories[4].neighbors[0]", "Foo", "territories[4].neighbors: unknown territory 'Foo'"),
    ("territories[4].neighbors", "r0c1", "territories[4].neighbors"),
    ("territories[2].outer_edge", "yes", "territories[2].outer_edge"),
    ("territories[2].board", 1.5, "territories[2].board"),
    ("territories[2].cells", [[1]], "territories[2].cells[0]"),
    ("territories[2].cells", [[0, 0]], "territories[2].cells[0]"),  # cell already taken by territories[0]
    ("territories[2].name", "r0c1", "territories[2].name"),       # duplicate name
    ("territories[2].nieghbors", [], "territories[2].nieghbors"),  # typo: unknown field
    ("territories[3].cross", True, "territories[3].cross"),         # a Mountain cannot be a Cross hill
    ("territories[10].joined_corner", True, "territories[10].joined_corner"),  # Milady Start: not on the edge
    ("castle_sites[0].territory", "Todenham", "castle_sites[0].territory"),
    ("castle_sites[0].board", 7, "castle_sites[0].board"),
    ("castle_sites[0]", "Blue Castle", "castle_sites[0]"),
    ("plague_start", "Blue Castle", "plague_start"),
    ("plague_start", _DELETE, "plague_start"),
    ("central_hill", "Todenham", "central_hill"),
    ("village_lattice.Plague West.E", "Botley Hill", "village_lattice.Plague West.E"),
    ("village_lattice.Plague West.E", "North West Village", "village_lattice.Plague West.E"),  # not inverse
    ("village_lattice.Plague West", {"N": "Plague West"}, "village_lattice.Plague West"),
    ("village_lattice.Plague West", _DELETE, "village_lattice"),
    ("num_boards", 1, "board"),  # White Castle's board 1 no longer exists
]


@pytest.mark.parametrize("path,value,expected", BAD_GRAPHS, ids=[b[0] + "=" + repr(b[1])[:20] for b in BAD_GRAPHS])
def test_bad_graph_file_raises_data_file_error(tmp_path: Path, path: str, value: object, expected: str) -> None:
    d = _corrupt(path, value)
    f = tmp_path / "broken_map.json"
    f.write_text(json.dumps(d))
    with pytest.raises(DataFileError) as e:
        load_map(f)
    msg = str(e.value)
    assert "broken_map.json" in msg and expected in msg, msg
    with pytest.raises(DataFileError, match="<dict>"):
        GameMap.from_dict(d)


def test_bad_graph_structure() -> None:
    d = _graph()
    # asymmetric adjacency
    d["territories"][0]["neighbors"].remove(d["territories"][1]["name"])
    with pytest.raises(DataFileError, match=r"territories\[1\]\.neighbors.*symmetric"):
        GameMap.from_dict(d)
    # self loop
    d = _graph()
    d["territories"][0]["neighbors"].append(d["territories"][0]["name"])
    with pytest.raises(DataFileError, match=r"territories\[0\]\.neighbors.*itself"):
        GameMap.from_dict(d)
    # two central hills
    d = _graph()
    d["territories"][1]["kind"] = d["territories"][2]["kind"] = "central_hill"
    with pytest.raises(DataFileError, match=r"territories\[2\]\.kind: expected at most one central_hill"):
        GameMap.from_dict(d)
    # a central hill the central_hill field does not name
    d = _graph()
    d["territories"][1]["kind"] = "central_hill"
    with pytest.raises(DataFileError, match="central_hill: expected"):
        GameMap.from_dict(d)
    # disconnected
    d = _graph()
    d["territories"].append({"name": "Island", "kind": "hill", "neighbors": []})
    with pytest.raises(DataFileError, match="connected.*Island"):
        GameMap.from_dict(d)
    # not an object at all
    with pytest.raises(DataFileError, match="<dict>: top level: expected an object"):
        GameMap.from_dict([])  # type: ignore[arg-type]


def _write_assembly(tmp_path: Path, board_dicts: list[dict], boards: list[str] | None = None,
                    **changes: object) -> Path:
    for x, b in zip("abcd", board_dicts):
        (tmp_path / f"board_{x}.json").write_text(json.dumps(b))
    d = {"format": "feudo-map/1", "name": "mine",
         "boards": boards or ["board_a.json", "board_b.json", "board_c.json", "board_d.json"],
         "plague_start_near": "Evesham"}
    d.update(changes)
    p = tmp_path / "mine.json"
    p.write_text(json.dumps(d))
    return p


def test_assembly_from_custom_files(tmp_path: Path, board_dicts: list[dict]) -> None:
    p = _write_assembly(tmp_path, board_dicts)
    m = load_map(p, seed=4)
    assert m.name == "mine" and len(m.territories) == 93
    assert m.to_dict()["territories"] == load_map(seed=4).to_dict()["territories"]


BAD_BOARDS = [
    ("rows", 1, "HHQ", 'rows[1]: expected 5 characters from "HWMVCX", got "HHQ"'),
    ("rows", 0, "HHHHHH", "rows[0]: expected 5 characters"),
    ("rows", 4, "HHHHH", "rows[4]: expected 'X'"),
    ("rows", 2, "HXHHH", "rows[2]: 'X'"),
    ("rows", 0, "HHHHW", "rows[0]: expected 'H' at column 4"),   # joined corner must be a Hill
    ("rows", 1, "HHHVH", "rows: expected 4 Villages"),
    ("cities", None, {"1,4": "Evesham"}, "cities: expected a name for the City"),
    ("cities", None, {"1,4": "Evesham", "4,1": "Evesham"}, "duplicate City name"),
    ("cities", None, {"1,4": "Evesham", "4,1": "Todenham", "0,0": "Nowhere"}, 'cities["0,0"]'),
    ("cities", None, {"1,4": "Evesham", "x": "Todenham"}, 'cities["x"]'),
    ("cities", None, ["Evesham"], "cities: expected an object"),
    ("format", None, "feudo-board/2", "format: expected"),
    ("name", None, "", "name: expected a non-empty string"),
]


@pytest.mark.parametrize("field,index,value,expected", BAD_BOARDS,
                         ids=[f"{b[0]}{b[1]}-{b[2]!r}"[:30] for b in BAD_BOARDS])
def test_bad_board_file_raises_data_file_error(tmp_path: Path, board_dicts: list[dict], field: str,
                                               index: int | None, value: object, expected: str) -> None:
    boards = copy.deepcopy(board_dicts)
    if index is None:
        boards[0][field] = value
    else:
        boards[0][field][index] = value
    p = _write_assembly(tmp_path, boards)
    with pytest.raises(DataFileError) as e:
        load_map(p)
    msg = str(e.value)
    assert "board_a.json" in msg and expected in msg, msg
    # assemble() on dicts reports the assembly source and the board index
    with pytest.raises(DataFileError, match=r"mine\.json: boards\[0\]"):
        assemble(boards, [0, 1, 2, 3], "x", "Evesham", "mine.json")


def test_bad_assembly_files(tmp_path: Path, board_dicts: list[dict]) -> None:
    p = _write_assembly(tmp_path, board_dicts, boards=["board_a.json", "board_b.json", "board_x.json", "board_d.json"])
    with pytest.raises(DataFileError, match=r"mine\.json: boards\[2\]: file 'board_x\.json' not found"):
        load_map(p)
    p = _write_assembly(tmp_path, board_dicts, boards=["board_a.json", "board_b.json", "board_c.json"])
    with pytest.raises(DataFileError, match=r"mine\.json: boards: expected 4 board files"):
        load_map(p)
    p = _write_assembly(tmp_path, board_dicts, plague_start_near="Camelot")
    with pytest.raises(DataFileError, match=r"mine\.json: plague_start_near: expected the name of a City.*Camelot"):
        load_map(p)
    p = _write_assembly(tmp_path, board_dicts, boards=["board_a.json", "board_a.json", "board_c.json",
                                                       "board_d.json"])
    with pytest.raises(DataFileError, match=r"mine\.json: boards"):
        load_map(p)
    p = _write_assembly(tmp_path, board_dicts, extra=1)
    with pytest.raises(DataFileError, match=r"mine\.json: extra: unknown field"):
        load_map(p)
    # a board file given where a map is expected
    with pytest.raises(DataFileError, match=r"board_a\.json: format: this is a single mapboard"):
        load_map(tmp_path / "board_a.json")
    with pytest.raises(DataFileError, match="permutation"):
        assemble(board_dicts, [0, 0, 1, 2], "x", "Evesham", "src.json")


def test_unreadable_files(tmp_path: Path) -> None:
    bad = tmp_path / "syntax.json"
    bad.write_text('{\n  "format": "feudo-map-graph/1",\n  "name": "x",,\n}\n')
    with pytest.raises(DataFileError, match=r"syntax\.json: invalid JSON at line 3"):
        load_map(bad)
    with pytest.raises(DataFileError, match=r"missing\.json: file not found"):
        load_map(tmp_path / "missing.json")
    with pytest.raises(DataFileError, match="no_such_map: unknown map"):
        load_map("no_such_map")
    binary = tmp_path / "binary.json"
    binary.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(DataFileError, match=r"binary\.json: not UTF-8"):
        load_map(binary)
    arr = tmp_path / "array.json"
    arr.write_text("[1, 2]")
    with pytest.raises(DataFileError, match=r"array\.json: top level: expected an object"):
        load_map(arr)
    assert issubclass(DataFileError, FeudoError)


def test_packaged_names_resolve() -> None:
    assert load_map("default", seed=2) == load_map(None, seed=2) == load_map(MAPS_DIR / "default.json", seed=2)
    assert load_map("turn_example") == load_map(str(MAPS_DIR / "turn_example.json"))
