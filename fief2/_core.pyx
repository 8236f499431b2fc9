# cython: language_level=3
"""The Fief 2 core: the rules of :mod:`fief2.state` (rulings F1-F53) in C, on a flat struct.

Layout (as :mod:`engine._core`): ``_core.pxd`` declares the structs and the nogil API; this file implements them,
then wraps them in two extension types:

* :class:`CompiledFief2` -- a reference :class:`fief2.state.Game` (ruleset + map + players) compiled into an
  :c:type:`F2Game` of arrays.
* :class:`Fief2Core` -- a position with the reference ``State``'s Python API (``legal_actions``,
  ``apply_action``, ``current_player``, ``returns``...), made from a reference state (:meth:`Fief2Core.from_state`)
  and dumped back for comparison (:meth:`Fief2Core.dump`, :func:`reference_dump`) or as a reference state
  (:meth:`Fief2Core.to_state`). ``clone()`` is one memcpy of the struct.

The C functions follow the reference function by function, under the reference's names (``_check_owner``,
``_declare``, ``_battle_losses``...), so the two read side by side; comments cite the rulings only where the code
is not a plain transliteration. Where the reference keeps a reference to a frame it has just popped, the C code
works on a copy of the frame (a popped slot is reused by the next push).
"""

from libc.string cimport memcpy, memset
from libc.stdlib cimport malloc, free
from libc.stdint cimport int8_t, int16_t, int32_t, int64_t, uint8_t, uint64_t

from feudo_ai._game cimport Rng, rng_seed, rng_below

import numbers

from engine.errors import IllegalActionError, StateError

# answer kinds (FR_ANSWER), dice purposes (FR_DICE), battle stages: fief2.state's codes
cdef enum:
    A_GIVE = 0
    A_ASK = 1
    A_MARRY = 2
    A_ALLY = 3
    A_RELEASE = 4
    A_RANSOM = 5

cdef enum:
    D_PLAGUE = 0
    D_REVOLT = 1
    D_CALM = 2
    D_BATTLE = 3

cdef enum:
    B_START = 0
    B_JOIN = 1
    B_CALM = 2
    B_DEF = 3
    B_ATT = 4
    B_AIM_DEF = 5
    B_AIM_ATT = 6
    B_ROLL = 7
    B_LOSS = 8
    B_END = 9

cdef enum:
    SCRATCH = 256           # a list of villages, persons or fiefs (<= 64 + 1 entries)
    F2_NEIGHBORS_SCRATCH = 64  # a list of neighbours (<= F2_MAX_NEIGHBORS)

# ints of each frame kind (the reference's frame lengths, for the dump)
FRAME_LEN = (4, 2, 3, 5, 0, 3, 3, 6, 7, 6, 4, 12, 4, 3, 16, 5, 4, 5, 3, 4, 5, 3, 5, 6)


# =====================================================================================================
# small helpers
# =====================================================================================================

cdef inline int64_t* _top(F2State* s) noexcept nogil:
    return &s.stack[s.stack_len - 1][0]


cdef inline int64_t* _push(F2State* s, int kind) noexcept nogil:
    """A new zeroed frame of the given kind on top (the caller fills its fields)."""
    cdef int i = s.stack_len
    if i >= F2_MAX_STACK:
        s.error = 1
        i = F2_MAX_STACK - 1
    else:
        s.stack_len += 1
    memset(&s.stack[i][0], 0, sizeof(int64_t) * F2_FRAME)
    s.stack[i][0] = kind
    return &s.stack[i][0]


cdef inline void _pop(F2State* s) noexcept nogil:
    if s.stack_len > 0:
        s.stack_len -= 1


cdef inline void _copy_frame(int64_t* dst, const int64_t* src) noexcept nogil:
    memcpy(dst, src, sizeof(int64_t) * F2_FRAME)


cdef inline void _bit_set(uint64_t* m, int i) noexcept nogil:
    m[i >> 6] |= (<uint64_t>1) << (i & 63)


cdef inline bint _bit_has(const uint64_t* m, int i) noexcept nogil:
    return (m[i >> 6] >> (i & 63)) & 1


cdef inline bint _mask_has(int64_t mask, int i) noexcept nogil:
    return (mask >> i) & 1


cdef inline int _min(int a, int b) noexcept nogil:
    return a if a < b else b


cdef inline int _decode_mask(int64_t mask, int* out) noexcept nogil:
    cdef int i, n = 0
    for i in range(64):
        if (mask >> i) & 1:
            out[n] = i
            n += 1
    return n


cdef inline bint _in(const int* a, int n, int x) noexcept nogil:
    cdef int i
    for i in range(n):
        if a[i] == x:
            return True
    return False


cdef void _sort_unique(int* a, int* n) noexcept nogil:
    cdef int i, j, x, m = n[0], k
    for i in range(1, m):
        x = a[i]
        j = i - 1
        while j >= 0 and a[j] > x:
            a[j + 1] = a[j]
            j -= 1
        a[j + 1] = x
    if m == 0:
        return
    k = 1
    for i in range(1, m):
        if a[i] != a[k - 1]:
            a[k] = a[i]
            k += 1
    n[0] = k


cdef inline int _act(const F2Game* g, int kind, int arg) noexcept nogil:
    return g.base[kind] + arg


cdef inline void _hand_remove(F2State* s, int f, int c) noexcept nogil:
    cdef int i, j, n = s.hand_len[f]
    for i in range(n):
        if s.hands[f][i] == c:
            for j in range(i, n - 1):
                s.hands[f][j] = s.hands[f][j + 1]
            s.hands[f][n - 1] = 0
            s.hand_len[f] = n - 1
            return


cdef inline void _hand_add(F2State* s, int f, int c) noexcept nogil:
    cdef int n = s.hand_len[f], j
    if n >= F2_MAX_HAND:
        s.error = 1
        return
    j = n
    while j > 0 and s.hands[f][j - 1] > c:
        s.hands[f][j] = s.hands[f][j - 1]
        j -= 1
    s.hands[f][j] = c
    s.hand_len[f] = n + 1


cdef inline bint _hand_has(const F2State* s, int f, int c) noexcept nogil:
    cdef int i
    if c < 0:
        return False
    for i in range(s.hand_len[f]):
        if s.hands[f][i] == c:
            return True
    return False


# =====================================================================================================
# derived facts (F1)
# =====================================================================================================

cdef int _order(const F2Game* g, const F2State* s, int* out) noexcept nogil:
    cdef int i, f, k = 0
    for i in range(g.n):
        f = (s.first + i) % g.n
        if s.alive[f]:
            out[k] = f
            k += 1
    return k


cdef inline bint _free(const F2State* s, int p) noexcept nogil:
    return s.fam[p] >= 0 and s.captor[p] == -1


cdef inline int _num_persons_of(const F2Game* g, const F2State* s, int f) noexcept nogil:
    cdef int p, k = 0
    for p in range(g.P):
        if s.fam[p] == f:
            k += 1
    return k


cdef inline int _free_at(const F2Game* g, const F2State* s, int f, int v, bint road, int* out) noexcept nogil:
    cdef int p, k = 0
    for p in range(g.P):
        if s.fam[p] == f and s.captor[p] == -1 and s.loc[p] == v and (road or s.onroad[p] == -1):
            if out != NULL:
                out[k] = p
            k += 1
    return k


cdef inline bint _crowned(const F2Game* g, const F2State* s, int p) noexcept nogil:
    cdef int y
    for y in range(g.NF):
        if s.title[y] == p:
            return True
    return p == s.king or p == s.queen or p == s.prince


cdef int _crown_rank(const F2Game* g, const F2State* s, int p, int without) noexcept nogil:
    cdef int y, r = 0
    for y in range(g.NF):
        if s.title[y] == p and y != without and g.fief_rank[y] > r:
            r = g.fief_rank[y]
    if p == s.king and 50 > r:
        r = 50
    if p == s.queen and 30 > r:
        r = 30
    return r


cdef inline int _force_of_person(const F2Game* g, const F2State* s, int p) noexcept nogil:
    if not _free(s, p):
        return 0
    if s.darc[p]:
        return g.darc_force
    if g.person_male[p] or _crowned(g, s, p):
        return 1
    return 0


cdef inline int _fief_family(const F2State* s, int y) noexcept nogil:
    if s.title[y] >= 0:
        return s.fam[s.title[y]]
    if s.pending[y] >= 0:
        return s.pending[y]
    return s.retained[y]


cdef inline int _kg_leader(const F2State* s) noexcept nogil:
    if s.kg < 0:
        return -1
    return s.queen if s.regent else s.king


cdef inline int _qg_leader(const F2State* s) noexcept nogil:
    return s.queen if s.qg >= 0 else -1


cdef inline void _guards_at(const F2State* s, int f, int v, bint road, int* q, int* k) noexcept nogil:
    cdef int leader = _qg_leader(s)
    q[0] = s.qg if (leader >= 0 and s.fam[leader] == f and s.captor[leader] == -1 and s.loc[leader] == v
                    and (road or s.onroad[leader] == -1)) else 0
    leader = _kg_leader(s)
    k[0] = s.kg if (leader >= 0 and s.fam[leader] == f and s.captor[leader] == -1 and s.loc[leader] == v
                    and (road or s.onroad[leader] == -1)) else 0


cdef inline int _sold_sum(const F2State* s, int f, int v) noexcept nogil:
    return s.sold[f][v][0] + s.sold[f][v][1] + s.sold[f][v][2] + s.sold[f][v][3]


cdef inline int _soldiers_at(const F2State* s, int f, int v) noexcept nogil:
    cdef int q, k
    _guards_at(s, f, v, False, &q, &k)
    return _sold_sum(s, f, v) + q + k


cdef inline bint _occupies(const F2Game* g, const F2State* s, int f, int v) noexcept nogil:
    if _soldiers_at(s, f, v) > 0:
        return True
    return _free_at(g, s, f, v, False, NULL) > 0


cdef bint _has_tokens(const F2Game* g, const F2State* s, int f, int v) noexcept nogil:
    cdef int p
    if _occupies(g, s, f, v):
        return True
    for p in range(g.P):
        if s.captor[p] == f and s.loc[p] == v and s.onroad[p] == -1:
            return True
    return False


cdef inline bint _any_tokens(const F2Game* g, const F2State* s, int v, int but) noexcept nogil:
    cdef int q
    for q in range(g.n):
        if q != but and _has_tokens(g, s, q, v):
            return True
    return False


cdef inline bint _mob_in(const F2State* s, int v) noexcept nogil:
    return s.mob_v == v and s.mob_n > 0 and s.mob_road == -1


cdef bint _empty(const F2Game* g, const F2State* s, int v) noexcept nogil:
    cdef int f, p
    if _mob_in(s, v):
        return False
    for f in range(g.n):
        if _sold_sum(s, f, v):
            return False
    for p in range(g.P):
        if s.loc[p] == v and s.onroad[p] == -1 and s.fam[p] >= 0:
            return False
    return True


cdef int _master(const F2Game* g, const F2State* s, int v) noexcept nogil:
    cdef int o, best = -1, best_n = 0, k, i, f, no
    cdef int order[F2_MAX_FAMILIES]
    if _mob_in(s, v):
        return F2_MOB
    o = s.owner[v]
    if o >= 0 and _occupies(g, s, o, v):
        return o
    no = _order(g, s, order)
    for i in range(no):
        f = order[i]
        k = _soldiers_at(s, f, v) + _free_at(g, s, f, v, False, NULL)
        if k > best_n:
            best = f
            best_n = k
    return best


cdef bint _controls(const F2Game* g, const F2State* s, int f, int v) noexcept nogil:
    cdef int y
    if s.owner[v] != f:
        return False
    if _occupies(g, s, f, v):
        return True
    y = g.village_fief[v]
    return _fief_family(s, y) == f and s.capital[y] >= 0 and _occupies(g, s, f, s.capital[y])


cdef inline bint _enfeoffed(const F2Game* g, const F2State* s, int v) noexcept nogil:
    cdef int y = g.village_fief[v]
    return _fief_family(s, y) >= 0 and s.capital[y] >= 0


cdef inline bint _enemies(const F2State* s, int f, int q) noexcept nogil:
    return f != q and not s.allied[f][q]


cdef bint _united(const F2Game* g, const F2State* s, int f, int q) noexcept nogil:
    cdef int p
    if f == q:
        return False
    for p in range(g.P):
        if s.fam[p] == f and s.spouse[p] >= 0 and s.fam[s.spouse[p]] == q:
            return True
    return False


cdef int _fiefs_held(const F2Game* g, const F2State* s, int f) noexcept nogil:
    cdef int y, k = 0
    for y in range(g.NF):
        if _fief_family(s, y) == f:
            k += 1
    return k


cdef int f2_power(const F2Game* g, const F2State* s, int f) noexcept nogil:
    cdef int y, p, total = 0
    for y in range(g.NF):
        if _fief_family(s, y) == f:
            total += g.fief_points[y]
    for p in range(g.P):
        if s.fam[p] != f:
            continue
        if p == s.king:
            total += g.pt_king
        if p == s.queen:
            total += g.pt_queen
        if p == s.prince:
            total += g.pt_prince
        if s.bishop[p] >= 0:
            total += g.pt_bishop + (g.pt_cardinal if s.cardinal[p] else 0)
    return total + s.cash[f] // g.florins_per_point


cdef int _tokens_total(const F2Game* g, const F2State* s, int f) noexcept nogil:
    cdef int v, i, q, k, n = 0
    for v in range(g.V):
        n += _sold_sum(s, f, v)
    for i in range(s.n_assaults):
        if s.assaults[i].f == f:
            n += s.assaults[i].soldiers
    q = _qg_leader(s)
    k = _kg_leader(s)
    if q >= 0 and s.fam[q] == f and s.captor[q] == -1 and s.qg > 0:
        n += s.qg
    if k >= 0 and s.fam[k] == f and s.captor[k] == -1 and s.kg > 0:
        n += s.kg
    return n + _num_persons_of(g, s, f)


cdef inline int _cardinals(const F2Game* g, const F2State* s) noexcept nogil:
    cdef int p, k = 0
    for p in range(g.P):
        if s.cardinal[p]:
            k += 1
    return k


cdef inline bint _fam_gone(const F2Game* g, const F2State* s, int f) noexcept nogil:
    return f >= g.n or not s.alive[f]


cdef int f2_deck(const F2Game* g, const F2State* s, int* out) noexcept nogil:
    """F10: every blue card neither in a hand nor in play, ascending."""
    cdef uint64_t used[2]
    cdef int f, i, p, y, b, c, n = 0
    used[0] = 0
    used[1] = 0
    for f in range(g.n):
        for i in range(s.hand_len[f]):
            _bit_set(used, s.hands[f][i])
    for p in range(g.P):
        if s.fam[p] >= 0:
            _bit_set(used, g.person_card[p])
            if s.darc[p] and g.darc_card >= 0:
                _bit_set(used, g.darc_card)
            if s.bishop[p] >= 0 and g.bishop_card[s.bishop[p]] >= 0:
                _bit_set(used, g.bishop_card[s.bishop[p]])
    for y in range(g.NF):
        if s.bad_weather[y] >= 0:
            _bit_set(used, s.bad_weather[y])
        if s.famine[y] >= 0:
            _bit_set(used, s.famine[y])
        if s.tax[y] >= 0:
            _bit_set(used, s.tax[y])
    for b in range(g.NB):
        if s.tithe[b] >= 0:
            _bit_set(used, s.tithe[b])
    if s.revolt_card >= 0:
        _bit_set(used, s.revolt_card)
    for c in range(g.C):
        if not _bit_has(used, c):
            out[n] = c
            n += 1
    return n


# =====================================================================================================
# who acts
# =====================================================================================================

cdef int _justice_asked(const F2Game* g, const F2State* s, const int64_t* fr, int* out) noexcept nogil:
    """F15.1: every other non-eliminated family, in turn order starting left of the assassin."""
    cdef int n = g.n, a = <int>fr[1], i, q, k = 0
    for i in range(1, n):
        q = (a + i) % n
        if s.alive[q]:
            out[k] = q
            k += 1
    return k


cdef int _actor(const F2Game* g, const F2State* s, const int64_t* fr) noexcept nogil:
    cdef int k = <int>fr[0]
    cdef int tmp[F2_MAX_FAMILIES]
    cdef int n
    if k == FR_DEAL or k == FR_DICE:
        return F2_CHANCE
    if k == FR_JUSTICE:
        n = _justice_asked(g, s, fr, tmp)
        return tmp[fr[2]] if fr[2] < n else -1
    if k == FR_ANSWER or k == FR_CONSENT:
        return <int>fr[2]
    if k == FR_BATTLE:
        return _battle_actor(g, s, fr)
    if k == FR_NEGO:
        n = _order(g, s, tmp)
        return tmp[fr[2]] if fr[2] < n else -1
    if k == FR_ELECT:
        return <int>fr[3]
    return <int>fr[1]


cdef int f2_current_player(const F2Game* g, const F2State* s) noexcept nogil:
    if s.phase == PH_OVER:
        return F2_TERMINAL
    if s.stack_len == 0:
        return F2_TERMINAL
    return _actor(g, s, &s.stack[s.stack_len - 1][0])


cdef int f2_to_move(const F2Game* g, const F2State* s) noexcept nogil:
    cdef int p = f2_current_player(g, s)
    if p == F2_TERMINAL:
        return -2
    return p


cdef bint f2_is_terminal(const F2State* s) noexcept nogil:
    return s.phase == PH_OVER


cdef bint f2_is_chance(const F2Game* g, const F2State* s) noexcept nogil:
    return s.phase != PH_OVER and s.stack_len > 0 and f2_current_player(g, s) == F2_CHANCE


cdef void f2_returns(const F2Game* g, const F2State* s, double* out) noexcept nogil:
    """F51: 1/k to each of k winners, 0 to everyone else (all 0 before the end)."""
    cdef int f, k = 0
    for f in range(g.n):
        if (s.winners >> f) & 1:
            k += 1
    for f in range(g.n):
        out[f] = 0.0
        if s.phase == PH_OVER and k > 0 and (s.winners >> f) & 1:
            out[f] = 1.0 / k


# =====================================================================================================
# D. Cards phase (F10-F17)
# =====================================================================================================

cdef int _legal_cardturn(const F2Game* g, const F2State* s, const int64_t* fr, int* out) noexcept nogil:
    cdef int f = <int>fr[1], n = 0, i, c, q
    cdef int hs = g.hand_size
    cdef int tmp[SCRATCH]
    out[n] = _act(g, AK_WORD, W_END)
    n += 1
    for i in range(s.hand_len[f]):
        c = s.hands[f][i]
        out[n] = _act(g, AK_DISCARD, c)
        n += 1
        if _card_targets(g, s, f, c, 0, -1, tmp):
            out[n] = _act(g, AK_PLAY, c)
            n += 1
        for q in range(g.n):
            if s.alive[q] and _united(g, s, f, q) and s.hand_len[q] < hs:
                out[n] = _act(g, AK_GIVE, c * F2_MAX_FAMILIES + q)
                n += 1
    if s.hand_len[f] < hs:
        for q in range(g.n):
            if s.alive[q] and _united(g, s, f, q) and s.hand_len[q] > 0:
                out[n] = _act(g, AK_ASK, q)
                n += 1
    return n


cdef void _do_cardturn(const F2Game* g, F2State* s, int64_t* fr, int kind, int x) noexcept nogil:
    cdef int f = <int>fr[1], c, q
    cdef int64_t* nf
    if kind == AK_WORD:
        _pop(s)
        return
    fr[2] -= 1
    if kind == AK_PLAY:
        _hand_remove(s, f, x)
        nf = _push(s, FR_TARGET)
        nf[1] = f
        nf[2] = x
        nf[3] = 0
        nf[4] = -1
    elif kind == AK_DISCARD:  # F11: face down, rejoins the deck at the next shuffle
        _hand_remove(s, f, x)
        _bit_set(s.discards_seen[f], x)
    elif kind == AK_GIVE:
        c = x // F2_MAX_FAMILIES
        q = x % F2_MAX_FAMILIES
        _bit_set(s.seen_cards[q], c)  # F53.11: the receiver sees the offered card
        nf = _push(s, FR_ANSWER)
        nf[1] = f
        nf[2] = q
        nf[3] = A_GIVE
        nf[4] = c
    elif kind == AK_ASK:
        nf = _push(s, FR_ANSWER)
        nf[1] = f
        nf[2] = x
        nf[3] = A_ASK


cdef void _do_answer(const F2Game* g, F2State* s, const int64_t* fr, int kind, int x) noexcept nogil:
    cdef int a = <int>fr[1], b = <int>fr[2], what = <int>fr[3], p, m, pf, cap, from_escrow
    if kind == AK_WORD and x == W_REFUSE:
        return
    if what == A_GIVE:  # F11
        if _hand_has(s, a, <int>fr[4]):
            _hand_remove(s, a, <int>fr[4])
            _hand_add(s, b, <int>fr[4])
    elif what == A_ASK:
        _hand_remove(s, b, x)
        _hand_add(s, a, x)
        _bit_set(s.seen_cards[a], x)
    elif what == A_MARRY:
        _marry(g, s, <int>fr[4], <int>fr[5])
    elif what == A_ALLY:  # F43
        s.allied[a][b] = 1
        s.allied[b][a] = 1
    elif what == A_RELEASE or what == A_RANSOM:  # F42: p's escrow first, then cash
        p = <int>fr[4]
        m = <int>fr[5]
        if s.fam[p] < 0 or s.captor[p] < 0:
            return
        pf = s.fam[p]
        cap = s.captor[p]
        if s.escrow[p] + s.cash[pf] < m:
            return
        from_escrow = _min(s.escrow[p], m)
        s.escrow[p] -= from_escrow
        s.cash[pf] -= m - from_escrow
        s.cash[cap] += m
        _release(g, s, p)
        s.conduct[p] = cap  # F35.4: safe conduct from the former captor


