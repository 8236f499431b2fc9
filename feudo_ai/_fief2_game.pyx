# cython: language_level=3
"""Fief 2 behind the game interface of the search (``feudo_ai/_game.pxd``): :class:`Fief2Game`.

The C search (:mod:`feudo_ai._search`) knows no rule of Fief 2; this module tells it, through the function table
of :c:type:`feudo_ai._game.GameC`, over the compiled Fief 2 core (:mod:`fief2._core`):

- **the rules**: to move, legal actions, apply, chance (dealt cards, dice), F51 returns: the core's functions;
- **who sees what** (``apply_observed``, F46): a card dealt to a family is seen by it alone (``LABEL_HIDDEN`` for
  the others); a discard (face down, F11) is seen by the others as "a discard" (the label of the first card's
  discard); a card offered to a family (F11, F53.11) is seen by giver and receiver, by the others as "a card
  offered to that family"; a card handed over when asked is seen by the two families, by the others as "a card
  handed over"; everything else (a card played, a word, a move, a die) is public;
- **no simultaneous moves**: every decision is made in turn (an answer is given after the question);
- **determinization** (:c:func:`_determinize`, F46, F2-D2: the deck is lazy): the other families' hands are
  overwritten, then dealt uniformly from the cards the seat cannot see (neither in its hand nor in play), each
  family's hand count kept (F52: public); a card the seat saw offered to it (answer pending) stays in its giver's
  hand; a card offered between two other families is drawn from the giver's dealt hand. The reference is
  :func:`feudo_ai.search.games.fief2.deal_hidden_hands`;
- **evaluation** (:c:func:`_family_value`): the hand-made evaluation of :mod:`feudo_ai.bots.fief2_bots`
  (``family_value``, docs/fief2-bots.md's table: public facts only, never a hand) in C, turned into rewards in
  [0, 1] by a softmax over the living families' values with a temperature in points of power (a family's
  ``evaluate`` is its value minus half the mean of the others', which orders the families as their values do);
- **playout policy**: uniform among the legal actions (cheaper than the greedy player's one-ply look-ahead);
- **truncation**: a truncated playout stops once ``horizon`` turns after the root's turn have ended (a game is
  2,000-3,000 actions long; a turn a few hundred).

Belief counters (``num_beliefs = players * cards``): ``[q * C + c]`` counts the worlds in which family q was dealt
card c; :func:`feudo_ai.search.games.fief2.hand_beliefs` turns them into probabilities.

The search takes up to ``MAX_OBSERVERS`` (6) players, so every Fief 2 game (3-6 families) is searched; with 5 or 6 a
node's reward sums of the fifth and sixth families live beside the node pool (``feudo_ai._search``: 8 bytes a node
each).
"""

from libc.math cimport exp
from libc.stdint cimport int8_t, int32_t, int64_t, uint64_t
from libc.string cimport memcpy

from fief2._core cimport (F2Game, F2State, Fief2Core, CompiledFief2, F2_MAX_FAMILIES, F2_MAX_VILLAGES,
                          F2_MAX_PERSONS, F2_MAX_CARDS, F2_MAX_HAND, F2_NUM_KINDS, PH_OVER, FR_ANSWER, AK_DEAL,
                          AK_DISCARD, AK_GIVE, AK_HAND_OVER, f2_to_move, f2_legal, f2_apply, f2_sample_chance,
                          f2_returns, f2_deck, f2_power)
from feudo_ai._game cimport (GameC, Rng, SearchGame, MAX_OBSERVERS, LABEL_HIDDEN, rng_below, rng_seed)


cdef enum:
    A_GIVE = 0                  # fief2.state.A_GIVE: the answer frame of a card offered (F11)
    A_ASK = 1                   # fief2.state.A_ASK: the answer frame of a card asked for
    MAX_FAMILY_IDS = 6          # fief2.actions.Layout.MAX_FAMILIES: "give" ids are card * 6 + family

