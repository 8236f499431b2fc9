# cython: language_level=3
"""The Feudo core: the rules of :mod:`engine.state` in C, on a flat struct.

Layout (as in scikit-learn's tree code): ``_core.pxd`` declares the structs and the nogil API; this file
implements them, then wraps them in two extension types:

* :class:`CompiledGame` -- a reference :class:`engine.state.Game` (ruleset + map + players) compiled into
  a :c:type:`CoreGame` of arrays (neighbour lists, adjacency matrix, distances, plague lattice, ...).
* :class:`CoreState` -- a position, with the reference ``State``'s Python API. Every public method validates
  in Python, then calls the C functions; ``clone()`` is one memcpy of the struct.

The C functions follow the reference rules function by function (same names as the reference's methods),
so the two can be read side by side; movement is the same breadth-first search done on 128-bit territory
bitsets. Nothing here knows the default map or roster: everything comes from the compiled game.
"""

from libc.stdlib cimport malloc, free
from libc.string cimport memcpy, memset
from libc.stdint cimport int8_t, int16_t, int32_t, uint16_t, uint64_t

import itertools
import json
import numbers
import weakref

from .board import Kind
from .errors import IllegalActionError, StateError


# =====================================================================================================
# RNG: xoshiro256** seeded with splitmix64
# =====================================================================================================

cdef inline uint64_t _splitmix64(uint64_t* x) noexcept nogil:
    x[0] += <uint64_t>0x9E3779B97F4A7C15ULL
    cdef uint64_t z = x[0]
    z = (z ^ (z >> 30)) * <uint64_t>0xBF58476D1CE4E5B9ULL
    z = (z ^ (z >> 27)) * <uint64_t>0x94D049BB133111EBULL
    return z ^ (z >> 31)


cdef inline uint64_t _rotl(uint64_t x, int k) noexcept nogil:
    return (x << k) | (x >> (64 - k))


cdef void rng_seed(CoreRng* rng, uint64_t seed) noexcept nogil:
    cdef uint64_t x = seed
    cdef int i
    for i in range(4):
        rng.s[i] = _splitmix64(&x)


cdef uint64_t rng_next(CoreRng* rng) noexcept nogil:
    cdef uint64_t* s = rng.s
    cdef uint64_t result = _rotl(s[1] * 5, 7) * 9
    cdef uint64_t t = s[1] << 17
    s[2] ^= s[0]
    s[3] ^= s[1]
    s[1] ^= s[2]
    s[0] ^= s[3]
    s[2] ^= t
    s[3] = _rotl(s[3], 45)
    return result


cdef double rng_uniform(CoreRng* rng) noexcept nogil:
    """Uniform double in [0, 1) (53 random bits)."""
    return <double>(rng_next(rng) >> 11) * (1.0 / 9007199254740992.0)


cdef int rng_below(CoreRng* rng, int n) noexcept nogil:
    """Uniform int in [0, n), n >= 1 (multiply-shift; the bias is below 2^-32 for n < 2^32)."""
    return <int>(((rng_next(rng) >> 32) * <uint64_t>n) >> 32)


# =====================================================================================================
# Small derived facts (reference: State.living_soldiers, desperate, number, red_number, ...)
# =====================================================================================================

cdef inline bint _bit(const uint64_t* mask, int x) noexcept nogil:
    return (mask[x >> 6] >> (x & 63)) & 1


cdef inline bint _desperate(const CoreStateC* s, const CoreGame* g, int p) noexcept nogil:
    """R17: fewer than ``desperate_below`` living non-Milady tokens."""
    cdef int t, n = 0
    for t in range(g.num_tokens):
        if s.loc[p][t] != LOC_DEAD and t != g.milady:
            n += 1
    return n < g.desperate_below


cdef inline int _number(const CoreStateC* s, const CoreGame* g, int p, int t) noexcept nogil:
    if t == g.baron and _desperate(s, g, p):
        return g.desperate_black if s.stricken[p][t] else g.desperate_red
    return g.token_black[t] if s.stricken[p][t] else g.token_red[t]


cdef inline int _red_number(const CoreStateC* s, const CoreGame* g, int p, int t) noexcept nogil:
    if t == g.baron and _desperate(s, g, p):
        return g.desperate_red
    return g.token_red[t]


cdef inline int _castle_territory(const CoreStateC* s, const CoreGame* g, int p) noexcept nogil:
    cdef int site = s.castle[p]
    return g.site_territory[site] if site >= 0 else -1


cdef int _fewest_vp_players(const CoreStateC* s, const CoreGame* g, bint all_players, int* out) noexcept nogil:
    cdef int p, n = 0, low = 0
    cdef bint first = True
    for p in range(g.num_players):
        if all_players or s.active[p]:
            if first or s.vp[p] < low:
                low = s.vp[p]
                first = False
    for p in range(g.num_players):
        if (all_players or s.active[p]) and s.vp[p] == low:
            out[n] = p
            n += 1
    return n


cdef int _shillings_of(const CoreStateC* s, const CoreGame* g, int p, int card) noexcept nogil:
    """R9, R16: printed value, plus the King's Help for the players with fewest VP."""
    if card < 0:
        card += g.num_trading  # the reference indexes a Python list
    cdef int value = g.trading_value[card]
    cdef int fewest[MAX_PLAYERS]
    cdef int n, i
    if value > 0 and s.king:
        n = _fewest_vp_players(s, g, True, fewest)
        for i in range(n):
            if fewest[i] == p:
                value += g.king_help
                break
    return value


cdef void _set_loc(CoreStateC* s, const CoreGame* g, int p, int t, int x) noexcept nogil:
    """Every change of a token's location goes through here: keeps the occupancy bitsets (pocc, pblk)."""
    cdef int old = s.loc[p][t]
    cdef int u, y
    cdef bint any_left = False, blocker_left = False
    s.loc[p][t] = <int8_t>x
    if old >= 0 and old != x:
        for u in range(g.num_tokens):
            if u != t and s.loc[p][u] == old:
                any_left = True
                if u != g.milady:
                    blocker_left = True
        if not any_left:
            s.pocc[p][old >> 6] &= ~((<uint64_t>1) << (old & 63))
        if not blocker_left:
            s.pblk[p][old >> 6] &= ~((<uint64_t>1) << (old & 63))
    if x >= 0:
        s.pocc[p][x >> 6] |= (<uint64_t>1) << (x & 63)
        if t != g.milady:
            s.pblk[p][x >> 6] |= (<uint64_t>1) << (x & 63)


cdef void _rebuild_occupancy(CoreStateC* s, const CoreGame* g) noexcept nogil:
    cdef int p, t, x
    memset(s.pocc, 0, sizeof(s.pocc))
    memset(s.pblk, 0, sizeof(s.pblk))
    for p in range(g.num_players):
        for t in range(g.num_tokens):
            x = s.loc[p][t]
            if x >= 0:
                s.pocc[p][x >> 6] |= (<uint64_t>1) << (x & 63)
                if t != g.milady:
                    s.pblk[p][x >> 6] |= (<uint64_t>1) << (x & 63)


cdef inline bint _can_move(const CoreStateC* s, int p, int t) noexcept nogil:
    return s.loc[p][t] != LOC_DEAD and not s.charmed[p] and s.rest_until[p][t] < s.turn


# =====================================================================================================
# Occupancy and movement (reference: _occupants, destinations, _can_pass, _can_enter, _can_end)
# =====================================================================================================

cdef extern from *:
    int __builtin_ctzll(unsigned long long x) nogil


ctypedef struct Ctx:
    int p                                  # the moving player
    int own_castle                         # territory of p's Castle, -1
    uint64_t occupied[2]                   # territories holding any token
    uint64_t enemy[2]                      # territories holding another player's token
    uint64_t enter_always[2]               # p's tokens may enter (R8)
    uint64_t enter_towns[2]                # only tokens entering Villages/own Cities may enter


cdef inline void _set(uint64_t* m, int x) noexcept nogil:
    m[x >> 6] |= (<uint64_t>1) << (x & 63)


cdef inline bint _has(const uint64_t* m, int x) noexcept nogil:
    return (m[x >> 6] >> (x & 63)) & 1


cdef void _build_ctx(const CoreStateC* s, const CoreGame* g, int p, Ctx* c) noexcept nogil:
    """What player p's moves depend on: the reference's _occupants, castles dict and _can_enter, as bitsets.

    Entry of territory x (R8): never a Mountain, the Plague Village, an enemy Castle, a territory with enemy
    tokens other than Miladies, an occupied Wood, a free or enemy City; Villages and own Cities only for
    tokens that enter towns; the Convent only for plague-stricken tokens (``g.convent_mask``)."""
    cdef uint64_t blocked[2]
    cdef uint64_t castles[2]
    cdef int q, x, i, h, site
    c.p = p
    c.own_castle = _castle_territory(s, g, p)
    for h in range(2):
        c.occupied[h] = 0
        c.enemy[h] = 0
        blocked[h] = g.never_mask[h]
        castles[h] = 0
    for q in range(g.num_players):
        for h in range(2):
            c.occupied[h] |= s.pocc[q][h]
        if q != p:
            for h in range(2):
                c.enemy[h] |= s.pocc[q][h]
                blocked[h] |= s.pblk[q][h]  # enemy tokens other than Miladies
            site = s.castle[q]
            if site >= 0:
                _set(castles, g.site_territory[site])
    if c.own_castle >= 0:
        # R24: a joined corner holding p's Castle too is p's own Castle territory, not an enemy Castle.
        castles[c.own_castle >> 6] &= ~((<uint64_t>1) << (c.own_castle & 63))
    for h in range(2):
        blocked[h] |= castles[h]
    if s.plague_village >= 0:
        _set(blocked, s.plague_village)
    for h in range(2):
        blocked[h] |= g.wood_mask[h] & c.occupied[h]
        c.enter_always[h] = g.plain_mask[h] & ~blocked[h]
        c.enter_towns[h] = g.village_mask[h] & ~blocked[h]
    for i in range(g.num_cities):
        x = g.cities[i]
        if s.owner[x] == p and not _has(blocked, x):
            _set(c.enter_towns, x)


