# cython: language_level=3
"""Fast multiple-observer information-set MCTS (MO-ISMCTS) in C, on the Cython core (:mod:`engine._core`).

The readable Python search is :mod:`feudo_ai.ismcts` (design notes, references); this is the same algorithm
with the trees in a preallocated C node pool and the whole loop running with the GIL released.

Per iteration (:c:func:`_iterate`):

1. **Determinization** (:c:func:`_determinize`) from the public root: for every opponent ``q`` the
   unrevealed part of ``sel_army[q]``/``sel_trade[q]`` is first *overwritten* (cleared), then resampled from
   public facts only: the selected count (``min(army_cards_selected, held)`` once ``q`` is done selecting,
   R6), a uniform subset of q's held, unrevealed Army Cards, and a Trading Card uniformly among q's distinct
   held values that pay for the Mercenaries q has moved (``merc_moved``, R7, with the King's Help, R16).
   The root given to a worker has those fields blanked already (:meth:`SearchWorker.__init__`), so the true
   hidden selections never reach the search.
2. **Tree descent in every player's tree at once** (Cowling, Powley & Whitehouse 2012, MO-ISMCTS). Each tree
   has a cursor. A public action or chance outcome is the same edge label in every tree; a SELECT-phase pick
   is the action in the picker's own tree and ``LABEL_HIDDEN`` in the others; a Trading Card turned over
   without an action (R9) adds a public signature edge. Only the player to act chooses, in its own tree:
   UCB1 with availability counts at sequential nodes, EXP3 at secret selection nodes where another
   player still selects after the chooser (a simultaneous move inside the trees); the last to select faces
   selections already made (hidden, but fixed in the world), a one-player choice, so UCB1 there too, its
   picks still ``LABEL_HIDDEN`` in the other trees. A node with an untried
   legal action expands one (the iteration then leaves the tree); forced actions and chance outcomes only
   descend (the other trees' nodes of the expanded edge are created when a later walk goes on from it).
   When the pool is full no node is created any more (a tree whose edge is missing leaves the walk)
   and iterations go on.
3. **Playout** (``playout``): ``eval`` evaluates the leaf, ``truncated`` plays random actions until
   ``playout_turns`` turns after the root's turn have ended and then evaluates, ``random`` plays to the end
   (R19 returns). Both playouts pick uniformly except for attacks (:c:func:`_playout_action`: only winnable
   ones, the most valuable first, R11). The evaluation (:c:func:`_evaluate`) is
   :func:`feudo_ai.evaluate.position_score` in C (public facts only) turned into win-probability-like rewards by a softmax whose temperature shrinks as the
   end nears (the formula of :mod:`feudo_ai.ismcts`).
4. **Backpropagation** along the recorded choices, each scored with its chooser's component.

Limits: iterations, a deadline (CLOCK_MONOTONIC), a shared cancel int read every iteration and every 256
playout steps, and the node cap. Same seed and same iteration budget give the same result.
"""

from libc.stdlib cimport malloc, calloc, free
from libc.string cimport memset
from libc.math cimport sqrt, log, exp
from libc.stdint cimport int8_t, int32_t, uint64_t

from engine._core cimport (CoreState, CoreStateC, CoreGame, CoreRng, MAX_PLAYERS, MAX_TOKENS, MAX_TRADING,
                           MAX_ACTIONS, MAX_TERRITORIES, PH_SELECT, PH_TERMINAL, LOC_CASTLE, LOC_DEAD,
                           K_CITY, K_CENTRAL,
                           K_WOOD, K_VILLAGE, PH_ATTACK, PH_ATTACK_JOIN,
                           rng_seed, rng_uniform, rng_below, core_clone, core_legal, core_apply,
                           core_current_player, core_sample_chance, core_returns, core_is_chance,
                           core_desperate, core_shillings_of)


cdef extern from *:
    """
    #include <time.h>
    static inline int feudo_load_flag(int* p) { return p ? __atomic_load_n(p, __ATOMIC_RELAXED) : 0; }
    static inline void feudo_store_flag(int* p, int v) { __atomic_store_n(p, v, __ATOMIC_RELAXED); }
    static inline double feudo_now(void) {
        struct timespec ts; clock_gettime(CLOCK_MONOTONIC, &ts); return ts.tv_sec + ts.tv_nsec * 1e-9;
    }
    """
    int feudo_load_flag(int* p) nogil
    void feudo_store_flag(int* p, int v) nogil
    double feudo_now() nogil


def now():
    """The clock of deadlines (CLOCK_MONOTONIC seconds, the clock of ``time.monotonic()`` on Linux)."""
    return feudo_now()


# =====================================================================================================
# Determinization
# =====================================================================================================

cdef void _blank_hidden(CoreStateC* w, const CoreGame* g, int seat) noexcept nogil:
    """Overwrite every opponent's unrevealed selection with "nothing selected" (public part kept)."""
    cdef int q, t
    for q in range(g.num_players):
        if q == seat or q >= MAX_PLAYERS:
            continue
        for t in range(g.num_tokens):
            w.sel_army[q][t] = w.revealed[q][t]
        if not w.trade_revealed[q]:
            w.sel_trade[q] = -1