cdef int _card_targets(const F2Game* g, const F2State* s, int f, int c, int stage, int arg,
                       int* out) noexcept nogil:
    """F12: what card c may be played on (its actions; a count)."""
    cdef int kind = g.card_kind[c], n = 0, p, y, v, i, k, q
    cdef bint bad
    cdef int tmp[SCRATCH]
    if kind == CK_LORD or kind == CK_LADY:
        p = g.card_person[c]
        if s.fam[p] >= 0 or _num_persons_of(g, s, f) >= g.max_persons:
            return 0
        k = _placement_villages(g, s, f, tmp)
        for i in range(k):
            out[n] = _act(g, AK_VILLAGE, tmp[i])
            n += 1
        if _prince_allowed(g, s, f, p):
            out[n] = _act(g, AK_WORD, W_MAKE_PRINCE)
            n += 1
        return n
    if kind == CK_DARC:  # F12: own free Lady, unmarried, holding no title
        for p in range(g.P):
            if s.fam[p] == f and _free(s, p) and not g.person_male[p] and s.spouse[p] < 0 \
                    and not _crowned(g, s, p):
                out[n] = _act(g, AK_PERSON, p)
                n += 1
        return n
    if kind == CK_BISHOP:
        for p in range(g.P):
            if s.fam[p] >= 0 and s.bishop[p] == g.card_bishopric[c]:
                return 0
        for p in range(g.P):
            if s.fam[p] == f and _free(s, p) and g.person_male[p] and s.spouse[p] < 0 and p != s.king \
                    and p != s.prince and s.bishop[p] < 0:
                out[n] = _act(g, AK_PERSON, p)
                n += 1
        return n
    if kind == CK_TITHE:
        for p in range(g.P):
            if s.fam[p] == f and s.bishop[p] >= 0 and s.tithe[s.bishop[p]] < 0:
                out[n] = _act(g, AK_PERSON, p)
                n += 1
        return n
    if kind == CK_TAX:
        for y in range(g.NF):
            if s.title[y] >= 0 and s.fam[s.title[y]] == f and s.tax[y] < 0:
                out[n] = _act(g, AK_FIEF, y)
                n += 1
        return n
    if kind == CK_ESCAPE:
        for v in range(g.V):
            if stage == 0:
                if _own_prisoners_at(g, s, f, v, NULL):
                    out[n] = _act(g, AK_VILLAGE, v)
                    n += 1
            else:
                if _mob_in(s, v) or s.mob_v == v:
                    continue
                bad = False
                for q in range(g.n):
                    if q != f and _has_tokens(g, s, q, v):
                        bad = True
                        break
                if not bad:
                    out[n] = _act(g, AK_VILLAGE, v)
                    n += 1
        return n
    if kind == CK_PLAGUE or kind == CK_BAD_WEATHER or kind == CK_FAMINE:
        for y in range(g.NF):
            if kind == CK_PLAGUE or (kind == CK_BAD_WEATHER and s.bad_weather[y] < 0) or \
                    (kind == CK_FAMINE and s.famine[y] < 0):
                out[n] = _act(g, AK_FIEF, y)
                n += 1
        return n
    if kind == CK_GOOD_WEATHER or kind == CK_GOOD_HARVEST:
        for y in range(g.NF):
            if (kind == CK_GOOD_WEATHER and s.bad_weather[y] >= 0) or (kind == CK_GOOD_HARVEST and s.famine[y] >= 0):
                out[n] = _act(g, AK_FIEF, y)
                n += 1
        return n
    if kind == CK_ASSASSIN:
        for p in range(g.P):
            if s.fam[p] >= 0:
                out[n] = _act(g, AK_PERSON, p)
                n += 1
        return n
    if kind == CK_PEASANT_REVOLT:
        if s.revolt_card >= 0:
            return 0
        if stage == 0:
            for y in range(g.NF):
                if s.famine[y] >= 0 and _revolt_villages(g, s, y, tmp):
                    out[n] = _act(g, AK_FIEF, y)
                    n += 1
            return n
        k = _revolt_villages(g, s, arg, tmp)
        for i in range(k):
            out[n] = _act(g, AK_VILLAGE, tmp[i])
            n += 1
        return n
    return 0  # justice: only in the window (F15)


cdef inline bint _road_tokens(const F2Game* g, const F2State* s, int v) noexcept nogil:
    cdef int p
    for p in range(g.P):
        if s.fam[p] >= 0 and s.loc[p] == v and s.onroad[p] >= 0:
            return True
    return False


cdef int _revolt_villages(const F2Game* g, const F2State* s, int y, int* out) noexcept nogil:
    cdef int i, v, n = 0
    for i in range(g.fief_nv[y]):
        v = g.fief_villages[y][i]
        if s.bad_weather[y] >= 0:  # F16: under Bad Weather only an empty village
            if _empty(g, s, v) and not _road_tokens(g, s, v):
                out[n] = v
                n += 1
        elif not _road_tokens(g, s, v):
            out[n] = v
            n += 1
    return n


cdef int _own_prisoners_at(const F2Game* g, const F2State* s, int f, int v, int* out) noexcept nogil:
    cdef int p, n = 0
    for p in range(g.P):
        if s.fam[p] == f and s.captor[p] >= 0 and s.loc[p] == v:
            if out != NULL:
                out[n] = p
            n += 1
    return n


cdef int _placement_villages(const F2Game* g, const F2State* s, int f, int* out) noexcept nogil:
    """F13.1: the first non-empty tier."""
    cdef int v, n = 0
    for v in range(g.V):
        if s.owner[v] == f and (s.castle[v] or s.city[v]) and not _mob_in(s, v):
            out[n] = v
            n += 1
    if n:
        return n
    for v in range(g.V):
        if _occupies(g, s, f, v):
            out[n] = v
            n += 1
    if n:
        return n
    for v in range(g.V):
        if s.owner[v] >= 0 and s.allied[f][s.owner[v]] and not _mob_in(s, v):
            out[n] = v
            n += 1
    if n:
        return n
    for v in range(g.V):
        if s.owner[v] < 0 and _empty(g, s, v):
            out[n] = v
            n += 1
    return n


cdef bint _prince_allowed(const F2Game* g, const F2State* s, int f, int p) noexcept nogil:
    cdef int k = s.king, q = s.queen
    return (g.person_male[p] and s.prince < 0 and k >= 0 and q >= 0 and s.spouse[k] == q
            and _free(s, k) and _free(s, q) and (f == s.fam[k] or f == s.fam[q]))


cdef void _do_target(const F2Game* g, F2State* s, int64_t* fr, int akind, int x) noexcept nogil:
    cdef int f = <int>fr[1], c = <int>fr[2], stage = <int>fr[3], frm = <int>fr[4]
    cdef int kind = g.card_kind[c], p, y, i, k
    cdef int tmp[F2_MAX_PERSONS]
    cdef int64_t* nf
    if kind == CK_LORD or kind == CK_LADY:
        _pop(s)
        p = g.card_person[c]
        s.fam[p] = f
        s.captor[p] = -1
        s.onroad[p] = -1
        s.used[p] = 0
        s.spouse[p] = -1
        s.escrow[p] = 0
        if akind == AK_WORD:  # F40.2: made Prince, beside the King
            s.loc[p] = s.loc[s.king] if s.onroad[s.king] < 0 else s.onroad[s.king]
            s.prince = p
        else:
            s.loc[p] = x
        for y in range(g.NF):  # F13.3: retained titles pass to the newborn
            if s.retained[y] == f:
                s.retained[y] = -1
                _set_title(s, y, p)
        _check_owner(g, s, s.loc[p])
        if _transferable(g, s, f, p, tmp):
            nf = _push(s, FR_BIRTH)  # F13.4
            nf[1] = f
            nf[2] = p
    elif kind == CK_DARC:
        _pop(s)
        s.darc[x] = 1
    elif kind == CK_BISHOP:
        _pop(s)
        s.bishop[x] = g.card_bishopric[c]
    elif kind == CK_TITHE:
        _pop(s)
        s.tithe[s.bishop[x]] = c
    elif kind == CK_TAX:
        _pop(s)
        s.tax[x] = c
    elif kind == CK_ESCAPE:
        if stage == 0:
            fr[3] = 1
            fr[4] = x
        else:  # F12: all the family's prisoners there, freed together on the chosen village
            _pop(s)
            k = _own_prisoners_at(g, s, f, frm, tmp)
            for i in range(k):
                p = tmp[i]
                _release(g, s, p)
                s.loc[p] = x
                s.onroad[p] = -1
            _check_owner(g, s, x)
            _check_owner(g, s, frm)
    elif kind == CK_PLAGUE:
        _pop(s)
        _plague(g, s, x)
    elif kind == CK_ASSASSIN:  # F15
        _pop(s)
        nf = _push(s, FR_JUSTICE)
        nf[1] = f
        nf[2] = 0
        tmp[0] = x
        _kill(g, s, tmp, 1, False)
    elif kind == CK_BAD_WEATHER:
        _pop(s)
        s.bad_weather[x] = c
    elif kind == CK_FAMINE:
        _pop(s)
        s.famine[x] = c
    elif kind == CK_GOOD_WEATHER:
        _pop(s)
        s.bad_weather[x] = -1
    elif kind == CK_GOOD_HARVEST:
        _pop(s)
        s.famine[x] = -1
    elif kind == CK_PEASANT_REVOLT:
        if stage == 0:
            fr[3] = 1
            fr[4] = x
        else:  # F17.1: three dice of Peasants
            _pop(s)
            s.dice_len = 0
            nf = _push(s, FR_DICE)
            nf[1] = g.revolt_dice
            nf[2] = D_REVOLT
            nf[3] = x
            nf[4] = f
            nf[5] = c


cdef int _justice_targets(const F2Game* g, const F2State* s, int a, int* out) noexcept nogil:
    """F15.2: free persons of the assassin's family, except the King, the Prince and the Regent."""
    cdef int p, n = 0
    for p in range(g.P):
        if s.fam[p] == a and _free(s, p) and p != s.king and p != s.prince and not (p == s.queen and s.regent):
            out[n] = p
            n += 1
    return n