cdef inline bint _can_enter(const CoreGame* g, const Ctx* c, int x, bint towns, bint stricken) noexcept nogil:
    return _has(c.enter_always, x) or (towns and _has(c.enter_towns, x)) or (stricken and _has(g.convent_mask, x))


cdef bint _can_end(const CoreStateC* s, const CoreGame* g, const Ctx* c, int t, int x) noexcept nogil:
    """R8 stacking (see the reference's _can_end): at most 2 own tokens, and only when one is the Baron or
    Milady; the First Knight always alone; a Wood holds 1 token; an enemy Milady may be shared only when she is
    the only token there (R23)."""
    cdef int kind = g.kind[x]
    cdef int p = c.p
    cdef unsigned int own = 0
    cdef bint enemy
    cdef int u, q, others
    if kind == K_CENTRAL or not _has(c.occupied, x):
        return True
    if _has(s.pocc[p], x):
        for u in range(g.num_tokens):
            if s.loc[p][u] == x and u != t:
                own |= <unsigned int>1 << u
    enemy = _has(c.enemy, x)
    if own == 0 and not enemy:
        return True
    if kind == K_WOOD or g.token_kind[t] == TK_FIRST_KNIGHT:
        return False
    if enemy:
        # R23: only enemy Miladies get this far (_can_enter); stopping is allowed only beside exactly one
        # of them and no other token.
        if own:
            return False
        others = 0
        for q in range(g.num_players):
            if q != p and _has(s.pocc[q], x):
                for u in range(g.num_tokens):
                    if s.loc[q][u] == x:
                        others += 1
        return others == 1
    if own:
        if own & (own - 1):
            return False  # two or more own tokens already
        u = __builtin_ctzll(own)
        if g.token_kind[u] == TK_FIRST_KNIGHT:
            return False
        return t == g.baron or t == g.milady or u == g.baron or u == g.milady
    return True


cdef int _destinations(const CoreStateC* s, const CoreGame* g, const Ctx* c, int t, int steps,
                       uint64_t* reached, int goal) noexcept nogil:
    """Layered BFS of the reference's destinations() on bitsets: ``reached`` = territories a path of at most
    ``steps`` legal steps reaches (start excluded; callers drop p's Castle and apply _can_end). Entering a
    Wood or the Convent ends a path (only the start may be left from one). With goal >= 0 returns the path
    length to it (the march cost), else 0; -1 when the token cannot move at all."""
    cdef int p = c.p
    cdef int start = s.loc[p][t]
    cdef uint64_t enterable[2]
    cdef uint64_t frontier[2]
    cdef uint64_t seen[2]
    cdef uint64_t expand[2]
    cdef uint64_t fresh[2]
    cdef uint64_t w
    cdef int d, h, x
    cdef bint towns, stricken
    reached[0] = reached[1] = 0
    if start == LOC_CASTLE:
        start = c.own_castle
    if start < 0 or steps <= 0:
        return -1
    towns = g.enters_towns[t]
    stricken = s.stricken[p][t]
    for h in range(2):
        enterable[h] = c.enter_always[h]
        if towns:
            enterable[h] |= c.enter_towns[h]
        if stricken:
            enterable[h] |= g.convent_mask[h]
        frontier[h] = seen[h] = 0
    _set(frontier, start)
    _set(seen, start)
    for d in range(1, steps + 1):
        expand[0] = expand[1] = 0
        for h in range(2):
            w = frontier[h]
            if d > 1:
                w &= g.pass_mask[h]
            while w:
                x = (h << 6) + __builtin_ctzll(w)
                w &= w - 1
                expand[0] |= g.nbr_mask[x][0]
                expand[1] |= g.nbr_mask[x][1]
        fresh[0] = expand[0] & ~seen[0] & enterable[0]
        fresh[1] = expand[1] & ~seen[1] & enterable[1]
        if not (fresh[0] | fresh[1]):
            break
        for h in range(2):
            seen[h] |= fresh[h]
            reached[h] |= fresh[h]
            frontier[h] = fresh[h]
        if goal >= 0 and _has(fresh, goal):
            return d
    return 0


cdef int _destination_list(const CoreStateC* s, const CoreGame* g, const Ctx* c, int t, int steps,
                           int base, int* out, bint first_only) noexcept nogil:
    """Ascending legal end territories of a move of up to ``steps`` (base + x written to out)."""
    cdef uint64_t reached[2]
    cdef uint64_t w
    cdef int x, h, n = 0
    if _destinations(s, g, c, t, steps, reached, -1) < 0:
        return 0
    if c.own_castle >= 0:
        reached[c.own_castle >> 6] &= ~((<uint64_t>1) << (c.own_castle & 63))
    for h in range(2):
        w = reached[h]
        while w:
            x = (h << 6) + __builtin_ctzll(w)
            w &= w - 1
            if _can_end(s, g, c, t, x):
                if out != NULL:
                    out[n] = base + x
                n += 1
                if first_only:
                    return n
    return n


cdef int _army_move_steps(const CoreStateC* s, const CoreGame* g, int p, int t) noexcept nogil:
    cdef int steps = _number(s, g, p, t)
    if s.plague_card >= 0 and g.plague_effect[s.plague_card] == PE_FOG:
        if steps > 1:
            steps = 1
    return steps


cdef int _move_targets(const CoreStateC* s, const CoreGame* g, int p, int t, int base, int* out,
                       bint first_only) noexcept nogil:
    cdef Ctx c
    if not _can_move(s, p, t):
        return 0
    if g.token_kind[t] == TK_MERCENARY:
        if _shillings_of(s, g, p, s.sel_trade[p]) < s.merc_moved[p] + 1:
            return 0
    _build_ctx(s, g, p, &c)
    return _destination_list(s, g, &c, t, _army_move_steps(s, g, p, t), base, out, first_only)


# =====================================================================================================
# Legal action helpers, per phase
# =====================================================================================================

cdef int _infection_victims(const CoreStateC* s, const CoreGame* g, int p, int* vq, int* vu) noexcept nogil:
    cdef int x = s.loc[p][g.milady]
    cdef int q, u, y, k, n = 0
    for q in range(g.num_players):
        if q == p:
            continue
        for u in range(g.num_tokens):
            y = s.loc[q][u]
            if y >= 0 and g.adjacent[x][y] and u != g.baron and u != g.milady and not s.stricken[q][u]:
                k = g.kind[y]
                if k != K_CITY and k != K_CENTRAL:
                    if vq != NULL:
                        vq[n] = q
                        vu[n] = u
                    n += 1
    return n


cdef int _milady_options(const CoreStateC* s, const CoreGame* g, int p, int* out) noexcept nogil:
    cdef int x = s.loc[p][g.milady]
    cdef int q, bx, n = 0
    if x < 0:
        return 0
    if not s.stricken[p][g.milady]:
        for q in range(g.num_players):
            bx = s.loc[q][g.baron]
            if q != p and s.active[q] and not s.charmed[q] and bx >= 0 and g.adjacent[x][bx]:
                if out != NULL:
                    out[n] = g.a_charm + q
                n += 1
        return n
    if _infection_victims(s, g, p, NULL, NULL) > 0:
        if out != NULL:
            out[0] = g.a_infect
        return 1
    return 0


cdef int _march_options(const CoreStateC* s, const CoreGame* g, int p, int* out, bint first_only) noexcept nogil:
    cdef Ctx c
    cdef int t, n = 0, m
    cdef bint built = False
    for t in range(g.num_tokens):
        if s.loc[p][t] >= 0 and not s.march_over[p][t] and _can_move(s, p, t):
            if not built:
                _build_ctx(s, g, p, &c)
                built = True
            m = _destination_list(s, g, &c, t, s.shillings, g.a_march + t * g.num_territories,
                                  (out + n) if out != NULL else NULL, first_only)
            n += m
            if first_only and n:
                return n
    return n


cdef inline bint _can_attack_with(const CoreStateC* s, const CoreGame* g, int p, int t) noexcept nogil:
    cdef int x = s.loc[p][t]
    return x >= 0 and x != g.central_hill and t != g.milady and not s.attacked[p][t]


cdef bint _has_city_takers(const CoreStateC* s, const CoreGame* g, int p) noexcept nogil:
    cdef int t
    for t in range(g.num_tokens):
        if g.takes_cities[t] and s.loc[p][t] != LOC_DEAD:
            return True
    return False


cdef bint _city_attack_allowed(const CoreStateC* s, const CoreGame* g, int p, unsigned int tokens) noexcept nogil:
    """R11: a Mercenary or Infantryman, or the Baron when none of either is left."""
    cdef int t
    for t in range(g.num_tokens):
        if (tokens >> t) & 1 and g.takes_cities[t]:
            return True
    return ((tokens >> g.baron) & 1) and not _has_city_takers(s, g, p)