# The evaluation's weights (feudo_ai/bots/fief2_bots.py, docs/fief2-bots.md), in points of power (F50); the test
# tests/test_fief2_search.py holds the C values against the Python evaluation's on played positions.
cdef extern from *:
    """
    #define F2E_W_INCOME_TURNS 0.6
    #define F2E_INCOME_HORIZON 10
    #define F2E_W_SOLDIER 2.5
    #define F2E_GARRISON 20
    #define F2E_W_SOLDIER_MORE 1.0
    #define F2E_LATE_TURNS 3
    #define F2E_W_PERSON 8.0
    #define F2E_W_PRISONER 3.0
    #define F2E_W_VILLAGE 1.5
    #define F2E_W_OCCUPIED_UNOWNED 0.7
    #define F2E_W_FIEF_PROGRESS 10.0
    #define F2E_W_THREAT 0.5
    #define F2E_W_THREAT_FAR 0.6
    """
    const double W_INCOME_TURNS "F2E_W_INCOME_TURNS"
    const int INCOME_HORIZON "F2E_INCOME_HORIZON"
    const double W_SOLDIER "F2E_W_SOLDIER"
    const int GARRISON "F2E_GARRISON"
    const double W_SOLDIER_MORE "F2E_W_SOLDIER_MORE"
    const int LATE_TURNS "F2E_LATE_TURNS"
    const double W_PERSON "F2E_W_PERSON"
    const double W_PRISONER "F2E_W_PRISONER"
    const double W_VILLAGE "F2E_W_VILLAGE"
    const double W_OCCUPIED_UNOWNED "F2E_W_OCCUPIED_UNOWNED"
    const double W_FIEF_PROGRESS "F2E_W_FIEF_PROGRESS"
    const double W_THREAT "F2E_W_THREAT"
    const double W_THREAT_FAR "F2E_W_THREAT_FAR"

DEFAULT_TEMPERATURE = 30.0      # points of power (a Baron's title) per e-fold of the softmax, at temperature 1


# =====================================================================================================
# Rules (the core)
# =====================================================================================================

cdef int _to_move(const void* ctx, const void* s) noexcept nogil:
    return f2_to_move((<const Fief2Ctx*>ctx).g, <const F2State*>s)


cdef int _legal(const void* ctx, const void* s, int* out) noexcept nogil:
    return f2_legal((<const Fief2Ctx*>ctx).g, <const F2State*>s, out)


cdef void _apply(const void* ctx, void* s, int a) noexcept nogil:
    f2_apply((<const Fief2Ctx*>ctx).g, <F2State*>s, a)


cdef int _sample_chance(const void* ctx, const void* s, Rng* rng) noexcept nogil:
    return f2_sample_chance((<const Fief2Ctx*>ctx).g, <const F2State*>s, rng)


cdef void _returns(const void* ctx, const void* s, double* out) noexcept nogil:
    f2_returns((<const Fief2Ctx*>ctx).g, <const F2State*>s, out)


cdef bint _simultaneous(const void* ctx, const void* s, int p) noexcept nogil:
    return False


# =====================================================================================================
# Information (F46)
# =====================================================================================================

cdef inline bint _in(const F2Game* g, int a, int kind) noexcept nogil:
    return g.base[kind] <= a < g.base[kind] + g.size[kind]


cdef int _apply_observed(const void* ctx, void* s, int a, int32_t* labels, int32_t* signals) noexcept nogil:
    cdef const F2Game* g = (<const Fief2Ctx*>ctx).g
    cdef F2State* w = <F2State*>s
    cdef int n = g.n, q, actor, top = w.stack_len - 1, other = -1, generic = -1
    cdef int8_t before[F2_MAX_FAMILIES]
    actor = f2_to_move(g, w)
    for q in range(n):
        before[q] = w.hand_len[q]
    if _in(g, a, AK_DISCARD):
        generic = g.base[AK_DISCARD]  # "a card discarded" (F11: face down)
    elif _in(g, a, AK_GIVE):
        other = (a - g.base[AK_GIVE]) % MAX_FAMILY_IDS  # the receiver sees the card (F53.11)
        generic = g.base[AK_GIVE] + other  # the others: "a card offered to that family"
    elif _in(g, a, AK_HAND_OVER) and top >= 0 and w.stack[top][0] == FR_ANSWER and w.stack[top][3] == A_ASK:
        other = <int>w.stack[top][1]  # the asker receives and sees it
        generic = g.base[AK_HAND_OVER]
    f2_apply(g, w, a)
    for q in range(n):
        labels[q] = a
    if _in(g, a, AK_DEAL):
        for q in range(n):  # only the family dealt the card sees it (F46)
            if w.hand_len[q] <= before[q]:
                labels[q] = LABEL_HIDDEN
    elif generic >= 0:
        for q in range(n):
            if q != actor and q != other:
                labels[q] = generic
    return 0