cdef double _army_weight(const CoreStateC* w, const CoreGame* g, int q, int t) noexcept nogil:
    """The weighted sampler's prior that q selected Army Card t (feudo_ai.sampler.WeightedSampler): a card
    whose token cannot move (dead, resting, or q charmed, R13) is rarely picked; stronger tokens more often."""
    if w.loc[q][t] == LOC_DEAD or w.rest_until[q][t] >= w.turn or w.charmed[q]:
        return 0.25
    return 1.0 + 0.25 * _token_number(w, g, q, t)


cdef int _weighted_index(CoreRng* rng, const double* weight, int n) noexcept nogil:
    """An index in [0, n) drawn with probability proportional to weight."""
    cdef double total = 0.0, r, acc = 0.0
    cdef int i
    for i in range(n):
        total += weight[i]
    r = rng_uniform(rng) * total
    for i in range(n):
        acc += weight[i]
        if r < acc:
            return i
    return n - 1


cdef void _determinize(SearchC* S, CoreStateC* w) noexcept nogil:
    """Resample every opponent's hidden selection in ``w`` from public facts only.

    The hidden fields are overwritten (``_blank_hidden``) before anything is read, so nothing of a previous
    value can influence the world: the count of selected cards is recomputed from public facts (``sel_done``,
    ``army_held``), the candidates from ``army_held``/``revealed``, the Trading Card from ``trade_held``,
    ``merc_moved``, ``vp`` and ``king``.
    """
    cdef const CoreGame* g = S.g
    cdef int q, t, c, i, j, k, held, need, nrev, hidden, ncand, nchoice, tmp, v
    cdef int cand[MAX_TOKENS]
    cdef int choice[MAX_TRADING]
    cdef int seen_values[MAX_TRADING]
    cdef int nseen
    cdef bint dup, on_map
    cdef double weight[MAX_TOKENS]
    cdef double wt
    _blank_hidden(w, g, S.seat)
    for q in range(g.num_players):
        if q == S.seat or not w.sel_done[q]:
            continue  # an opponent not done selecting has selected nothing (seat order, R6)
        held = 0
        nrev = 0
        ncand = 0
        for t in range(g.num_tokens):
            if w.army_held[q][t]:
                held += 1
                if w.revealed[q][t]:
                    nrev += 1
                else:
                    cand[ncand] = t
                    ncand += 1
        need = g.army_cards_selected if g.army_cards_selected < held else held
        hidden = need - nrev
        if hidden > ncand:
            hidden = ncand
        if S.sampler == SAMPLER_WEIGHTED:
            for i in range(ncand):
                weight[i] = _army_weight(w, g, q, cand[i])
        for i in range(hidden):
            # one card at a time without replacement (partial Fisher-Yates; weighted: by the weights left)
            if S.sampler == SAMPLER_WEIGHTED:
                j = _weighted_index(&S.rng, weight + i, ncand - i) + i
                wt = weight[i]
                weight[i] = weight[j]
                weight[j] = wt
            else:
                j = i + rng_below(&S.rng, ncand - i)
            tmp = cand[i]
            cand[i] = cand[j]
            cand[j] = tmp
            w.sel_army[q][cand[i]] = 1
        if not w.trade_revealed[q]:
            nchoice = 0
            nseen = 0
            for c in range(g.num_trading):
                if not w.trade_held[q][c]:
                    continue
                v = g.trading_value[c]
                dup = False
                for k in range(nseen):
                    if seen_values[k] == v:
                        dup = True
                        break
                if dup:
                    continue  # identical cards are one choice (the first held card of a value)
                seen_values[nseen] = v
                nseen += 1
                if w.merc_moved[q] > 0 and core_shillings_of(w, g, q, c) < w.merc_moved[q]:
                    continue  # R7: a moved Mercenary proves the card pays for it
                choice[nchoice] = c
                nchoice += 1
            if nchoice > 0 and S.sampler == SAMPLER_WEIGHTED:
                on_map = False
                for t in range(g.num_tokens):
                    if w.loc[q][t] >= 0:
                        on_map = True
                for i in range(nchoice):
                    weight[i] = 2.0 if g.trading_value[choice[i]] > 0 and on_map else 1.0
                w.sel_trade[q] = choice[_weighted_index(&S.rng, weight, nchoice)]
            elif nchoice > 0:
                w.sel_trade[q] = choice[rng_below(&S.rng, nchoice)]
            else:  # no card explains the evidence (not reachable in a legal game): any held card
                for c in range(g.num_trading):
                    if w.trade_held[q][c]:
                        w.sel_trade[q] = c
                        break
    # beliefs (what the worlds say about the opponents)
    for q in range(g.num_players):
        if q == S.seat:
            continue
        for t in range(g.num_tokens):
            if w.sel_army[q][t]:
                S.belief_army[q][t] += 1
        if w.sel_trade[q] >= 0:
            S.belief_trade[q][w.sel_trade[q]] += 1
    S.worlds += 1


# =====================================================================================================
# Evaluation: feudo_ai.evaluate.position_score in C, then a softmax
# =====================================================================================================