cdef int _attack_targets(const CoreStateC* s, const CoreGame* g, int p, int* out, bint first_only) noexcept nogil:
    """R11: territories p may attack, ascending (ATTACK + x)."""
    cdef uint16_t near[MAX_TERRITORIES]
    cdef uint64_t near_set[2]
    cdef uint64_t defended[2]          # enemy tokens other than Miladies (the reference's _defenders)
    cdef uint64_t own_set[2]           # p's tokens
    cdef uint64_t w
    cdef int t, j, x, y, k, q, h, n = 0
    cdef bint city_takers = False
    near_set[0] = near_set[1] = 0
    for t in range(g.num_tokens):
        if _can_attack_with(s, g, p, t):
            y = s.loc[p][t]
            for j in range(g.num_neighbors[y]):
                x = g.neighbors[y][j]
                if not ((near_set[x >> 6] >> (x & 63)) & 1):
                    near_set[x >> 6] |= (<uint64_t>1) << (x & 63)
                    near[x] = 0
                near[x] |= <uint16_t>(1 << t)
    if not (near_set[0] | near_set[1]):
        return 0
    defended[0] = defended[1] = 0
    own_set[0] = s.pocc[p][0]
    own_set[1] = s.pocc[p][1]
    for q in range(g.num_players):
        if q != p:
            defended[0] |= s.pblk[q][0]
            defended[1] |= s.pblk[q][1]
    for t in range(g.num_tokens):
        if g.takes_cities[t] and s.loc[p][t] != LOC_DEAD:
            city_takers = True
            break
    for h in range(2):
        w = near_set[h]
        while w:
            x = (h << 6) + __builtin_ctzll(w)
            w &= w - 1
            k = g.kind[x]
            if k == K_CENTRAL:
                continue
            if k == K_CITY:
                if s.owner[x] == p or (own_set[h] >> (x & 63)) & 1:
                    continue
                # R11: a Mercenary or Infantryman, or the Baron when none of either is left
                if not (near[x] & g.city_taker_mask) and not (((near[x] >> g.baron) & 1) and not city_takers):
                    continue
            elif not ((defended[h] >> (x & 63)) & 1):
                continue
            if out != NULL:
                out[n] = g.a_attack + x
            n += 1
            if first_only:
                return n
    return n


cdef inline unsigned int _joiner_mask(const CoreStateC* s) noexcept nogil:
    cdef unsigned int m = 0
    cdef int i
    for i in range(s.joiners_len):
        m |= <unsigned int>1 << s.joiners[i]
    return m


cdef int _companion(const CoreStateC* s, const CoreGame* g, int p) noexcept nogil:
    cdef int bx = s.loc[p][g.baron]
    cdef int t
    if bx < 0:
        return -1
    for t in range(g.num_tokens):
        if s.loc[p][t] == bx and t != g.baron and t != g.milady:
            return t
    return -1


cdef int _advance_options(const CoreStateC* s, const CoreGame* g, int* out, bint first_only) noexcept nogil:
    """R14: tokens of the current won attack that may advance into it, ascending (ADVANCE + t)."""
    cdef int r = s.round
    cdef int p = s.won_player[r]
    cdef int x = s.won_terr[r]
    cdef bint baron_in = s.won_baron[r]
    cdef unsigned int cand = 0, adv = 0, ok = 0
    cdef int i, t, y, n = 0
    cdef Ctx c
    for i in range(s.won_ntok[r]):
        cand |= <unsigned int>1 << s.won_tokens[r][i]
    if s.advanced_len:
        if not baron_in or s.advanced_len >= 2:
            return 0
        for i in range(s.advanced_len):
            adv |= <unsigned int>1 << s.advanced[i]
        cand &= ~adv
        if not ((adv >> g.baron) & 1):
            cand &= <unsigned int>1 << g.baron
    if not cand:
        return 0
    _build_ctx(s, g, p, &c)
    for t in range(g.num_tokens):
        if not ((cand >> t) & 1):
            continue
        y = s.loc[p][t]
        if y < 0 or not g.adjacent[y][x]:
            continue
        if (_can_enter(g, &c, x, g.enters_towns[t], s.stricken[p][t]) and g.kind[x] != K_CENTRAL
                and _can_end(s, g, &c, t, x)):
            if out != NULL:
                out[n] = g.a_advance + t
            n += 1
            if first_only:
                return n
    return n


cdef int _army_to_select(const CoreStateC* s, const CoreGame* g, int p) noexcept nogil:
    cdef int t, held = 0
    for t in range(g.num_tokens):
        if s.army_held[p][t]:
            held += 1
    return held if held < g.army_cards_selected else g.army_cards_selected


cdef int _legal_select(const CoreStateC* s, const CoreGame* g, int p, int* out) noexcept nogil:
    cdef int need = _army_to_select(s, g, p)
    cdef int t, c, i, npicked = 0, last = -1, nheld = 0, room, n = 0
    cdef int held[MAX_TOKENS]
    cdef int seen[MAX_TRADING]
    cdef int nseen = 0
    cdef bint dup
    for t in range(g.num_tokens):
        if s.sel_army[p][t]:
            npicked += 1
            last = t
    if npicked < need:
        for t in range(last + 1, g.num_tokens):
            if s.army_held[p][t]:
                held[nheld] = t
                nheld += 1
        room = need - npicked
        for i in range(nheld):
            if nheld - i >= room:
                out[n] = g.a_select + held[i]
                n += 1
        return n
    for c in range(g.num_trading):
        if s.trade_held[p][c]:
            dup = False
            for i in range(nseen):
                if seen[i] == g.trading_value[c]:
                    dup = True
                    break
            if not dup:
                seen[nseen] = g.trading_value[c]
                nseen += 1
                out[n] = g.a_trade + c
                n += 1
    return n


# =====================================================================================================
# Public C API: current player, chance, legal actions
# =====================================================================================================

cdef void core_clone(CoreStateC* dst, const CoreStateC* src) noexcept nogil:
    memcpy(dst, src, sizeof(CoreStateC))


cdef bint core_is_terminal(const CoreStateC* s) noexcept nogil:
    return s.phase == PH_TERMINAL


cdef bint core_is_chance(const CoreStateC* s) noexcept nogil:
    return s.phase == PH_CHANCE_PLACER or s.phase == PH_CHANCE_DECIDER or s.phase == PH_CHANCE_PLAGUE


cdef bint core_desperate(const CoreStateC* s, const CoreGame* g, int p) noexcept nogil:
    return _desperate(s, g, p)


cdef int core_shillings_of(const CoreStateC* s, const CoreGame* g, int p, int card) noexcept nogil:
    return _shillings_of(s, g, p, card)


cdef int core_current_player(const CoreStateC* s, const CoreGame* g) noexcept nogil:
    cdef int ph = s.phase
    if ph == PH_TERMINAL:
        return PLAYER_TERMINAL
    if ph == PH_CHANCE_PLACER or ph == PH_CHANCE_DECIDER or ph == PH_CHANCE_PLAGUE:
        return PLAYER_CHANCE
    if ph == PH_PLACE_CASTLE or ph == PH_SELECT:
        return s.cursor
    if ph == PH_CHOOSE_ORDER:
        return s.decider
    if ph == PH_ADVANCE:
        return s.won_player[s.round]
    return s.order[s.cursor]


cdef int core_chance(const CoreStateC* s, const CoreGame* g, int* actions, double* probs) noexcept nogil:
    """(action, probability) pairs at a chance node, ascending; returns the count (0 elsewhere)."""
    cdef int p, i, n = 0, total = 0, left
    cdef int tied[MAX_PLAYERS]
    cdef bint done
    if s.phase == PH_CHANCE_PLACER:
        for p in range(g.num_players):
            done = False
            for i in range(s.placed_len):
                if s.placed[i] == p:
                    done = True
            if not done:
                actions[n] = g.a_chance_player + p
                n += 1
        for i in range(n):
            probs[i] = 1.0 / n
        return n
    if s.phase == PH_CHANCE_DECIDER:
        n = _fewest_vp_players(s, g, False, tied)
        for i in range(n):
            actions[i] = g.a_chance_player + tied[i]
            probs[i] = 1.0 / n
        return n
    if s.phase == PH_CHANCE_PLAGUE:
        for i in range(g.num_plague_kinds):
            total += g.plague_count[i] - s.plague_drawn[i]
        for i in range(g.num_plague_kinds):
            left = g.plague_count[i] - s.plague_drawn[i]
            if left > 0:
                actions[n] = g.a_plague + i
                probs[n] = <double>left / <double>total
                n += 1
        return n
    return 0