cdef void _hide(const void* ctx, void* s, int seat) noexcept nogil:
    """Erase the other families' hands (their counts kept, F52), what they discarded or saw (F46, F53.11), and the
    card of a gift between two other families."""
    cdef const F2Game* g = (<const Fief2Ctx*>ctx).g
    cdef F2State* w = <F2State*>s
    cdef int q, i
    for q in range(g.n):
        if q == seat:
            continue
        for i in range(F2_MAX_HAND):
            w.hands[q][i] = -1
        w.discards_seen[q][0] = w.discards_seen[q][1] = 0
        w.seen_cards[q][0] = w.seen_cards[q][1] = 0
    for i in range(w.stack_len):
        if (w.stack[i][0] == FR_ANSWER and w.stack[i][3] == A_GIVE and w.stack[i][1] != seat
                and w.stack[i][2] != seat):
            w.stack[i][4] = -1


cdef void _sort_hand(int8_t* h, int k) noexcept nogil:
    cdef int i, j
    cdef int8_t x
    for i in range(1, k):
        x = h[i]
        j = i - 1
        while j >= 0 and h[j] > x:
            h[j + 1] = h[j]
            j -= 1
        h[j + 1] = x


cdef void _determinize(const void* ctx, void* s, int seat, Rng* rng, int64_t* beliefs) noexcept nogil:
    cdef const F2Game* g = (<const Fief2Ctx*>ctx).g
    cdef F2State* w = <F2State*>s
    cdef int n = g.n, q, i, j, k, c, npool, giver
    cdef int counts[F2_MAX_FAMILIES]
    cdef int pool[F2_MAX_CARDS]
    _hide(ctx, w, seat)  # every hidden field overwritten before any is read (honesty)
    for q in range(n):
        counts[q] = w.hand_len[q]
        if q != seat:
            w.hand_len[q] = 0
    npool = f2_deck(g, w, pool)  # with the others' hands empty: the cards the seat cannot see
    for i in range(w.stack_len):  # a gift offered to the seat, answer pending: the card is in its giver's hand
        if (w.stack[i][0] == FR_ANSWER and w.stack[i][3] == A_GIVE and w.stack[i][2] == seat
                and w.stack[i][1] != seat and w.stack[i][4] >= 0):
            c = <int>w.stack[i][4]
            giver = <int>w.stack[i][1]
            for j in range(npool):
                if pool[j] == c:
                    pool[j] = pool[npool - 1]
                    npool -= 1
                    if w.hand_len[giver] < F2_MAX_HAND:
                        w.hands[giver][w.hand_len[giver]] = <int8_t>c
                        w.hand_len[giver] += 1
                    break
    for q in range(n):
        if q == seat:
            continue
        while w.hand_len[q] < counts[q] and npool > 0:
            j = rng_below(rng, npool)
            w.hands[q][w.hand_len[q]] = <int8_t>pool[j]
            w.hand_len[q] += 1
            pool[j] = pool[npool - 1]
            npool -= 1
        _sort_hand(&w.hands[q][0], w.hand_len[q])
        if beliefs != NULL:
            for k in range(w.hand_len[q]):
                beliefs[q * g.C + w.hands[q][k]] += 1
    for i in range(w.stack_len):  # a gift between two other families: a card of the giver's dealt hand
        if (w.stack[i][0] == FR_ANSWER and w.stack[i][3] == A_GIVE and w.stack[i][1] != seat
                and w.stack[i][2] != seat):
            giver = <int>w.stack[i][1]
            if w.hand_len[giver] > 0:
                w.stack[i][4] = w.hands[giver][rng_below(rng, w.hand_len[giver])]


# =====================================================================================================
# Evaluation (feudo_ai.bots.fief2_bots.family_value in C: public facts only)
# =====================================================================================================

ctypedef struct Facts:
    int soldiers[F2_MAX_FAMILIES][F2_MAX_VILLAGES]   # ordinary Soldiers in the village
    int free[F2_MAX_FAMILIES][F2_MAX_VILLAGES]       # free persons in the village (roads excluded)
    int force[F2_MAX_FAMILIES][F2_MAX_VILLAGES]      # F1/F28: soldiers, Guards, fighting persons
    int persons[F2_MAX_FAMILIES]
    int prisoners[F2_MAX_FAMILIES]
    int guards[F2_MAX_FAMILIES]


cdef inline bint _occ(const Facts* fx, int f, int v) noexcept nogil:
    return fx.force[f][v] > 0 or fx.free[f][v] > 0