cdef void _position_scores(const CoreStateC* s, const CoreGame* g, double* score) noexcept nogil:
    """position_score(state, p) for every player p (same terms and constants as feudo_ai/evaluate.py)."""
    cdef int n = g.num_players, k = g.num_tokens
    cdef int p, q, t, u, x, y, i, d, a, v, kind, best, force, value, defence, castle, c, num, mine, bonus, emax
    cdef int num_of[MAX_PLAYERS][MAX_TOKENS]
    cdef int force_at[MAX_PLAYERS][MAX_TERRITORIES]
    cdef int enemy[MAX_PLAYERS]
    cdef uint64_t danger[2]
    cdef bint taker_adjacent
    cdef bint desp[MAX_PLAYERS]        # R17, once per player: the Baron's numbers below depend on it
    cdef int central = g.central_hill
    cdef int milady = g.milady
    for p in range(n):
        desp[p] = core_desperate(s, g, p)
        for t in range(k):
            if t == g.baron and desp[p]:
                num_of[p][t] = g.desperate_black if s.stricken[p][t] else g.desperate_red
            else:
                num_of[p][t] = g.token_black[t] if s.stricken[p][t] else g.token_red[t]
        for x in range(g.num_territories):
            force_at[p][x] = 0
        for t in range(k):
            x = s.loc[p][t]
            if x >= 0 and t != milady:
                force_at[p][x] += num_of[p][t]
    # territories a plague card could hit next (evaluate._danger_set)
    danger[0] = danger[1] = 0
    v = s.plague_village
    if g.has_plague and s.tiebreak == 0 and v >= 0:
        danger[0] |= g.near_mask[v][0]
        danger[1] |= g.near_mask[v][1]
        for d in range(4):
            a = g.village_next[v][d]
            if a >= 0:
                danger[0] |= g.near_mask[a][0]
                danger[1] |= g.near_mask[a][1]
                a = g.village_next[a][d]
                if a >= 0:
                    danger[0] |= g.near_mask[a][0]
                    danger[1] |= g.near_mask[a][1]
    for p in range(n):
        score[p] = s.vp[p]
        for t in range(k):
            x = s.loc[p][t]
            if x == LOC_DEAD:
                continue
            num = num_of[p][t]
            if x == LOC_CASTLE:
                if not s.entered[p][t] and not s.king:
                    if t == g.baron and desp[p]:
                        score[p] -= 0.15 * g.desperate_red
                    else:
                        score[p] -= 0.15 * g.token_red[t]
                continue
            score[p] += 0.3 * num
            kind = g.kind[x]
            if ((danger[x >> 6] >> (x & 63)) & 1) and kind != K_CITY and kind != K_CENTRAL:
                score[p] -= (0.6 if s.stricken[p][t] else 0.25) * num
            if x == central or t == milady:
                continue
            mine = force_at[p][x]
            if kind == K_WOOD:
                bonus = g.defence_wood
            elif kind == K_VILLAGE:
                bonus = g.defence_village
            elif kind == K_CITY:
                bonus = g.defence_city
            else:
                bonus = 0
            for q in range(n):
                enemy[q] = 0
            for i in range(g.num_neighbors[x]):
                y = g.neighbors[x][i]
                if y == central:
                    continue
                for q in range(n):
                    if q != p:
                        enemy[q] += force_at[q][y]
            emax = 0
            for q in range(n):
                if q != p and enemy[q] > emax:
                    emax = enemy[q]
            if emax > mine + bonus:
                score[p] -= 0.5 * num
        castle = g.site_territory[s.castle[p]] if s.castle[p] >= 0 else -1
        if castle < 0:
            continue
        for i in range(g.num_cities):
            c = g.cities[i]
            if s.owner[c] == p:
                continue
            value = g.distance[castle][c]
            best = 99
            force = 0
            taker_adjacent = False
            for t in range(k):
                x = s.loc[p][t]
                if x == LOC_CASTLE and g.takes_cities[t] and t != milady:
                    d = g.distance[castle][c] + 1  # entering the map takes a move
                    if d < best:
                        best = d
                    continue
                if x < 0 or t == milady:
                    continue
                d = g.distance[x][c]
                if g.takes_cities[t] and d < best:
                    best = d
                if d == 1 and x != central:
                    force += num_of[p][t]
                    if g.takes_cities[t]:
                        taker_adjacent = True
            if best < 99 and best < 5:
                score[p] += 0.08 * value * (5 - best)
            defence = g.defence_city
            for q in range(n):
                if q != p:
                    defence += force_at[q][c]
            if taker_adjacent and force > defence:
                score[p] += 0.5 * value


cdef void _evaluate(const CoreStateC* s, const CoreGame* g, double temperature, double* out) noexcept nogil:
    """Win-probability-like rewards: softmax over the players still in the game (the tied leaders in a
    tie-break) of position_score / temp, temp = max(0.5, temperature * sqrt(turns left / turns))."""
    cdef double score[MAX_PLAYERS]
    cdef double top = -1e300, total = 0.0, temp, left
    cdef int p, n = g.num_players
    cdef bint inplay
    if s.phase == PH_TERMINAL:
        core_returns(s, g, out)
        return
    _position_scores(s, g, score)
    left = g.turns - s.turn + 1
    if left < 0:
        left = 0
    temp = temperature * sqrt(left / (g.turns if g.turns > 1 else 1))
    if temp < 0.5:
        temp = 0.5
    for p in range(n):
        inplay = s.tiebreak == 0 or s.active[p]
        if inplay and score[p] / temp > top:
            top = score[p] / temp
    for p in range(n):
        inplay = s.tiebreak == 0 or s.active[p]
        out[p] = exp(score[p] / temp - top) if inplay else 0.0
        total += out[p]
    for p in range(n):
        out[p] /= total