cdef int core_legal(const CoreStateC* s, const CoreGame* g, int* out) noexcept nogil:
    """Legal actions (ascending) into out[MAX_ACTIONS]; chance outcomes at a chance node; returns the count."""
    cdef int ph = s.phase
    cdef int p, n, i, t, site, q
    cdef double probs[MAX_PLAYERS + MAX_PLAGUE_KINDS]
    cdef bint ok
    cdef unsigned int jm
    if ph == PH_TERMINAL:
        return 0
    if ph == PH_CHANCE_PLACER or ph == PH_CHANCE_DECIDER or ph == PH_CHANCE_PLAGUE:
        return core_chance(s, g, out, probs)
    p = core_current_player(s, g)
    n = 0
    if ph == PH_PLACE_CASTLE:
        for site in range(g.num_sites):
            ok = True
            for q in range(g.num_players):
                i = s.castle[q]
                # R21 one Castle per mapboard; R24 the halves of a joined corner are separate sites.
                if i >= 0 and g.site_board[i] == g.site_board[site]:
                    ok = False
                    break
            if ok:
                out[n] = g.a_place + site
                n += 1
        return n
    if ph == PH_CHOOSE_ORDER:
        q = 0
        for i in range(g.num_players):
            if s.active[i]:
                q += 1
        for i in range(g.factorial[q]):
            out[i] = g.a_order + i
        return g.factorial[q]
    if ph == PH_SELECT:
        return _legal_select(s, g, p, out)
    if ph == PH_REVEAL:
        for t in range(g.num_tokens):
            if s.sel_army[p][t] and not s.revealed[p][t]:
                out[n] = g.a_reveal + t
                n += 1
        return n
    if ph == PH_MOVE:
        out[0] = 0
        return 1 + _move_targets(s, g, p, s.token, g.a_move, out + 1, False)
    if ph == PH_MILADY:
        out[0] = 0
        return 1 + _milady_options(s, g, p, out + 1)
    if ph == PH_MARCH:
        out[0] = 0
        return 1 + _march_options(s, g, p, out + 1, False)
    if ph == PH_ATTACK:
        out[0] = 0
        return 1 + _attack_targets(s, g, p, out + 1, False)
    if ph == PH_ATTACK_JOIN:
        if s.joiners_len > 0:
            ok = True
            if g.kind[s.target] == K_CITY:
                ok = _city_attack_allowed(s, g, p, _joiner_mask(s))
            if ok:
                out[n] = 0
                n += 1
        jm = _joiner_mask(s)
        for t in range(g.num_tokens):
            if not ((jm >> t) & 1) and _can_attack_with(s, g, p, t) and g.adjacent[s.loc[p][t]][s.target]:
                out[n] = g.a_join + t
                n += 1
        return n
    if ph == PH_ADVANCE:
        out[0] = 0
        return 1 + _advance_options(s, g, out + 1, False)
    return 0


# =====================================================================================================
# Applying actions (reference: _apply and the turn structure)
# =====================================================================================================

cdef void _gain(CoreStateC* s, const CoreGame* g, int p, int delta) noexcept nogil:
    """Every VP change: then the King is checked (R16)."""
    cdef int top, q, t, cowards
    s.vp[p] += delta
    if s.king:
        return
    top = s.vp[0]
    for q in range(1, g.num_players):
        if s.vp[q] > top:
            top = s.vp[q]
    if top >= g.king_threshold:
        s.king = 1
        for q in range(g.num_players):
            cowards = 0
            for t in range(g.num_tokens):
                if not s.entered[q][t] and s.loc[q][t] != LOC_DEAD:
                    cowards += _red_number(s, g, q, t)
            if cowards:
                s.vp[q] -= cowards


cdef void _defeat(CoreStateC* s, const CoreGame* g, int p, int t, int winner) noexcept nogil:
    cdef int value = _number(s, g, p, t)
    if t == g.baron:
        _set_loc(s, g, p, t, LOC_CASTLE)
        s.rest_until[p][t] = <int16_t>(s.turn + 1)
    else:
        _set_loc(s, g, p, t, LOC_DEAD)
    if winner >= 0:
        _gain(s, g, winner, value)


cdef inline void _place(CoreStateC* s, const CoreGame* g, int p, int t, int x) noexcept nogil:
    _set_loc(s, g, p, t, x)
    s.entered[p][t] = 1


cdef void _start_turn(CoreStateC* s, const CoreGame* g) noexcept nogil:
    cdef int p, t, x, c, n
    cdef bint refresh
    cdef int tied[MAX_PLAYERS]
    s.turn += 1
    for p in range(g.num_players):
        for t in range(g.num_tokens):
            x = s.loc[p][t]
            if x >= 0 and x == g.central:
                s.stricken[p][t] = 0
        s.stricken[p][g.baron] = 0
    if s.tiebreak == 0:
        refresh = s.turn > 1 and (s.turn - 1) % g.num_trading == 0
    else:
        refresh = (s.tiebreak - 1) % g.num_trading == 0
    if refresh:
        for p in range(g.num_players):
            for c in range(g.num_trading):
                s.trade_held[p][c] = 1
    if s.tiebreak == 0 and s.turn > 1 and (s.turn - 1) % g.plague_reshuffle_every == 0:
        memset(s.plague_drawn, 0, sizeof(s.plague_drawn))
    s.plague_card = -1
    if s.turn == 1 and s.tiebreak == 0:
        s.decider = s.placed[s.placed_len - 1]
        s.phase = PH_CHOOSE_ORDER
        return
    n = _fewest_vp_players(s, g, False, tied)
    if n == 1:
        s.decider = tied[0]
        s.phase = PH_CHOOSE_ORDER
    else:
        s.decider = -1
        s.phase = PH_CHANCE_DECIDER


cdef void _start_movement(CoreStateC* s, const CoreGame* g) noexcept nogil:
    s.round = 0
    s.cursor = -1
    _next_reveal(s, g)


cdef void _next_selector(CoreStateC* s, const CoreGame* g) noexcept nogil:
    cdef int p
    for p in range(s.cursor + 1, g.num_players):
        if s.active[p]:
            s.cursor = p
            return
    if g.has_plague and s.tiebreak == 0:
        s.phase = PH_CHANCE_PLAGUE
    else:
        _start_movement(s, g)


cdef void _next_reveal(CoreStateC* s, const CoreGame* g) noexcept nogil:
    cdef int rounds = g.army_cards_selected
    cdef int p, t
    s.token = -1
    while s.round < rounds:
        s.cursor += 1
        if s.cursor >= s.order_len:
            s.cursor = -1
            s.round += 1
            continue
        p = s.order[s.cursor]
        for t in range(g.num_tokens):
            if s.sel_army[p][t] and not s.revealed[p][t]:
                s.phase = PH_REVEAL
                return
    s.round = rounds
    s.cursor = -1
    _next_trader(s, g)


cdef void _after_move(CoreStateC* s, const CoreGame* g, int p, int t) noexcept nogil:
    if t == g.milady and _milady_options(s, g, p, NULL) > 0:
        s.phase = PH_MILADY
    else:
        _next_reveal(s, g)


cdef void _next_trader(CoreStateC* s, const CoreGame* g) noexcept nogil:
    cdef int p, v
    while True:
        s.cursor += 1
        if s.cursor >= s.order_len:
            _start_attacks(s, g)
            return
        p = s.order[s.cursor]
        s.trade_revealed[p] = 1
        if s.charmed[p]:
            continue
        v = _shillings_of(s, g, p, s.sel_trade[p]) - s.merc_moved[p]
        s.shillings = v if v > 0 else 0
        if s.shillings > 0 and _march_options(s, g, p, NULL, True) > 0:
            s.phase = PH_MARCH
            return
        s.shillings = 0


cdef void _start_attacks(CoreStateC* s, const CoreGame* g) noexcept nogil:
    s.phase = PH_ATTACK
    s.cursor = 0
    _next_attacker(s, g)


cdef void _next_attacker(CoreStateC* s, const CoreGame* g) noexcept nogil:
    while s.cursor < s.order_len:
        if _attack_targets(s, g, s.order[s.cursor], NULL, True) > 0:
            s.phase = PH_ATTACK
            return
        s.cursor += 1
    s.phase = PH_ADVANCE
    s.round = -1
    _next_advance(s, g, True)


cdef void _next_advance(CoreStateC* s, const CoreGame* g, bint done) noexcept nogil:
    if not done and _advance_options(s, g, NULL, True) > 0:
        return
    while True:
        s.round += 1
        s.advanced_len = 0
        if s.round >= s.won_len:
            _end_turn(s, g)
            return
        if _advance_options(s, g, NULL, True) > 0:
            s.phase = PH_ADVANCE
            return


cdef void _end_turn(CoreStateC* s, const CoreGame* g) noexcept nogil:
    cdef int p, t, n = g.num_players, top, nl
    cdef int leaders[MAX_PLAYERS]
    for p in range(n):
        for t in range(g.num_tokens):
            if s.loc[p][t] == LOC_DEAD:
                s.army_held[p][t] = 0
        if s.sel_trade[p] >= 0:
            s.trade_held[p][s.sel_trade[p]] = 0
        for t in range(g.num_tokens):
            s.sel_army[p][t] = 0
            s.revealed[p][t] = 0
            s.march_over[p][t] = 0
            s.attacked[p][t] = 0
        s.sel_trade[p] = -1
        s.sel_done[p] = 0
        s.trade_revealed[p] = 0
        s.charmed[p] = 0
        s.merc_moved[p] = 0
    s.won_len = 0
    s.round = 0
    s.cursor = 0
    s.order_len = 0
    if s.turn >= g.turns:
        top = s.vp[0]
        for p in range(1, n):
            if s.vp[p] > top:
                top = s.vp[p]
        nl = 0
        for p in range(n):
            if s.vp[p] == top:
                leaders[nl] = p
                nl += 1
        if nl == 1 or s.tiebreak >= g.tiebreak_max_turns:
            for p in range(nl):
                s.winners[p] = <int8_t>leaders[p]
            s.winners_len = <int8_t>nl
            s.phase = PH_TERMINAL
            return
        s.tiebreak += 1
        for p in range(n):
            s.active[p] = s.vp[p] == top
        s.plague_village = -1
    _start_turn(s, g)