cdef void _plague(const F2Game* g, F2State* s, int y) noexcept nogil:
    """F14: halve each family's Soldiers per village; then a die for every person in the fief."""
    cdef int i, v, f, q, k, total, p, n = 0
    cdef int64_t* nf
    for i in range(g.fief_nv[y]):
        v = g.fief_villages[y][i]
        for f in range(g.n):
            _guards_at(s, f, v, False, &q, &k)
            total = _sold_sum(s, f, v) + q + k
            _remove_soldiers(g, s, f, v, total // 2, False)
    for p in range(g.P):
        if s.fam[p] >= 0 and s.loc[p] >= 0 and g.village_fief[s.loc[p]] == y:
            n += 1
    if n:
        s.dice_len = 0
        nf = _push(s, FR_DICE)
        nf[1] = n
        nf[2] = D_PLAGUE
        nf[3] = y


cdef int _remove_soldiers(const F2Game* g, F2State* s, int f, int v, int n, bint road_first) noexcept nogil:
    """Ordinary first (road ones first when asked, the most travelled first, F2-D3), then Queen's Guard, then
    King's Guard (F14, F33.3). Returns how many could not be removed."""
    cdef int i, t, u, q, k
    if road_first and n > 0:
        for i in range(s.n_assaults):
            if s.assaults[i].f == f and s.assaults[i].v == v and s.assaults[i].frm >= 0:
                t = _min(s.assaults[i].soldiers, n)
                s.assaults[i].soldiers -= t
                n -= t
    for u in range(3, -1, -1):
        t = _min(s.sold[f][v][u], n)
        s.sold[f][v][u] -= t
        n -= t
    _guards_at(s, f, v, True, &q, &k)
    if n > 0 and q > 0:
        t = _min(q, n)
        s.qg -= t
        n -= t
    if n > 0 and k > 0:
        t = _min(k, n)
        s.kg -= t
        n -= t
    return n


cdef void _after_dice(const F2Game* g, F2State* s, const int64_t* fr) noexcept nogil:
    cdef int purpose = <int>fr[2], nd = s.dice_len, i, p, k = 0, nd2, total = 0
    cdef int dice[F2_MAX_DICE]
    cdef int dead[F2_MAX_PERSONS]
    for i in range(nd):
        dice[i] = s.dice[i]
    s.dice_len = 0
    if purpose == D_PLAGUE:
        i = 0
        for p in range(g.P):
            if s.fam[p] >= 0 and s.loc[p] >= 0 and g.village_fief[s.loc[p]] == fr[3]:
                if i < nd and dice[i] < g.plague_survive_from:
                    dead[k] = p
                    k += 1
                i += 1
        _kill(g, s, dead, k, False)
    elif purpose == D_REVOLT:
        for i in range(nd):
            total += dice[i]
        _revolt(g, s, <int>fr[3], <int>fr[4], <int>fr[5], total)
    elif purpose == D_CALM:
        _calm_result(g, s, fr, dice[0])
    elif purpose == D_BATTLE:
        _battle_losses(g, s, dice, nd)


cdef void _revolt(const F2Game* g, F2State* s, int v, int f, int c, int n) noexcept nogil:
    """F17: the mob appears; an immediate battle if the village holds tokens (the mob attacking)."""
    cdef int64_t* nf
    s.revolt_card = c
    s.mob_ctrl = f
    s.mob_v = v
    s.mob_n = _min(n, g.lim_peasants)
    s.mob_road = -1
    if _any_tokens(g, s, v, -1):
        nf = _push(s, FR_BATTLE)
        nf[1] = v
        nf[2] = F2_MOB
        nf[3] = -1
        nf[4] = B_START
        nf[6] = 1
        nf[10] = -1
    else:
        _mob_takes(g, s, v)


cdef void _mob_takes(const F2Game* g, F2State* s, int v) noexcept nogil:
    """F17.3: Mills, Wine Presses and a Castle go back to the supply; a village not enfeoffed becomes unowned."""
    s.mills[v] = 0
    s.presses[v] = 0
    s.castle[v] = 0
    if not _enfeoffed(g, s, v):
        s.owner[v] = -1


# =====================================================================================================
# E. Income and purchases (F20-F24)
# =====================================================================================================

cdef inline void _pay(const F2Game* g, const F2State* s, int32_t* gain, int32_t* esc, int f, int amount,
                      int person) noexcept nogil:
    if f < 0 or not s.alive[f] or amount <= 0:
        return
    if person >= 0 and s.fam[person] == f and s.captor[person] >= 0:
        esc[person] += amount
    else:
        gain[f] += amount


cdef void _income(const F2Game* g, F2State* s) noexcept nogil:
    """F20-F21: computed for all families at once; a prisoner's share goes to his escrow."""
    cdef int32_t gain[F2_MAX_FAMILIES]
    cdef int32_t esc[F2_MAX_PERSONS]
    cdef int v, f, y, holder, fixed, crops, b, bishop, p, ok, i, q, w
    cdef bint earns, bad
    memset(gain, 0, sizeof(gain))
    memset(esc, 0, sizeof(esc))
    for v in range(g.V):
        f = s.owner[v]
        if f < 0:
            continue
        y = g.village_fief[v]
        earns = _occupies(g, s, f, v) or (_fief_family(s, y) == f and s.capital[y] >= 0
                                          and _occupies(g, s, f, s.capital[y]))
        if not earns:
            continue
        holder = s.title[y] if _fief_family(s, y) == f else -1  # F21: the fief's income is its holder's
        fixed = g.inc_castle * s.castle[v] + g.inc_city * s.city[v]
        _pay(g, s, gain, esc, f, fixed, holder)
        crops = 0 if s.famine[y] >= 0 else g.inc_mill * s.mills[v] + g.inc_press * s.presses[v]
        b = g.village_bishopric[v]
        bishop = -1
        for p in range(g.P):
            if s.bishop[p] == b and s.fam[p] >= 0:
                bishop = p
                break
        if s.tithe[b] >= 0 and bishop >= 0:
            _pay(g, s, gain, esc, s.fam[bishop], crops, bishop)  # F20.2: in the Lords' stead
        else:
            _pay(g, s, gain, esc, f, crops, holder)
    for y in range(g.NF):  # F20.3: Tax
        if s.tax[y] < 0 or s.famine[y] >= 0:
            continue
        f = _fief_family(s, y)
        if f < 0:
            continue
        ok = 0
        for i in range(g.fief_nv[y]):
            w = g.fief_villages[y][i]
            if _mob_in(s, w):
                continue
            bad = False
            for q in range(g.n):
                if _enemies(s, f, q) and _soldiers_at(s, q, w) > 0:
                    bad = True
                    break
            if not bad:
                ok += 1
        _pay(g, s, gain, esc, f, g.inc_tax * ok, s.title[y])
    # F20.4: pensions; during a Regency both go to the Regent
    if s.regent and s.queen >= 0:
        _pay(g, s, gain, esc, s.fam[s.queen], g.inc_king + g.inc_queen, s.queen)
    else:
        if s.king >= 0:
            _pay(g, s, gain, esc, s.fam[s.king], g.inc_king, s.king)
        if s.queen >= 0:
            _pay(g, s, gain, esc, s.fam[s.queen], g.inc_queen, s.queen)
    for f in range(g.n):
        s.cash[f] += gain[f]
    for p in range(g.P):
        s.escrow[p] += esc[p]
    for y in range(g.NF):  # F20.5: then every Tax and Tithe card is discarded
        s.tax[y] = -1
    for b in range(g.NB):
        s.tithe[b] = -1


cdef int _legal_purchase(const F2Game* g, const F2State* s, const int64_t* fr, int* out) noexcept nogil:
    cdef int f = <int>fr[1], n = 0, i
    cdef int tmp[SCRATCH]
    if fr[3] == 0:
        out[n] = _act(g, AK_WORD, W_END)
        n += 1
        for i in range(9):
            if _purchase_targets(g, s, f, i, 1, -1, -1, tmp):
                out[n] = _act(g, AK_BUY, i)
                n += 1
        return n
    return _purchase_targets(g, s, f, <int>fr[2], <int>fr[3], <int>fr[4], <int>fr[5], out)


cdef int _ordinary_on_board(const F2Game* g, const F2State* s, int f) noexcept nogil:
    cdef int v, i, n = 0
    for v in range(g.V):
        n += _sold_sum(s, f, v)
    for i in range(s.n_assaults):
        if s.assaults[i].f == f:
            n += s.assaults[i].soldiers
    return n


cdef int _purchase_targets(const F2Game* g, const F2State* s, int f, int item, int stage, int a1, int a2,
                           int* out) noexcept nogil:
    """F22: the places an item may go; for the immediate items the single word "end" stands for "here"."""
    cdef int cash = s.cash[f], n = 0, v, p, y, leader, strength, cap, total, k, i
    cdef int tmp[SCRATCH]
    if item == BUY_SOLDIER:
        if cash < g.pr_soldier or _ordinary_on_board(g, s, f) >= g.lim_soldiers:
            return 0
        for v in range(g.V):
            if not _mob_in(s, v) and ((s.owner[v] == f and (s.castle[v] or s.city[v]))
                                      or _free_at(g, s, f, v, False, NULL)):
                out[n] = _act(g, AK_VILLAGE, v)
                n += 1
        return n
    if item == BUY_KINGS_GUARD or item == BUY_QUEENS_GUARD:
        if item == BUY_KINGS_GUARD:
            leader, strength, cap = _kg_leader(s), s.kg, g.lim_kg
        else:
            leader, strength, cap = _qg_leader(s), s.qg, g.lim_qg
        if cash >= g.pr_soldier and leader >= 0 and s.fam[leader] == f and _free(s, leader) \
                and 0 <= strength < cap:
            out[0] = _act(g, AK_WORD, W_END)
            return 1
        return 0
    if item == BUY_PEASANT:
        if cash >= g.pr_peasant and s.mob_n > 0 and s.mob_n < g.lim_peasants:
            out[0] = _act(g, AK_WORD, W_END)
            return 1
        return 0
    if item == BUY_WINE_PRESS or item == BUY_MILL:
        total = 0
        for v in range(g.V):
            total += s.presses[v] if item == BUY_WINE_PRESS else s.mills[v]
        if item == BUY_WINE_PRESS:
            if cash < g.pr_press or total >= g.lim_presses:
                return 0
        else:
            if cash < g.pr_mill or total >= g.lim_mills:
                return 0
        for v in range(g.V):
            if _controls(g, s, f, v) and not _mob_in(s, v) and s.mills[v] + s.presses[v] < g.lim_improvements:
                out[n] = _act(g, AK_VILLAGE, v)
                n += 1
        return n
    if item == BUY_CASTLE:
        total = 0
        for v in range(g.V):
            total += s.castle[v]
        if cash < g.pr_castle or total >= g.lim_castles:
            return 0
        for v in range(g.V):
            if _controls(g, s, f, v) and not s.castle[v] and not s.city[v] and not _mob_in(s, v):
                out[n] = _act(g, AK_VILLAGE, v)
                n += 1
        return n
    if item == BUY_CARDINAL:
        if cash < g.pr_cardinal or _cardinals(g, s) >= g.cardinal_cards:
            return 0
        for p in range(g.P):
            if s.fam[p] == f and _free(s, p) and s.bishop[p] >= 0 and not s.cardinal[p]:
                out[n] = _act(g, AK_PERSON, p)
                n += 1
        return n
    if item == BUY_FIEF_TITLE:  # F23
        if stage == 1:
            for y in range(g.NF):
                if _can_enfeoff(g, s, f, y):
                    out[n] = _act(g, AK_FIEF, y)
                    n += 1
            return n
        if stage == 2:
            for p in range(g.P):
                if s.fam[p] == f and _free(s, p):
                    out[n] = _act(g, AK_PERSON, p)
                    n += 1
            return n
        k = _capital_choices(g, s, f, a1, tmp)
        for i in range(k):
            out[n] = _act(g, AK_VILLAGE, tmp[i])
            n += 1
        return n
    return 0


cdef bint _can_enfeoff(const F2Game* g, const F2State* s, int f, int y) noexcept nogil:
    cdef int i, v, p
    cdef bint any_free = False
    cdef int tmp[8]
    if _fief_family(s, y) >= 0 or s.cash[f] < g.fief_price[y]:
        return False
    for i in range(g.fief_nv[y]):
        v = g.fief_villages[y][i]
        if not (s.owner[v] == f and _occupies(g, s, f, v)):
            return False
    for p in range(g.P):
        if s.fam[p] == f and _free(s, p):
            any_free = True
            break
    if not any_free:
        return False
    return _capital_choices(g, s, f, y, tmp) > 0


cdef int _capital_choices(const F2Game* g, const F2State* s, int f, int y, int* out) noexcept nogil:
    cdef int i, v, n = 0, total = 0
    for i in range(g.fief_nv[y]):
        v = g.fief_villages[y][i]
        if s.city[v]:
            out[n] = v
            n += 1
    if n:
        return n  # F23: an existing City is the capital
    for v in range(g.V):
        total += s.city[v]
    if total >= g.lim_cities:
        return 0
    for i in range(g.fief_nv[y]):
        v = g.fief_villages[y][i]
        if s.castle[v] and s.owner[v] == f:
            out[n] = v
            n += 1
    return n


cdef void _do_purchase(const F2Game* g, F2State* s, int64_t* fr, int kind, int x) noexcept nogil:
    cdef int f = <int>fr[1], k, item
    cdef bint done = True
    cdef int tmp[8]
    if fr[3] == 0:
        if kind == AK_WORD:
            _pop(s)
            return
        fr[2] = x
        fr[3] = 1
        return
    item = <int>fr[2]
    if item == BUY_SOLDIER:
        s.cash[f] -= g.pr_soldier
        s.sold[f][x][0] += 1
        _check_owner(g, s, x)
    elif item == BUY_KINGS_GUARD:
        s.cash[f] -= g.pr_soldier
        s.kg += 1
    elif item == BUY_QUEENS_GUARD:
        s.cash[f] -= g.pr_soldier
        s.qg += 1
    elif item == BUY_PEASANT:
        s.cash[f] -= g.pr_peasant
        s.mob_n += 1
    elif item == BUY_WINE_PRESS:
        s.cash[f] -= g.pr_press
        s.presses[x] += 1
    elif item == BUY_MILL:
        s.cash[f] -= g.pr_mill
        s.mills[x] += 1
    elif item == BUY_CASTLE:
        s.cash[f] -= g.pr_castle
        s.castle[x] = 1
    elif item == BUY_CARDINAL:
        s.cash[f] -= g.pr_cardinal
        s.cardinal[x] = 1
    elif item == BUY_FIEF_TITLE:
        if fr[3] == 1:
            fr[3] = 2
            fr[4] = x
            done = False
        elif fr[3] == 2:
            fr[3] = 3
            fr[5] = x
            done = False
            k = _capital_choices(g, s, f, <int>fr[4], tmp)
            if k == 1:
                _enfeoff(g, s, f, <int>fr[4], <int>fr[5], tmp[0])
                done = True
        else:
            _enfeoff(g, s, f, <int>fr[4], <int>fr[5], x)
    if done:
        fr[2] = -1
        fr[3] = 0
        fr[4] = -1
        fr[5] = -1


cdef void _enfeoff(const F2Game* g, F2State* s, int f, int y, int p, int v) noexcept nogil:
    """F23: pay, the Castle becomes a City (the capital), every village of the fief is the holder's."""
    cdef int i
    s.cash[f] -= g.fief_price[y]
    if not s.city[v]:
        s.castle[v] = 0
        s.city[v] = 1
    s.capital[y] = v
    s.title[y] = p
    s.pending[y] = -1
    s.retained[y] = -1
    for i in range(g.fief_nv[y]):
        s.owner[g.fief_villages[y][i]] = f


cdef int _transferable(const F2Game* g, const F2State* s, int f, int b, int* out) noexcept nogil:
    """F24: fief titles a free person of f may give to b, keeping a crown of rank >= the title's."""
    cdef int y, a, n = 0
    if not _free(s, b) or s.fam[b] != f:
        return 0
    for y in range(g.NF):
        a = s.title[y]
        if a >= 0 and a != b and s.fam[a] == f and _free(s, a) and \
                _crown_rank(g, s, a, y) >= g.fief_rank[y]:
            if out != NULL:
                out[n] = y
            n += 1
    return n


# =====================================================================================================
# F. Movement (F25-F27)
# =====================================================================================================

cdef inline bint _bw(const F2Game* g, const F2State* s, int v) noexcept nogil:
    return s.bad_weather[g.village_fief[v]] >= 0


cdef bint _road_closed(const F2Game* g, const F2State* s, int f, int x, int w) noexcept nogil:
    """F26.6: a road into x holding another family's (or the mob's) assaulting tokens is closed for leaving x."""
    cdef int p
    if s.mob_v == x and s.mob_road == w and s.mob_n > 0:
        return True
    for p in range(g.P):
        if s.fam[p] >= 0 and s.fam[p] != f and s.loc[p] == x and s.onroad[p] == w and s.captor[p] == -1:
            return True
    return False


cdef uint64_t _closed_roads(const F2Game* g, const F2State* s, int f, int x) noexcept nogil:
    """The set of villages w whose road into x is closed for f leaving x (_road_closed for every w at once)."""
    cdef uint64_t m = 0
    cdef int p
    if s.mob_v == x and s.mob_road >= 0 and s.mob_n > 0:
        m |= (<uint64_t>1) << s.mob_road
    for p in range(g.P):
        if s.loc[p] == x and s.onroad[p] >= 0 and s.fam[p] >= 0 and s.fam[p] != f and s.captor[p] == -1:
            m |= (<uint64_t>1) << s.onroad[p]
    return m


cdef int _destinations(const F2Game* g, const F2State* s, int f, int x, int mode, int64_t refmask,
                       int* out) noexcept nogil:
    """Villages a group of f may step to from x: mode 0 a step (F25-F26), 1 evacuation, 2 retreat (F27)."""
    cdef int i, w, n = 0, o, p, k
    cdef int tmp[F2_MAX_PERSONS]
    cdef bint conducted
    cdef uint64_t closed
    if _bw(g, s, x):
        return 0  # F16: nothing starts from a Bad Weather fief
    o = _exit_blocked(g, s, f, x)
    if o >= 0:
        conducted = False
        if mode == 0:
            k = _movers(g, s, f, x, tmp)
            for i in range(k):
                if s.conduct[tmp[i]] == o:
                    conducted = True
        if not conducted:
            return 0  # F26.4: refused once, f may not ask to leave x again this turn (F35.4: safe conduct may)
    closed = _closed_roads(g, s, f, x)
    for i in range(g.num_adj[x]):
        w = g.adj[x][i]
        if (closed >> w) & 1:
            continue
        if mode == 0:
            if (s.refused >> w) & 1 or (_mob_in(s, w) and _bw(g, s, w)):
                continue
        else:
            if (refmask >> w) & 1 or _mob_in(s, w) or (s.mob_v == w and s.mob_n > 0):
                continue
        if out != NULL:
            out[n] = w
        n += 1
    return n


cdef int _exit_consent_from(const F2Game* g, const F2State* s, int f, int x) noexcept nogil:
    """F26.4: the family whose consent f needs to step out of x (a Castle or City village owned by another
    family that occupies it), else -1."""
    cdef int o = s.owner[x]
    if (s.castle[x] or s.city[x]) and o >= 0 and o != f and _occupies(g, s, o, x):
        return o
    return -1


cdef int _exit_blocked(const F2Game* g, const F2State* s, int f, int x) noexcept nogil:
    """F26.4: the owner of x when f was refused leaving x this turn and still needs its consent, else -1."""
    cdef int o = _exit_consent_from(g, s, f, x)
    return o if o >= 0 and f < F2_MAX_FAMILIES and (s.exit_refused[f] >> x) & 1 else -1


cdef int _conduct_group(const F2Game* g, const F2State* s, const int64_t* fr) noexcept nogil:
    """F35.4: the former captor whose villages a group only of safe-conducted persons (no ordinary Soldier, no
    prisoner) leaves and crosses without consent; -1 if none (or if the persons' conducts differ)."""
    cdef int p, held = -2
    if fr[9] or not fr[4] or fr[5] or fr[6] or fr[7] or fr[8]:
        return -1
    for p in range(g.P):
        if _mask_has(fr[4], p):
            if held == -2:
                held = s.conduct[p]
            elif held != s.conduct[p]:
                return -1
    return held


cdef bint _in_conduct(const F2Game* g, const F2State* s, int64_t pmask) noexcept nogil:
    """F35.4: a person under safe conduct is in the group, so the group may not declare an assault."""
    cdef int p
    for p in range(g.P):
        if _mask_has(pmask, p) and s.conduct[p] >= 0:
            return True
    return False


cdef bint _no_declaration(const F2State* s, int f, int w) noexcept nogil:
    """A step to w that declares no assault: w holds no Peasants, or f joins its own road assault there."""
    cdef int a = _assault_of(s, f, w)
    return not _mob_in(s, w) or (a >= 0 and s.assaults[a].frm >= 0)


cdef int _step_persons(const F2Game* g, const F2State* s, int f, int x, int* out) noexcept nogil:
    """Movers of f in x that may be in a step: after a refused exit (F26.4) only persons under safe conduct
    from x's owner (F35.4); a person under safe conduct only if a step from x need declare no assault."""
    cdef int o, nd, i, j, p, n = 0
    cdef int dests[F2_NEIGHBORS_SCRATCH]
    cdef int movers[F2_MAX_PERSONS]
    cdef int nm = _movers(g, s, f, x, movers)
    cdef bint ok
    if nm == 0:
        return 0
    o = _exit_blocked(g, s, f, x)
    nd = _destinations(g, s, f, x, 0, 0, dests)
    for i in range(nm):
        p = movers[i]
        if o >= 0 and s.conduct[p] != o:
            continue
        if s.conduct[p] >= 0:
            ok = False
            for j in range(nd):
                if _no_declaration(s, f, dests[j]):
                    ok = True
                    break
            if not ok:
                continue
        if out != NULL:
            out[n] = p
        n += 1
    return n


cdef int _movers(const F2Game* g, const F2State* s, int f, int x, int* out) noexcept nogil:
    """Free persons of f in x that may still lead a step (F25: used < allowance)."""
    cdef int here[F2_MAX_PERSONS]
    cdef int k = _free_at(g, s, f, x, False, here), i, p, cap, n = 0
    cdef bint darc = False
    for i in range(k):
        p = here[i]
        if s.darc[p] and s.used[p] < g.darc_allowance:
            darc = True
    cap = g.darc_allowance if darc else g.allowance
    for i in range(k):
        p = here[i]
        if s.used[p] < cap:
            if out != NULL:
                out[n] = p
            n += 1
    return n


cdef inline int _assault_of(const F2State* s, int f, int v) noexcept nogil:
    cdef int i
    for i in range(s.n_assaults):
        if s.assaults[i].f == f and s.assaults[i].v == v:
            return i
    return -1


cdef int _legal_move(const F2Game* g, const F2State* s, const int64_t* fr, int* out) noexcept nogil:
    cdef int f = <int>fr[1], n = 0, x, q, i, w, p
    cdef uint8_t free_here[F2_MAX_VILLAGES]  # families with a free person in the village (not on a road)
    memset(free_here, 0, sizeof(free_here))
    for p in range(g.P):
        if s.fam[p] >= 0 and s.captor[p] == -1 and s.onroad[p] == -1 and s.loc[p] >= 0:
            free_here[s.loc[p]] |= 1 << s.fam[p]
    out[n] = _act(g, AK_WORD, W_END)
    n += 1
    for x in range(g.V):
        if (free_here[x] >> f) & 1 and _step_persons(g, s, f, x, NULL) and _destinations(g, s, f, x, 0, 0, NULL):
            out[n] = _act(g, AK_GROUP, x)
            n += 1
        if ((free_here[x] >> f) & 1 or _soldiers_at(s, f, x) > 0) and not _bw(g, s, x) \
                and _assault_of(s, f, x) < 0 \
                and not _conducted_at(g, s, f, x):  # F35.4: no assault declared under safe conduct
            for q in range(g.n):  # F26.5: inside assault
                if q != f and ((free_here[x] >> q) & 1 or _soldiers_at(s, q, x) > 0):
                    out[n] = _act(g, AK_INSIDE, x * F2_MAX_FAMILIES + q)
                    n += 1
    if _mob_can_move(g, s, fr):
        x = s.mob_v
        for i in range(g.num_adj[x]):
            w = g.adj[x][i]
            if not (_bw(g, s, w) and _any_tokens(g, s, w, -1)) and not _road_closed(g, s, F2_MOB, x, w):
                out[n] = _act(g, AK_MOB, w)
                n += 1
        if fr[2] > 0:
            out[n] = _act(g, AK_WORD, W_MOB_STOPS)
            n += 1
    return n


cdef bint _conducted_at(const F2Game* g, const F2State* s, int f, int x) noexcept nogil:
    cdef int tmp[F2_MAX_PERSONS]
    cdef int k = _free_at(g, s, f, x, False, tmp), i
    for i in range(k):
        if s.conduct[tmp[i]] >= 0:
            return True
    return False


cdef bint _mob_can_move(const F2Game* g, const F2State* s, const int64_t* fr) noexcept nogil:
    """F18.2: the controller moves the mob up to 2 steps; F18.4: not once he is eliminated."""
    return (fr[1] == s.mob_ctrl and s.mob_n > 0 and s.mob_road == -1 and s.mob_v >= 0
            and fr[2] < 2 and fr[3] == 0 and not _bw(g, s, s.mob_v))


cdef void _do_move(const F2Game* g, F2State* s, int64_t* fr, int kind, int x) noexcept nogil:
    cdef int f = <int>fr[1], v, q, frm, p
    cdef int64_t* nf
    if kind == AK_WORD and x == W_END:
        _mob_stop(g, s, fr)
        _pop(s)
        for p in range(g.P):  # F35.4: the safe conduct lasts the family's next movement turn
            if s.fam[p] == f:
                s.conduct[p] = -1
        for v in range(g.V):  # F9.3: every village is checked once at the end of the turn
            _check_owner(g, s, v)
        _free_unescorted(g, s)
    elif kind == AK_WORD:  # mob stops
        _mob_stop(g, s, fr)
    elif kind == AK_GROUP:
        nf = _push(s, FR_GROUP)
        nf[1] = f
        nf[2] = x
        nf[10] = -1
    elif kind == AK_INSIDE:
        v = x // F2_MAX_FAMILIES
        q = x % F2_MAX_FAMILIES
        _declare(g, s, f, v, -1, q, NULL)
    elif kind == AK_MOB:
        if _any_tokens(g, s, x, -1):
            fr[3] = 1  # F18.2: entering an occupied village is a road assault and ends its move
            frm = s.mob_v
            s.mob_v = x
            s.mob_road = frm
            _declare(g, s, F2_MOB, x, frm, -1, NULL)
        else:
            s.mob_v = x
            fr[2] += 1
            if fr[2] >= 2:
                _mob_stop(g, s, fr)


cdef void _mob_stop(const F2Game* g, F2State* s, int64_t* fr) noexcept nogil:
    if fr[2] > 0 and fr[3] == 0 and s.mob_n > 0 and s.mob_road == -1:
        fr[3] = 1
        if not _any_tokens(g, s, s.mob_v, -1):
            _mob_takes(g, s, s.mob_v)  # F18.2: stopping in an empty village takes it
    if fr[2] > 0:
        fr[3] = 1


# ---- a group and its step (F25) ------------------------------------------------------------------------
# FR_GROUP: [kind, family, from, stage, persons mask, k0, k1, k2, prisoners mask, mode, destination, refused]

cdef int _allowance(const F2Game* g, const F2State* s, int64_t pmask) noexcept nogil:
    cdef int p
    for p in range(g.P):
        if _mask_has(pmask, p) and s.darc[p]:
            return g.darc_allowance
    return g.allowance


cdef int _legal_group(const F2Game* g, const F2State* s, const int64_t* fr, int* out) noexcept nogil:
    cdef int f = <int>fr[1], x = <int>fr[2], stage = <int>fr[3], mode = <int>fr[9], n = 0, k, i, p, u, avail
    cdef int A, w, a
    cdef int64_t pmask = fr[4]
    cdef bint ok, can_assault
    cdef int tmp[F2_MAX_PERSONS]
    cdef int assault_word
    if stage == 0:
        k = _free_at(g, s, f, x, False, tmp) if mode else _step_persons(g, s, f, x, tmp)
        for i in range(k):
            p = tmp[i]
            if not _mask_has(pmask, p):
                out[n] = _act(g, AK_PERSON, p)
                n += 1
        if pmask:
            ok = True
            if not mode:
                A = _allowance(g, s, pmask)
                for p in range(g.P):
                    if _mask_has(pmask, p) and not s.used[p] < A:
                        ok = False
            if ok:
                out[n] = _act(g, AK_WORD, W_PERSONS_DONE)
                n += 1
        return n
    if stage == 1 or stage == 2 or stage == 3:
        u = stage - 1
        avail = _sold_sum(s, f, x) if mode else s.sold[f][x][u]
        for k in range(avail + 1):
            out[n] = _act(g, AK_SOLDIERS, u * g.K + k)
            n += 1
        return n
    if stage == 4:
        out[n] = _act(g, AK_WORD, W_PRISONERS_DONE)
        n += 1
        A = _allowance(g, s, pmask)
        for p in range(g.P):
            if s.captor[p] == f and s.loc[p] == x and s.onroad[p] == -1 and not _mask_has(fr[8], p) \
                    and (mode or s.used[p] < A) \
                    and (mode or _exit_blocked(g, s, f, x) < 0):  # F26.4: only a safe-conducted group leaves
                out[n] = _act(g, AK_PRISONER, p)
                n += 1
        return n
    if stage == 5:
        k = _destinations(g, s, f, x, mode, fr[11], tmp)
        for i in range(k):
            if mode or not _in_conduct(g, s, pmask) or _no_declaration(s, f, tmp[i]):  # F35.4
                out[n] = _act(g, AK_VILLAGE, tmp[i])
                n += 1
        if mode:
            out[n] = _act(g, AK_WORD, W_STOP)
            n += 1
        return n
    w = <int>fr[10]
    a = _assault_of(s, f, w)
    can_assault = not _bw(g, s, w) and (a < 0 or s.assaults[a].frm >= 0) and \
        not (_in_conduct(g, s, pmask) and a < 0)
    assault_word = _act(g, AK_WORD, W_JOIN_ASSAULT if a >= 0 else W_ASSAULT)
    if stage == 8:
        out[n] = _act(g, AK_WORD, W_ASK_CONSENT)
        n += 1
        if can_assault:
            out[n] = assault_word
            n += 1
        return n
    if stage == 7:
        out[n] = _act(g, AK_WORD, W_TURN_BACK)
        n += 1
        if can_assault:
            out[n] = assault_word
            n += 1
        return n
    return 0


cdef bint _auto_group(const F2Game* g, F2State* s, int64_t* fr) noexcept nogil:
    cdef int f = <int>fr[1], x = <int>fr[2], stage = <int>fr[3], mode = <int>fr[9], u, w, granted
    cdef bint skip
    cdef int64_t fc[F2_FRAME]
    cdef int buf[F2_MAX_LEGAL]
    if stage == 1 or stage == 2 or stage == 3:
        u = stage - 1
        skip = (mode and u > 0) or (not mode and (u >= _allowance(g, s, fr[4]) or s.sold[f][x][u] == 0)) \
            or (mode and _sold_sum(s, f, x) == 0) or (not mode and _exit_blocked(g, s, f, x) >= 0)
        if skip:
            fr[3] += 1
            return True
        return False
    if stage == 4:
        if _legal_group(g, s, fr, buf) == 1:
            fr[3] = 5
            return True
        return False
    if stage == 5 and not mode and not _destinations(g, s, f, x, 0, 0, NULL):
        _pop(s)
        return True
    if stage == 9 and s.answer >= 0:
        granted = s.answer
        s.answer = -1
        if granted:
            fr[3] = 10
            _do_group(g, s, fr, AK_VILLAGE, <int>fr[10])
        else:  # F26.4: the step is not made and costs nothing; no new request to leave x this turn
            s.exit_refused[f] |= (<uint64_t>1) << x
            _pop(s)
        return True
    if stage == 6 and s.answer >= 0:
        granted = s.answer
        s.answer = -1
        w = <int>fr[10]
        if granted:
            _copy_frame(fc, fr)
            _pop(s)
            _step(g, s, fc, w)
            return True
        if mode:  # F27.1: a refusal lets it choose another destination or stop
            fr[11] |= (<int64_t>1) << w
            fr[3] = 5
            return True
        s.refused |= (<uint64_t>1) << w  # F53.4
        if _bw(g, s, w):  # F16: under Bad Weather a refused group turns back
            _pop(s)
            return True
        fr[3] = 7
        return True
    return False


cdef bint _free_entry(const F2Game* g, const F2State* s, int f, int w) noexcept nogil:
    """F26.2: no consent when w holds no other family's token, or f is its owner or its master."""
    cdef int m
    if not _any_tokens(g, s, w, f):
        return True
    m = _master(g, s, w)
    return s.owner[w] == f or m == f or m < 0


cdef void _do_group(const F2Game* g, F2State* s, int64_t* fr, int kind, int x) noexcept nogil:
    cdef int f = <int>fr[1], stage = <int>fr[3], mode = <int>fr[9], u, k, w, o
    cdef int64_t fc[F2_FRAME]
    cdef int64_t* nf
    if stage == 0:
        if kind == AK_WORD:  # persons done
            fr[3] = 1
        else:
            fr[4] |= (<int64_t>1) << x
    elif stage == 1 or stage == 2 or stage == 3:
        u = x // g.K
        k = x % g.K
        fr[5 + u] = k
        fr[3] += 1
    elif stage == 4:
        if kind == AK_WORD:  # prisoners done
            fr[3] = 5
        else:
            fr[8] |= (<int64_t>1) << x
    elif stage == 5 or stage == 10:
        if kind == AK_WORD:  # stop
            _pop(s)
            return
        w = x
        fr[10] = w
        o = _exit_consent_from(g, s, f, <int>fr[2])
        if stage == 5 and o >= 0 and _conduct_group(g, s, fr) != o:
            # F26.4: exit consent for each step out (F35.4 needs none); entering goes on once granted
            fr[3] = 9
            s.answer = -1
            nf = _push(s, FR_CONSENT)
            nf[1] = f
            nf[2] = o
            nf[3] = fr[2]
            return
        if mode == 0 and _mob_in(s, w):  # F26.1: a road assault on the mob
            _copy_frame(fc, fr)
            _pop(s)
            _declare(g, s, f, w, <int>fc[2], -1, fc)
        elif _free_entry(g, s, f, w) or (s.owner[w] >= 0 and _conduct_group(g, s, fr) == s.owner[w]):
            # (F35.4: safe conduct crosses the former captor's villages without consent)
            _copy_frame(fc, fr)
            _pop(s)
            _step(g, s, fc, w)
        elif mode == 0 and not _bw(g, s, w):
            fr[3] = 8
        else:
            _ask_consent(g, s, fr, w)
    elif stage == 7 or stage == 8:
        w = <int>fr[10]
        if x == W_ASK_CONSENT:
            _ask_consent(g, s, fr, w)
        elif x == W_TURN_BACK:  # F53.4: no allowance spent, the village may not be tried again
            _pop(s)
        else:  # assault or join one's own road assault (F26.3, F53.13)
            _copy_frame(fc, fr)
            _pop(s)
            _declare(g, s, f, w, <int>fc[2], -1, fc)


cdef void _ask_consent(const F2Game* g, F2State* s, int64_t* fr, int w) noexcept nogil:
    cdef int64_t* nf
    fr[3] = 6
    s.answer = -1
    nf = _push(s, FR_CONSENT)
    nf[1] = fr[1]
    nf[2] = _master(g, s, w)
    nf[3] = w


cdef void _step(const F2Game* g, F2State* s, const int64_t* fr, int w) noexcept nogil:
    """Move the group of frame fr from its village to w (F25; evacuation keeps the counters, F27.1)."""
    cdef int f = <int>fr[1], x = <int>fr[2], mode = <int>fr[9], p, u, t, left
    cdef bint stop = _bw(g, s, w)  # F16: entering a Bad Weather fief uses the whole allowance
    cdef int full = g.darc_allowance
    for p in range(g.P):
        if _mask_has(fr[4], p) or _mask_has(fr[8], p):
            s.loc[p] = w
            if not mode:
                s.used[p] = full if stop else s.used[p] + 1
    if mode:  # evacuation: any Soldiers, counters unchanged
        left = <int>fr[5]
        for u in range(4):
            t = _min(left, s.sold[f][x][u])
            s.sold[f][x][u] -= t
            s.sold[f][w][u] += t
            left -= t
    else:
        for u in range(3):
            if fr[5 + u]:
                s.sold[f][x][u] -= fr[5 + u]
                s.sold[f][w][3 if stop else u + 1] += fr[5 + u]
    _free_unescorted(g, s)  # F53.10


cdef void _declare(const F2Game* g, F2State* s, int f, int w, int frm, int target, const int64_t* fr) noexcept nogil:
    """F26.3 / F26.5: declare an assault (time-stamped); the group waits on the road; then evacuation."""
    cdef int joining = _assault_of(s, f, w) if f != F2_MOB else -1
    cdef int victim, rec, q, p, u, full
    cdef int64_t* nf
    if s.stamp[w] == F2_INF_TURN:  # the first assault on w (F29.1, F30.1, F30.5)
        s.seq += 1
        s.stamp[w] = s.seq
        s.garrison[w] = 0
        for q in range(g.n):
            if _occupies(g, s, q, w):
                s.garrison[w] |= 1 << q
        s.first_owner[w] = s.owner[w]
        s.mob_held[w] = _mob_in(s, w)
    victim = target if target >= 0 else _master(g, s, w)
    if joining < 0:
        if s.n_assaults >= F2_MAX_ASSAULTS:
            s.error = 1
            return
        rec = s.n_assaults
        s.n_assaults += 1
        s.assaults[rec].f = f
        s.assaults[rec].v = w
        s.assaults[rec].frm = frm
        s.assaults[rec].target = target
        s.assaults[rec].soldiers = 0
    else:
        rec = joining
    if f != F2_MOB and 0 <= victim < g.n and s.allied[f][victim]:
        s.allied[f][victim] = 0  # F26.7
        s.allied[victim][f] = 0
    if fr != NULL:  # the group stands on the road frm -> w; its movement is over
        full = g.darc_allowance
        for p in range(g.P):
            if _mask_has(fr[4], p) or _mask_has(fr[8], p):
                s.loc[p] = w
                s.onroad[p] = frm
                s.used[p] = full
        for u in range(3):
            s.sold[f][frm][u] -= fr[5 + u]
            s.assaults[rec].soldiers += fr[5 + u]
        _free_unescorted(g, s)
    if target >= 0:
        victim = target
    if joining < 0 and 0 <= victim < g.n and _free_at(g, s, victim, w, False, NULL):
        nf = _push(s, FR_EVAC)  # F27.1
        nf[1] = victim
        nf[2] = w


# ---- retreat (F27.2) ----------------------------------------------------------------------------------
# FR_RETREAT: [kind, family, village, refused mask, waiting, destination]

cdef void _do_retreat(const F2Game* g, F2State* s, int64_t* fr, int kind, int x) noexcept nogil:
    cdef int f = <int>fr[1], v = <int>fr[2], o
    cdef int64_t* nf
    if kind == AK_WORD:  # stop
        _pop(s)
        return
    fr[5] = x
    o = _exit_consent_from(g, s, f, v)
    if o >= 0:  # F26.4 (F27.2 chooses as F27.1: with exit consent)
        fr[4] = 2
        s.answer = -1
        nf = _push(s, FR_CONSENT)
        nf[1] = f
        nf[2] = o
        nf[3] = v
        return
    if _free_entry(g, s, f, x):
        _pop(s)
        _retreat_to(g, s, f, v, x)
    else:
        fr[4] = 1
        s.answer = -1
        nf = _push(s, FR_CONSENT)
        nf[1] = f
        nf[2] = _master(g, s, x)
        nf[3] = x


cdef bint _auto_retreat(const F2Game* g, F2State* s, int64_t* fr) noexcept nogil:
    cdef int granted, f, v, w
    cdef int64_t* nf
    if fr[4] == 2 and s.answer >= 0:  # F26.4: the exit answer
        granted = s.answer
        s.answer = -1
        f, w = <int>fr[1], <int>fr[5]
        fr[4] = 0
        if not granted:  # the step is not made; only "stop" is left (F2-D10)
            s.exit_refused[f] |= (<uint64_t>1) << fr[2]
        elif _free_entry(g, s, f, w):
            v = <int>fr[2]
            _pop(s)
            _retreat_to(g, s, f, v, w)
        else:
            fr[4] = 1
            s.answer = -1
            nf = _push(s, FR_CONSENT)
            nf[1] = f
            nf[2] = _master(g, s, w)
            nf[3] = w
        return True
    if fr[4] and s.answer >= 0:
        granted = s.answer
        s.answer = -1
        fr[4] = 0
        if granted:
            f, v, w = <int>fr[1], <int>fr[2], <int>fr[5]
            _pop(s)
            _retreat_to(g, s, f, v, w)
        else:
            fr[3] |= (<int64_t>1) << fr[5]
        return True
    return False


cdef void _retreat_to(const F2Game* g, F2State* s, int f, int v, int w) noexcept nogil:
    """All its tokens there, one step together (F27.2)."""
    cdef int p, u
    for p in range(g.P):
        if s.loc[p] == v and s.onroad[p] == -1 and ((s.fam[p] == f and s.captor[p] == -1) or s.captor[p] == f):
            s.loc[p] = w
    for u in range(4):
        s.sold[f][w][u] += s.sold[f][v][u]
        s.sold[f][v][u] = 0


# =====================================================================================================
# G. Combat (F28-F34)
# FR_BATTLE: [kind, village, attacker (family or MOB), assault index, stage, cursor, round, inside,
#             defence pips, attack pips, leader, defence mask (bit 6 = mob), calm done, join mask,
#             defence dice, result (0 on, 1 attack won, 2 defence won)]
# =====================================================================================================

cdef inline int _row(const F2Game* g, const F2State* s, int v) noexcept nogil:
    return g.pips_city if s.city[v] else g.pips_castle if s.castle[v] else g.pips_open


cdef void _start_battle(const F2Game* g, F2State* s, int i) noexcept nogil:
    """F29.2: skip or resolve without a battle when nobody is left to fight."""
    cdef int f = s.assaults[i].f, v = s.assaults[i].v, frm = s.assaults[i].frm, target = s.assaults[i].target
    cdef bint inside = frm < 0, others
    cdef int m
    cdef int64_t* nf
    if f == F2_MOB:
        if not (s.mob_v == v and s.mob_n > 0):
            return
    elif not _side_tokens(g, s, f, v, not inside):
        return
    if inside:
        if not _free_at(g, s, target, v, False, NULL):
            return
    else:
        others = _mob_in(s, v) or _any_occupies(g, s, v, f)
        m = _master(g, s, v)
        if not others or m == f or (0 <= m < g.n and f != F2_MOB and s.allied[f][m]):
            _enter_from_road(g, s, f, v)
            return
    nf = _push(s, FR_BATTLE)
    nf[1] = v
    nf[2] = f
    nf[3] = i
    nf[4] = B_START
    nf[6] = 1
    nf[7] = inside
    nf[10] = -1


cdef inline bint _any_occupies(const F2Game* g, const F2State* s, int v, int but) noexcept nogil:
    cdef int q
    for q in range(g.n):
        if q != but and _occupies(g, s, q, v):
            return True
    return False


cdef void _enter_from_road(const F2Game* g, F2State* s, int f, int v) noexcept nogil:
    cdef int p, i
    if f == F2_MOB:
        if s.mob_v == v:
            s.mob_road = -1
        return
    for p in range(g.P):
        if s.loc[p] == v and s.onroad[p] >= 0 and ((s.fam[p] == f and s.captor[p] < 0) or s.captor[p] == f):
            s.onroad[p] = -1
    for i in range(s.n_assaults):
        if s.assaults[i].f == f and s.assaults[i].v == v:
            s.sold[f][v][3] += s.assaults[i].soldiers
            s.assaults[i].soldiers = 0


cdef int _side_soldiers(const F2Game* g, const F2State* s, int f, int v, bint road) noexcept nogil:
    cdef int n = _sold_sum(s, f, v), i, q, k
    if road:
        for i in range(s.n_assaults):
            if s.assaults[i].f == f and s.assaults[i].v == v and s.assaults[i].frm >= 0:
                n += s.assaults[i].soldiers
    _guards_at(s, f, v, road, &q, &k)
    return n + q + k


cdef int _side_tokens(const F2Game* g, const F2State* s, int f, int v, bint road) noexcept nogil:
    """Fighting tokens of f (F1): Soldiers plus fighting persons, each 1 (d'Arc is one token, F33.4)."""
    cdef int tmp[F2_MAX_PERSONS]
    cdef int k = _free_at(g, s, f, v, road, tmp), i, n = _side_soldiers(g, s, f, v, road)
    for i in range(k):
        if _force_of_person(g, s, tmp[i]) > 0:
            n += 1
    return n


cdef int _force(const F2Game* g, const F2State* s, int f, int v, bint road) noexcept nogil:
    cdef int tmp[F2_MAX_PERSONS]
    cdef int k, i, n
    if f == F2_MOB:
        return s.mob_n if s.mob_v == v else 0
    n = _side_soldiers(g, s, f, v, road)
    k = _free_at(g, s, f, v, road, tmp)
    for i in range(k):
        n += _force_of_person(g, s, tmp[i])
    return n


cdef int _fighting_persons(const F2Game* g, const F2State* s, int f, int v, bint road, int* out) noexcept nogil:
    cdef int tmp[F2_MAX_PERSONS]
    cdef int k = _free_at(g, s, f, v, road, tmp), i, n = 0
    for i in range(k):
        if _force_of_person(g, s, tmp[i]) > 0:
            out[n] = tmp[i]
            n += 1
    return n


cdef int _def_families(const F2Game* g, const F2State* s, const int64_t* fr, int* out) noexcept nogil:
    """Defending families still in the village, leader first, then turn order (F31.2)."""
    cdef int order[F2_MAX_FAMILIES]
    cdef int no = _order(g, s, order), i, q, n = 0, j
    cdef int v = <int>fr[1]
    for i in range(no):
        q = order[i]
        if _mask_has(fr[11], q) and _has_tokens(g, s, q, v):
            out[n] = q
            n += 1
    for i in range(n):
        if out[i] == fr[10]:
            for j in range(i, 0, -1):
                out[j] = out[j - 1]
            out[0] = <int>fr[10]
            break
    return n


cdef int _def_force(const F2Game* g, const F2State* s, const int64_t* fr) noexcept nogil:
    cdef int fams[F2_MAX_FAMILIES]
    cdef int k, i, n = 0
    if _mask_has(fr[11], F2_MOB):
        return _force(g, s, F2_MOB, <int>fr[1], False)
    k = _def_families(g, s, fr, fams)
    for i in range(k):
        n += _force(g, s, fams[i], <int>fr[1], False)
    return n


cdef inline int _att_force(const F2Game* g, const F2State* s, const int64_t* fr) noexcept nogil:
    return _force(g, s, <int>fr[2], <int>fr[1], not fr[7])


cdef inline int _dice_for(const F2Game* g, int force) noexcept nogil:
    """F28: 0 -> 0, 1-6 -> 1, 7-12 -> 2, 13+ -> 3 (thresholds are ruleset data)."""
    return (force >= g.th[0]) + (force >= g.th[1]) + (force >= g.th[2])


cdef int _battle_actor(const F2Game* g, const F2State* s, const int64_t* fr) noexcept nogil:
    cdef int st = <int>fr[4], i, no
    cdef int tmp[F2_MAX_FAMILIES]
    if st == B_JOIN:
        no = _order(g, s, tmp)
        for i in range(no):
            if _mask_has(fr[13], tmp[i]):
                return tmp[i]
        return -1
    if st == B_DEF:
        no = _def_families(g, s, fr, tmp)
        return tmp[fr[5]] if fr[5] < no else -1
    if st == B_AIM_DEF:
        return <int>fr[10]
    return <int>fr[2]  # B_CALM, B_ATT, B_AIM_ATT


cdef int _calm_bishops(const F2Game* g, const F2State* s, const int64_t* fr, int* out) noexcept nogil:
    """F19: the attacking family's free Bishops among its tokens there."""
    cdef int tmp[F2_MAX_PERSONS]
    cdef int k = _free_at(g, s, <int>fr[2], <int>fr[1], not fr[7], tmp), i, n = 0
    for i in range(k):
        if s.bishop[tmp[i]] >= 0:
            if out != NULL:
                out[n] = tmp[i]
            n += 1
    return n


cdef bint _auto_battle(const F2Game* g, F2State* s, int64_t* fr) noexcept nogil:
    cdef int v = <int>fr[1], att = <int>fr[2], st = <int>fr[4], k, dd, ad
    cdef bint open_field
    cdef int fams[F2_MAX_FAMILIES]
    cdef int64_t fc[F2_FRAME]
    cdef int64_t* nf
    if st == B_START:
        _setup_sides(g, s, fr)
        fr[4] = B_JOIN if fr[13] else B_CALM
        return True
    if st == B_JOIN:
        if not fr[13]:
            fr[4] = B_CALM
            if _popcount(fr[11]) >= 2:  # a combined defence (F53.17)
                _garrison_protection(g, s, fr)
            return True
        return False
    if fr[15] == 0 and st != B_ROLL and st != B_LOSS and st != B_END and \
            (_att_force(g, s, fr) == 0 or _def_force(g, s, fr) == 0):
        fr[4] = B_END  # F31.4
        return True
    if st == B_CALM:
        if fr[6] == 1 and not fr[12] and fr[10] == F2_MOB and att != F2_MOB and _calm_bishops(g, s, fr, NULL):
            return False
        fr[4] = B_DEF
        fr[5] = 0
        return True
    if st == B_DEF:
        if fr[10] != F2_MOB:
            k = _def_families(g, s, fr, fams)
            if not _in(fams, k, <int>fr[10]):  # F31.2: the next family leads
                if k == 0:
                    fr[4] = B_END
                    return True
                fr[10] = fams[0]
                if att != F2_MOB and not fr[7]:  # a road assault's defence (F30.2) was combined
                    _garrison_protection(g, s, fr)
        if fr[10] == F2_MOB or fr[5] >= _def_families(g, s, fr, fams):
            fr[4] = B_ATT
            return True
        return False
    if st == B_ATT:
        if att == F2_MOB:
            fr[4] = B_AIM_DEF
            return True
        return False
    if st == B_AIM_DEF:
        open_field = not (s.castle[v] or s.city[v])
        if not open_field or fr[10] == F2_MOB or s.aims_len[0] >= _dice_for(g, _def_force(g, s, fr)):
            fr[4] = B_AIM_ATT
            return True
        return False
    if st == B_AIM_ATT:
        open_field = not (s.castle[v] or s.city[v])
        if not open_field or att == F2_MOB or s.aims_len[1] >= _dice_for(g, _att_force(g, s, fr)):
            fr[4] = B_ROLL
            return True
        return False
    if st == B_ROLL:
        dd = _dice_for(g, _def_force(g, s, fr))
        ad = _dice_for(g, _att_force(g, s, fr))
        fr[14] = dd
        fr[4] = B_LOSS
        s.dice_len = 0
        nf = _push(s, FR_DICE)
        nf[1] = dd + ad
        nf[2] = D_BATTLE
        return True
    if st == B_LOSS:  # losses done (and chosen); a new round
        s.aims_len[0] = 0
        s.aims_len[1] = 0
        fr[6] += 1
        fr[4] = B_DEF
        fr[5] = 0
        if _att_force(g, s, fr) == 0 or _def_force(g, s, fr) == 0:
            fr[4] = B_END
        return True
    if st == B_END:
        _copy_frame(fc, fr)
        _pop(s)
        _end_battle(g, s, fc)
        return True
    return False


cdef void _setup_sides(const F2Game* g, F2State* s, int64_t* fr) noexcept nogil:
    """F30: sides, leader and protection."""
    cdef int v = <int>fr[1], att = <int>fr[2], inside = <int>fr[7]
    cdef int row = _row(g, s, v), open_ = g.pips_open, i, q, no, nf_, m, target
    cdef int order[F2_MAX_FAMILIES]
    cdef int fams[F2_MAX_FAMILIES]
    fr[9] = open_
    if att == F2_MOB:  # F30.4: every family there defends, protected by a Castle or City
        no = _order(g, s, order)
        nf_ = 0
        fr[11] = 0
        for i in range(no):
            if _has_tokens(g, s, order[i], v):
                fams[nf_] = order[i]
                nf_ += 1
                fr[11] |= (<int64_t>1) << order[i]
        fr[10] = _lead_family(g, s, v, fams, nf_)
        fr[8] = row
    elif _mob_in(s, v):
        fr[11] = (<int64_t>1) << F2_MOB
        fr[10] = F2_MOB
        fr[8] = g.pips_city if s.mob_held[v] and s.city[v] else open_
    elif inside:  # F30.3, F53.3
        target = s.assaults[fr[3]].target
        fr[11] = (<int64_t>1) << target
        fr[10] = target
        fr[8] = row
        fr[9] = row
    else:  # F30.2, F30.5
        m = _master(g, s, v)
        fr[10] = m
        fr[11] = (<int64_t>1) << m if m >= 0 else 0
        fr[8] = row if s.first_owner[v] == m else open_
        fr[13] = 0
        for q in range(g.n):
            if q != att and q != m and (s.garrison[v] >> q) & 1 and m >= 0 and s.allied[m][q] \
                    and _occupies(g, s, q, v) and _assault_of(s, q, v) < 0:
                fr[13] |= (<int64_t>1) << q


cdef inline int _popcount(int64_t m) noexcept nogil:
    cdef int i, k = 0
    for i in range(64):
        k += (m >> i) & 1
    return k


cdef void _garrison_protection(const F2Game* g, F2State* s, int64_t* fr) noexcept nogil:
    """F53.17 (over F30.5): in a combined defence the protection belongs to every defending family that stood in V
    at the first assault (V's garrison, F30.1), whichever family leads after a retreat."""
    cdef int v = <int>fr[1], lead = <int>fr[10]
    cdef bint protected = s.first_owner[v] == lead or (0 <= lead < g.n and (s.garrison[v] >> lead) & 1)
    fr[8] = _row(g, s, v) if protected else g.pips_open


cdef int _lead_family(const F2Game* g, const F2State* s, int v, const int* fams, int n) noexcept nogil:
    cdef int o = s.owner[v], best, bn = -1, i, q, k
    if o >= 0 and _in(fams, n, o) and _occupies(g, s, o, v):
        return o
    best = fams[0] if n else -1
    for i in range(n):
        q = fams[i]
        k = _soldiers_at(s, q, v) + _free_at(g, s, q, v, False, NULL)
        if k > bn:
            best = q
            bn = k
    return best


cdef int _legal_battle(const F2Game* g, const F2State* s, const int64_t* fr, int* out) noexcept nogil:
    cdef int st = <int>fr[4], v = <int>fr[1], att = <int>fr[2], n = 0, k, i, j, b, f, kk, nf_
    cdef int tmp[F2_MAX_PERSONS]
    cdef int fams[F2_MAX_FAMILIES]
    if st == B_JOIN:
        out[0] = _act(g, AK_WORD, W_JOIN_DEFENCE)
        out[1] = _act(g, AK_WORD, W_STAY_OUT)
        return 2
    if st == B_CALM:
        out[n] = _act(g, AK_WORD, W_NO_ATTEMPT)
        n += 1
        k = _calm_bishops(g, s, fr, tmp)
        for i in range(k):
            b = tmp[i]
            for j in range(g.calm_max_steps + 1):
                if j * g.calm_step_price <= s.cash[att]:
                    out[n] = _act(g, AK_CALM, b * g.calm_steps + j)
                    n += 1
        return n
    if st == B_DEF:
        nf_ = _def_families(g, s, fr, fams)
        f = fams[fr[5]] if fr[5] < nf_ else -1
        out[n] = _act(g, AK_WORD, W_FIGHT_ON)
        n += 1
        if f >= 0 and _free_at(g, s, f, v, False, NULL) and _destinations(g, s, f, v, 2, 0, NULL):
            out[n] = _act(g, AK_WORD, W_RETREAT)
            n += 1
        if att != F2_MOB:  # F53.7: nobody surrenders to the mob
            out[n] = _act(g, AK_WORD, W_SURRENDER)
            n += 1
        return n
    if st == B_ATT:
        out[n] = _act(g, AK_WORD, W_FIGHT_ON)
        n += 1
        if fr[10] != F2_MOB:
            out[n] = _act(g, AK_WORD, W_SURRENDER)
            n += 1
        return n
    if st == B_AIM_DEF or st == B_AIM_ATT:  # F32: any free person of the other side, several dice on one
        out[n] = _act(g, AK_WORD, W_AIM_DONE)
        n += 1
        if st == B_AIM_DEF:
            if att != F2_MOB:
                k = _free_at(g, s, att, v, not fr[7], tmp)
                for i in range(k):
                    out[n] = _act(g, AK_AIM, tmp[i])
                    n += 1
        else:
            nf_ = _def_families(g, s, fr, fams)
            for j in range(nf_):
                k = _free_at(g, s, fams[j], v, False, tmp)
                for i in range(k):
                    out[n] = _act(g, AK_AIM, tmp[i])
                    n += 1
        return n
    return 0


cdef void _do_battle(const F2Game* g, F2State* s, int64_t* fr, int kind, int x) noexcept nogil:
    cdef int st = <int>fr[4], v = <int>fr[1], att = <int>fr[2], q, b, k, f, nf_
    cdef int fams[F2_MAX_FAMILIES]
    cdef int64_t* nf
    if st == B_JOIN:
        q = _battle_actor(g, s, fr)
        fr[13] &= ~((<int64_t>1) << q)
        if x == W_JOIN_DEFENCE:
            fr[11] |= (<int64_t>1) << q
    elif st == B_CALM:
        fr[12] = 1
        if kind == AK_CALM:  # F19: pay, then one die
            b = x // g.calm_steps
            k = x % g.calm_steps
            s.cash[att] -= k * g.calm_step_price
            s.dice_len = 0
            nf = _push(s, FR_DICE)
            nf[1] = 1
            nf[2] = D_CALM
            nf[3] = b
            nf[4] = k
    elif st == B_DEF:
        nf_ = _def_families(g, s, fr, fams)
        f = fams[fr[5]]
        if x == W_FIGHT_ON:
            fr[5] += 1
        elif x == W_RETREAT:
            nf = _push(s, FR_RETREAT)
            nf[1] = f
            nf[2] = v
            nf[5] = -1
        else:
            _surrender(g, s, fr, f, True)
    elif st == B_ATT:
        if x == W_SURRENDER:
            _surrender(g, s, fr, att, False)
            fr[15] = 2
            fr[4] = B_END
        else:
            fr[4] = B_AIM_DEF
    elif st == B_AIM_DEF or st == B_AIM_ATT:
        if kind == AK_WORD:
            fr[4] = B_AIM_ATT if st == B_AIM_DEF else B_ROLL
        else:
            k = 0 if st == B_AIM_DEF else 1
            if s.aims_len[k] >= F2_MAX_AIMS:
                s.error = 1
            else:
                s.aims[k][s.aims_len[k]] = x
                s.aims_len[k] += 1


cdef void _surrender(const F2Game* g, F2State* s, int64_t* fr, int f, bint defence) noexcept nogil:
    """F31: its Soldiers are removed (Guards too, lost), its free persons captured by the other side's
    leader; the prisoners it escorted pass to that family."""
    cdef int v = <int>fr[1], other, k, i, p
    cdef bint road = not defence and not fr[7]
    cdef int tmp[F2_MAX_PERSONS]
    cdef int fams[F2_MAX_FAMILIES]
    other = <int>fr[2] if defence else <int>fr[10]
    _remove_soldiers(g, s, f, v, 1000000, road)
    k = _free_at(g, s, f, v, road, tmp)
    for i in range(k):
        _capture(g, s, tmp[i], other, v)
    for p in range(g.P):
        if s.captor[p] == f and s.loc[p] == v:
            if s.fam[p] == other:
                _release(g, s, p)
                s.onroad[p] = -1
            else:
                s.captor[p] = other
                s.onroad[p] = -1
    if defence:
        s.battle_lost[v] = 1
        fr[11] &= ~((<int64_t>1) << f)
        if not _def_families(g, s, fr, fams):
            fr[15] = 1
            fr[4] = B_END


cdef void _capture(const F2Game* g, F2State* s, int p, int captor, int v) noexcept nogil:
    cdef int one[1]
    if captor == F2_MOB or captor < 0:
        one[0] = p
        _kill(g, s, one, 1, True)
        return
    if s.fam[p] == captor:
        return
    s.captor[p] = captor
    s.loc[p] = v
    s.onroad[p] = -1


cdef void _calm_result(const F2Game* g, F2State* s, const int64_t* fr, int die) noexcept nogil:
    cdef int b = <int>fr[3], k = <int>fr[4]
    cdef int64_t* battle = _top(s)
    cdef int one[1]
    if die + k >= g.calm_success:  # the revolt is over
        _mob_gone(s)
        battle[15] = 1
        battle[4] = B_END
        battle[2] = s.fam[b]
        s.calm_bishop = b
    else:  # F19: stoned to death
        one[0] = b
        _kill(g, s, one, 1, True)


cdef inline void _mob_gone(F2State* s) noexcept nogil:
    """F17.4: when the last Peasant is eliminated, the card is discarded."""
    s.mob_n = 0
    s.mob_v = -1
    s.mob_road = -1
    s.mob_ctrl = -1
    s.revolt_card = -1


cdef void _battle_losses(const F2Game* g, F2State* s, const int* dice, int nd) noexcept nogil:
    """F32-F33: aimed dice first, then table losses on both sides at once."""
    cdef int64_t* fr = _top(s)
    cdef int v = <int>fr[1], att = <int>fr[2], dd = <int>fr[14], side, i, d, p, nk = 0
    cdef int def_sum = 0, att_sum = 0, to_att, to_def, na0 = s.aims_len[0], na1 = s.aims_len[1]
    cdef int killed[8]
    cdef int start, cnt, nfams, j, best, q, t, rest, kfp, f, rd
    cdef bint any_other
    cdef int fams[F2_MAX_FAMILIES]
    cdef int left[F2_MAX_FAMILIES]
    cdef int share[F2_MAX_FAMILIES]
    cdef int plan_f[F2_MAX_FAMILIES + 2]
    cdef int plan_n[F2_MAX_FAMILIES + 2]
    cdef int plan_rd[F2_MAX_FAMILIES + 2]
    cdef int nplans = 0
    cdef int fp[F2_MAX_PERSONS]
    cdef int64_t* nf
    cdef int nd_def = dd if dd < nd else nd
    for side in range(2):
        start = 0 if side == 0 else nd_def
        cnt = nd_def if side == 0 else nd - nd_def
        for i in range(_min(cnt, s.aims_len[side])):
            d = dice[start + i]
            p = s.aims[side][i]
            if d >= g.aimed_kill_face and not _in(killed, nk, p):
                killed[nk] = p
                nk += 1
    for i in range(na0, nd_def):
        def_sum += dice[i]
    for i in range(nd_def + na1, nd):
        att_sum += dice[i]
    to_att = def_sum // <int>fr[9]
    to_def = att_sum // <int>fr[8]
    if nk:
        any_other = False
        for i in range(nk):
            if s.fam[killed[i]] != att:
                any_other = True
        if any_other:
            s.battle_lost[v] = 1
        _kill(g, s, killed, nk, True)
    # allocation first (simultaneous), then removal
    rd = not fr[7]
    if att == F2_MOB:
        plan_f[nplans], plan_n[nplans], plan_rd[nplans] = F2_MOB, _min(to_att, s.mob_n), 0
    else:
        plan_f[nplans], plan_n[nplans], plan_rd[nplans] = att, to_att, rd
    nplans += 1
    if _mask_has(fr[11], F2_MOB):
        plan_f[nplans], plan_n[nplans], plan_rd[nplans] = F2_MOB, _min(to_def, s.mob_n), 0
        nplans += 1
    else:
        nfams = _def_families(g, s, fr, fams)
        for j in range(nfams):
            left[j] = _side_tokens(g, s, fams[j], v, False)
            share[j] = 0
        for i in range(to_def):  # F33.2: to the family with the most fighting tokens left
            best = -1
            for j in range(nfams):
                if left[j] <= 0:
                    continue
                if best < 0 or left[j] > left[best] or (left[j] == left[best] and fams[j] == fr[10]
                                                         and fams[best] != fr[10]):
                    best = j
            if best < 0:
                break
            left[best] -= 1
            share[best] += 1
        for j in range(nfams):
            if share[j]:
                s.battle_lost[v] = 1
                plan_f[nplans], plan_n[nplans], plan_rd[nplans] = fams[j], share[j], 0
                nplans += 1
    for i in range(nplans):
        f = plan_f[i]
        if f == F2_MOB:
            s.mob_n -= plan_n[i]
            if s.mob_n <= 0:
                _mob_gone(s)
            continue
        rest = _remove_soldiers(g, s, f, v, plan_n[i], plan_rd[i])
        if rest > 0:
            kfp = _fighting_persons(g, s, f, v, plan_rd[i], fp)
            if rest >= kfp:
                _kill(g, s, fp, kfp, True)
            else:  # F33.3: its player chooses which
                nf = _push(s, FR_LOSSPICK)
                nf[1] = f
                nf[2] = rest
                nf[3] = v
                nf[4] = plan_rd[i]


cdef void _end_battle(const F2Game* g, F2State* s, const int64_t* fr) noexcept nogil:
    """F34: winner, captures, escorted prisoners, entering the village."""
    cdef int v = <int>fr[1], att = <int>fr[2], inside = <int>fr[7], leader = <int>fr[10]
    cdef bint road = not inside, a, d
    cdef int winner = 0  # 1 attack, 2 defence, 0 neither
    cdef int q, p, k, i, calm, y, j
    cdef int tmp[F2_MAX_PERSONS]
    if fr[15] == 1:
        winner = 1
    elif fr[15] == 2:
        winner = 2
    else:
        a = _att_force(g, s, fr) > 0
        d = _def_force(g, s, fr) > 0
        winner = 1 if (a and not d) else 2 if (d and not a) else 0
    if winner == 1:
        for q in range(g.n):
            if _mask_has(fr[11], q):
                k = _free_at(g, s, q, v, False, tmp)
                for i in range(k):
                    _capture(g, s, tmp[i], att, v)
    elif winner == 2 and att != F2_MOB:
        k = _free_at(g, s, att, v, road, tmp)
        for i in range(k):
            _capture(g, s, tmp[i], leader, v)
    # F34.2: prisoners of a family with nothing left there die
    for q in range(g.n):
        if (q == att or _mask_has(fr[11], q)) and not _free_at(g, s, q, v, True, NULL) and \
                _side_soldiers(g, s, q, v, True) == 0:
            k = 0
            for p in range(g.P):
                if s.captor[p] == q and s.loc[p] == v:
                    tmp[k] = p
                    k += 1
            if k:
                _kill(g, s, tmp, k, True)
    if att != F2_MOB:
        if winner != 2:
            _enter_from_road(g, s, att, v)
        if winner == 1:
            s.won_by[v] = att
            calm = s.calm_bishop
            if calm >= 0:
                s.calm_bishop = -1
                y = g.village_fief[v]
                if s.capital[y] == v and _fief_family(s, y) != att:  # F18.5
                    _set_title(s, y, calm)
                    for j in range(g.fief_nv[y]):
                        s.owner[g.fief_villages[y][j]] = att
    else:
        if s.mob_n > 0 and s.mob_v == v:
            s.mob_road = -1
    _free_unescorted(g, s)


cdef void _end_village_combat(const F2Game* g, F2State* s, int v) noexcept nogil:
    """F34.4 with F53.2: a battle decides ownership; improvements lost with a beaten defence."""
    cdef int old = s.owner[v], y = g.village_fief[v], hf
    if _mob_in(s, v) and not _any_tokens(g, s, v, -1):
        _mob_takes(g, s, v)
    elif s.won_by[v] >= 0 and _occupies(g, s, s.won_by[v], v):
        hf = _fief_family(s, y)
        if not (hf >= 0 and s.capital[y] >= 0 and v != s.capital[y]):
            _set_owner(g, s, v, s.won_by[v])
    else:
        _check_owner(g, s, v)
    if s.owner[v] != old and s.battle_lost[v]:
        s.mills[v] = 0
        s.presses[v] = 0


# =====================================================================================================
# owning villages (F9) and titles
# =====================================================================================================

cdef void _check_owner(const F2Game* g, F2State* s, int v) noexcept nogil:
    """F9.2: unless v is an enfeoffed non-capital village, an owner not occupying v loses it to master(v)
    when another family occupies it; an empty village keeps its owner."""
    cdef int y = g.village_fief[v], hf = _fief_family(s, y), o
    if hf >= 0 and s.capital[y] >= 0 and v != s.capital[y]:
        s.owner[v] = hf
        return
    if _mob_in(s, v):
        return
    o = s.owner[v]
    if o >= 0 and _occupies(g, s, o, v):
        return
    if _any_occupies(g, s, v, o):
        _set_owner(g, s, v, _master(g, s, v))


cdef void _set_owner(const F2Game* g, F2State* s, int v, int f) noexcept nogil:
    cdef int y
    if f < 0 or f == F2_MOB or s.owner[v] == f:
        return
    s.owner[v] = f
    y = g.village_fief[v]
    if s.capital[y] == v and _fief_family(s, y) >= 0 and _fief_family(s, y) != f:
        _capital_taken(g, s, y, f, v)


cdef void _capital_taken(const F2Game* g, F2State* s, int y, int f, int v) noexcept nogil:
    """F34.4: the title passes to a free person of the new owner who is there, else any, else retained."""
    cdef int cands[F2_MAX_PERSONS]
    cdef int k = _free_at(g, s, f, v, False, cands), p, i
    cdef int64_t mask = 0
    cdef int64_t* nf
    if k == 0:
        for p in range(g.P):
            if s.fam[p] == f and _free(s, p):
                cands[k] = p
                k += 1
    for i in range(g.fief_nv[y]):
        s.owner[g.fief_villages[y][i]] = f
    if k == 0:
        s.title[y] = -1
        s.pending[y] = -1
        s.retained[y] = f
    elif k == 1:
        _set_title(s, y, cands[0])
    else:
        s.title[y] = -1
        s.pending[y] = -1
        s.retained[y] = f  # held by f while it chooses
        for i in range(k):
            mask |= (<int64_t>1) << cands[i]
        nf = _push(s, FR_TITLE)
        nf[1] = f
        nf[2] = y
        nf[3] = mask


cdef inline void _set_title(F2State* s, int y, int p) noexcept nogil:
    s.title[y] = p
    s.pending[y] = -1
    s.retained[y] = -1


# =====================================================================================================
# H. deaths, prisoners, the crown (F35-F40)
# =====================================================================================================

cdef void _kill(const F2Game* g, F2State* s, const int* persons, int n, bint in_battle) noexcept nogil:
    """F37: what a death does at once (several deaths are simultaneous)."""
    cdef int places[F2_MAX_PERSONS * 2]
    cdef int nplaces = 0, i, p, f, y, best, sp
    cdef bint has_titles
    for i in range(n):
        p = persons[i]
        if s.fam[p] < 0:
            continue
        f = s.fam[p]
        places[nplaces] = s.loc[p]
        nplaces += 1
        s.seq += 1
        has_titles = False
        best = -1
        for y in range(g.NF):
            if s.title[y] == p:  # pending for its family until the next inheritance
                has_titles = True
                if best < 0 or g.fief_rank[y] > g.fief_rank[best]:
                    best = y
                s.title[y] = -1
                s.pending[y] = f
                s.pend_spouse[y] = s.fam[s.spouse[p]] if s.spouse[p] >= 0 else -1
                s.pend_seq[y] = s.seq
        if has_titles:  # F21: escrow follows the highest fief title
            s.esc_wait[best] += s.escrow[p]
        else:
            s.cash[f] += s.escrow[p]
        s.escrow[p] = 0
        if s.bishop[p] >= 0:
            s.tithe[s.bishop[p]] = -1
        s.bishop[p] = -1
        s.cardinal[p] = 0
        s.darc[p] = 0
        sp = s.spouse[p]
        if sp >= 0:
            s.spouse[sp] = -1
        s.spouse[p] = -1
        s.fam[p] = -1
        s.loc[p] = -1
        s.onroad[p] = -1
        s.captor[p] = -1
        s.used[p] = 0
        s.conduct[p] = -1
        s.wed[p] = 0
        if p == s.king:
            _king_dies(g, s)
        if p == s.queen:
            _queen_loses_crown(g, s)
        if p == s.prince:
            s.prince = -1
    if not in_battle:
        for i in range(nplaces):
            if places[i] >= 0:
                _check_owner(g, s, places[i])
        _free_unescorted(g, s)


cdef void _king_dies(const F2Game* g, F2State* s) noexcept nogil:
    """F39.1-2."""
    cdef int w
    if s.prince >= 0:
        s.king = s.prince
        s.prince = -1
        if s.queen >= 0:
            s.regent = 1
            s.regency_end = s.turn + g.regency_turns - 1
        else:
            s.regent = 0
            w = s.spouse[s.king]
            if w >= 0:  # F53.6
                s.queen = w
                s.qg = g.lim_qg
    else:
        s.king = -1
        if s.queen >= 0:
            s.regent = 1
            s.regency_end = F2_INF_TURN
        else:
            s.kg = -1


cdef void _queen_loses_crown(const F2Game* g, F2State* s) noexcept nogil:
    """F39.5-6: the Queen card returns, or goes to the young King's wife; a Regency she held ends."""
    cdef bint was_regent = s.regent
    cdef int w
    s.queen = -1
    s.qg = -1
    s.regent = 0
    if was_regent:
        if s.king < 0:
            s.kg = -1
        else:
            w = s.spouse[s.king]
            if w >= 0:
                s.queen = w
                s.qg = g.lim_qg


cdef void _end_regency(const F2Game* g, F2State* s) noexcept nogil:
    """F39.3: the King's Guard joins the young King; his wife, if any, takes the Queen card."""
    cdef int w, qg
    s.regent = 0
    w = s.spouse[s.king] if s.king >= 0 else -1
    if w >= 0 and w != s.queen:
        qg = s.qg
        s.queen = w
        s.qg = qg if qg >= 0 else g.lim_qg


cdef void _release(const F2Game* g, F2State* s, int p) noexcept nogil:
    """F35.3: freed in place; escrow goes to its family's cash (F21)."""
    if s.captor[p] < 0:
        return
    s.captor[p] = -1
    if s.fam[p] >= 0:
        s.cash[s.fam[p]] += s.escrow[p]
        s.escrow[p] = 0


cdef void _free_unescorted(const F2Game* g, F2State* s) noexcept nogil:
    """F35.2 / F53.10: a prisoner whose captor has no free token left where it stands is freed."""
    cdef int p, c, v, i
    cdef bint ok
    for p in range(g.P):
        c = s.captor[p]
        if s.fam[p] < 0 or c < 0:
            continue
        v = s.loc[p]
        if s.onroad[p] >= 0:
            ok = _free_at(g, s, c, v, True, NULL) > 0
            if not ok:
                for i in range(s.n_assaults):
                    if s.assaults[i].f == c and s.assaults[i].v == v and s.assaults[i].soldiers > 0:
                        ok = True
                        break
        else:
            ok = s.alive[c] and _occupies(g, s, c, v)
        if not ok or not s.alive[c]:
            _release(g, s, p)
            s.onroad[p] = -1


cdef void _marry(const F2Game* g, F2State* s, int x, int y) noexcept nogil:
    """F44 (and F40.1, F39.5, F53.5)."""
    cdef int man, woman, old_qg
    if s.fam[x] < 0 or s.fam[y] < 0 or s.spouse[x] >= 0 or s.spouse[y] >= 0:
        return
    s.spouse[x] = y
    s.spouse[y] = x
    s.wed[x] = 1
    s.wed[y] = 1
    if g.person_male[x]:
        man, woman = x, y
    else:
        man, woman = y, x
    if s.queen == woman and s.king != man:  # F39.5: a widowed Queen loses the crown on marrying
        _queen_loses_crown(g, s)
    if man == s.king:
        if s.regent:  # F53.5: the young King marries; the Regency ends
            s.regent = 0
        old_qg = s.qg
        if s.queen >= 0 and s.queen != woman:
            s.queen = -1
        s.queen = woman
        s.qg = old_qg if old_qg >= 0 else g.lim_qg


# =====================================================================================================
# inheritance (F38)
# =====================================================================================================

cdef bint _next_inheritance(const F2Game* g, F2State* s) noexcept nogil:
    """Resolve the next pending title (order of death, higher rank, fief order); False when none is left."""
    cdef int y, best = -1, f, spouse_f, k
    cdef int cands[F2_MAX_PERSONS]
    for y in range(g.NF):
        if s.pending[y] < 0:
            continue
        if best < 0 or s.pend_seq[y] < s.pend_seq[best] or (s.pend_seq[y] == s.pend_seq[best]
                                                            and g.fief_rank[y] > g.fief_rank[best]):
            best = y
    if best < 0:
        return False
    y = best
    f = s.pending[y]
    spouse_f = s.pend_spouse[y]
    k = _persons_list(g, s, f, cands)
    if k:  # F38.1
        _offer_title(g, s, f, y, cands, k, f)
    elif spouse_f >= 0 and s.alive[spouse_f] and _persons_list(g, s, spouse_f, cands):  # F38.2
        k = _persons_list(g, s, spouse_f, cands)
        _offer_title(g, s, spouse_f, y, cands, k, f)
    elif s.king >= 0 and not s.regent and _free(s, s.king):  # F38.3
        cands[0] = s.king
        _offer_title(g, s, s.fam[s.king], y, cands, 1, f)
    elif s.regent and s.queen >= 0:
        cands[0] = s.queen
        k = 1
        if s.king >= 0:
            cands[1] = s.king
            k = 2
        _offer_title(g, s, s.fam[s.queen], y, cands, k, f)
    else:  # F38.4
        s.pending[y] = -1
        s.retained[y] = f
        s.cash[f] += s.esc_wait[y]
        s.esc_wait[y] = 0
    return True


cdef inline int _persons_list(const F2Game* g, const F2State* s, int f, int* out) noexcept nogil:
    cdef int p, n = 0
    for p in range(g.P):
        if s.fam[p] == f:
            out[n] = p
            n += 1
    return n


cdef void _offer_title(const F2Game* g, F2State* s, int chooser, int y, const int* cands, int k,
                       int old) noexcept nogil:
    cdef int64_t mask = 0
    cdef int i
    cdef int64_t* nf
    s.pending[y] = -1
    s.retained[y] = chooser  # held while the choice is made
    if k == 1:
        _receive_title(g, s, y, cands[0], old)
    else:
        for i in range(k):
            mask |= (<int64_t>1) << cands[i]
        nf = _push(s, FR_HEIR)
        nf[1] = chooser
        nf[2] = y
        nf[3] = mask
        nf[4] = old


cdef void _receive_title(const F2Game* g, F2State* s, int y, int p, int old) noexcept nogil:
    cdef int f = s.fam[p], i, v, cap, u
    cdef int64_t* nf
    _set_title(s, y, p)
    if 0 <= old < g.n and s.esc_wait[y]:
        s.cash[f] += s.esc_wait[y]
    s.esc_wait[y] = 0
    if f != old:  # F38: the old family's Soldiers leave the fief; a Soldier for each City
        for i in range(g.fief_nv[y]):
            v = g.fief_villages[y][i]
            if 0 <= old < g.n:
                for u in range(4):
                    s.sold[old][v][u] = 0
            s.owner[v] = f
        cap = s.capital[y]
        if cap >= 0 and not _has_tokens(g, s, f, cap):
            nf = _push(s, FR_CITYSOLDIER)
            nf[1] = f
            nf[2] = cap


cdef int _legal_city_soldier(const F2Game* g, const F2State* s, const int64_t* fr, int* out) noexcept nogil:
    cdef int f = <int>fr[1], city = <int>fr[2], n = 0, v
    if s.cash[f] >= g.pr_soldier and _ordinary_on_board(g, s, f) < g.lim_soldiers:
        out[n] = _act(g, AK_WORD, W_BUY_SOLDIER)
        n += 1
    for v in range(g.V):
        if v != city and _controls(g, s, f, v) and _sold_sum(s, f, v) > 0:
            out[n] = _act(g, AK_VILLAGE, v)
            n += 1
    return n


cdef void _take_soldier(F2State* s, int f, int v) noexcept nogil:
    cdef int u
    for u in range(4):
        if s.sold[f][v][u]:
            s.sold[f][v][u] -= 1
            return


# =====================================================================================================
# I. Negotiations (F41-F45)
# FR_NEGO: [kind, round, index in turn order, a proposal was made this round]
# =====================================================================================================

cdef inline bint _marriageable(const F2State* s, int p) noexcept nogil:
    """F44: unmarried, not a Bishop or Cardinal, not the Lady d'Arc (prisoners may marry)."""
    return s.fam[p] >= 0 and s.spouse[p] < 0 and s.bishop[p] < 0 and not s.darc[p]


cdef int _legal_nego(const F2Game* g, const F2State* s, const int64_t* fr, int* out) noexcept nogil:
    cdef int order[F2_MAX_FAMILIES]
    cdef int no = _order(g, s, order), f, n = 0, x, y, q, p, a, b
    cdef bint found
    f = order[fr[2]]
    out[n] = _act(g, AK_WORD, W_END)
    n += 1
    for x in range(g.P):
        if s.fam[x] != f or not _marriageable(s, x):
            continue
        for y in range(g.P):
            if s.fam[y] >= 0 and s.fam[y] != f and _marriageable(s, y) and g.person_male[x] != g.person_male[y] \
                    and s.alive[s.fam[y]]:
                out[n] = _act(g, AK_MARRY, x * g.P + y)
                n += 1
    for q in range(g.n):
        if q == f or not s.alive[q]:
            continue
        out[n] = _act(g, AK_UNALLY if s.allied[f][q] else AK_ALLY, q)
        n += 1
        if s.cash[f] >= g.money_unit:
            out[n] = _act(g, AK_GIFT, q)
            n += 1
    for p in range(g.P):
        if s.fam[p] >= 0 and s.captor[p] == f and s.alive[s.fam[p]]:
            out[n] = _act(g, AK_RELEASE, p)
            n += 1
        if s.fam[p] == f and s.captor[p] >= 0:
            out[n] = _act(g, AK_RANSOM, p)
            n += 1
    for y in range(g.NF):
        a = s.title[y]
        if a >= 0 and s.fam[a] == f:
            found = False
            for b in range(g.P):
                if s.fam[b] == f and _transferable_has(g, s, f, b, y):
                    found = True
                    break
            if found:
                out[n] = _act(g, AK_TRANSFER, y)
                n += 1
    return n


cdef inline bint _transferable_has(const F2Game* g, const F2State* s, int f, int b, int y) noexcept nogil:
    cdef int a
    if not _free(s, b) or s.fam[b] != f:
        return False
    a = s.title[y]
    return a >= 0 and a != b and s.fam[a] == f and _free(s, a) and _crown_rank(g, s, a, y) >= g.fief_rank[y]


cdef void _do_nego(const F2Game* g, F2State* s, int64_t* fr, int kind, int x) noexcept nogil:
    cdef int order[F2_MAX_FAMILIES]
    cdef int no = _order(g, s, order), f = order[fr[2]], a, b
    cdef int64_t* nf
    if kind != AK_WORD:
        fr[3] = 1
    fr[2] += 1  # move on first (F41), so the frame can go before the proposal's own decisions
    if fr[2] >= no:
        fr[1] += 1
        fr[2] = 0
        if fr[1] >= g.negotiation_rounds or not fr[3]:
            _pop(s)
        fr[3] = 0
    if kind == AK_MARRY:
        a = x // g.P
        b = x % g.P
        nf = _push(s, FR_ANSWER)
        nf[1] = f
        nf[2] = s.fam[b]
        nf[3] = A_MARRY
        nf[4] = a
        nf[5] = b
    elif kind == AK_ALLY:
        nf = _push(s, FR_ANSWER)
        nf[1] = f
        nf[2] = x
        nf[3] = A_ALLY
    elif kind == AK_UNALLY:
        s.allied[f][x] = 0
        s.allied[x][f] = 0
    elif kind == AK_GIFT or kind == AK_RELEASE or kind == AK_RANSOM:
        nf = _push(s, FR_AMOUNT)
        nf[1] = f
        nf[2] = 0 if kind == AK_GIFT else 1 if kind == AK_RELEASE else 2
        nf[3] = x
    elif kind == AK_TRANSFER:
        nf = _push(s, FR_TRANSFER)
        nf[1] = f
        nf[2] = x


cdef void _amount_range(const F2Game* g, const F2State* s, const int64_t* fr, int* lo, int* hi) noexcept nogil:
    """F42 amounts, in money units, bounded by the ruleset's max_transfer (F2-D5)."""
    cdef int cap = g.max_transfer // g.money_unit, f = <int>fr[1], what = <int>fr[2], p = <int>fr[3], can
    if what == 0:
        lo[0] = 1
        hi[0] = _min(cap, s.cash[f] // g.money_unit)
        return
    can = (s.escrow[p] + s.cash[s.fam[p]]) // g.money_unit
    lo[0] = 0
    hi[0] = _min(cap, can)


cdef void _do_amount(const F2Game* g, F2State* s, int64_t* fr, int x) noexcept nogil:
    cdef int f = <int>fr[1], what = <int>fr[2], t = <int>fr[3], m = x * g.money_unit
    cdef int64_t* nf
    _pop(s)
    if what == 0:  # gift: moves at once
        s.cash[f] -= m
        s.cash[t] += m
    else:  # 1: the captor offers to release t for m; 2: t's family offers m for t
        nf = _push(s, FR_ANSWER)
        nf[1] = f
        nf[2] = s.fam[t] if what == 1 else s.captor[t]
        nf[3] = A_RELEASE if what == 1 else A_RANSOM
        nf[4] = t
        nf[5] = m


# ---- the election (F45) ----------------------------------------------------------------------------
# FR_ELECT: [kind, stage (0 candidacy, 1 voting, 2 anointing), index, actor, tally of consents]

cdef int _voters(const F2Game* g, const F2State* s, int* out, bint bishops_only) noexcept nogil:
    """F45.2 / F53.15: free persons who are crowned or Bishops (anointers: Bishops), by family in turn order
    then person id."""
    cdef int order[F2_MAX_FAMILIES]
    cdef int no = _order(g, s, order), i, p, f, n = 0
    for i in range(no):
        f = order[i]
        for p in range(g.P):
            if s.fam[p] == f and _free(s, p) and (s.bishop[p] >= 0 or (not bishops_only and _crowned(g, s, p))):
                out[n] = p
                n += 1
    return n


cdef int _eligible(const F2Game* g, const F2State* s, int f, int* out) noexcept nogil:
    cdef int p, n = 0
    for p in range(g.P):
        if s.fam[p] == f and _free(s, p) and g.person_male[p] and _crowned(g, s, p) and s.bishop[p] < 0:
            out[n] = p
            n += 1
    return n


cdef bint _auto_elect(const F2Game* g, F2State* s, int64_t* fr) noexcept nogil:
    cdef int order[F2_MAX_FAMILIES]
    cdef int lst[F2_MAX_PERSONS]
    cdef int no = _order(g, s, order), st = <int>fr[1], i = <int>fr[2], k, f, p, top_p, top_v, second_v
    cdef int ncand, elected, tally
    cdef bint any_cand, ok
    if st == 0:
        if i < no:
            if fr[3] != order[i]:
                fr[3] = order[i]
                return True
            return False
        any_cand = False
        for f in range(g.n):
            if s.cand[f] >= 0:
                any_cand = True
        if not any_cand:
            _pop(s)
            return True
        fr[1] = 1
        fr[2] = 0
        return True
    if st == 1:
        k = _voters(g, s, lst, False)
        if i < k:
            if fr[3] != s.fam[lst[i]]:
                fr[3] = s.fam[lst[i]]
                return True
            return False
        # sorted by (votes, person) descending: the top and the runner-up's votes
        top_p, top_v, second_v, ncand = -1, -1, -1, 0
        for f in range(g.n):
            p = s.cand[f]
            if p < 0:
                continue
            ncand += 1
            if s.votes[p] > top_v or (s.votes[p] == top_v and p > top_p):
                if top_p >= 0:
                    second_v = top_v if top_v > second_v else second_v
                top_p, top_v = p, s.votes[p]
            elif s.votes[p] > second_v:
                second_v = s.votes[p]
        ok = top_v >= g.min_votes and (ncand == 1 or second_v < top_v)
        if not ok:
            _pop(s)
            return True
        fr[1] = 2
        fr[2] = 0
        fr[4] = 0
        memset(s.votes, 0, sizeof(s.votes))
        s.votes[top_p] = -1  # marks the elected candidate
        return True
    k = _voters(g, s, lst, True)
    if i < k:
        if fr[3] != s.fam[lst[i]]:
            fr[3] = s.fam[lst[i]]
            return True
        return False
    tally = <int>fr[4]
    _pop(s)
    elected = -1
    for p in range(g.P):
        if s.votes[p] == -1:
            elected = p
            break
    memset(s.votes, 0, sizeof(s.votes))
    if tally >= 1000 or tally >= g.bishops_to_anoint:
        _anoint(g, s, elected)
    return True


cdef int _legal_elect(const F2Game* g, const F2State* s, const int64_t* fr, int* out) noexcept nogil:
    cdef int st = <int>fr[1], n = 0, k, i, f
    cdef int lst[F2_MAX_PERSONS]
    if st == 0:
        out[n] = _act(g, AK_WORD, W_END)
        n += 1
        k = _eligible(g, s, <int>fr[3], lst)
        for i in range(k):
            out[n] = _act(g, AK_CANDIDATE, lst[i])
            n += 1
        return n
    if st == 1:
        out[n] = _act(g, AK_WORD, W_ABSTAIN)
        n += 1
        for f in range(g.n):
            if s.cand[f] >= 0:
                out[n] = _act(g, AK_VOTE, s.cand[f])
                n += 1
        return n
    out[0] = _act(g, AK_WORD, W_ACCEPT)
    out[1] = _act(g, AK_WORD, W_REFUSE)
    return 2


cdef void _do_elect(const F2Game* g, F2State* s, int64_t* fr, int kind, int x) noexcept nogil:
    cdef int st = <int>fr[1], p
    cdef int lst[F2_MAX_PERSONS]
    if st == 0:
        if kind == AK_CANDIDATE:
            s.cand[fr[3]] = x
    elif st == 1:
        if kind == AK_VOTE:
            s.votes[x] += 1
    else:
        if kind == AK_WORD and x == W_ACCEPT:
            _voters(g, s, lst, True)
            p = lst[fr[2]]
            fr[4] += 1000 if s.cardinal[p] else 1  # F45.4: one Cardinal, or two Bishops
    fr[2] += 1


cdef void _anoint(const F2Game* g, F2State* s, int p) noexcept nogil:
    """F45.5: the King card; his wife Queen; the Guard; a Regency ends; retained titles pass to him."""
    cdef int old_kg = s.kg if s.regent else -1, w, y, old
    if s.queen >= 0 and s.queen != s.spouse[p]:
        s.regent = 0
        s.queen = -1
        s.qg = -1  # F39.4: she loses the Queen card unless she is his wife
    s.regent = 0
    s.king = p
    s.kg = old_kg if old_kg >= 0 else g.lim_kg
    w = s.spouse[p]
    if w >= 0 and s.queen != w:
        s.queen = w
        s.qg = g.lim_qg
    for y in range(g.NF):
        if s.retained[y] >= 0 and s.retained[y] != s.fam[p]:
            old = s.retained[y]
            s.retained[y] = -1
            _receive_title(g, s, y, p, old)


# =====================================================================================================
# K. End of the turn and of the game (F8, F48-F51)
# =====================================================================================================

cdef void _end_turn(const F2Game* g, F2State* s) noexcept nogil:
    cdef int n = g.n, f, p, v, i, nxt, tot, best, nalive = 0, y, victors
    cdef uint8_t before = 0, alive = 0
    cdef bint over = False
    for f in range(n):
        if s.alive[f]:
            before |= 1 << f
    if s.step == 0:
        for f in range(n):  # (a) F49
            if (before >> f) & 1 and _tokens_total(g, s, f) == 0:
                _eliminate(g, s, f)
        if s.stack_len:  # F49: who receives a retained title is chosen before the victory check (b)
            s.step = 1
            return
    for f in range(n):
        if s.alive[f]:
            alive |= 1 << f
            nalive += 1
    if not g.scored_turns:  # (b) F48
        victors = _victors(g, s)
        if victors:
            s.winners = victors
            over = True
        elif nalive == 1:
            s.winners = alive
            over = True
        elif nalive == 0:
            s.winners = before
            over = True
    if not over and s.regent and s.king >= 0 and s.turn >= s.regency_end:  # (c) F39
        _end_regency(g, s)
    if not over and g.scored_turns:  # (d) F50
        if s.turn % 5 == 0 or nalive < 2:
            for f in range(n):
                if (alive >> f) & 1:
                    s.tally[f] += f2_power(g, s, f)
        if s.turn >= g.scored_turns or nalive < 2:
            best = 0
            i = 0
            for f in range(n):
                if (alive >> f) & 1 and (i == 0 or s.tally[f] > best):
                    best = s.tally[f]
                    i = 1
            s.winners = 0
            for f in range(n):
                if (alive >> f) & 1 and s.tally[f] == best:
                    s.winners |= 1 << f
            over = True
    if not over and not g.scored_turns and g.turn_limit and s.turn >= g.turn_limit:  # (e) F51
        i = 0
        best = 0
        for f in range(n):
            if (alive >> f) & 1:
                tot = f2_power(g, s, f)
                if i == 0 or tot > best:
                    best = tot
                    i = 1
        s.winners = 0
        for f in range(n):
            if (alive >> f) & 1 and f2_power(g, s, f) == best:
                s.winners |= 1 << f
        over = True
    if over:
        s.phase = PH_OVER
        s.stack_len = 0
        return
    # (f) counters reset, the First Player card passes
    for p in range(g.P):
        s.used[p] = 0
    for f in range(n):
        s.exit_refused[f] = 0  # F26.4: "this turn"
    for f in range(n):
        for v in range(g.V):
            tot = _sold_sum(s, f, v)
            s.sold[f][v][0] = tot
            s.sold[f][v][1] = 0
            s.sold[f][v][2] = 0
            s.sold[f][v][3] = 0
    nxt = s.first
    for i in range(1, n + 1):
        if s.alive[(s.first + i) % n]:
            nxt = (s.first + i) % n
            break
    s.first = nxt
    s.turn += 1
    s.phase = PH_CARDS
    s.step = 0


cdef int _victors(const F2Game* g, const F2State* s) noexcept nogil:
    """F48: solo winners (King or Queen card and 3 fiefs) first; else the King's and Queen's families (a mask)."""
    cdef int f, solo = 0, k, q
    cdef bint royal
    for f in range(g.n):
        if not s.alive[f]:
            continue
        royal = (s.king >= 0 and s.fam[s.king] == f) or (s.queen >= 0 and s.fam[s.queen] == f)
        if royal and _fiefs_held(g, s, f) >= 3:
            solo |= 1 << f
    if solo:
        return solo
    if s.king >= 0 and s.queen >= 0:
        k = s.fam[s.king]
        q = s.fam[s.queen]
        if k != q and s.alive[k] and s.alive[q] and _united(g, s, k, q) and \
                _fiefs_held(g, s, k) + _fiefs_held(g, s, q) >= 4:
            return (1 << k) | (1 << q)
    return 0


cdef void _eliminate(const F2Game* g, F2State* s, int f) noexcept nogil:
    """F49: hand to the deck pool, money to the bank, alliances end, retained titles to the King (or the
    Regent) or the supply, villages unowned, a mob it controlled stops."""
    cdef int q, y, v, u, p, k
    cdef int heirs[2]
    s.alive[f] = 0
    s.hand_len[f] = 0
    memset(s.hands[f], 0, sizeof(s.hands[f]))
    s.cash[f] = 0
    for q in range(g.n):
        s.allied[f][q] = 0
        s.allied[q][f] = 0
    for y in range(g.NF):
        if s.retained[y] == f or s.pending[y] == f:
            s.retained[y] = -1
            s.pending[y] = -1
            s.esc_wait[y] = 0
            if s.regent and s.queen >= 0:  # F38.3: her family chooses the Regent or the young King
                heirs[0] = s.queen
                k = 1
                if s.king >= 0:
                    heirs[1] = s.king
                    k = 2
                _offer_title(g, s, s.fam[s.queen], y, heirs, k, f)
            elif s.king >= 0 and _free(s, s.king):
                _receive_title(g, s, y, s.king, f)
    for v in range(g.V):
        if s.owner[v] == f:
            s.owner[v] = -1
        for u in range(4):
            s.sold[f][v][u] = 0
    for p in range(g.P):
        if s.captor[p] == f:
            _release(g, s, p)
    if s.mob_ctrl == f:
        s.mob_ctrl = -1


# =====================================================================================================
# the phase driver (F8), combat order, automatic steps
# =====================================================================================================

cdef void _drive(const F2Game* g, F2State* s) noexcept nogil:
    cdef int order[F2_MAX_FAMILIES]
    cdef int no, f
    cdef int64_t* nf
    if s.phase == PH_SETUP:
        if s.step < g.n:  # F7: in seat order
            nf = _push(s, FR_SETUP)
            nf[1] = s.step
            nf[2] = 0
            nf[3] = -1
            s.step += 1
        else:
            s.turn = 1
            s.phase = PH_CARDS
            s.step = 0
    elif s.phase == PH_CARDS:
        no = _order(g, s, order)
        if s.step == 0:
            s.step = 1
            nf = _push(s, FR_DEAL)  # F10
            nf[1] = 0
        elif s.step - 1 < no:
            nf = _push(s, FR_CARDTURN)  # F11
            nf[1] = order[s.step - 1]
            nf[2] = g.card_actions
            s.step += 1
        else:
            s.phase = PH_INCOME
            s.step = 0
    elif s.phase == PH_INCOME:
        _income(g, s)
        s.phase = PH_PURCHASES
        s.step = 0
    elif s.phase == PH_PURCHASES:
        no = _order(g, s, order)
        if s.step < no:
            nf = _push(s, FR_PURCHASE)  # F22
            nf[1] = order[s.step]
            nf[2] = -1
            nf[3] = 0
            nf[4] = -1
            nf[5] = -1
            s.step += 1
        else:
            s.phase = PH_MOVEMENT
            s.step = 0
    elif s.phase == PH_MOVEMENT:
        no = _order(g, s, order)
        if s.step < no:
            s.refused = 0
            nf = _push(s, FR_MOVE)  # F25
            nf[1] = order[s.step]
            s.step += 1
        else:
            s.phase = PH_COMBAT
            s.step = 0
    elif s.phase == PH_COMBAT:
        _drive_combat(g, s)
    elif s.phase == PH_NEGOTIATION:
        if s.step == 0:  # F41 (1): inheritance
            if not _next_inheritance(g, s):
                s.step = 1
        elif s.step == 1:  # F41 (2): proposal rounds
            s.step = 2
            if g.negotiation_rounds > 0:
                _push(s, FR_NEGO)
        elif s.step == 2:  # F41 (3): the election
            s.step = 3
            if s.king < 0:
                for f in range(g.n):
                    s.cand[f] = -1
                memset(s.votes, 0, sizeof(s.votes))
                nf = _push(s, FR_ELECT)
                nf[3] = -1
        else:
            s.phase = PH_END_TURN
            s.step = 0
    elif s.phase == PH_END_TURN:
        _end_turn(g, s)


cdef int _combat_order(const F2State* s, int* out) noexcept nogil:
    """F29.1-2: villages in the order of their first declaration, each village's battles in declaration order."""
    cdef int n = s.n_assaults, i, j, x
    for i in range(n):
        out[i] = i
    for i in range(1, n):  # insertion sort by (stamp of the village, index): stable
        x = out[i]
        j = i - 1
        while j >= 0 and s.stamp[s.assaults[out[j]].v] > s.stamp[s.assaults[x].v]:
            out[j + 1] = out[j]
            j -= 1
        out[j + 1] = x
    return n


cdef void _drive_combat(const F2Game* g, F2State* s) noexcept nogil:
    cdef int seqs[F2_MAX_ASSAULTS]
    cdef int n = _combat_order(s, seqs), i = s.step // 2, half = s.step % 2, v
    cdef bint last
    if i >= n:
        _end_combat_phase(g, s)
        return
    v = s.assaults[seqs[i]].v
    s.step += 1
    if half == 0:
        _start_battle(g, s, seqs[i])
    else:
        last = i + 1 == n or s.assaults[seqs[i + 1]].v != v
        if last:
            _end_village_combat(g, s, v)


cdef void _end_combat_phase(const F2Game* g, F2State* s) noexcept nogil:
    cdef int p, i, v
    # attackers left on roads (a battle skipped because nobody was left to fight) enter the village
    for p in range(g.P):
        if s.fam[p] >= 0 and s.onroad[p] >= 0:
            s.onroad[p] = -1
    for i in range(s.n_assaults):
        if s.assaults[i].f != F2_MOB and s.assaults[i].soldiers:
            s.sold[s.assaults[i].f][s.assaults[i].v][3] += s.assaults[i].soldiers
            s.assaults[i].soldiers = 0
    if s.mob_road >= 0:
        s.mob_road = -1
    s.n_assaults = 0
    memset(s.assaults, 0, sizeof(s.assaults))
    for v in range(g.V):
        s.stamp[v] = F2_INF_TURN
        s.garrison[v] = 0
        s.first_owner[v] = -1
        s.mob_held[v] = 0
        s.battle_lost[v] = 0
        s.won_by[v] = -1
    for v in range(g.V):
        _check_owner(g, s, v)
    _free_unescorted(g, s)
    s.phase = PH_NEGOTIATION
    s.step = 0


cdef bint _auto(const F2Game* g, F2State* s) noexcept nogil:
    """Automatic frame steps of the top frame; True when something changed."""
    cdef int64_t* fr = _top(s)
    cdef int k = <int>fr[0], no, i
    cdef int order[F2_MAX_FAMILIES]
    cdef int64_t fc[F2_FRAME]
    cdef int buf[F2_MAX_LEGAL]
    if k == FR_DEAL:
        no = _order(g, s, order)
        for i in range(no):
            if s.hand_len[order[i]] < g.hand_size:
                return False
        _pop(s)
        return True
    if k == FR_CARDTURN:
        if fr[2] <= 0:
            _pop(s)
            return True
        return False
    if k == FR_JUSTICE:
        if fr[2] >= _justice_asked(g, s, fr, order):
            _pop(s)
            return True
        return False
    if k == FR_DICE:
        if s.dice_len >= fr[1]:
            _copy_frame(fc, fr)
            _pop(s)
            _after_dice(g, s, fc)
            return True
        return False
    if k == FR_GROUP:
        return _auto_group(g, s, fr)
    if k == FR_RETREAT:
        return _auto_retreat(g, s, fr)
    if k == FR_BATTLE:
        return _auto_battle(g, s, fr)
    if k == FR_ELECT:
        return _auto_elect(g, s, fr)
    if k == FR_CITYSOLDIER:
        if not _legal_city_soldier(g, s, fr, buf):  # F38: "if it can do neither, the City stays empty"
            _pop(s)
            return True
        return False
    if k == FR_LOSSPICK:
        if fr[2] <= 0:
            _pop(s)
            return True
        return False
    if k == FR_ANSWER and _fam_gone(g, s, <int>fr[2]):
        _pop(s)
        return True
    return False


cdef void _settle(const F2Game* g, F2State* s) noexcept nogil:
    cdef int guard = 0
    while s.phase != PH_OVER:
        guard += 1
        if guard > 100000:
            s.error = 1
            return
        if s.stack_len == 0:
            _drive(g, s)
            continue
        if not _auto(g, s):
            return


# =====================================================================================================
# legal actions per frame
# =====================================================================================================

cdef int _gen_legal(const F2Game* g, const F2State* s, const int64_t* fr, int* out) noexcept nogil:
    cdef int k = <int>fr[0], n = 0, p, v, y, i, m, f, lo, hi, holder
    cdef int tmp[SCRATCH]
    cdef int fam_[F2_MAX_FAMILIES]
    if k == FR_SETUP:
        if fr[2] == 0:  # F7.2: a man, face up
            for p in range(g.P):
                if g.person_male[p] and s.fam[p] < 0:
                    out[n] = _act(g, AK_PERSON, p)
                    n += 1
            return n
        for v in range(g.V):
            if _empty(g, s, v):
                out[n] = _act(g, AK_VILLAGE, v)
                n += 1
        return n
    if k == FR_CARDTURN:
        return _legal_cardturn(g, s, fr, out)
    if k == FR_TARGET:
        return _card_targets(g, s, <int>fr[1], <int>fr[2], <int>fr[3], <int>fr[4], out)
    if k == FR_BIRTH:
        out[n] = _act(g, AK_WORD, W_STOP)
        n += 1
        m = _transferable(g, s, <int>fr[1], <int>fr[2], tmp)
        for i in range(m):
            out[n] = _act(g, AK_TRANSFER, tmp[i])
            n += 1
        return n
    if k == FR_JUSTICE:
        m = _justice_asked(g, s, fr, fam_)
        f = fam_[fr[2]]
        out[n] = _act(g, AK_WORD, W_END)
        n += 1
        if _hand_has(s, f, g.justice_card):
            m = _justice_targets(g, s, <int>fr[1], tmp)
            for i in range(m):
                out[n] = _act(g, AK_PERSON, tmp[i])
                n += 1
        return n
    if k == FR_ANSWER:
        if fr[3] == A_ASK:
            out[n] = _act(g, AK_WORD, W_REFUSE)
            n += 1
            f = <int>fr[2]
            for i in range(s.hand_len[f]):
                out[n] = _act(g, AK_HAND_OVER, s.hands[f][i])
                n += 1
            return n
        out[0] = _act(g, AK_WORD, W_ACCEPT)
        out[1] = _act(g, AK_WORD, W_REFUSE)
        return 2
    if k == FR_CONSENT:
        out[0] = _act(g, AK_WORD, W_ACCEPT)
        out[1] = _act(g, AK_WORD, W_REFUSE)
        return 2
    if k == FR_PURCHASE:
        return _legal_purchase(g, s, fr, out)
    if k == FR_MOVE:
        return _legal_move(g, s, fr, out)
    if k == FR_GROUP:
        return _legal_group(g, s, fr, out)
    if k == FR_EVAC:
        out[n] = _act(g, AK_WORD, W_END)
        n += 1
        if _free_at(g, s, <int>fr[1], <int>fr[2], False, NULL) and \
                _destinations(g, s, <int>fr[1], <int>fr[2], 1, 0, NULL):
            out[n] = _act(g, AK_GROUP, <int>fr[2])
            n += 1
        return n
    if k == FR_RETREAT:
        out[n] = _act(g, AK_WORD, W_STOP)
        n += 1
        m = _destinations(g, s, <int>fr[1], <int>fr[2], 2, fr[3], tmp)
        for i in range(m):
            out[n] = _act(g, AK_VILLAGE, tmp[i])
            n += 1
        return n
    if k == FR_BATTLE:
        return _legal_battle(g, s, fr, out)
    if k == FR_LOSSPICK:
        m = _fighting_persons(g, s, <int>fr[1], <int>fr[3], fr[4] != 0, tmp)
        for i in range(m):
            out[n] = _act(g, AK_PERSON, tmp[i])
            n += 1
        return n
    if k == FR_TITLE or k == FR_HEIR:
        m = _decode_mask(fr[3], tmp)
        for i in range(m):
            out[n] = _act(g, AK_PERSON, tmp[i])
            n += 1
        return n
    if k == FR_CITYSOLDIER:
        return _legal_city_soldier(g, s, fr, out)
    if k == FR_NEGO:
        return _legal_nego(g, s, fr, out)
    if k == FR_AMOUNT:
        _amount_range(g, s, fr, &lo, &hi)
        for i in range(lo, hi + 1):
            out[n] = _act(g, AK_AMOUNT, i)
            n += 1
        return n
    if k == FR_TRANSFER:
        holder = s.title[fr[2]]
        for p in range(g.P):
            if s.fam[p] == fr[1] and _free(s, p) and p != holder:
                out[n] = _act(g, AK_PERSON, p)
                n += 1
        return n
    if k == FR_ELECT:
        return _legal_elect(g, s, fr, out)
    return 0


cdef int f2_legal(const F2Game* g, const F2State* s, int* out) noexcept nogil:
    cdef int n, i, k
    cdef const int64_t* fr
    if s.phase == PH_OVER or s.stack_len == 0:
        return 0
    fr = &s.stack[s.stack_len - 1][0]
    k = <int>fr[0]
    if k == FR_DEAL:
        n = f2_deck(g, s, out)
        for i in range(n):
            out[i] += g.base[AK_DEAL]
        return n
    if k == FR_DICE:
        for i in range(6):
            out[i] = g.base[AK_DIE] + i
        return 6
    n = _gen_legal(g, s, fr, out)
    _sort_unique(out, &n)
    return n


cdef int f2_chance(const F2Game* g, const F2State* s, int* actions, double* probs) noexcept nogil:
    cdef int n = 0, i
    if not f2_is_chance(g, s):
        return 0
    n = f2_legal(g, s, actions)
    for i in range(n):
        probs[i] = 1.0 / n
    return n


cdef int f2_sample_chance(const F2Game* g, const F2State* s, Rng* rng) noexcept nogil:
    cdef int buf[F2_MAX_CARDS]
    cdef int n, k
    if not f2_is_chance(g, s):
        return -1
    k = <int>s.stack[s.stack_len - 1][0]
    if k == FR_DICE:
        return g.base[AK_DIE] + rng_below(rng, 6)
    n = f2_deck(g, s, buf)
    if n == 0:
        return -1
    return g.base[AK_DEAL] + buf[rng_below(rng, n)]


# =====================================================================================================
# applying an action
# =====================================================================================================

cdef inline int _decode(const F2Game* g, int a, int* arg) noexcept nogil:
    cdef int k
    for k in range(F2_NUM_KINDS - 1, -1, -1):
        if a >= g.base[k]:
            arg[0] = a - g.base[k]
            return k
    arg[0] = a
    return 0


cdef void _apply_frame(const F2Game* g, F2State* s, int kind, int x) noexcept nogil:
    cdef int64_t* fr = _top(s)
    cdef int k = <int>fr[0], seat, p, f, city, y, no, i, j, q
    cdef int order[F2_MAX_FAMILIES]
    cdef int one[1]
    cdef int64_t fc[F2_FRAME]
    cdef int64_t* nf
    if k == FR_SETUP:
        if fr[2] == 0:
            fr[3] = x
            fr[2] = 1
        else:  # F7.2: the person, 8 Soldiers and a Castle; 300 florins
            seat = <int>fr[1]
            p = <int>fr[3]
            s.fam[p] = seat
            s.loc[p] = x
            s.sold[seat][x][0] += g.start_soldiers
            s.castle[x] = g.start_castles > 0
            s.owner[x] = seat
            s.cash[seat] += g.start_cash
            _pop(s)
    elif k == FR_DEAL:
        no = _order(g, s, order)
        i = <int>fr[1]
        for j in range(no):
            f = order[(i + j) % no]
            if s.hand_len[f] < g.hand_size:
                _hand_add(s, f, x)
                fr[1] = (i + j + 1) % no
                break
    elif k == FR_CARDTURN:
        _do_cardturn(g, s, fr, kind, x)
    elif k == FR_TARGET:
        _do_target(g, s, fr, kind, x)
    elif k == FR_BIRTH:
        if kind == AK_WORD:
            _pop(s)
        else:
            f = <int>fr[1]
            nf = _push(s, FR_TRANSFER)
            nf[1] = f
            nf[2] = x
    elif k == FR_JUSTICE:
        if kind == AK_WORD:
            fr[2] += 1
        else:  # F15.3: the executed person dies; the window closes
            _justice_asked(g, s, fr, order)
            f = order[fr[2]]
            _hand_remove(s, f, g.justice_card)
            _pop(s)
            one[0] = x
            _kill(g, s, one, 1, False)
    elif k == FR_DICE:
        if s.dice_len < F2_MAX_DICE:
            s.dice[s.dice_len] = x + 1
            s.dice_len += 1
        else:
            s.error = 1
    elif k == FR_ANSWER:
        _copy_frame(fc, fr)
        _pop(s)
        _do_answer(g, s, fc, kind, x)
    elif k == FR_CONSENT:
        s.answer = 1 if x == W_ACCEPT else 0
        _pop(s)
    elif k == FR_PURCHASE:
        _do_purchase(g, s, fr, kind, x)
    elif k == FR_MOVE:
        _do_move(g, s, fr, kind, x)
    elif k == FR_GROUP:
        _do_group(g, s, fr, kind, x)
    elif k == FR_EVAC:
        if kind == AK_WORD:
            _pop(s)
        else:
            f = <int>fr[1]
            y = <int>fr[2]
            nf = _push(s, FR_GROUP)
            nf[1] = f
            nf[2] = y
            nf[9] = 1
            nf[10] = -1
    elif k == FR_RETREAT:
        _do_retreat(g, s, fr, kind, x)
    elif k == FR_BATTLE:
        _do_battle(g, s, fr, kind, x)
    elif k == FR_LOSSPICK:
        fr[2] -= 1
        one[0] = x
        _kill(g, s, one, 1, True)
    elif k == FR_TITLE:
        y = <int>fr[2]
        _pop(s)
        _set_title(s, y, x)
    elif k == FR_HEIR:
        _copy_frame(fc, fr)
        _pop(s)
        _receive_title(g, s, <int>fc[2], x, <int>fc[4])
    elif k == FR_CITYSOLDIER:
        f = <int>fr[1]
        city = <int>fr[2]
        _pop(s)
        if kind == AK_WORD:
            s.cash[f] -= g.pr_soldier
        else:
            _take_soldier(s, f, x)
        s.sold[f][city][0] += 1
    elif k == FR_NEGO:
        _do_nego(g, s, fr, kind, x)
    elif k == FR_AMOUNT:
        _do_amount(g, s, fr, x)
    elif k == FR_TRANSFER:
        y = <int>fr[2]
        _pop(s)
        s.title[y] = x  # F24
    elif k == FR_ELECT:
        _do_elect(g, s, fr, kind, x)


cdef void f2_apply(const F2Game* g, F2State* s, int a) noexcept nogil:
    cdef int x, kind
    if s.phase == PH_OVER or s.stack_len == 0:
        s.error = 1
        return
    kind = _decode(g, a, &x)
    _apply_frame(g, s, kind, x)
    s.history_len += 1
    _settle(g, s)


cdef int f2_playout(const F2Game* g, F2State* s, Rng* rng, int max_actions) noexcept nogil:
    """Uniformly random legal actions (chance sampled) until the end or max_actions; the actions applied."""
    cdef int buf[F2_MAX_LEGAL]
    cdef int n, a, steps = 0
    while s.phase != PH_OVER and steps < max_actions and not s.error:
        if f2_is_chance(g, s):
            a = f2_sample_chance(g, s, rng)
            if a < 0:
                s.error = 1
                break
        else:
            n = f2_legal(g, s, buf)
            if n == 0:
                s.error = 1
                break
            a = buf[rng_below(rng, n)]
        f2_apply(g, s, a)
        steps += 1
    return steps


# =====================================================================================================
# Python: the compiled game and the state object
# =====================================================================================================

_KIND_CODES = {"lord": CK_LORD, "lady": CK_LADY, "darc": CK_DARC, "bishop": CK_BISHOP, "tithe": CK_TITHE,
               "tax": CK_TAX, "escape": CK_ESCAPE, "plague": CK_PLAGUE, "assassin": CK_ASSASSIN,
               "justice": CK_JUSTICE, "bad_weather": CK_BAD_WEATHER, "good_weather": CK_GOOD_WEATHER,
               "famine": CK_FAMINE, "good_harvest": CK_GOOD_HARVEST, "peasant_revolt": CK_PEASANT_REVOLT}
_LIST_FIELDS_AS_SETS = ("discards_seen", "seen_cards")


cdef class CompiledFief2:
    """A reference :class:`fief2.state.Game` compiled into C arrays (one per Game, cached on it)."""

    def __cinit__(self, game):
        self.g = <F2Game*>malloc(sizeof(F2Game))
        if self.g == NULL:
            raise MemoryError()
        memset(self.g, 0, sizeof(F2Game))

    def __dealloc__(self):
        if self.g != NULL:
            free(self.g)
            self.g = NULL

    def __init__(self, game):
        cdef F2Game* g = self.g
        cdef int i, j
        rs, m, L = game.ruleset, game.map, game.layout
        self.game = game
        if L.MAX_FAMILIES != F2_MAX_FAMILIES or len(L.kinds) != F2_NUM_KINDS:
            raise StateError("fief2.actions.Layout changed: the core's action kinds no longer match")
        checks = [("villages", game.V, F2_MAX_VILLAGES), ("persons", game.P, F2_MAX_PERSONS),
                  ("cards", game.C, F2_MAX_CARDS), ("fiefs", game.NF, F2_MAX_FIEFS),
                  ("bishoprics", len(m.bishopric_ids), F2_MAX_BISHOPRICS), ("hand size", rs.hand_size, F2_MAX_HAND),
                  ("roads out of a village", max(len(a) for a in m.adj), F2_MAX_NEIGHBORS),
                  ("villages of a fief", max(len(v) for v in m.fief_villages), 5),
                  ("soldiers per family", rs.limits["soldiers_per_family"], 100),
                  ("start soldiers", rs.start_soldiers, 100), ("peasants", rs.limits["peasants"], 1000),
                  ("guard strength", max(rs.limits["kings_guard"], rs.limits["queens_guard"]), 1000),
                  ("mills or wine presses per village", rs.limits["improvements_per_village"], 100),
                  ("amount steps", L.M, 1024), ("persons per family", rs.max_persons, 16)]
        for what, value, limit in checks:
            if value > limit:
                raise StateError(f"the Fief 2 core supports at most {limit} {what}, this game has {value}")
        g.n, g.V, g.P, g.C, g.NF, g.NB = game.num_players, game.V, game.P, game.C, game.NF, len(m.bishopric_ids)
        for i, (name, off, size) in enumerate(L.kinds):
            g.base[i] = off
            g.size[i] = size
        g.num_actions = L.size
        g.K = L.K
        g.calm_steps = L.calm_steps
        for i in range(game.V):
            g.num_adj[i] = len(m.adj[i])
            for j, w in enumerate(m.adj[i]):
                g.adj[i][j] = w
            g.village_fief[i] = m.village_fief[i]
            g.village_bishopric[i] = m.village_bishopric[i]
        for i in range(game.NF):
            g.fief_nv[i] = len(m.fief_villages[i])
            for j, w in enumerate(m.fief_villages[i]):
                g.fief_villages[i][j] = w
            g.fief_rank[i] = game.fief_rank[i]
            g.fief_price[i] = game.fief_price[i]
            g.fief_points[i] = rs.points[m.fief_rank[i]]
        for i in range(game.P):
            g.person_male[i] = bool(rs.person_male[i])
            g.person_card[i] = game.person_card[i]
        g.darc_card = g.justice_card = -1
        for i in range(F2_MAX_BISHOPRICS):
            g.bishop_card[i] = -1
        for c in rs.cards:
            g.card_kind[c.index] = _KIND_CODES[c.kind]
            g.card_person[c.index] = c.person
            g.card_bishopric[c.index] = c.bishopric
            if c.kind == "darc" and g.darc_card < 0:
                g.darc_card = c.index
            if c.kind == "justice" and g.justice_card < 0:
                g.justice_card = c.index
            if c.kind == "bishop" and c.bishopric >= 0 and g.bishop_card[c.bishopric] < 0:
                g.bishop_card[c.bishopric] = c.index
        lim, pr, inc, pts = rs.limits, rs.prices, rs.income, rs.points
        g.hand_size, g.card_actions, g.max_persons = rs.hand_size, rs.card_actions, rs.max_persons
        g.start_cash, g.start_soldiers, g.start_castles = rs.start_cash, rs.start_soldiers, rs.start_castles
        g.lim_soldiers, g.lim_kg, g.lim_qg = lim["soldiers_per_family"], lim["kings_guard"], lim["queens_guard"]
        g.lim_peasants, g.lim_castles, g.lim_cities = lim["peasants"], lim["castles"], lim["cities"]
        g.lim_mills, g.lim_presses, g.lim_improvements = lim["mills"], lim["wine_presses"], \
            lim["improvements_per_village"]
        g.pr_soldier, g.pr_peasant, g.pr_press, g.pr_mill = pr["soldier"], pr["peasant"], pr["wine_press"], pr["mill"]
        g.pr_castle, g.pr_cardinal = pr["castle"], pr["cardinal"]
        g.inc_castle, g.inc_city, g.inc_press, g.inc_mill = inc["castle"], inc["city"], inc["wine_press"], inc["mill"]
        g.inc_tax, g.inc_king, g.inc_queen = inc["tax_per_village"], inc["king_pension"], inc["queen_pension"]
        g.pt_king, g.pt_queen, g.pt_prince = pts["king"], pts["queen"], pts["prince"]
        g.pt_bishop, g.pt_cardinal, g.florins_per_point = pts["bishop"], pts["cardinal"], pts["florins_per_point"]
        for i in range(3):
            g.th[i] = rs.dice_thresholds[i]
        pips = rs.pips_per_loss
        g.pips_open, g.pips_castle, g.pips_city = pips["open"], pips["castle"], pips["city"]
        g.darc_force, g.aimed_kill_face = rs.darc_force, rs.aimed_kill_face
        g.allowance, g.darc_allowance = rs.allowance, rs.darc_allowance
        g.revolt_dice, g.calm_success, g.calm_step_price = rs.revolt_dice, rs.calm_success, rs.calm_step_price
        g.calm_max_steps, g.plague_survive_from = rs.calm_max_steps, rs.plague_survive_from
        g.regency_turns, g.negotiation_rounds = rs.regency_turns, rs.negotiation_rounds
        g.min_votes, g.bishops_to_anoint = rs.min_votes, rs.bishops_to_anoint
        g.money_unit, g.max_transfer = rs.money_unit, rs.max_transfer
        g.scored_turns, g.turn_limit = rs.scored_turns, rs.turn_limit
        g.cardinal_cards = rs.red_cards["cardinal"]


def compiled_for(game) -> CompiledFief2:
    """The compiled form of a reference Game (cached on it: every state of a game shares one)."""
    c = getattr(game, "_fief2_core_compiled", None)
    if c is None:
        c = CompiledFief2(game)
        game._fief2_core_compiled = c
    return c


def reference_dump(st) -> dict:
    """A reference state's fields, in the form :meth:`Fief2Core.dump` gives them: the lists the core keeps as sets
    (``discards_seen``, ``seen_cards``, ``refused``) sorted without repeats."""
    d = st.to_dict()
    del d["format"], d["players"]
    for name in _LIST_FIELDS_AS_SETS:
        d[name] = [sorted(set(x)) for x in d[name]]
    d["refused"] = sorted(set(d["refused"]))
    d["winners"] = sorted(d["winners"])
    return d


cdef list _bits(const uint64_t* m, int n):
    cdef int i
    return [i for i in range(n) if (m[i >> 6] >> (i & 63)) & 1]


# fields stored narrower than Python ints: their range in the core (the others are int32 or wider)
_INT8_FIELDS = ("phase", "first", "hands", "fam", "loc", "onroad", "captor", "conduct", "used", "spouse", "bishop",
                "votes", "sold", "owner", "mills", "presses", "garrison", "first_owner", "won_by", "title", "pending",
                "pend_spouse", "retained", "capital", "bad_weather", "famine", "tax", "tithe", "king", "queen",
                "prince", "mob_v", "mob_road", "mob_ctrl", "revolt_card", "calm_bishop", "answer", "cand",
                "assaults", "dice", "aims")
_INT16_FIELDS = ("kg", "qg", "mob_n")


def _flat(x):
    if isinstance(x, list):
        for y in x:
            yield from _flat(y)
    else:
        yield x


def _check_ranges(st) -> None:
    """Every value fits the core's field (a clear error naming the field, never a silent wrap-around)."""
    for names, lo, hi in ((_INT8_FIELDS, -128, 127), (_INT16_FIELDS, -32768, 32767)):
        for name in names:
            for x in _flat(getattr(st, name)):
                if not lo <= int(x) <= hi:
                    raise StateError(f"state.{name}: {x} is outside the Fief 2 core's range [{lo}, {hi}]")
    for name in ("turn", "step", "seq", "history_len", "regency_end", "cash", "tally", "escrow", "pend_seq",
                 "esc_wait", "stamp"):
        for x in _flat(getattr(st, name)):
            if not -2 ** 31 <= int(x) < 2 ** 31:
                raise StateError(f"state.{name}: {x} is outside the Fief 2 core's range of 32-bit integers")


cdef void _fill(F2State* s, object st, int C) except *:
    """Copy a reference state into s (every field; the sets from their lists)."""
    cdef int f, v, p, i, j, y
    game = st.game
    n, V, P, NF = game.num_players, game.V, game.P, game.NF
    memset(s, 0, sizeof(F2State))
    if len(st.stack) > F2_MAX_STACK or len(st.assaults) > F2_MAX_ASSAULTS or len(st.dice) > F2_MAX_DICE \
            or any(len(a) > F2_MAX_AIMS for a in st.aims) or any(len(h) > F2_MAX_HAND for h in st.hands) \
            or any(len(fr) > F2_FRAME for fr in st.stack):
        raise StateError("the state exceeds the Fief 2 core's fixed sizes (stack, assaults, dice, aims or hands)")
    _check_ranges(st)
    s.turn, s.step, s.seq, s.history_len = st.turn, st.step, st.seq, st.history_len
    s.regency_end, s.phase, s.first = st.regency_end, st.phase, st.first
    for f in range(n):
        s.alive[f] = st.alive[f]
        s.cash[f] = st.cash[f]
        s.tally[f] = st.tally[f]
        s.hand_len[f] = len(st.hands[f])
        for i, c in enumerate(st.hands[f]):
            s.hands[f][i] = c
        for c in st.discards_seen[f]:
            _bit_set(s.discards_seen[f], c)
        for c in st.seen_cards[f]:
            _bit_set(s.seen_cards[f], c)
        for j in range(n):
            s.allied[f][j] = st.allied[f][j]
        s.cand[f] = st.cand[f]
        for v in range(V):
            for i in range(4):
                s.sold[f][v][i] = st.sold[f][v][i]
    for f in st.winners:
        s.winners |= 1 << f
    for p in range(P):
        s.fam[p], s.loc[p], s.onroad[p], s.captor[p] = st.fam[p], st.loc[p], st.onroad[p], st.captor[p]
        s.conduct[p] = st.conduct[p]
        s.used[p], s.spouse[p], s.wed[p], s.bishop[p] = st.used[p], st.spouse[p], st.wed[p], st.bishop[p]
        s.cardinal[p], s.darc[p], s.votes[p], s.escrow[p] = st.cardinal[p], st.darc[p], st.votes[p], st.escrow[p]
    for v in range(V):
        s.owner[v], s.castle[v], s.city[v] = st.owner[v], st.castle[v], st.city[v]
        s.mills[v], s.presses[v], s.stamp[v] = st.mills[v], st.presses[v], st.stamp[v]
        s.garrison[v], s.first_owner[v], s.mob_held[v] = st.garrison[v], st.first_owner[v], st.mob_held[v]
        s.battle_lost[v], s.won_by[v] = st.battle_lost[v], st.won_by[v]
    for v in st.refused:
        s.refused |= (<uint64_t>1) << v
    for f in range(n):
        for v in range(V):
            if st.exit_refused[f][v]:
                s.exit_refused[f] |= (<uint64_t>1) << v
    for y in range(NF):
        s.title[y], s.pending[y], s.pend_spouse[y] = st.title[y], st.pending[y], st.pend_spouse[y]
        s.pend_seq[y], s.retained[y], s.capital[y] = st.pend_seq[y], st.retained[y], st.capital[y]
        s.esc_wait[y], s.bad_weather[y], s.famine[y], s.tax[y] = st.esc_wait[y], st.bad_weather[y], \
            st.famine[y], st.tax[y]
    for i, c in enumerate(st.tithe):
        s.tithe[i] = c
    s.king, s.queen, s.prince, s.regent = st.king, st.queen, st.prince, st.regent
    s.kg, s.qg = st.kg, st.qg
    s.mob_v, s.mob_road, s.mob_ctrl, s.revolt_card, s.mob_n = st.mob_v, st.mob_road, st.mob_ctrl, \
        st.revolt_card, st.mob_n
    s.calm_bishop, s.answer = st.calm_bishop, st.answer
    s.n_assaults = len(st.assaults)
    for i, a in enumerate(st.assaults):
        s.assaults[i].f, s.assaults[i].v, s.assaults[i].frm = a[0], a[1], a[2]
        s.assaults[i].target, s.assaults[i].soldiers = a[3], a[4]
    s.stack_len = len(st.stack)
    for i, fr in enumerate(st.stack):
        for j, x in enumerate(fr):
            s.stack[i][j] = x
    s.dice_len = len(st.dice)
    for i, d in enumerate(st.dice):
        s.dice[i] = d
    for j in range(2):
        s.aims_len[j] = len(st.aims[j])
        for i, p in enumerate(st.aims[j]):
            s.aims[j][i] = p


cdef class Fief2Core:
    """A Fief 2 position in C with the reference :class:`fief2.state.State`'s Python API. Made from a reference
    state (:meth:`from_state`) or :func:`new_core`; every public method validates in Python."""

    def __init__(self, *args, **kwargs):
        raise TypeError("use Fief2Core.from_state(state) or fief2._core.new_core(...)")

    @staticmethod
    def from_state(st):
        cdef Fief2Core out = Fief2Core.__new__(Fief2Core)
        out.compiled = compiled_for(st.game)
        _fill(&out.s, st, out.compiled.g.C)
        return out

    @property
    def game(self):
        return self.compiled.game

    @property
    def num_players(self) -> int:
        return self.compiled.g.n

    @property
    def error(self) -> int:
        """0 unless a fixed size overflowed (a bug: the differential test asserts 0)."""
        return self.s.error

    @property
    def history_len(self) -> int:
        return self.s.history_len

    @property
    def turn(self) -> int:
        return self.s.turn

    def clone(self):
        cdef Fief2Core out = Fief2Core.__new__(Fief2Core)
        out.compiled = self.compiled
        memcpy(&out.s, &self.s, sizeof(F2State))
        return out

    def current_player(self) -> int:
        return f2_current_player(self.compiled.g, &self.s)

    def is_terminal(self) -> bool:
        return f2_is_terminal(&self.s)

    def is_chance_node(self) -> bool:
        return f2_is_chance(self.compiled.g, &self.s)

    def legal_actions(self) -> list:
        cdef int buf[F2_MAX_LEGAL]
        cdef int n = f2_legal(self.compiled.g, &self.s, buf)
        return [buf[i] for i in range(n)]

    def chance_outcomes(self) -> list:
        cdef int buf[F2_MAX_LEGAL]
        cdef double probs[F2_MAX_LEGAL]
        cdef int n = f2_chance(self.compiled.g, &self.s, buf, probs)
        return [(buf[i], probs[i]) for i in range(n)]

    def apply_action(self, action) -> None:
        if isinstance(action, numbers.Integral) and not isinstance(action, (int, bool)):
            action = int(action)
        if isinstance(action, bool) or not isinstance(action, int):
            raise IllegalActionError(f"action: expected an integer, got {action!r}")
        legal = self.legal_actions()
        if action not in legal:
            raise IllegalActionError(f"action {action} is not legal for {self.current_player()}; "
                                     f"legal: {legal[:8]}")
        f2_apply(self.compiled.g, &self.s, action)

    def returns(self) -> list:
        cdef double out[F2_MAX_FAMILIES]
        f2_returns(self.compiled.g, &self.s, out)
        return [out[i] for i in range(self.compiled.g.n)]

    def power(self, int f) -> int:
        if not 0 <= f < self.compiled.g.n:
            raise StateError(f"family: expected an integer in [0, {self.compiled.g.n}), got {f!r}")
        return f2_power(self.compiled.g, &self.s, f)

    def deck(self) -> list:
        cdef int buf[F2_MAX_CARDS]
        cdef int n = f2_deck(self.compiled.g, &self.s, buf)
        return [buf[i] for i in range(n)]

    def sample_chance(self, uint64_t seed) -> int:
        """A chance outcome drawn with the core's generator from ``seed`` (-1 when not a chance node)."""
        cdef Rng rng
        rng_seed(&rng, seed)
        return f2_sample_chance(self.compiled.g, &self.s, &rng)

    def playout(self, uint64_t seed, int max_actions=1000000) -> int:
        """Play uniformly random actions (chance from the seed) in place; returns the number applied."""
        cdef Rng rng
        cdef int n
        rng_seed(&rng, seed)
        with nogil:
            n = f2_playout(self.compiled.g, &self.s, &rng, max_actions)
        return n

    def random_playouts(self, int count, uint64_t seed, int max_actions=1000000) -> int:
        """``count`` random playouts from copies of this position (the position is unchanged); the total of
        actions applied. For the benchmark: the loop runs in C without the GIL."""
        cdef Rng rng
        cdef F2State* work = <F2State*>malloc(sizeof(F2State))
        cdef long total = 0
        cdef int i
        if work == NULL:
            raise MemoryError()
        rng_seed(&rng, seed)
        try:
            with nogil:
                for i in range(count):
                    memcpy(work, &self.s, sizeof(F2State))
                    total += f2_playout(self.compiled.g, work, &rng, max_actions)
        finally:
            free(work)
        return total

    def clone_loop(self, long count) -> int:
        """Copy the state ``count`` times in C (the benchmark's clone time); returns a checksum of the copies."""
        cdef F2State* work = <F2State*>malloc(sizeof(F2State) * 2)
        cdef long i, check = 0
        if work == NULL:
            raise MemoryError()
        try:
            with nogil:
                for i in range(count):
                    memcpy(&work[i & 1], &self.s, sizeof(F2State))
                    work[i & 1].history_len += <int32_t>i
                    check += work[(i + 1) & 1].history_len
        finally:
            free(work)
        return check

    @staticmethod
    def state_size() -> int:
        return sizeof(F2State)

    def dump(self) -> dict:
        """Every field, as :func:`reference_dump` gives a reference state's (frames cut to their kind's length)."""
        cdef F2State* s = &self.s
        cdef const F2Game* g = self.compiled.g
        n, V, P, NF, C = g.n, g.V, g.P, g.NF, g.C
        return {
            "turn": s.turn, "phase": s.phase, "step": s.step, "first": s.first,
            "alive": [bool(s.alive[f]) for f in range(n)], "cash": [s.cash[f] for f in range(n)],
            "hands": [[s.hands[f][i] for i in range(s.hand_len[f])] for f in range(n)],
            "discards_seen": [_bits(s.discards_seen[f], C) for f in range(n)],
            "seen_cards": [_bits(s.seen_cards[f], C) for f in range(n)],
            "fam": [s.fam[p] for p in range(P)], "loc": [s.loc[p] for p in range(P)],
            "onroad": [s.onroad[p] for p in range(P)], "captor": [s.captor[p] for p in range(P)],
            "conduct": [s.conduct[p] for p in range(P)],
            "used": [s.used[p] for p in range(P)], "spouse": [s.spouse[p] for p in range(P)],
            "wed": [bool(s.wed[p]) for p in range(P)], "bishop": [s.bishop[p] for p in range(P)],
            "cardinal": [bool(s.cardinal[p]) for p in range(P)], "darc": [bool(s.darc[p]) for p in range(P)],
            "escrow": [s.escrow[p] for p in range(P)],
            "sold": [[[s.sold[f][v][u] for u in range(4)] for v in range(V)] for f in range(n)],
            "owner": [s.owner[v] for v in range(V)], "castle": [bool(s.castle[v]) for v in range(V)],
            "city": [bool(s.city[v]) for v in range(V)], "mills": [s.mills[v] for v in range(V)],
            "presses": [s.presses[v] for v in range(V)],
            "title": [s.title[y] for y in range(NF)], "pending": [s.pending[y] for y in range(NF)],
            "pend_spouse": [s.pend_spouse[y] for y in range(NF)], "pend_seq": [s.pend_seq[y] for y in range(NF)],
            "retained": [s.retained[y] for y in range(NF)], "capital": [s.capital[y] for y in range(NF)],
            "esc_wait": [s.esc_wait[y] for y in range(NF)],
            "bad_weather": [s.bad_weather[y] for y in range(NF)], "famine": [s.famine[y] for y in range(NF)],
            "tax": [s.tax[y] for y in range(NF)], "tithe": [s.tithe[b] for b in range(g.NB)],
            "king": s.king, "queen": s.queen, "prince": s.prince, "regent": bool(s.regent),
            "regency_end": s.regency_end, "kg": s.kg, "qg": s.qg,
            "mob_v": s.mob_v, "mob_n": s.mob_n, "mob_road": s.mob_road, "mob_ctrl": s.mob_ctrl,
            "revolt_card": s.revolt_card,
            "allied": [[bool(s.allied[f][q]) for q in range(n)] for f in range(n)],
            "assaults": [[s.assaults[i].f, s.assaults[i].v, s.assaults[i].frm, s.assaults[i].target,
                          s.assaults[i].soldiers] for i in range(s.n_assaults)],
            "stamp": [s.stamp[v] for v in range(V)], "garrison": [s.garrison[v] for v in range(V)],
            "first_owner": [s.first_owner[v] for v in range(V)],
            "mob_held": [bool(s.mob_held[v]) for v in range(V)],
            "battle_lost": [bool(s.battle_lost[v]) for v in range(V)], "won_by": [s.won_by[v] for v in range(V)],
            "refused": [v for v in range(V) if (s.refused >> v) & 1],
            "exit_refused": [[bool((s.exit_refused[f] >> v) & 1) for v in range(V)] for f in range(n)],
            "calm_bishop": s.calm_bishop, "tally": [s.tally[f] for f in range(n)],
            "winners": [f for f in range(n) if (s.winners >> f) & 1],
            "stack": [[s.stack[i][j] for j in range(FRAME_LEN[s.stack[i][0]])] for i in range(s.stack_len)],
            "dice": [s.dice[i] for i in range(s.dice_len)],
            "aims": [[s.aims[j][i] for i in range(s.aims_len[j])] for j in range(2)],
            "answer": s.answer, "cand": [s.cand[f] for f in range(n)], "votes": [s.votes[p] for p in range(P)],
            "seq": s.seq, "history_len": s.history_len,
        }

    def to_state(self):
        """The position as a reference :class:`fief2.state.State` (the sets as sorted lists)."""
        from fief2.state import STATE_FORMAT, State
        d = self.dump()
        d["format"], d["players"] = STATE_FORMAT, self.compiled.g.n
        return State.from_dict(d, self.compiled.game)


def new_core(players: int = 4, ruleset=None, game_map=None, scored_turns=None, turn_limit=None) -> Fief2Core:
    """A new game at its first decision, in the core (the reference :func:`fief2.new_game`, compiled)."""
    from fief2.state import new_game
    return Fief2Core.from_state(new_game(players, ruleset, game_map, scored_turns, turn_limit))