# =====================================================================================================
# Playouts
# =====================================================================================================

cdef inline int _token_number(const CoreStateC* s, const CoreGame* g, int p, int t) noexcept nogil:
    """The number a token fights with (R11), the desperate Baron's numbers included (R17)."""
    if t == g.baron and core_desperate(s, g, p):
        return g.desperate_black if s.stricken[p][t] else g.desperate_red
    return g.token_black[t] if s.stricken[p][t] else g.token_red[t]


cdef inline int _bonus(const CoreGame* g, int x) noexcept nogil:
    """The defence bonus of territory x (R11)."""
    if g.kind[x] == K_WOOD:
        return g.defence_wood
    if g.kind[x] == K_VILLAGE:
        return g.defence_village
    if g.kind[x] == K_CITY:
        return g.defence_city
    return 0


cdef int _defence(const CoreStateC* s, const CoreGame* g, int p, int x) noexcept nogil:
    """Defence of territory x against p (R11): enemy tokens there other than Miladies, plus the bonus."""
    cdef int q, u, d = _bonus(g, x)
    for q in range(g.num_players):
        if q == p:
            continue
        for u in range(g.num_tokens):
            if s.loc[q][u] == x and u != g.milady:
                d += _token_number(s, g, q, u)
    return d


cdef int _playout_action(SearchC* S, CoreStateC* w, const int* buf, int n) noexcept nogil:
    """The playout's pick among the n legal actions: uniform, except for attacks (R11).

    A uniformly random attacker mostly throws its tokens away on attacks it cannot win (every attacking
    token is lost on a failed attack), which makes the playout's end position say little about the move
    being searched. So: declare only attacks that all the tokens able to join could win, the one worth the
    most VP (R11, R15), join until the force beats the defence, then stop; pass when nothing is winnable.
    Measured (2 players, 2000 iterations, 200 seat-rotated games, base seed 5000): against greedy 0.655 with
    uniform playouts, 0.767 with winnable attacks taken at random (a City first), 0.785 with this policy;
    against random 0.915, 0.953, 0.958. Also steering half the moves/marches towards unowned Cities was within
    noise (0.743 / 0.978 with the random-winnable attacks, 0.802 / 0.970 with this policy), so it is left out.
    """
    cdef const CoreGame* g = S.g
    cdef int p, i, t, x, y, force, nwin, njoin, defence, gain, best = -(1 << 20), pick = 0
    cdef int join[MAX_TOKENS]
    if w.phase == PH_ATTACK:
        p = core_current_player(w, g)
        nwin = 0
        for i in range(1, n):
            x = buf[i] - g.a_attack
            force = 0
            for t in range(g.num_tokens):
                y = w.loc[p][t]
                if (y >= 0 and y != g.central_hill and t != g.milady and not w.attacked[p][t]
                        and g.adjacent[y][x]):
                    force += _token_number(w, g, p, t)
            defence = _defence(w, g, p, x)
            if force <= defence:
                continue
            # twice what the win is worth: the defenders' numbers in VP (R11: the defence less the
            # territory's bonus), a City's distance from p's Castle (R15), half what the City's owner loses
            gain = 2 * (defence - _bonus(g, x))
            if g.kind[x] == K_CITY and w.castle[p] >= 0:
                gain += 2 * g.distance[g.site_territory[w.castle[p]]][x]
                if w.owner[x] >= 0 and w.castle[w.owner[x]] >= 0:
                    gain += g.distance[g.site_territory[w.castle[w.owner[x]]]][x]
            if gain > best:
                best = gain
                nwin = 1
                pick = buf[i]
            elif gain == best:
                nwin += 1
                if rng_below(&S.rng, nwin) == 0:
                    pick = buf[i]
        if nwin > 0:
            return pick
        return buf[0]  # PASS
    if w.phase == PH_ATTACK_JOIN:
        p = core_current_player(w, g)
        force = 0
        for i in range(w.joiners_len):
            force += _token_number(w, g, p, w.joiners[i])
        if buf[0] == 0 and force > _defence(w, g, p, w.target):
            return 0  # already winning: keep the other tokens free
        njoin = 0
        for i in range(n):
            if buf[i] != 0:
                join[njoin] = buf[i]
                njoin += 1
        if njoin > 0:
            return join[rng_below(&S.rng, njoin)]
        return buf[0]
    return buf[rng_below(&S.rng, n)]


cdef int _playout(SearchC* S, CoreStateC* w, double* out) noexcept nogil:
    """Play the option's playout from ``w`` (in place) and write the rewards; returns -1 if cancelled."""
    cdef const CoreGame* g = S.g
    cdef int buf[MAX_ACTIONS]
    cdef int n, a, steps = 0
    cdef int stop_turn = S.root_turn + S.playout_turns
    if S.playout != PLAYOUT_EVAL:
        while w.phase != PH_TERMINAL:
            if S.playout == PLAYOUT_TRUNCATED and w.turn > stop_turn:
                break
            if core_is_chance(w):
                a = core_sample_chance(w, g, &S.rng)
                if a < 0:
                    break  # a chance node without outcomes: never in a valid game (the loader refuses it)
            else:
                n = core_legal(w, g, buf)
                if n <= 0:
                    break  # never in a valid game
                a = _playout_action(S, w, buf, n)
            core_apply(w, g, a)
            steps += 1
            if (steps & 255) == 0 and feudo_load_flag(S.cancel):
                return -1
    _evaluate(w, g, S.temperature, out)
    return 0