cdef int _fief_family(const F2State* w, int y) noexcept nogil:
    if w.title[y] >= 0:
        return w.fam[w.title[y]]
    if w.pending[y] >= 0:
        return w.pending[y]
    return w.retained[y]


cdef bint _crowned(const F2Game* g, const F2State* w, int p) noexcept nogil:
    cdef int y
    if p == w.king or p == w.queen or p == w.prince:
        return True
    for y in range(g.NF):
        if w.title[y] == p:
            return True
    return False


cdef int _force_of_person(const F2Game* g, const F2State* w, int p) noexcept nogil:
    """F1: free Lord 1, free crowned Lady 1, free d'Arc its force; others 0."""
    if w.fam[p] < 0 or w.captor[p] != -1:
        return 0
    if w.darc[p]:
        return g.darc_force
    if g.person_male[p] or _crowned(g, w, p):
        return 1
    return 0


cdef void _facts(const F2Game* g, const F2State* w, Facts* fx) noexcept nogil:
    cdef int f, v, p, i, leader, strength
    for f in range(g.n):
        fx.persons[f] = fx.prisoners[f] = fx.guards[f] = 0
        for v in range(g.V):
            fx.soldiers[f][v] = w.sold[f][v][0] + w.sold[f][v][1] + w.sold[f][v][2] + w.sold[f][v][3]
            fx.free[f][v] = 0
            fx.force[f][v] = 0
    for p in range(g.P):
        f = w.fam[p]
        if f < 0:
            continue
        if w.captor[p] >= 0:
            fx.prisoners[f] += 1
            continue
        fx.persons[f] += 1
        if w.onroad[p] == -1:
            fx.free[f][w.loc[p]] += 1
            fx.force[f][w.loc[p]] += _force_of_person(g, w, p)
    for i in range(2):  # the Queen's Guard, then the King's (the Regent's during a Regency, F36.2)
        if i == 0:
            leader = w.queen if w.qg >= 0 else -1
            strength = w.qg
        else:
            leader = (w.queen if w.regent else w.king) if w.kg >= 0 else -1
            strength = w.kg
        if leader >= 0 and w.captor[leader] == -1 and strength > 0:
            f = w.fam[leader]
            fx.guards[f] += strength
            if w.onroad[leader] == -1:
                fx.force[f][w.loc[leader]] += strength
    for f in range(g.n):
        for v in range(g.V):
            fx.force[f][v] += fx.soldiers[f][v]


cdef int _income_rate(const F2Game* g, const F2State* w, const Facts* fx, int f) noexcept nogil:
    """F20 (and F21's escrow): florins f would collect at the next income phase (Tax and Tithe left out)."""
    cdef int v, y, total = 0
    for v in range(g.V):
        if w.owner[v] != f:
            continue
        y = g.village_fief[v]
        if not (_occ(fx, f, v) or (w.capital[y] >= 0 and _fief_family(w, y) == f and _occ(fx, f, w.capital[y]))):
            continue
        total += g.inc_castle * w.castle[v] + g.inc_city * w.city[v]
        if w.famine[y] < 0:
            total += g.inc_mill * w.mills[v] + g.inc_press * w.presses[v]
    if w.regent and w.queen >= 0:
        if w.fam[w.queen] == f:
            total += g.inc_king + g.inc_queen
    else:
        if w.king >= 0 and w.fam[w.king] == f:
            total += g.inc_king
        if w.queen >= 0 and w.fam[w.queen] == f:
            total += g.inc_queen
    return total