cdef void _plague(CoreStateC* s, const CoreGame* g, int k) noexcept nogil:
    cdef uint64_t hit[2]
    cdef int i, v, p, t, x, kind
    cdef int effect = g.plague_effect[k]
    s.plague_drawn[k] += 1
    s.plague_history[s.history_len] = <int8_t>k
    s.history_len += 1
    s.plague_card = k
    hit[0] = 0
    hit[1] = 0
    if effect == PE_MOVE:
        v = s.plague_village
        for i in range(g.plague_steps[k]):
            v = g.village_next[v][g.plague_dir[k]]
        s.plague_village = v
        hit[0] = g.near_mask[v][0]
        hit[1] = g.near_mask[v][1]
    elif effect == PE_LINGERING:
        hit[0] = g.near_mask[s.plague_village][0]
        hit[1] = g.near_mask[s.plague_village][1]
    elif effect == PE_BORDER:
        hit[0] = g.border_mask[0]
        hit[1] = g.border_mask[1]
    elif effect == PE_CROSS:
        hit[0] = g.cross_mask[0]
        hit[1] = g.cross_mask[1]
    elif effect == PE_FOG and g.central >= 0:
        for p in range(g.num_players):
            for t in range(g.num_tokens):
                if s.loc[p][t] == g.central:
                    _set_loc(s, g, p, t, LOC_DEAD)
    for p in range(g.num_players):
        for t in range(g.num_tokens):
            x = s.loc[p][t]
            if x < 0 or not _bit(hit, x):
                continue
            kind = g.kind[x]
            if kind == K_CITY or kind == K_CENTRAL:
                continue
            if g.virulent_plague and t != g.baron:
                _set_loc(s, g, p, t, LOC_DEAD)
            elif s.stricken[p][t]:
                _set_loc(s, g, p, t, LOC_DEAD)
            else:
                s.stricken[p][t] = 1
    _start_movement(s, g)


cdef void _resolve_attack(CoreStateC* s, const CoreGame* g, int p) noexcept nogil:
    cdef int x = s.target
    cdef int i, q, u, t, force = 0, defence = 0, loser, kind, w, first_q = -1
    cdef int dq[MAX_PLAYERS * MAX_TOKENS]
    cdef int du[MAX_PLAYERS * MAX_TOKENS]
    cdef int nd = 0
    cdef bint baron_in = False
    for i in range(s.joiners_len):
        s.attacked[p][s.joiners[i]] = 1
    for i in range(s.joiners_len):
        force += _number(s, g, p, s.joiners[i])
    for q in range(g.num_players):
        if q == p:
            continue
        for u in range(g.num_tokens):
            if s.loc[q][u] == x and u != g.milady:
                dq[nd] = q
                du[nd] = u
                nd += 1
    for i in range(nd):
        defence += _number(s, g, dq[i], du[i])
    kind = g.kind[x]
    defence += core_defence_bonus(g, x)  # R11
    if force > defence:
        for i in range(nd):
            _defeat(s, g, dq[i], du[i], p)
        if kind == K_CITY:
            loser = s.owner[x]
            s.owner[x] = <int8_t>p
            _gain(s, g, p, g.distance[_castle_territory(s, g, p)][x])
            if loser >= 0:
                _gain(s, g, loser, -g.distance[_castle_territory(s, g, loser)][x])
        w = s.won_len
        s.won_player[w] = <int8_t>p
        s.won_terr[w] = <int8_t>x
        s.won_ntok[w] = s.joiners_len
        for i in range(s.joiners_len):
            s.won_tokens[w][i] = s.joiners[i]
            if s.joiners[i] == g.baron:
                baron_in = True
        s.won_baron[w] = baron_in
        s.won_len += 1
    else:
        first_q = dq[0] if nd > 0 else s.owner[x]
        for i in range(s.joiners_len):
            _defeat(s, g, p, s.joiners[i], first_q)


cdef void core_apply(CoreStateC* s, const CoreGame* g, int a) noexcept nogil:
    """Apply a legal action (not checked here: validate with core_legal first)."""
    cdef int ph = s.phase
    cdef int p = core_current_player(s, g)
    cdef int t, x, i, q, mate, other, cost, nv
    cdef int perm, k
    cdef int vq[MAX_PLAYERS * MAX_TOKENS]
    cdef int vu[MAX_PLAYERS * MAX_TOKENS]
    cdef int active[MAX_PLAYERS]
    cdef Ctx c
    cdef uint64_t reached[2]
    cdef unsigned int jm
    if ph == PH_CHANCE_PLACER:
        s.cursor = a - g.a_chance_player
        s.phase = PH_PLACE_CASTLE
    elif ph == PH_PLACE_CASTLE:
        s.castle[p] = <int16_t>(a - g.a_place)
        s.placed[s.placed_len] = <int8_t>p
        s.placed_len += 1
        if s.placed_len < g.num_players:
            s.phase = PH_CHANCE_PLACER
        else:
            _start_turn(s, g)
    elif ph == PH_CHANCE_DECIDER:
        s.decider = a - g.a_chance_player
        s.phase = PH_CHOOSE_ORDER
    elif ph == PH_CHOOSE_ORDER:
        k = 0
        for q in range(g.num_players):
            if s.active[q]:
                active[k] = q
                k += 1
        perm = a - g.a_order
        for i in range(k):
            s.order[i] = <int8_t>active[g.perms[k][perm][i]]
        s.order_len = <int8_t>k
        s.phase = PH_SELECT
        s.cursor = -1
        _next_selector(s, g)
    elif ph == PH_SELECT:
        if a >= g.a_trade:
            s.sel_trade[p] = <int8_t>(a - g.a_trade)
            s.sel_done[p] = 1
            _next_selector(s, g)
        else:
            s.sel_army[p][a - g.a_select] = 1
    elif ph == PH_CHANCE_PLAGUE:
        _plague(s, g, a - g.a_plague)
    elif ph == PH_REVEAL:
        t = a - g.a_reveal
        s.revealed[p][t] = 1
        s.token = t
        # R25: a revealed Mercenary always gets its move decision (see the reference's REVEAL).
        if g.token_kind[t] == TK_MERCENARY or _move_targets(s, g, p, t, 0, NULL, True) > 0:
            s.phase = PH_MOVE
        else:
            _after_move(s, g, p, t)
    elif ph == PH_MOVE:
        t = s.token
        if a != 0:
            _place(s, g, p, t, a - g.a_move)
            if g.token_kind[t] == TK_MERCENARY:
                s.merc_moved[p] += 1
        _after_move(s, g, p, t)
    elif ph == PH_MILADY:
        if a != 0:
            if a == g.a_infect:
                nv = _infection_victims(s, g, p, vq, vu)
                for i in range(nv):
                    s.stricken[vq[i]][vu[i]] = 1
            else:
                s.charmed[a - g.a_charm] = 1
                _set_loc(s, g, p, g.milady, LOC_CASTLE)
                s.rest_until[p][g.milady] = <int16_t>(s.turn + 1)
        _next_reveal(s, g)
    elif ph == PH_MARCH:
        if a == 0:
            s.shillings = 0
        else:
            t = (a - g.a_march) // g.num_territories
            x = (a - g.a_march) % g.num_territories
            _build_ctx(s, g, p, &c)
            cost = _destinations(s, g, &c, t, s.shillings, reached, x)
            _place(s, g, p, t, x)
            s.shillings -= cost
            if g.kind[x] == K_WOOD or g.kind[x] == K_CENTRAL:
                s.march_over[p][t] = 1
        if s.shillings <= 0 or _march_options(s, g, p, NULL, True) == 0:
            s.shillings = 0
            _next_trader(s, g)
    elif ph == PH_ATTACK:
        if a == 0:
            s.cursor += 1
            _next_attacker(s, g)
        else:
            s.target = a - g.a_attack
            s.joiners_len = 0
            s.phase = PH_ATTACK_JOIN
    elif ph == PH_ATTACK_JOIN:
        if a == 0:
            _resolve_attack(s, g, p)
            s.target = -1
            s.joiners_len = 0
            s.phase = PH_ATTACK
            _next_attacker(s, g)
        else:
            t = a - g.a_join
            s.joiners[s.joiners_len] = <int8_t>t
            s.joiners_len += 1
            mate = _companion(s, g, p)
            if mate >= 0 and (t == g.baron or t == mate):
                other = mate if t == g.baron else g.baron
                jm = _joiner_mask(s)
                if not ((jm >> other) & 1) and _can_attack_with(s, g, p, other):
                    s.joiners[s.joiners_len] = <int8_t>other
                    s.joiners_len += 1
    elif ph == PH_ADVANCE:
        if a == 0:
            _next_advance(s, g, True)
        else:
            t = a - g.a_advance
            _place(s, g, p, t, s.won_terr[s.round])
            s.advanced[s.advanced_len] = <int8_t>t
            s.advanced_len += 1
            _next_advance(s, g, False)


cdef void core_returns(const CoreStateC* s, const CoreGame* g, double* out) noexcept nogil:
    """R19: 1 for a sole win, 1/k for a k-way shared win, 0 otherwise (all 0 before the end)."""
    cdef int p, i
    for p in range(g.num_players):
        out[p] = 0.0
    for i in range(s.winners_len):
        out[s.winners[i]] = 1.0 / s.winners_len