# =====================================================================================================
# The node pool
# =====================================================================================================

cdef inline int _new_node(SearchC* S, int parent, int label) noexcept nogil:
    """A new child of ``parent`` with edge ``label``; -1 when the pool is full."""
    cdef int i
    cdef NodeC* nd
    if S.used >= S.cap:
        return -1
    i = S.used
    S.used += 1
    nd = &S.nodes[i]
    memset(nd, 0, sizeof(NodeC))
    nd.child = -1
    nd.action = label
    nd.actor = -1
    if parent >= 0:
        nd.sibling = S.nodes[parent].child
        S.nodes[parent].child = i
    else:
        nd.sibling = -1
    return i


cdef inline int _find_child(SearchC* S, int parent, int label) noexcept nogil:
    cdef int c = S.nodes[parent].child
    while c >= 0:
        if S.nodes[c].action == label:
            return c
        c = S.nodes[c].sibling
    return -1


cdef inline int _descend(SearchC* S, int cur, int label) noexcept nogil:
    """Follow (creating when needed and possible) the edge ``label``; -1 once off the tree."""
    cdef int c
    if cur < 0:
        return -1
    c = _find_child(S, cur, label)
    if c < 0:
        c = _new_node(S, cur, label)
    return c


# =====================================================================================================
# Selection
# =====================================================================================================

cdef int _select(SearchC* S, int node, int p, bint exp3, const int* legal, int n, double* prob,
                 bint* expanded) noexcept nogil:
    """The child of ``node`` (tree of ``p``) to follow among the legal actions; -1 if it would need a node
    and the pool is full. Availability counts of the legal children are incremented here."""
    cdef NodeC* nodes = S.nodes
    cdef int i, a, c, stamp, nun, pick, best
    cdef int untried[MAX_ACTIONS]
    cdef double gmax, total, r, acc, eta, u, bestv, pr
    cdef double w[MAX_ACTIONS]
    S.stamp += 1
    stamp = S.stamp
    for i in range(n):
        S.mark[legal[i]] = stamp
    c = nodes[node].child
    while c >= 0:
        a = nodes[c].action
        if a >= 0 and S.mark[a] == stamp:
            S.seen[a] = stamp
            S.child_of[a] = c
            nodes[c].avail += 1
        c = nodes[c].sibling
    nodes[node].actor = p
    nodes[node].exp3 = exp3
    prob[0] = 0.0
    expanded[0] = False
    if exp3:
        # EXP3 over every legal action (a missing child has gain 0)
        eta = S.gamma / n
        gmax = -1e300
        for i in range(n):
            a = legal[i]
            w[i] = nodes[S.child_of[a]].gain if S.seen[a] == stamp else 0.0
            if w[i] > gmax:
                gmax = w[i]
        total = 0.0
        for i in range(n):
            w[i] = exp(eta * (w[i] - gmax))
            total += w[i]
        r = rng_uniform(&S.rng)
        acc = 0.0
        pick = n - 1
        for i in range(n):
            pr = (1.0 - S.gamma) * w[i] / total + S.gamma / n
            acc += pr
            if r < acc:
                pick = i
                break
        pr = (1.0 - S.gamma) * w[pick] / total + S.gamma / n
        prob[0] = pr
        a = legal[pick]
        if S.seen[a] == stamp:
            return S.child_of[a]
        c = _new_node(S, node, a)
        if c >= 0:
            nodes[c].avail = 1
            expanded[0] = True
        return c
    # Untried: no child yet, or a child never chosen by this tree's owner (an edge another player took, or a
    # forced action, creates the child without statistics).
    nun = 0
    for i in range(n):
        a = legal[i]
        if S.seen[a] != stamp or nodes[S.child_of[a]].visits == 0:
            untried[nun] = a
            nun += 1
    if nun > 0:
        a = untried[rng_below(&S.rng, nun) if nun > 1 else 0]
        expanded[0] = True
        if S.seen[a] == stamp:
            return S.child_of[a]
        c = _new_node(S, node, a)
        if c >= 0:
            nodes[c].avail = 1
        return c
    best = -1
    bestv = -1e300
    for i in range(n):
        c = S.child_of[legal[i]]
        u = nodes[c].reward[p] / nodes[c].visits + S.c * sqrt(log(<double>nodes[c].avail) / nodes[c].visits)
        if u > bestv:
            bestv = u
            best = c
    return best


# =====================================================================================================
# One iteration
# =====================================================================================================

cdef inline bint _selects_later(const CoreStateC* w, const CoreGame* g, int p) noexcept nogil:
    """Whether another player will still select after p this turn (R6). Only then is p's selection a
    simultaneous move inside the trees (EXP3); the last to select faces choices already made, hidden but
    fixed in each world, which is a one-player bandit (UCB)."""
    cdef int q
    for q in range(g.num_players):
        if q != p and w.active[q] and not w.sel_done[q]:
            return True
    return False