cdef double _family_value(const Fief2Ctx* cx, const F2State* w, const Facts* fx, int f) noexcept nogil:
    cdef const F2Game* g = cx.g
    cdef int n = g.n, v, y, i, e, q, wv, mine_count, limit, turns_left, soldiers, garrison, ppf = g.florins_per_point
    cdef double value, at_stake, enemy, x
    cdef bint alone
    cdef uint64_t bits
    if not w.alive[f]:
        return 0.0
    value = <double>f2_power(g, w, f)  # F50
    limit = g.turn_limit if g.turn_limit else (g.scored_turns if g.scored_turns else 30)
    turns_left = limit - w.turn
    if turns_left > INCOME_HORIZON:
        turns_left = INCOME_HORIZON
    if turns_left < 0:
        turns_left = 0
    value += W_INCOME_TURNS * _income_rate(g, w, fx, f) * turns_left / <double>ppf  # F20
    soldiers = fx.guards[f]
    for v in range(g.V):
        soldiers += fx.soldiers[f][v]
    for i in range(w.n_assaults):
        if w.assaults[i].f == f:
            soldiers += w.assaults[i].soldiers
    garrison = (soldiers if soldiers < GARRISON else GARRISON) if limit - w.turn > LATE_TURNS else 0
    value += W_SOLDIER * garrison + W_SOLDIER_MORE * (soldiers - garrison)
    value += W_PERSON * fx.persons[f] + W_PRISONER * fx.prisoners[f]
    for v in range(g.V):
        if w.owner[v] == f:
            value += W_VILLAGE
        elif w.owner[v] < 0 and _occ(fx, f, v):
            alone = True
            for q in range(n):
                if q != f and _occ(fx, q, v):
                    alone = False
                    break
            if alone:
                value += W_OCCUPIED_UNOWNED
    for y in range(g.NF):  # F23: progress towards an enfeoffment
        if _fief_family(w, y) >= 0:
            continue
        mine_count = 0
        for i in range(g.fief_nv[y]):
            v = g.fief_villages[y][i]
            if w.owner[v] == f and _occ(fx, f, v):
                mine_count += 1
        x = mine_count / <double>g.fief_nv[y]
        value += W_FIEF_PROGRESS * x * x
    # threat (F26, F28): where an enemy force within two steps exceeds ours, what we hold there is at risk
    for v in range(g.V):
        at_stake = fx.free[f][v] * W_PERSON + fx.force[f][v] * W_SOLDIER_MORE
        if w.owner[v] == f:
            at_stake += (g.inc_castle * w.castle[v] + g.inc_city * w.city[v] + g.inc_mill * w.mills[v]
                         + g.inc_press * w.presses[v]) * 3 / <double>ppf
        if at_stake <= 0:
            continue
        enemy = 0.0
        for e in range(n):
            if e == f or not w.alive[e] or w.allied[f][e]:
                continue
            bits = cx.near[v]
            while bits:
                wv = _lowest(bits)
                bits &= bits - 1
                if fx.force[e][wv] > enemy:
                    enemy = fx.force[e][wv]
            bits = cx.far[v]
            while bits:
                wv = _lowest(bits)
                bits &= bits - 1
                if W_THREAT_FAR * fx.force[e][wv] > enemy:
                    enemy = W_THREAT_FAR * fx.force[e][wv]
        if enemy > fx.force[f][v]:
            x = (enemy - fx.force[f][v]) / (enemy if enemy > 1.0 else 1.0)
            value -= W_THREAT * at_stake * (x if x < 1.0 else 1.0)
    return value


cdef inline int _lowest(uint64_t bits) noexcept nogil:
    cdef int i = 0
    while not (bits & 1):
        bits >>= 1
        i += 1
    return i


cdef void _values(const Fief2Ctx* cx, const F2State* w, double* out) noexcept nogil:
    cdef Facts fx
    cdef int f
    _facts(cx.g, w, &fx)
    for f in range(cx.g.n):
        out[f] = _family_value(cx, w, &fx, f)


cdef void _evaluate(const void* ctx, const void* s, double* out) noexcept nogil:
    """Rewards in [0, 1] summing to 1 over the living families: a softmax of their values (points of power) at
    the context's temperature; a finished game's returns (F51)."""
    cdef const Fief2Ctx* cx = <const Fief2Ctx*>ctx
    cdef const F2State* w = <const F2State*>s
    cdef double values[F2_MAX_FAMILIES]
    cdef double best = -1e300, total = 0.0
    cdef int f, n = cx.g.n
    if w.phase == PH_OVER:
        f2_returns(cx.g, w, out)
        return
    _values(cx, w, values)
    for f in range(n):
        if w.alive[f] and values[f] > best:
            best = values[f]
    for f in range(n):
        out[f] = exp((values[f] - best) / cx.temperature) if w.alive[f] else 0.0
        total += out[f]
    for f in range(n):
        out[f] = out[f] / total if total > 0 else 0.0


cdef int _playout_action(const void* ctx, const void* s, const int* legal, int n, Rng* rng) noexcept nogil:
    return legal[rng_below(rng, n)]


cdef bint _truncate(const void* ctx, const void* root, const void* s, int horizon) noexcept nogil:
    return (<const F2State*>s).turn > (<const F2State*>root).turn + horizon


# =====================================================================================================
# The Python class
# =====================================================================================================