cdef int core_sample_chance(const CoreStateC* s, const CoreGame* g, CoreRng* rng) noexcept nogil:
    """Draw a chance outcome (same cumulative scheme as engine.record.sample_chance); -1 when there is none
    (callers must treat -1 as an error: never apply it)."""
    cdef int actions[MAX_PLAYERS + MAX_PLAGUE_KINDS]
    cdef double probs[MAX_PLAYERS + MAX_PLAGUE_KINDS]
    cdef int n = core_chance(s, g, actions, probs)
    cdef double r = rng_uniform(rng)
    cdef double acc = 0.0
    cdef int i
    if n <= 0:
        return -1  # not a chance node, or a chance node without outcomes: an error for the caller
    for i in range(n):
        acc += probs[i]
        if r < acc:
            return actions[i]
    return actions[n - 1]


cdef int core_playout(CoreStateC* s, const CoreGame* g, CoreRng* rng) noexcept nogil:
    """Play uniformly random legal actions (chance by its probabilities) to the end, in place.
    Returns the number of actions applied, or -1 if a position had no legal action or chance outcome (never in
    a valid game)."""
    return _playout(s, g, rng, NULL, 0)


cdef int _playout(CoreStateC* s, const CoreGame* g, CoreRng* rng, int* record, int cap) noexcept nogil:
    """core_playout, also writing the first ``cap`` actions to ``record`` when it is not NULL."""
    cdef int buf[MAX_ACTIONS]
    cdef int n, a, steps = 0
    while s.phase != PH_TERMINAL:
        if s.phase == PH_CHANCE_PLACER or s.phase == PH_CHANCE_DECIDER or s.phase == PH_CHANCE_PLAGUE:
            a = core_sample_chance(s, g, rng)
            if a < 0:
                return -1
        else:
            n = core_legal(s, g, buf)
            if n <= 0:
                return -1
            a = buf[rng_below(rng, n)]
        if record != NULL and steps < cap:
            record[steps] = a
        core_apply(s, g, a)
        steps += 1
    return steps


# =====================================================================================================
# Python side: compiling a game
# =====================================================================================================

_TOKEN_KINDS = ("baron", "milady", "first_knight", "knight", "mercenary", "infantryman")
_EFFECTS = ("move", "border", "cross", "lingering", "fog")


cdef class CompiledGame:
    """A reference :class:`engine.state.Game` compiled into C arrays (one per Game, cached on it)."""

    def __cinit__(self, game):
        self.g = <CoreGame*>malloc(sizeof(CoreGame))
        if self.g == NULL:
            raise MemoryError()
        memset(self.g, 0, sizeof(CoreGame))

    def __dealloc__(self):
        if self.g != NULL:
            free(self.g)
            self.g = NULL

    def __init__(self, game):
        cdef CoreGame* g = self.g
        cdef int i, j, x, y, k
        rs, m, L = game.ruleset, game.map, game.layout
        self.game = game
        T = len(m.territories)
        checks = [("players", game.num_players, MAX_PLAYERS), ("tokens", game.num_tokens, MAX_TOKENS),
                  ("territories", T, MAX_TERRITORIES), ("castle sites", len(m.castle_sites), MAX_SITES - 1),
                  ("trading cards", len(rs.trading_cards), MAX_TRADING),
                  ("plague card kinds", len(rs.plague_cards), MAX_PLAGUE_KINDS),
                  ("turns", rs.turns, MAX_HISTORY - 1),
                  ("neighbours", max(len(t.neighbors) for t in m.territories), MAX_NEIGHBORS),
                  ("plague card count", max(c.count for c in rs.plague_cards), 127),
                  ("distance", max(max(r) for r in m.distance), 32767)]
        for what, value, limit in checks:
            if value > limit:
                raise StateError(f"the core supports at most {limit} {what}, this game has {value}")
        g.num_players = game.num_players
        g.num_tokens = game.num_tokens
        g.num_territories = T
        g.num_sites = len(m.castle_sites)
        g.num_trading = len(rs.trading_cards)
        g.num_plague_kinds = len(rs.plague_cards)
        g.a_place, g.a_order, g.a_select, g.a_trade = L.PLACE, L.ORDER, L.SELECT, L.TRADE
        g.a_reveal, g.a_move, g.a_charm, g.a_infect = L.REVEAL, L.MOVE, L.CHARM, L.INFECT
        g.a_march, g.a_attack, g.a_join, g.a_advance = L.MARCH, L.ATTACK, L.JOIN, L.ADVANCE
        g.a_chance_player, g.a_plague, g.num_actions = L.CHANCE_PLAYER, L.PLAGUE, L.num_distinct_actions
        for terr in m.territories:
            x = terr.id
            g.kind[x] = int(terr.kind)
            g.num_neighbors[x] = len(terr.neighbors)
            g.near_mask[x][x >> 6] |= (<uint64_t>1) << (x & 63)
            for j, y in enumerate(terr.neighbors):
                g.neighbors[x][j] = y
                g.adjacent[x][y] = 1
                g.near_mask[x][y >> 6] |= (<uint64_t>1) << (y & 63)
                g.nbr_mask[x][y >> 6] |= (<uint64_t>1) << (y & 63)
            for y in range(T):
                g.distance[x][y] = m.distance[x][y]
            for k in range(4):
                g.village_next[x][k] = -1
        for v, nxt in m.village_next.items():
            for k in range(4):
                g.village_next[v][k] = nxt[k]
        for x in m.border_hills:
            g.border_mask[x >> 6] |= (<uint64_t>1) << (x & 63)
        for x in m.cross_hills:
            g.cross_mask[x >> 6] |= (<uint64_t>1) << (x & 63)
        for terr in m.territories:
            x = terr.id
            if terr.kind in (Kind.MOUNTAIN, Kind.CENTRAL_HILL):
                g.never_mask[x >> 6] |= (<uint64_t>1) << (x & 63)
            if terr.kind in (Kind.HILL, Kind.WOOD):
                g.plain_mask[x >> 6] |= (<uint64_t>1) << (x & 63)
            if terr.kind == Kind.VILLAGE:
                g.village_mask[x >> 6] |= (<uint64_t>1) << (x & 63)
            if terr.kind == Kind.WOOD:
                g.wood_mask[x >> 6] |= (<uint64_t>1) << (x & 63)
            if terr.kind not in (Kind.WOOD, Kind.CENTRAL_HILL):
                g.pass_mask[x >> 6] |= (<uint64_t>1) << (x & 63)
            if terr.kind == Kind.CITY:
                g.cities[g.num_cities] = x
                g.num_cities += 1
        if game.central is not None:
            x = game.central
            g.convent_mask[x >> 6] |= (<uint64_t>1) << (x & 63)
        g.central_hill = -1 if m.central_hill is None else m.central_hill
        g.central = -1 if game.central is None else game.central
        g.plague_start = m.plague_start
        for site in m.castle_sites:
            g.site_territory[site.id] = site.territory
            g.site_board[site.id] = site.board
        g.baron, g.milady = rs.baron, rs.milady
        for tok in rs.army:
            g.token_kind[tok.index] = _TOKEN_KINDS.index(tok.kind)
            g.token_red[tok.index] = tok.red
            g.token_black[tok.index] = tok.black
            g.enters_towns[tok.index] = tok.enters_villages_and_cities
            g.takes_cities[tok.index] = tok.takes_cities
            if tok.takes_cities:
                g.city_taker_mask |= 1 << tok.index
        for i, v in enumerate(rs.trading_cards):
            g.trading_value[i] = v
        for card in rs.plague_cards:
            g.plague_effect[card.index] = _EFFECTS.index(card.effect)
            g.plague_dir[card.index] = "NESW".index(card.direction) if card.effect == "move" else 0
            g.plague_steps[card.index] = card.steps
            g.plague_count[card.index] = card.count
        g.turns = rs.turns
        g.army_cards_selected = rs.army_cards_selected
        g.desperate_below = rs.desperate_below
        g.desperate_red = rs.desperate_red
        g.desperate_black = rs.desperate_black
        g.plague_reshuffle_every = rs.plague_reshuffle_every
        g.king_threshold = rs.king_threshold
        g.king_help = rs.king_help
        g.defence_wood = rs.defence_wood
        g.defence_village = rs.defence_village
        g.defence_city = rs.defence_city
        g.tiebreak_max_turns = rs.tiebreak_max_turns
        g.virulent_plague = rs.virulent_plague
        g.has_plague = rs.has_plague
        for k in range(MAX_PLAYERS + 1):
            perms = list(itertools.permutations(range(k)))
            g.factorial[k] = len(perms)
            for i, perm in enumerate(perms):
                for j, v in enumerate(perm):
                    g.perms[k][i][j] = v


_COMPILED = {}  # id(game) -> (weakref to the Game, CompiledGame); entries leave with their Game


def compile_game(game):
    """The :class:`CompiledGame` of a reference Game (compiled once per Game object, then shared)."""
    key = id(game)
    entry = _COMPILED.get(key)
    if entry is not None and entry[0]() is game:
        return entry[1]
    cg = CompiledGame(game)
    _COMPILED[key] = (weakref.ref(game, lambda _ref, key=key, cache=_COMPILED: cache.pop(key, None)), cg)
    return cg


# =====================================================================================================
# Python side: the state
# =====================================================================================================

from .state import STATE_FIELDS as _FIELDS  # the reference's field order (canonical(), to_dict())


cdef list _bools2(const int8_t* arr, int n, int k):
    return [[bool(arr[p * MAX_TOKENS + t]) for t in range(k)] for p in range(n)]


cdef _fits(str field, object seq, int cap):
    """StateError unless ``seq`` has at most ``cap`` items (checked before any copy into a C array)."""
    if len(seq) > cap:
        raise StateError(f"{field}: at most {cap} items fit the core, got {len(seq)}")


