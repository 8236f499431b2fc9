"""Fief 2 rulesets and maps as strict data files (F2-F6): the one validation layer.

Every number of the rulings is a default of ``data/rulesets/standard.json`` or ``data/maps/default.json``
(F6: "someone who owns the box must be able to correct the map, the names or a limit in a data file"). Both
are read through :class:`engine.checker.Checker` (game-free JSON limits and typed fields), so every error names
the file and the field path: ``default.json: fiefs[2].villages[1]: unknown village "V99"``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.checker import Checker, read_json_file
from engine.errors import DataFileError

DATA_DIR = Path(__file__).resolve().parent / "data"
RULESET_FORMAT = "fief2-ruleset/1"
MAP_FORMAT = "fief2-map/1"

# F2: the kinds of blue cards, in the order the rulebook's section 7 lists them.
CARD_KINDS = ("lord", "lady", "darc", "bishop", "tithe", "tax", "escape", "plague", "assassin", "justice",
              "bad_weather", "good_weather", "famine", "good_harvest", "peasant_revolt")
RANKS = {"baron": 3, "count": 4, "duke": 5}  # F6: fief size by rank
MAX_VILLAGES = 64
MAX_PERSONS = 32
MAX_CARDS = 128
MAX_FAMILIES = 6


@dataclass(frozen=True)
class Card:
    index: int
    id: str
    kind: str
    person: int  # person index for lord/lady cards, else -1
    bishopric: int  # bishopric index for bishop cards (resolved against the map), else -1
    bishopric_id: str


@dataclass(frozen=True)
class Ruleset:
    name: str
    person_ids: tuple
    person_names: tuple
    person_initials: tuple
    person_male: tuple
    cards: tuple  # of Card
    red_cards: dict
    hand_size: int
    card_actions: int
    max_persons: int
    start_cash: int
    start_soldiers: int
    start_castles: int
    limits: dict
    prices: dict
    income: dict
    points: dict
    dice_thresholds: tuple
    pips_per_loss: dict
    darc_force: int
    aimed_kill_face: int
    allowance: int
    darc_allowance: int
    revolt_dice: int
    calm_success: int
    calm_step_price: int
    calm_max_steps: int
    plague_survive_from: int
    regency_turns: int
    negotiation_rounds: int
    min_votes: int
    bishops_to_anoint: int
    money_unit: int
    max_transfer: int
    scored_turns: int
    turn_limit: int

    def with_options(self, scored_turns: int | None = None, turn_limit: int | None = None) -> "Ruleset":
        """F50/F51 options: the scored game (10/15/20/25 turns, 0 = normal game) and the computer turn limit."""
        from dataclasses import replace
        d = {}
        if scored_turns is not None:
            if scored_turns not in (0, 10, 15, 20, 25):
                raise DataFileError(f"options.scored_turns: expected 0, 10, 15, 20 or 25, got {scored_turns!r}")
            d["scored_turns"] = scored_turns
        if turn_limit is not None:
            if not isinstance(turn_limit, int) or not 0 <= turn_limit <= 1000:
                raise DataFileError(f"options.turn_limit: expected an integer in [0, 1000], got {turn_limit!r}")
            d["turn_limit"] = turn_limit
        out = replace(self, **d)
        object.__setattr__(out, "_source", self._source)  # type: ignore[attr-defined]  # (replace drops it)
        return out

    def to_dict(self) -> dict:
        return dict(self._source)  # type: ignore[attr-defined]


@dataclass(frozen=True)
class Map:
    name: str
    village_ids: tuple
    village_names: tuple
    xy: tuple
    adj: tuple  # tuple of tuples of village indices, ascending
    roads: tuple  # (a, b) pairs, a < b
    fief_ids: tuple
    fief_names: tuple
    fief_rank: tuple  # "baron" / "count" / "duke"
    fief_villages: tuple
    fief_colour: tuple
    village_fief: tuple
    bishopric_ids: tuple
    bishopric_names: tuple
    bishopric_villages: tuple
    village_bishopric: tuple

    @property
    def num_villages(self) -> int:
        return len(self.village_ids)

    def to_dict(self) -> dict:
        return dict(self._source)  # type: ignore[attr-defined]


# ------------------------------------------------------------------------------------------------------------
# map (F6)
# ------------------------------------------------------------------------------------------------------------

def map_from_dict(d: Any, source: str = "<dict>") -> Map:
    c = Checker(source)
    c.obj(d, "", ("format", "name", "villages", "roads", "fiefs", "bishoprics"),
          ("format", "name", "villages", "roads", "fiefs", "bishoprics"))
    if d.get("format") != MAP_FORMAT:
        c.fail("format", f'expected "{MAP_FORMAT}", got {d.get("format")!r}')
    name = c.string(d["name"], "name", max_len=100)
    vs = c.array(d["villages"], "villages", nonempty=True, max_len=MAX_VILLAGES)
    ids, names, xy = [], [], []
    for i, v in enumerate(vs):
        p = f"villages[{i}]"
        c.obj(v, p, ("id", "name", "x", "y"), ("id", "name", "x", "y"))
        vid = c.string(v["id"], p + ".id", max_len=16)
        if vid in ids:
            c.fail(p + ".id", f"duplicate village id {vid!r}")
        ids.append(vid)
        names.append(c.string(v["name"], p + ".name", max_len=60))
        xy.append((c.integer(v["x"], p + ".x", 0, 100), c.integer(v["y"], p + ".y", 0, 100)))
    index = {v: i for i, v in enumerate(ids)}

    def vref(x: Any, path: str) -> int:
        s = c.string(x, path, max_len=16)
        if s not in index:
            c.fail(path, f"unknown village {s!r}")
        return index[s]

    adj: list[set] = [set() for _ in ids]
    roads = []
    for i, r in enumerate(c.array(d["roads"], "roads", nonempty=True, max_len=MAX_VILLAGES * 8)):
        c.array(r, f"roads[{i}]", length=2)
        a, b = vref(r[0], f"roads[{i}][0]"), vref(r[1], f"roads[{i}][1]")
        if a == b:
            c.fail(f"roads[{i}]", "a road must join two different villages")
        if b in adj[a]:
            c.fail(f"roads[{i}]", f"duplicate road {ids[a]}-{ids[b]}")
        adj[a].add(b)
        adj[b].add(a)
        roads.append((min(a, b), max(a, b)))
    if not _connected(set(range(len(ids))), adj):
        c.fail("roads", "the villages are not all connected")
    fs = c.array(d["fiefs"], "fiefs", length=6)
    village_fief = [-1] * len(ids)
    fids, fnames, franks, fvill, fcol = [], [], [], [], []
    for i, f in enumerate(fs):
        p = f"fiefs[{i}]"
        c.obj(f, p, ("id", "name", "rank", "villages", "colour"), ("id", "name", "rank", "villages"))
        fid = c.string(f["id"], p + ".id", max_len=16)
        if fid in fids:
            c.fail(p + ".id", f"duplicate fief id {fid!r}")
        rank = c.string(f["rank"], p + ".rank")
        if rank not in RANKS:
            c.fail(p + ".rank", f"expected baron, count or duke, got {rank!r}")
        vl = [vref(x, f"{p}.villages[{j}]") for j, x in enumerate(c.array(f["villages"], p + ".villages"))]
        if len(vl) != RANKS[rank]:
            c.fail(p + ".villages", f"a {rank}'s fief has {RANKS[rank]} villages, got {len(vl)}")
        for j, v in enumerate(vl):
            if village_fief[v] != -1:
                c.fail(f"{p}.villages[{j}]", f"village {ids[v]} is already in fief {fids[village_fief[v]]}")
            village_fief[v] = i
        if not _connected(set(vl), adj):
            c.fail(p + ".villages", "a fief must be connected by its own roads")
        fids.append(fid)
        fnames.append(c.string(f["name"], p + ".name", max_len=60))
        franks.append(rank)
        fvill.append(tuple(sorted(vl)))
        fcol.append(c.string(f.get("colour", "grey"), p + ".colour", max_len=30))
    for r in RANKS:
        if franks.count(r) != 2:
            c.fail("fiefs", f"expected two fiefs of rank {r} (F3: two titles of each), got {franks.count(r)}")
    for v, f in enumerate(village_fief):
        if f == -1:
            c.fail("fiefs", f"village {ids[v]} is in no fief")
    bs = c.array(d["bishoprics"], "bishoprics", length=4)
    village_b = [-1] * len(ids)
    bids, bnames, bvill = [], [], []
    for i, b in enumerate(bs):
        p = f"bishoprics[{i}]"
        c.obj(b, p, ("id", "name", "villages"), ("id", "name", "villages"))
        bid = c.string(b["id"], p + ".id", max_len=16)
        if bid in bids:
            c.fail(p + ".id", f"duplicate bishopric id {bid!r}")
        vl = [vref(x, f"{p}.villages[{j}]") for j, x in enumerate(c.array(b["villages"], p + ".villages", nonempty=True))]
        for j, v in enumerate(vl):
            if village_b[v] != -1:
                c.fail(f"{p}.villages[{j}]", f"village {ids[v]} is already in bishopric {bids[village_b[v]]}")
            village_b[v] = i
        bids.append(bid)
        bnames.append(c.string(b["name"], p + ".name", max_len=60))
        bvill.append(tuple(sorted(vl)))
    for v, b in enumerate(village_b):
        if b == -1:
            c.fail("bishoprics", f"village {ids[v]} is in no bishopric")
    m = Map(name, tuple(ids), tuple(names), tuple(xy), tuple(tuple(sorted(a)) for a in adj), tuple(sorted(roads)),
            tuple(fids), tuple(fnames), tuple(franks), tuple(fvill), tuple(fcol), tuple(village_fief),
            tuple(bids), tuple(bnames), tuple(bvill), tuple(village_b))
    object.__setattr__(m, "_source", d)
    return m


def _connected(nodes: set, adj: list) -> bool:
    if not nodes:
        return True
    start = next(iter(nodes))
    seen, todo = {start}, [start]
    while todo:
        x = todo.pop()
        for y in adj[x]:
            if y in nodes and y not in seen:
                seen.add(y)
                todo.append(y)
    return seen == nodes


def load_map(name_or_path: str = "default") -> Map:
    path = Path(name_or_path)
    if not path.suffix:
        path = DATA_DIR / "maps" / f"{name_or_path}.json"
    return map_from_dict(read_json_file(path), path.name)


# ------------------------------------------------------------------------------------------------------------
# ruleset (F2-F5, F28, F50, F51)
# ------------------------------------------------------------------------------------------------------------

_RS_FIELDS = ("format", "name", "persons", "blue_cards", "red_cards", "hand_size", "card_actions",
              "max_persons_per_family", "start", "limits", "prices", "income", "points", "combat", "movement",
              "revolt", "plague", "regency_turns", "negotiation_rounds", "election", "money_unit", "max_transfer",
              "options")


def _int_table(c: Checker, d: Any, path: str, keys: tuple, lo: int = 0, hi: int = 100_000) -> dict:
    c.obj(d, path, keys, keys)
    return {k: c.integer(d[k], f"{path}.{k}", lo, hi) for k in keys}


def ruleset_from_dict(d: Any, bishopric_ids: tuple = ("HAU", "LAN", "URV", "RIB"), source: str = "<dict>") -> Ruleset:
    c = Checker(source)
    c.obj(d, "", _RS_FIELDS, _RS_FIELDS)
    if d.get("format") != RULESET_FORMAT:
        c.fail("format", f'expected "{RULESET_FORMAT}", got {d.get("format")!r}')
    name = c.string(d["name"], "name", max_len=100)
    ps = c.array(d["persons"], "persons", nonempty=True, max_len=MAX_PERSONS)
    pids, pnames, pinit, pmale = [], [], [], []
    for i, p in enumerate(ps):
        path = f"persons[{i}]"
        c.obj(p, path, ("id", "initial", "name", "sex"), ("id", "initial", "name", "sex"))
        pid = c.string(p["id"], path + ".id", max_len=16)
        if pid in pids:
            c.fail(path + ".id", f"duplicate person id {pid!r}")
        pids.append(pid)
        pinit.append(c.string(p["initial"], path + ".initial", max_len=2))
        pnames.append(c.string(p["name"], path + ".name", max_len=40))
        sex = c.string(p["sex"], path + ".sex")
        if sex not in ("man", "woman"):
            c.fail(path + ".sex", f'expected "man" or "woman", got {sex!r}')
        pmale.append(sex == "man")
    cs = c.array(d["blue_cards"], "blue_cards", nonempty=True, max_len=MAX_CARDS)
    cards, cids, person_card = [], [], {}
    for i, x in enumerate(cs):
        path = f"blue_cards[{i}]"
        c.obj(x, path, ("id", "kind", "person", "bishopric"), ("id", "kind"))
        cid = c.string(x["id"], path + ".id", max_len=16)
        if cid in cids:
            c.fail(path + ".id", f"duplicate card id {cid!r}")
        cids.append(cid)
        kind = c.string(x["kind"], path + ".kind")
        if kind not in CARD_KINDS:
            c.fail(path + ".kind", f"unknown card kind {kind!r} (expected one of {', '.join(CARD_KINDS)})")
        person, bish, bid = -1, -1, ""
        if kind in ("lord", "lady"):
            if "person" not in x:
                c.fail(path + ".person", "missing required field (a Lord/Lady card names its person)")
            s = c.string(x["person"], path + ".person")
            if s not in pids:
                c.fail(path + ".person", f"unknown person {s!r}")
            person = pids.index(s)
            if pmale[person] != (kind == "lord"):
                c.fail(path + ".person", f"a {kind} card needs a {'man' if kind == 'lord' else 'woman'}")
            if person in person_card:
                c.fail(path + ".person", f"person {s} already has card {cids[person_card[person]]}")
            person_card[person] = i
        elif "person" in x:
            c.fail(path + ".person", f"only lord and lady cards name a person, not {kind}")
        if kind == "bishop":
            if "bishopric" not in x:
                c.fail(path + ".bishopric", "missing required field (a Bishop card names its bishopric)")
            bid = c.string(x["bishopric"], path + ".bishopric")
            if bid not in bishopric_ids:
                c.fail(path + ".bishopric", f"unknown bishopric {bid!r}")
            bish = bishopric_ids.index(bid)
        elif "bishopric" in x:
            c.fail(path + ".bishopric", f"only bishop cards name a bishopric, not {kind}")
        cards.append(Card(i, cid, kind, person, bish, bid))
    for p, pid in enumerate(pids):
        if p not in person_card:
            c.fail("blue_cards", f"person {pid} has no Lord/Lady card")
    kinds = [x.kind for x in cards]
    for k, lo in (("darc", 0), ("justice", 0), ("assassin", 0)):
        if kinds.count(k) > 1:
            c.fail("blue_cards", f"at most one {k} card")
    red = _int_table(c, d["red_cards"], "red_cards",
                     ("cardinal", "baron", "count", "duke", "king", "queen", "prince", "first_player"), 0, 10)
    for k in ("king", "queen", "prince", "first_player"):
        if red[k] != 1:
            c.fail(f"red_cards.{k}", f"expected exactly 1, got {red[k]}")
    for k in ("baron", "count", "duke"):
        if red[k] != 2:
            c.fail(f"red_cards.{k}", f"expected 2 (F3: one per fief of that rank), got {red[k]}")
    hand = c.integer(d["hand_size"], "hand_size", 1, 10)
    start = _int_table(c, d["start"], "start", ("cash", "soldiers", "castles"), 0, 100_000)
    limits = _int_table(c, d["limits"], "limits", ("soldiers_per_family", "kings_guard", "queens_guard", "peasants",
                                                   "castles", "cities", "mills", "wine_presses",
                                                   "improvements_per_village"), 0, 1000)
    prices = _int_table(c, d["prices"], "prices", ("soldier", "peasant", "wine_press", "mill", "castle", "cardinal",
                                                   "baron", "count", "duke"))
    income = _int_table(c, d["income"], "income", ("castle", "city", "wine_press", "mill", "tax_per_village",
                                                   "king_pension", "queen_pension"))
    points = _int_table(c, d["points"], "points", ("king", "duke", "count", "queen", "baron", "bishop", "prince",
                                                   "cardinal", "florins_per_point"), 0, 10_000)
    if points["florins_per_point"] < 1:
        c.fail("points.florins_per_point", "expected at least 1")
    cb = c.obj(d["combat"], "combat", ("dice_thresholds", "pips_per_loss", "darc_force", "aimed_kill_face"),
               ("dice_thresholds", "pips_per_loss", "darc_force", "aimed_kill_face"))
    th = [c.integer(x, f"combat.dice_thresholds[{i}]", 1, 1000)
          for i, x in enumerate(c.array(cb["dice_thresholds"], "combat.dice_thresholds", length=3))]
    if not th[0] < th[1] < th[2]:
        c.fail("combat.dice_thresholds", "expected increasing thresholds")
    pips = _int_table(c, cb["pips_per_loss"], "combat.pips_per_loss", ("open", "castle", "city"), 1, 18)
    mv = _int_table(c, d["movement"], "movement", ("allowance", "darc_allowance"), 1, 3)
    rv = _int_table(c, d["revolt"], "revolt", ("dice", "calm_success", "calm_step_price", "calm_max_steps"), 0, 10_000)
    pl = _int_table(c, d["plague"], "plague", ("survive_from",), 1, 7)
    el = _int_table(c, d["election"], "election", ("min_votes", "bishops_to_anoint"), 1, 20)
    unit = c.integer(d["money_unit"], "money_unit", 1, 10_000)
    for tname, table in (("start", {"cash": start["cash"]}), ("prices", prices), ("income", income)):
        for k, v in table.items():
            if v % unit:
                c.fail(f"{tname}.{k}", f"expected a multiple of money_unit {unit} (F5), got {v}")
    opts = c.obj(d["options"], "options", ("scored_turns", "turn_limit"), ("scored_turns", "turn_limit"))
    scored = c.integer(opts["scored_turns"], "options.scored_turns", 0, 25)
    if scored not in (0, 10, 15, 20, 25):
        c.fail("options.scored_turns", f"expected 0, 10, 15, 20 or 25 (F50), got {scored}")
    rs = Ruleset(name, tuple(pids), tuple(pnames), tuple(pinit), tuple(pmale), tuple(cards), red, hand,
                 c.integer(d["card_actions"], "card_actions", 0, 10),
                 c.integer(d["max_persons_per_family"], "max_persons_per_family", 1, 16),
                 start["cash"], start["soldiers"], start["castles"], limits, prices, income, points, tuple(th), pips,
                 c.integer(cb["darc_force"], "combat.darc_force", 0, 100),
                 c.integer(cb["aimed_kill_face"], "combat.aimed_kill_face", 1, 6),
                 mv["allowance"], mv["darc_allowance"], min(rv["dice"], 3) if rv["dice"] <= 3 else
                 c.fail("revolt.dice", "expected at most 3"), rv["calm_success"], rv["calm_step_price"],
                 rv["calm_max_steps"], pl["survive_from"], c.integer(d["regency_turns"], "regency_turns", 1, 20),
                 c.integer(d["negotiation_rounds"], "negotiation_rounds", 0, 10), el["min_votes"],
                 el["bishops_to_anoint"], unit, c.integer(d["max_transfer"], "max_transfer", 0, 1_000_000), scored,
                 c.integer(opts["turn_limit"], "options.turn_limit", 0, 1000))
    object.__setattr__(rs, "_source", d)
    return rs


def load_ruleset(name_or_path: str = "standard", game_map: Map | None = None) -> Ruleset:
    path = Path(name_or_path)
    if not path.suffix:
        path = DATA_DIR / "rulesets" / f"{name_or_path}.json"
    bids = game_map.bishopric_ids if game_map is not None else ("HAU", "LAN", "URV", "RIB")
    return ruleset_from_dict(read_json_file(path), bids, path.name)