cdef class Fief2Game(SearchGame):
    """A Fief 2 position searched from ``seat`` (see the module).

    :param core: the root on the compiled core (:class:`fief2._core.Fief2Core`), e.g. of
        :func:`feudo_ai.search.games.fief2.seat_view`'s state; whatever it holds in the other families' hands is
        erased (``hide``) before the search sees it.
    :param seat: the searching family.
    :param temperature: the evaluation's softmax temperature, a multiple of :data:`DEFAULT_TEMPERATURE` points of
        power (> 0).
    :raises ValueError: a bad seat or temperature.
    """

    def __init__(self, Fief2Core core, int seat, double temperature=1.0):
        cdef const F2Game* g = core.compiled.g
        cdef int v, i, j, u, x
        if not temperature > 0:
            raise ValueError(f"temperature: expected a positive number, got {temperature!r}")
        if g.n > MAX_OBSERVERS:  # F2_MAX_FAMILIES is 6 as well; kept so a change of either is caught here
            raise ValueError(f"players: the search plays Fief 2 with at most {MAX_OBSERVERS} families, got {g.n}")
        if not 0 <= seat < g.n:
            raise ValueError(f"seat: expected an integer in [0, {g.n}), got {seat}")
        self.owner = core.compiled
        self.ctx.g = g
        self.ctx.temperature = DEFAULT_TEMPERATURE * temperature
        for v in range(g.V):
            self.ctx.near[v] = 0
            self.ctx.far[v] = 0
            for i in range(g.num_adj[v]):
                self.ctx.near[v] |= (<uint64_t>1) << g.adj[v][i]
        for v in range(g.V):
            for i in range(g.num_adj[v]):
                u = g.adj[v][i]
                for j in range(g.num_adj[u]):
                    x = g.adj[u][j]
                    self.ctx.far[v] |= (<uint64_t>1) << x
            self.ctx.far[v] &= ~(self.ctx.near[v] | ((<uint64_t>1) << v))
        self.c.ctx = &self.ctx
        self.c.num_players = g.n
        self.c.num_actions = g.num_actions
        self.c.max_legal = 2048  # F2_MAX_LEGAL
        self.c.state_size = sizeof(F2State)
        self.c.num_beliefs = g.n * g.C
        self.c.to_move = _to_move
        self.c.legal = _legal
        self.c.apply = _apply
        self.c.sample_chance = _sample_chance
        self.c.returns = _returns
        self.c.apply_observed = _apply_observed
        self.c.simultaneous = _simultaneous
        self.c.hide = _hide
        self.c.determinize = _determinize
        self.c.evaluate = _evaluate
        self.c.playout_action = _playout_action
        self.c.truncate = _truncate
        self.c.prior = NULL  # no action prior
        self._set_root(&core.s, seat)

    def family_values(self, Fief2Core state):
        """The hand-made value of each family in ``state`` (points of power; what the evaluation's softmax reads):
        the C port of :func:`feudo_ai.bots.fief2_bots.family_value`, for tests."""
        cdef double out[F2_MAX_FAMILIES]
        _values(&self.ctx, &state.s, out)
        return [out[f] for f in range(self.ctx.g.n)]

    def rewards(self, Fief2Core state):
        """The evaluation's rewards of ``state`` (one per family, in [0, 1])."""
        cdef double out[F2_MAX_FAMILIES]
        _evaluate(&self.ctx, &state.s, out)
        return [out[f] for f in range(self.ctx.g.n)]

    def world_hands(self, unsigned long long seed):
        """The families' hands of one world drawn from the root (the hidden ones dealt by ``determinize`` with a
        generator seeded by ``seed``), and the belief counters it added: (hands, counters). For tests."""
        cdef F2State w
        cdef Rng rng
        cdef int64_t counts[F2_MAX_FAMILIES * F2_MAX_CARDS]
        cdef int q, k
        for k in range(F2_MAX_FAMILIES * F2_MAX_CARDS):
            counts[k] = 0
        memcpy(&w, self.root, sizeof(F2State))
        rng_seed(&rng, seed)
        _determinize(&self.ctx, &w, self.seat, &rng, counts)
        hands = [[w.hands[q][k] for k in range(w.hand_len[q])] for q in range(self.ctx.g.n)]
        return hands, [counts[k] for k in range(self.ctx.g.n * self.ctx.g.C)]

    def root_hands(self):
        """The hands as the search's root holds them (the other families' erased: -1), for tests."""
        cdef const F2State* r = <const F2State*>self.root
        return [[r.hands[q][k] for k in range(r.hand_len[q])] for q in range(self.ctx.g.n)]