cdef inline bint _is_int(object a):
    return isinstance(a, int) and not isinstance(a, bool)


cdef class CoreState:
    """A Feudo position in C with the API of :class:`engine.state.State`.

    Build one with :func:`engine.core.new_game` or :meth:`from_reference`. The VP log of the reference is
    not kept (it is not part of the position: ``canonical()`` excludes it too).
    """

    def __init__(self, game):
        """The first position of ``game`` (a reference :class:`engine.state.Game`), like ``State(game)``."""
        cdef CoreState other
        from .state import State

        other = CoreState.from_reference(State(game))
        self.s = other.s
        self.compiled = other.compiled
        self.game = other.game

    cdef CoreState _new_like(self):
        cdef CoreState c = CoreState.__new__(CoreState)
        c.compiled = self.compiled
        c.game = self.game
        return c

    # ------------------------------------------------------------------------------------- conversions
    @staticmethod
    def from_reference(state):
        """A core state equal to a reference :class:`engine.state.State` (every field copied).

        The core trusts nothing: the position is validated first (:func:`engine.validate.check_state`: types,
        the rules' ranges, the invariants of its phase, someone able to act), and every copy into a fixed
        C array is bounds-checked again here, so a bad state raises :class:`StateError` naming the field and
        never writes past an array."""
        from .validate import check_game_fits_core, check_state

        cdef CoreState c = CoreState.__new__(CoreState)
        cdef CoreStateC* s = &c.s
        cdef int p, t, i
        game = state.game
        check_game_fits_core(game)
        check_state(state)
        c.game = game
        c.compiled = compile_game(game)
        n, k = game.num_players, game.num_tokens
        # Lengths against the arrays (and below 128: the counters are int8_t).
        _fits("state.order", state.order, MAX_PLAYERS)
        _fits("state.placed", state.placed, MAX_PLAYERS)
        _fits("state.winners", state.winners, MAX_PLAYERS)
        _fits("state.joiners", state.joiners, MAX_TOKENS)
        _fits("state.advanced", state.advanced, MAX_TOKENS)
        _fits("state.plague_history", state.plague_history, MAX_HISTORY - 1)
        _fits("state.plague_drawn", state.plague_drawn, MAX_PLAGUE_KINDS)
        _fits("state.owner", state.owner, MAX_TERRITORIES)
        _fits("state.won", state.won, MAX_WON - 1)
        for i, w in enumerate(state.won):
            _fits(f"state.won[{i}][2]", w[2], MAX_TOKENS)
        for p in range(n):
            _fits(f"state.trade_held[{p}]", state.trade_held[p], MAX_TRADING)
        if n > MAX_PLAYERS or k > MAX_TOKENS:
            raise StateError(f"state: {n} players of {k} tokens do not fit the core")
        memset(s, 0, sizeof(CoreStateC))
        s.turn, s.phase, s.tiebreak = state.turn, int(state.phase), state.tiebreak
        s.decider, s.plague_village, s.plague_card = state.decider, state.plague_village, state.plague_card
        s.cursor, s.round, s.token = state.cursor, state.round, state.token
        s.shillings, s.target, s.king = state.shillings, state.target, bool(state.king)
        s.order_len, s.placed_len, s.winners_len = len(state.order), len(state.placed), len(state.winners)
        s.joiners_len, s.advanced_len = len(state.joiners), len(state.advanced)
        s.won_len, s.history_len = len(state.won), len(state.plague_history)
        for i, v in enumerate(state.order):
            s.order[i] = v
        for i, v in enumerate(state.placed):
            s.placed[i] = v
        for i, v in enumerate(state.winners):
            s.winners[i] = v
        for i, v in enumerate(state.joiners):
            s.joiners[i] = v
        for i, v in enumerate(state.advanced):
            s.advanced[i] = v
        for i, v in enumerate(state.plague_history):
            s.plague_history[i] = v
        for i, v in enumerate(state.plague_drawn):
            s.plague_drawn[i] = v
        for i, v in enumerate(state.owner):
            s.owner[i] = v
        for p in range(n):
            s.vp[p] = state.vp[p]
            s.active[p] = state.active[p]
            s.castle[p] = state.castle[p]
            s.sel_trade[p] = state.sel_trade[p]
            s.sel_done[p] = state.sel_done[p]
            s.trade_revealed[p] = state.trade_revealed[p]
            s.charmed[p] = state.charmed[p]
            s.merc_moved[p] = state.merc_moved[p]
            for t in range(k):
                s.loc[p][t] = state.loc[p][t]
                s.stricken[p][t] = state.stricken[p][t]
                s.entered[p][t] = state.entered[p][t]
                s.rest_until[p][t] = state.rest_until[p][t]
                s.army_held[p][t] = state.army_held[p][t]
                s.sel_army[p][t] = state.sel_army[p][t]
                s.revealed[p][t] = state.revealed[p][t]
                s.march_over[p][t] = state.march_over[p][t]
                s.attacked[p][t] = state.attacked[p][t]
            for i, v in enumerate(state.trade_held[p]):
                s.trade_held[p][i] = v
        _rebuild_occupancy(s, c.compiled.g)
        for i, (wp, wx, wtok, wb) in enumerate(state.won):
            s.won_player[i], s.won_terr[i], s.won_baron[i], s.won_ntok[i] = wp, wx, bool(wb), len(wtok)
            for t, v in enumerate(wtok):
                s.won_tokens[i][t] = v
        return c

    def _field_values(self):
        """The reference's fields, as the same Python values, in _FIELDS order."""
        cdef CoreStateC* s = &self.s
        cdef const CoreGame* g = self.compiled.g
        n, k, T = g.num_players, g.num_tokens, g.num_territories
        P, K = range(n), range(k)
        return [
            s.turn, s.phase, s.tiebreak, [bool(s.active[p]) for p in P], [s.order[i] for i in range(s.order_len)],
            [s.castle[p] for p in P], [s.placed[i] for i in range(s.placed_len)], s.decider, [s.vp[p] for p in P],
            [[s.loc[p][t] for t in K] for p in P], _bools2(&s.stricken[0][0], n, k), _bools2(&s.entered[0][0], n, k),
            [[s.rest_until[p][t] for t in K] for p in P], _bools2(&s.army_held[0][0], n, k),
            [[bool(s.trade_held[p][c]) for c in range(g.num_trading)] for p in P],
            _bools2(&s.sel_army[0][0], n, k), [s.sel_trade[p] for p in P], [bool(s.sel_done[p]) for p in P], _bools2(&s.revealed[0][0], n, k),
            [bool(s.trade_revealed[p]) for p in P],
            [s.owner[x] for x in range(T)], s.plague_village, [s.plague_drawn[i] for i in range(g.num_plague_kinds)],
            [s.plague_history[i] for i in range(s.history_len)], s.plague_card, bool(s.king),
            [bool(s.charmed[p]) for p in P], [s.merc_moved[p] for p in P], _bools2(&s.march_over[0][0], n, k), _bools2(&s.attacked[0][0], n, k),
            [[s.won_player[i], s.won_terr[i], [s.won_tokens[i][j] for j in range(s.won_ntok[i])],
              bool(s.won_baron[i])] for i in range(s.won_len)],
            s.cursor, s.round, s.token, s.shillings, s.target, [s.joiners[i] for i in range(s.joiners_len)],
            [s.advanced[i] for i in range(s.advanced_len)], [s.winners[i] for i in range(s.winners_len)],
        ]

    def to_reference(self):
        """An equal reference :class:`engine.state.State` (its VP log empty: the core keeps none)."""
        from .state import State

        state = State(self.game)
        for name, value in zip(_FIELDS, self._field_values()):
            setattr(state, name, value)
        state._legal = None
        return state

    def canonical(self):
        """Exactly the reference's ``State.canonical()`` string for the same position."""
        return json.dumps(self._field_values(), separators=(",", ":"))

    def to_dict(self):
        d = dict(zip(_FIELDS, self._field_values()))
        d["vp_log"] = []
        return d

    def to_json(self):
        return self.to_reference().to_json()

    @staticmethod
    def from_json(text):
        from .serialize import state_from_json

        return CoreState.from_reference(state_from_json(text))

    def observation(self, seat):
        return self.to_reference().observation(seat)

    def information_state_string(self, player):
        return self.to_reference().information_state_string(player)

    def __getattr__(self, name):
        if name in _FIELDS:
            return self._field_values()[_FIELDS.index(name)]
        if name == "vp_log":
            return []
        raise AttributeError(f"'CoreState' object has no attribute {name!r}")

    def __str__(self):
        return str(self.to_reference())

    def __repr__(self):
        from .state import Phase

        return (f"<CoreState turn={self.s.turn} phase={Phase(self.s.phase).name} "
                f"player={self.current_player()} vp={[self.s.vp[p] for p in range(self.compiled.g.num_players)]}>")

    def __reduce__(self):
        return (CoreState.from_reference, (self.to_reference(),))

    def __copy__(self):
        return self.clone()

    def __deepcopy__(self, memo):
        return self.clone()

    # ------------------------------------------------------------------------------------- game API
    @property
    def num_players(self):
        return self.compiled.g.num_players

    @property
    def phase(self):
        return self.s.phase

    @property
    def turn(self):
        return self.s.turn

    @property
    def tiebreak(self):
        return self.s.tiebreak

    @property
    def vp(self):
        return [self.s.vp[p] for p in range(self.compiled.g.num_players)]

    # Read-only views of the most used fields (fresh lists: mutating them does not change the state).
    @property
    def active(self):
        return [bool(self.s.active[p]) for p in range(self.compiled.g.num_players)]

    @property
    def castle(self):
        return [self.s.castle[p] for p in range(self.compiled.g.num_players)]

    @property
    def loc(self):
        cdef int n = self.compiled.g.num_players, k = self.compiled.g.num_tokens
        return [[self.s.loc[p][t] for t in range(k)] for p in range(n)]

    @property
    def stricken(self):
        return _bools2(&self.s.stricken[0][0], self.compiled.g.num_players, self.compiled.g.num_tokens)

    @property
    def entered(self):
        return _bools2(&self.s.entered[0][0], self.compiled.g.num_players, self.compiled.g.num_tokens)

    @property
    def owner(self):
        return [self.s.owner[x] for x in range(self.compiled.g.num_territories)]

    @property
    def plague_village(self):
        return self.s.plague_village

    @property
    def plague_card(self):
        return self.s.plague_card

    @property
    def king(self):
        return bool(self.s.king)

    @property
    def order(self):
        return [self.s.order[i] for i in range(self.s.order_len)]

    @property
    def cursor(self):
        return self.s.cursor

    @property
    def round(self):
        return self.s.round

    @property
    def token(self):
        return self.s.token

    @property
    def decider(self):
        return self.s.decider

    @property
    def winners(self):
        return [self.s.winners[i] for i in range(self.s.winners_len)]

    # Derived facts of the reference (same names, same results).
    def living_soldiers(self, int p):
        cdef int t, n = 0
        self._check_player(p)
        for t in range(self.compiled.g.num_tokens):
            if self.s.loc[p][t] != LOC_DEAD and t != self.compiled.g.milady:
                n += 1
        return n

    def desperate(self, int p):
        self._check_player(p)
        return bool(_desperate(&self.s, self.compiled.g, p))

    def number(self, int p, int t):
        self._check_token(p, t)
        return _number(&self.s, self.compiled.g, p, t)

    def red_number(self, int p, int t):
        self._check_token(p, t)
        return _red_number(&self.s, self.compiled.g, p, t)

    def castle_territory(self, int p):
        self._check_player(p)
        return _castle_territory(&self.s, self.compiled.g, p)

    def shillings_of(self, int p, int card):
        self._check_player(p)
        if not 0 <= card < self.compiled.g.num_trading:
            raise IndexError(f"trading card {card} out of range")
        return _shillings_of(&self.s, self.compiled.g, p, card)

    def can_move(self, int p, int t):
        self._check_token(p, t)
        return bool(_can_move(&self.s, p, t))

    def _check_player(self, int p):
        if not 0 <= p < self.compiled.g.num_players:
            raise IndexError(f"player {p} out of range")

    def _check_token(self, int p, int t):
        self._check_player(p)
        if not 0 <= t < self.compiled.g.num_tokens:
            raise IndexError(f"token {t} out of range")

    def current_player(self):
        return core_current_player(&self.s, self.compiled.g)

    def is_terminal(self):
        return self.s.phase == PH_TERMINAL

    def is_chance_node(self):
        return core_current_player(&self.s, self.compiled.g) == PLAYER_CHANCE

    def returns(self):
        cdef double out[MAX_PLAYERS]
        core_returns(&self.s, self.compiled.g, out)
        return [out[p] for p in range(self.compiled.g.num_players)]

    def clone(self):
        cdef CoreState c = self._new_like()
        core_clone(&c.s, &self.s)
        return c

    def chance_outcomes(self):
        cdef int actions[MAX_PLAYERS + MAX_PLAGUE_KINDS]
        cdef double probs[MAX_PLAYERS + MAX_PLAGUE_KINDS]
        cdef int n = core_chance(&self.s, self.compiled.g, actions, probs)
        return [(actions[i], probs[i]) for i in range(n)]

    def legal_actions(self, player=None):
        cdef int buf[MAX_ACTIONS]
        cdef int n
        if player is not None and player != core_current_player(&self.s, self.compiled.g):
            return []
        n = core_legal(&self.s, self.compiled.g, buf)
        return [buf[i] for i in range(n)]

    cdef bint _is_legal(self, int action):
        cdef int buf[MAX_ACTIONS]
        cdef int n = core_legal(&self.s, self.compiled.g, buf)
        cdef int lo = 0, hi = n - 1, mid
        while lo <= hi:
            mid = (lo + hi) >> 1
            if buf[mid] == action:
                return True
            if buf[mid] < action:
                lo = mid + 1
            else:
                hi = mid - 1
        return False

    def apply_action(self, action):
        """Apply a legal action; an illegal one raises IllegalActionError (the reference's message) and
        changes nothing. Any integer type is accepted (numpy integers too)."""
        if isinstance(action, numbers.Integral) and not isinstance(action, (int, bool)):
            action = int(action)
        if not _is_int(action) or not (0 <= action < self.compiled.g.num_actions) or not self._is_legal(action):
            self.to_reference().apply_action(action)  # raises the reference's IllegalActionError
            raise IllegalActionError(f"action {action!r} is not legal")  # pragma: no cover
        core_apply(&self.s, self.compiled.g, action)

    def action_to_string(self, action, player=None):
        return self.to_reference().action_to_string(action, player)

    def string_to_action(self, text):
        return self.to_reference().string_to_action(text)

    def random_playout(self, seed):
        """Play uniformly random actions to the end on a copy (the GIL released); the returns."""
        cdef CoreStateC work
        cdef CoreRng rng
        cdef double out[MAX_PLAYERS]
        cdef uint64_t useed = <uint64_t>(int(seed) & 0xFFFFFFFFFFFFFFFF)
        cdef const CoreGame* g = self.compiled.g
        cdef int steps
        core_clone(&work, &self.s)
        with nogil:
            rng_seed(&rng, useed)
            steps = core_playout(&work, g, &rng)
        if steps < 0:
            raise StateError("random playout reached a position without legal actions")
        core_returns(&work, g, out)
        return [out[p] for p in range(g.num_players)]

    def random_playout_actions(self, seed):
        """The actions of the game ``random_playout(seed)`` plays (same RNG use), as a list of ints."""
        cdef CoreStateC work
        cdef CoreRng rng
        cdef int cap = 1 << 20
        cdef int* rec = <int*>malloc(cap * sizeof(int))
        cdef int steps
        if rec == NULL:
            raise MemoryError()
        core_clone(&work, &self.s)
        rng_seed(&rng, <uint64_t>(int(seed) & 0xFFFFFFFFFFFFFFFF))
        with nogil:
            steps = _playout(&work, self.compiled.g, &rng, rec, cap)
        try:
            if steps < 0 or steps > cap:
                raise StateError("random playout failed")
            return [rec[i] for i in range(steps)]
        finally:
            free(rec)

    def legal_into(self, int[::1] out):
        """Write the legal actions into ``out`` (a C-contiguous int32 array of at least ``max_actions()``
        items); returns the count. For searches that keep their own buffers."""
        if out.shape[0] < MAX_ACTIONS:
            raise ValueError(f"out: expected at least {MAX_ACTIONS} items, got {out.shape[0]}")
        return core_legal(&self.s, self.compiled.g, &out[0])