cdef int _finish(SearchC* S, CoreStateC* w, int npath) noexcept nogil:
    """The end of an iteration whose tree walk left ``w`` and recorded ``npath`` choices: the playout, then
    backpropagation (each choice scored with its chooser's component; EXP3 gains for choices with a
    probability). Returns -1 if cancelled during the playout (nothing backpropagated)."""
    cdef double rewards[MAX_PLAYERS]
    cdef int i, q, child, p
    if npath > S.max_depth:
        S.max_depth = npath
    if _playout(S, w, rewards) < 0:
        return -1
    for i in range(npath):
        child = S.path[i].node
        p = S.path[i].player
        S.nodes[child].visits += 1
        for q in range(S.n):
            S.nodes[child].reward[q] += rewards[q]
        if S.path[i].prob > 0.0:
            S.nodes[child].gain += rewards[p] / S.path[i].prob
    S.iterations += 1
    return 0


cdef int _iterate(SearchC* S) noexcept nogil:
    """One MO-ISMCTS iteration; returns -1 if cancelled during the playout (nothing backpropagated)."""
    cdef const CoreGame* g = S.g
    cdef CoreStateC w
    cdef int cur[MAX_PLAYERS]
    cdef int8_t shown[MAX_PLAYERS]
    cdef int legal[MAX_ACTIONS]
    cdef int q, p, n, a, child, npath = 0, i, label, phase
    cdef double prob
    cdef bint expanded, exp3
    cdef int nplayers = g.num_players
    core_clone(&w, &S.root)
    _determinize(S, &w)
    for q in range(nplayers):
        cur[q] = S.roots[q]
    while w.phase != PH_TERMINAL:
        for q in range(nplayers):
            shown[q] = w.trade_revealed[q]
        if core_is_chance(&w):
            a = core_sample_chance(&w, g, &S.rng)
            if a < 0:
                break  # a chance node without outcomes: never in a valid game (the loader refuses it)
            core_apply(&w, g, a)
            for q in range(nplayers):
                cur[q] = _descend(S, cur[q], a)
            child = -1
            expanded = False
        else:
            p = core_current_player(&w, g)
            if cur[p] < 0:
                break  # off the player's tree (pool full)
            n = core_legal(&w, g, legal)
            if n <= 0:
                break
            phase = w.phase
            exp3 = phase == PH_SELECT and _selects_later(&w, g, p)
            expanded = False
            if n == 1:
                a = legal[0]
                child = _descend(S, cur[p], a)
            else:
                child = _select(S, cur[p], p, exp3, legal, n, &prob, &expanded)
                if child < 0:
                    break  # an expansion needed but the pool is full: play out from here
                a = S.nodes[child].action
                if npath >= MAX_PATH:
                    break
                S.path[npath].node = child
                S.path[npath].player = p
                S.path[npath].prob = prob if exp3 else 0.0
                npath += 1
            core_apply(&w, g, a)
            if expanded:
                break  # the walk ends here: the other trees need no node for this edge yet
            for q in range(nplayers):
                if q == p:
                    cur[q] = child
                else:
                    # another player's secret pick is seen as "?", whether it was chosen by EXP3 or, the
                    # last selector's, by UCB1 (R6, R22: the pick is hidden either way)
                    label = LABEL_HIDDEN if phase == PH_SELECT else a
                    cur[q] = _descend(S, cur[q], label)
        # Trading Cards turned over without an action of their own (R9): public signature edges
        for i in range(nplayers):
            if w.trade_revealed[i] and not shown[i]:
                label = LABEL_TRADE_SIG - (i * (MAX_TRADING + 1) + w.sel_trade[i] + 1)
                for q in range(nplayers):
                    cur[q] = _descend(S, cur[q], label)
    return _finish(S, &w, npath)


cdef int _iterate_perfect(SearchC* S) noexcept nogil:
    """One PIMC iteration: plain UCT in the tree of world ``iterations mod num_worlds``, where every action
    is seen by every player (one tree, edges are the actions and chance outcomes themselves, UCB1 on the
    chooser's reward also at the secret selection). Returns -1 if cancelled during the playout."""
    cdef const CoreGame* g = S.g
    cdef CoreStateC w
    cdef int legal[MAX_ACTIONS]
    cdef int wi = <int>(S.iterations % S.num_worlds)
    cdef int q, p, n, a, child, npath = 0, i, cur
    cdef double prob
    cdef bint expanded
    core_clone(&w, &S.world_states[wi])
    cur = S.world_roots[wi]
    while w.phase != PH_TERMINAL and cur >= 0:
        if core_is_chance(&w):
            a = core_sample_chance(&w, g, &S.rng)
            if a < 0:
                break  # a chance node without outcomes: never in a valid game (the loader refuses it)
            core_apply(&w, g, a)
            cur = _descend(S, cur, a)
            continue
        p = core_current_player(&w, g)
        n = core_legal(&w, g, legal)
        if n <= 0:
            break
        if n == 1:
            a = legal[0]
            core_apply(&w, g, a)
            cur = _descend(S, cur, a)
            continue
        child = _select(S, cur, p, False, legal, n, &prob, &expanded)
        if child < 0 or npath >= MAX_PATH:
            break  # an expansion needed but the pool is full: play out from here
        a = S.nodes[child].action
        S.path[npath].node = child
        S.path[npath].player = p
        S.path[npath].prob = 0.0
        npath += 1
        core_apply(&w, g, a)
        if expanded:
            break
        cur = child
    return _finish(S, &w, npath)


