"""A heuristic evaluation of a position for one player, from public facts only (R22).

Used by the greedy bot (one-ply lookahead) and by the search's truncated playouts (VP plus a small positional
term, turned into win probabilities by a softmax). It reads the board, VP, City owners, the plague village and
the state counters, never anybody's selection, so it is the same for every world a sampler could produce.

Terms (all in VP-like units):

- VP;
- every living token on the map: a small bonus (it is useful there, and safe from the King's Cowards, R16);
- danger: a token the plague can hit next turn (near the plague village, not in a City/Convent) loses part of
  its value, more if already stricken (R18); a token that enemy tokens next to it could beat loses part of its
  value (R11), unless it sits in the Convent or a Castle;
- Cities not owned: city-taking tokens close to them earn a share of the City's VP (R15), more when the tokens
  next to the City already out-force its defence (R11: City defence 7). A token still in the Castle counts
  as one move further than the Castle's territory, so that Castle sites differ before anything has entered
  the map (R21).
"""

from __future__ import annotations

from engine.board import Kind
from engine.state import CASTLE, DEAD

_DANGER: dict = {}


def _danger_set(state) -> frozenset:
    """Territories a plague card could hit next: the plague village's lattice neighbourhood and its neighbours."""
    v = state.plague_village
    if v < 0:
        return frozenset()
    g = state.game
    entry = _DANGER.get(id(g.map))
    if entry is None or entry[0] is not g.map:
        entry = _DANGER[id(g.map)] = (g.map, {})  # the map is kept alive, so its id is not reused
    cache = entry[1]
    hit = cache.get(v)
    if hit is None:
        villages = {v}
        nxt = g.map.village_next
        for d in range(4):
            a = nxt[v][d]
            villages.add(a)
            villages.add(nxt[a][d])
        s = set()
        for x in villages:
            s.add(x)
            s.update(g.neighbors[x])
        hit = frozenset(s)
        cache[v] = hit
    return hit


def position_score(state, p: int, occ=None) -> float:
    """Heuristic value of the position for player p (higher is better); public facts only."""
    g = state.game
    rs = g.ruleset
    kind = g.kind
    score = float(state.vp[p])
    if occ is None:
        occ = [[] for _ in range(g.num_territories)]
        for q in range(g.num_players):
            for t, x in enumerate(state.loc[q]):
                if x >= 0:
                    occ[x].append((q, t))
    danger = _danger_set(state) if rs.has_plague and not state.tiebreak else frozenset()
    milady = g.milady
    central = g.map.central_hill
    loc = state.loc[p]
    for t, x in enumerate(loc):
        if x == DEAD:
            continue
        num = state.number(p, t)
        if x == CASTLE:
            if not state.entered[p][t] and not state.king:
                score -= 0.15 * state.red_number(p, t)  # R16: the King punishes tokens never entered
            continue
        score += 0.3 * num
        k = kind[x]
        if x in danger and k != Kind.CITY and k != Kind.CENTRAL_HILL:
            score -= (0.6 if state.stricken[p][t] else 0.25) * num
        if x == central or t == milady:
            continue
        # threat: enemy force adjacent against my defence here
        mine = sum(state.number(p, u) for (q, u) in occ[x] if q == p and u != milady)
        bonus = rs.defence_wood if k == Kind.WOOD else rs.defence_village if k == Kind.VILLAGE else (
            rs.defence_city if k == Kind.CITY else 0)
        enemy = {}
        for y in g.neighbors[x]:
            if y == central:
                continue
            for (q, u) in occ[y]:
                if q != p and u != milady:
                    enemy[q] = enemy.get(q, 0) + state.number(q, u)
        if enemy and max(enemy.values()) > mine + bonus:
            score -= 0.5 * num
    # Cities not mine: closeness of my city-takers, and attacks ready.
    castle = state.castle_territory(p)
    if castle >= 0:
        dist = g.map.distance
        for c in g.map.cities:
            if state.owner[c] == p:
                continue
            value = dist[castle][c]
            best = 99
            force = 0
            taker_adjacent = False
            for t, x in enumerate(loc):
                if x == CASTLE and g.takes_cities[t] and t != milady:
                    best = min(best, dist[castle][c] + 1)  # entering the map takes a move
                    continue
                if x < 0 or t == milady:
                    continue
                d = dist[x][c]
                if g.takes_cities[t] and d < best:
                    best = d
                if d == 1 and x != central:
                    force += state.number(p, t)
                    taker_adjacent = taker_adjacent or g.takes_cities[t]
            if best < 99:
                score += 0.08 * value * max(0, 5 - best)
            defence = rs.defence_city + sum(state.number(q, u) for (q, u) in occ[c] if q != p and u != milady)
            if taker_adjacent and force > defence:
                score += 0.5 * value
    return score