# =====================================================================================================
# Benchmark helpers (timed in C, no Python call overhead)
# =====================================================================================================

cdef extern from "<time.h>" nogil:
    ctypedef long time_t
    cdef struct timespec:
        time_t tv_sec
        long tv_nsec
    int clock_gettime(int clk_id, timespec* tp)
    int CLOCK_MONOTONIC


cdef inline double _now() noexcept nogil:
    cdef timespec ts
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return ts.tv_sec + ts.tv_nsec * 1e-9


def bench_clone(CoreState state, long n):
    """Nanoseconds per core_clone (n clones in a C loop)."""
    cdef CoreStateC* dst = <CoreStateC*>malloc(sizeof(CoreStateC) * 2)
    cdef long i
    cdef double t0, t1
    cdef int sink = 0
    with nogil:
        t0 = _now()
        for i in range(n):
            core_clone(&dst[i & 1], &state.s)
            sink += dst[i & 1].turn
        t1 = _now()
    free(dst)
    return (t1 - t0) * 1e9 / n


def bench_legal(CoreState state, long n):
    """Nanoseconds per core_legal on this state (n calls in a C loop)."""
    cdef int buf[MAX_ACTIONS]
    cdef long i
    cdef double t0, t1
    cdef int sink = 0
    with nogil:
        t0 = _now()
        for i in range(n):
            sink += core_legal(&state.s, state.compiled.g, buf)
        t1 = _now()
    return (t1 - t0) * 1e9 / n


def bench_playouts(CoreState state, long n, unsigned long long seed):
    """Play n random playouts from copies of ``state`` (GIL released): (seconds, total actions)."""
    cdef CoreStateC work
    cdef CoreRng rng
    cdef long i
    cdef long long actions = 0
    cdef int steps
    cdef double t0, t1
    cdef const CoreGame* g = state.compiled.g
    with nogil:
        rng_seed(&rng, seed)
        t0 = _now()
        for i in range(n):
            core_clone(&work, &state.s)
            steps = core_playout(&work, g, &rng)
            actions += steps
        t1 = _now()
    return t1 - t0, actions


def sizeof_state():
    """Bytes of one CoreStateC (what clone() copies)."""
    return sizeof(CoreStateC)


def max_actions():
    """Size of a legal-action buffer (MAX_ACTIONS)."""
    return MAX_ACTIONS