cdef void _run(SearchC* S) noexcept nogil:
    cdef double t0 = feudo_now()
    S.stop = STOP_NONE
    while True:
        if feudo_load_flag(S.cancel):
            S.stop = STOP_CANCELLED
            break
        if S.max_iterations > 0 and S.iterations >= S.max_iterations:
            S.stop = STOP_ITERATIONS
            break
        if S.deadline > 0 and feudo_now() >= S.deadline:
            S.stop = STOP_TIME
            break
        if (_iterate_perfect(S) if S.perfect else _iterate(S)) < 0:
            S.stop = STOP_CANCELLED
            break
    S.elapsed += feudo_now() - t0


# =====================================================================================================
# Python side
# =====================================================================================================

cdef class CancelFlag:
    """A stop flag shared with running workers (checked every iteration, GIL not needed)."""

    def __cinit__(self):
        self.flag = <int*>calloc(1, sizeof(int))
        if self.flag == NULL:
            raise MemoryError()

    def __dealloc__(self):
        free(self.flag)

    def set(self):
        feudo_store_flag(self.flag, 1)

    def clear(self):
        feudo_store_flag(self.flag, 0)

    def is_set(self):
        return feudo_load_flag(self.flag) != 0


_SAMPLERS = {"uniform": SAMPLER_UNIFORM, "weighted": SAMPLER_WEIGHTED}
_PLAYOUTS = {"eval": PLAYOUT_EVAL, "truncated": PLAYOUT_TRUNCATED, "random": PLAYOUT_RANDOM}
_STOPS = {STOP_NONE: None, STOP_ITERATIONS: "iterations", STOP_TIME: "time", STOP_CANCELLED: "cancelled"}


cdef class SearchWorker:
    """One root-parallel worker (its own trees, RNG and statistics). Arguments are validated by
    :func:`feudo_ai.fast_search.search`; this class only checks what would be unsafe in C."""

    def __cinit__(self):
        self.S = NULL

    def __init__(self, CoreState state, int seat, unsigned long long seed, long long iterations=0,
                 double deadline=0.0, int max_nodes=1000000, str playout="truncated", int playout_turns=0,
                 double c=0.2, double gamma=0.15, double temperature=1.0, CancelFlag cancel=None,
                 str sampler="uniform", bint perfect=False, int worlds=8):
        cdef SearchC* S
        cdef const CoreGame* g = state.compiled.g
        cdef int q, i
        if sampler not in _SAMPLERS:
            raise ValueError(f"sampler: expected one of {', '.join(_SAMPLERS)}, got {sampler!r}")
        if perfect and not 1 <= worlds <= 4096:
            raise ValueError(f"worlds: expected an integer in [1, 4096], got {worlds}")
        if playout not in _PLAYOUTS:
            raise ValueError(f"playout: expected one of {', '.join(_PLAYOUTS)}, got {playout!r}")
        if not 0 <= seat < g.num_players:
            raise ValueError(f"seat: expected an integer in [0, {g.num_players}), got {seat}")
        if max_nodes < (worlds if perfect else g.num_players) + 1:
            raise ValueError(f"max_nodes: expected at least {(worlds if perfect else g.num_players) + 1}, "
                             f"got {max_nodes}")
        S = <SearchC*>calloc(1, sizeof(SearchC))
        if S == NULL:
            raise MemoryError()
        self.S = S
        S.g = g
        core_clone(&S.root, &state.s)
        _blank_hidden(&S.root, g, seat)  # the search never holds the opponents' true hidden selections
        S.seat = seat
        S.n = g.num_players
        S.root_turn = state.s.turn
        S.playout = _PLAYOUTS[playout]
        S.playout_turns = playout_turns
        S.c = c
        S.gamma = gamma
        S.temperature = temperature
        S.max_iterations = iterations
        S.deadline = deadline
        self.state = state
        self.cancel_flag = cancel
        S.cancel = cancel.flag if cancel is not None else NULL
        S.cap = max_nodes
        S.nodes = <NodeC*>malloc(sizeof(NodeC) * <size_t>max_nodes)
        S.mark = <int*>calloc(g.num_actions + 1, sizeof(int))
        S.seen = <int*>calloc(g.num_actions + 1, sizeof(int))
        S.child_of = <int*>calloc(g.num_actions + 1, sizeof(int))
        S.path = <StepC*>malloc(sizeof(StepC) * MAX_PATH)
        if S.nodes == NULL or S.mark == NULL or S.seen == NULL or S.child_of == NULL or S.path == NULL:
            raise MemoryError()
        S.sampler = _SAMPLERS[sampler]
        rng_seed(&S.rng, seed)
        if perfect:
            # PIMC: draw the worlds now (from the blanked public root) and give each its tree
            S.perfect = 1
            S.num_worlds = worlds
            S.world_states = <CoreStateC*>malloc(sizeof(CoreStateC) * <size_t>worlds)
            S.world_roots = <int*>malloc(sizeof(int) * <size_t>worlds)
            if S.world_states == NULL or S.world_roots == NULL:
                raise MemoryError()
            for i in range(worlds):
                core_clone(&S.world_states[i], &S.root)
                _determinize(S, &S.world_states[i])
                S.world_roots[i] = _new_node(S, -1, -1)
            for q in range(S.n):
                S.roots[q] = S.world_roots[0]
        else:
            for q in range(S.n):
                S.roots[q] = _new_node(S, -1, -1)

    def __dealloc__(self):
        if self.S != NULL:
            free(self.S.nodes)
            free(self.S.mark)
            free(self.S.seen)
            free(self.S.child_of)
            free(self.S.path)
            free(self.S.world_states)
            free(self.S.world_roots)
            free(self.S)
            self.S = NULL

    def run(self):
        """Search until a limit (GIL released); returns the stop reason."""
        cdef SearchC* S = self.S
        if S.max_iterations <= 0 and S.deadline <= 0 and S.cancel == NULL:
            raise ValueError("search: give iterations or a deadline")
        with nogil:
            _run(S)
        return _STOPS[S.stop]

    def root_index(self, int player):
        return self.S.roots[player]

    def children(self, int node):
        """[(action, visits, reward sum of the node's chooser, child index)] of a node, in pool order."""
        cdef SearchC* S = self.S
        cdef int c
        self._check_node(node)
        out = []
        c = S.nodes[node].child
        p = S.nodes[node].actor
        while c >= 0:
            out.append((S.nodes[c].action, S.nodes[c].visits,
                        S.nodes[c].reward[p] if p >= 0 else 0.0, c))
            c = S.nodes[c].sibling
        out.reverse()
        return out

    def world_roots(self):
        """PIMC: the root node of each sampled world's tree ([] for MO-ISMCTS)."""
        cdef int i
        return [self.S.world_roots[i] for i in range(self.S.num_worlds)] if self.S.perfect else []

    def _check_node(self, int node):
        if not 0 <= node < self.S.used:
            raise ValueError(f"node: expected an index in [0, {self.S.used}), got {node}")

    def node_exp3(self, int node):
        """Whether the node's chooser picks by EXP3 (a simultaneous secret selection) rather than UCB1."""
        self._check_node(node)
        return bool(self.S.nodes[node].exp3)

    def node_actor(self, int node):
        self._check_node(node)
        return self.S.nodes[node].actor

    def root_stats(self):
        """{action: (visits, reward sum of the seat)} of the seat's root (visited edges only); for PIMC
        summed over the worlds' roots (the votes of the determinized searches)."""
        cdef SearchC* S = self.S
        cdef int c, i
        out = {}
        roots = [S.world_roots[i] for i in range(S.num_worlds)] if S.perfect else [S.roots[S.seat]]
        for r in roots:
            c = S.nodes[r].child
            while c >= 0:
                if S.nodes[c].visits > 0 and S.nodes[c].action >= 0:
                    v, t = out.get(S.nodes[c].action, (0, 0.0))
                    out[S.nodes[c].action] = (v + S.nodes[c].visits, t + S.nodes[c].reward[S.seat])
                c = S.nodes[c].sibling
        return out

    def stats(self):
        cdef SearchC* S = self.S
        return {"iterations": S.iterations, "nodes": S.used, "max_depth": S.max_depth, "elapsed": S.elapsed,
                "stopped_by": _STOPS[S.stop], "worlds": S.worlds, "pool_full": S.used >= S.cap}

    def beliefs(self):
        """(counts of worlds with army card t selected per opponent, counts per trading card, worlds)."""
        cdef SearchC* S = self.S
        cdef int q, t
        army = [[S.belief_army[q][t] for t in range(S.g.num_tokens)] for q in range(S.n)]
        trade = [[S.belief_trade[q][t] for t in range(S.g.num_trading)] for q in range(S.n)]
        return army, trade, S.worlds


def evaluate_state(CoreState state, double temperature=1.0):
    """(position scores, rewards) of the C evaluation, for tests against feudo_ai.evaluate."""
    cdef double score[MAX_PLAYERS]
    cdef double out[MAX_PLAYERS]
    cdef const CoreGame* g = state.compiled.g
    _position_scores(&state.s, g, score)
    _evaluate(&state.s, g, temperature, out)
    return [score[p] for p in range(g.num_players)], [out[p] for p in range(g.num_players)]


def determinize(CoreState state, int seat, unsigned long long seed, str sampler="uniform"):
    """One world drawn by the search's determinization (a new CoreState), for tests."""
    cdef SearchC* S
    cdef CoreState out = state.clone()
    if sampler not in _SAMPLERS:
        raise ValueError(f"sampler: expected one of {', '.join(_SAMPLERS)}, got {sampler!r}")
    S = <SearchC*>calloc(1, sizeof(SearchC))
    if S == NULL:
        raise MemoryError()
    S.sampler = _SAMPLERS[sampler]
    S.g = state.compiled.g
    S.seat = seat
    S.n = S.g.num_players
    rng_seed(&S.rng, seed)
    _determinize(S, &out.s)
    free(S)
    return out


def node_bytes():
    """Bytes of one tree node (what the memory limit of a search counts)."""
    return sizeof(NodeC)
