# cython: language_level=3
"""Multiple-observer information-set MCTS (MO-ISMCTS) and determinized UCT (PIMC) in C, for any game behind the
interface of ``feudo_ai/_game.pxd``.

This module knows no game: it reaches the rules, the information structure, the determinization, the evaluator
and the playout policy only through the game's :c:type:`GameC` table (Feudo's is :mod:`feudo_ai._feudo_game`, a
toy Goofspiel's :mod:`feudo_ai._goofspiel`). The readable Python search of Feudo is :mod:`feudo_ai.search.python_backend`; this
is the same algorithm with the trees in a preallocated C node pool and the whole loop running with the GIL
released. The design and its measured figures: ``docs/search.md``.

Per iteration (:c:func:`_iterate`):

1. **Determinization**: a copy of the root (hidden parts already erased by the game's ``hide``) is handed to the
   game's ``determinize``, which draws every hidden part from what the seat may know.
2. **Tree descent in every player's tree at once** (Cowling, Powley & Whitehouse 2012, MO-ISMCTS). Each tree
   has a cursor. Every step is applied by the game's ``apply_observed``, which says under which label each
   observer's tree sees it (the action itself, ``LABEL_HIDDEN`` for a move the observer does not see, or any
   label the game chooses) and which public signals it revealed (edges in every tree). Only the player to move
   chooses, in its own tree: UCB1 with availability counts, or EXP3 where the game says the move is
   simultaneous with a player still to choose (``simultaneous``). A node with an untried legal action expands
   one (the iteration then leaves the tree): a random one, or with ``prior_weight > 0`` and a game that has a
   ``prior``, the one the game's action prior favours, whose prior then adds a progressive bias to UCB1
   (:c:func:`_expand_by_prior`); forced actions and chance outcomes only descend (the other trees'
   nodes of the expanded edge are created when a later walk goes on from it). When the pool is full no node
   is created in that iteration (a tree whose edge is missing leaves the walk); with ``recycle`` the next one
   starts by freeing the least-travelled half of the pool (:c:func:`_recycle`), so the trees go on growing.
3. **Playout** (``playout``): ``eval`` evaluates the leaf (the game's ``evaluate``), ``truncated`` plays the
   game's ``playout_action`` until its ``truncate`` says stop and then evaluates, ``random`` plays to the end
   (the game's ``returns``).
4. **Backpropagation** along the recorded choices, each scored with its chooser's component.

Limits: iterations, a deadline (CLOCK_MONOTONIC), a shared cancel int read every iteration and every 256
playout steps, and the node cap; with ``early_stop``, also the root's answer settled (the most visited action
can no longer be overtaken within the iterations left, ``stopped_by == "decided"``). Same seed and same iteration
budget give the same result (with a reused tree: the same saved tree and path too).

Tree reuse: :meth:`SearchWorker.saved_tree` copies the seat's own tree out (:class:`SavedTree`), and a later
worker of the same seat given ``tree`` and ``path`` (the labels the seat observed since) starts its seat's tree as
the saved subtree below that path.
"""

from libc.stdlib cimport malloc, calloc, realloc, free
from libc.string cimport memset, memcpy
from libc.math cimport sqrt, log, exp
from libc.stdint cimport int8_t, int32_t, int64_t, uint16_t, uint64_t

from feudo_ai._game cimport (GameC, Rng, SearchGame, MAX_OBSERVERS, MAX_SIGNALS, TO_MOVE_CHANCE,
                             TO_MOVE_TERMINAL, rng_seed, rng_uniform, rng_below)


cdef extern from *:
    """
    #include <time.h>
    static inline int search_load_flag(int* p) { return p ? __atomic_load_n(p, __ATOMIC_RELAXED) : 0; }
    static inline void search_store_flag(int* p, int v) { __atomic_store_n(p, v, __ATOMIC_RELAXED); }
    static inline double search_now(void) {
        struct timespec ts; clock_gettime(CLOCK_MONOTONIC, &ts); return ts.tv_sec + ts.tv_nsec * 1e-9;
    }
    """
    int search_load_flag(int* p) nogil
    void search_store_flag(int* p, int v) nogil
    double search_now() nogil


def now():
    """The clock of deadlines (CLOCK_MONOTONIC seconds, the clock of ``time.monotonic()`` on Linux)."""
    return search_now()


# =====================================================================================================
# Playouts
# =====================================================================================================

cdef int _playout(SearchC* S, void* w, double* out) noexcept nogil:
    """Play the option's playout from ``w`` (in place) and write the rewards; returns -1 if cancelled."""
    cdef const GameC* G = &S.game
    cdef const void* ctx = G.ctx
    cdef int* buf = S.legal
    cdef int n, a, p, steps = 0
    if S.playout != PLAYOUT_EVAL:
        while True:
            p = G.to_move(ctx, w)
            if p == TO_MOVE_TERMINAL:
                break
            if S.playout == PLAYOUT_TRUNCATED and G.truncate(ctx, S.root, w, S.playout_turns):
                break
            if p == TO_MOVE_CHANCE:
                a = G.sample_chance(ctx, w, &S.rng)
                if a < 0:
                    break  # a chance node without outcomes (never in a valid game): evaluate here
            else:
                n = G.legal(ctx, w, buf)
                if n <= 0:
                    break  # never in a valid game
                a = G.playout_action(ctx, w, buf, n, &S.rng)
            G.apply(ctx, w, a)
            steps += 1
            if (steps & 255) == 0 and search_load_flag(S.cancel):
                return -1
    if G.to_move(ctx, w) == TO_MOVE_TERMINAL:
        G.returns(ctx, w, out)
    else:
        G.evaluate(ctx, w, out)
    return 0


# =====================================================================================================
# The node pool
# =====================================================================================================

cdef inline double* _reward(SearchC* S, int c, int p) noexcept nogil:
    """Node c's reward sum of player p (in the node up to NODE_REWARDS players, else in extra_reward)."""
    if p < NODE_REWARDS:
        return &S.nodes[c].reward[p]
    return &S.extra_reward[<size_t>c * S.extra + (p - NODE_REWARDS)]


cdef inline int _new_node(SearchC* S, int parent, int label) noexcept nogil:
    """A new child of ``parent`` with edge ``label``; -1 when the pool is full."""
    cdef int i
    cdef NodeC* nd
    if S.used >= S.cap:
        S.full = 1
        S.filled = 1
        return -1
    i = S.used
    S.used += 1
    nd = &S.nodes[i]
    memset(nd, 0, sizeof(NodeC))
    if S.extra:
        memset(&S.extra_reward[<size_t>i * S.extra], 0, sizeof(double) * S.extra)
    nd.child = -1
    nd.action = label
    nd.actor = -1
    if parent >= 0:
        nd.sibling = S.nodes[parent].child
        S.nodes[parent].child = i
    else:
        nd.sibling = -1
    return i


cdef int _recycle(SearchC* S) noexcept nogil:
    """Free the least-travelled half of a full pool and compact what is kept, so the trees go on growing.

    A node's *flow* is how many iterations went through it: its visits where its owner chose it, else (an edge
    the tree only follows: another player's move, chance, a signal, a forced action) the flows of its children
    summed. Walks through a node go on to at most one of its children, so a flow never exceeds its parent's:
    keeping the nodes whose flow reaches a threshold keeps connected trees (every root is kept). The threshold is
    the smallest that keeps at most half the pool. The kept nodes move to the front in their order (a child
    still comes after its parent, the order this function relies on), their links rewritten; a freed child of a
    kept node is an untried edge again (the parent's statistics stay). Deterministic: it depends only on the
    trees. Returns 0, or -1 without memory for its scratch arrays (then nothing changed)."""
    cdef NodeC* nodes = S.nodes
    cdef int used = S.used
    cdef int i, c, k, prev, kept, t, first
    cdef long long keep_at_most = S.cap // 2, above
    cdef int HIST = 1 << 16
    cdef int* flow = <int*>malloc(sizeof(int) * <size_t>used)
    cdef int* newidx = <int*>malloc(sizeof(int) * <size_t>used)
    cdef long long* hist = <long long*>calloc(HIST + 1, sizeof(long long))
    cdef long long f
    if flow == NULL or newidx == NULL or hist == NULL:
        free(flow)
        free(newidx)
        free(hist)
        return -1
    # flows, children first (a child's index is larger than its parent's)
    for i in range(used - 1, -1, -1):
        if nodes[i].visits > 0:
            flow[i] = nodes[i].visits
        else:
            f = 0
            c = nodes[i].child
            while c >= 0:
                f += flow[c]
                c = nodes[c].sibling
            flow[i] = <int>(f if f < 2147483647 else 2147483647)
        hist[flow[i] if flow[i] < HIST else HIST] += 1
    # the smallest threshold t >= 1 keeping at most half the pool
    above = 0
    t = HIST + 1
    for i in range(HIST, 0, -1):
        if above + hist[i] > keep_at_most:
            break
        above += hist[i]
        t = i
    # which nodes stay: the roots, and every child of a kept node whose flow reaches t (parents first)
    for i in range(used):
        newidx[i] = -1
    for k in range(S.n):
        newidx[S.roots[k]] = 0
    if S.pimc:
        for k in range(S.num_worlds):
            newidx[S.world_roots[k]] = 0
    kept = 0
    for i in range(used):
        if newidx[i] < 0:
            continue
        newidx[i] = kept
        kept += 1
        c = nodes[i].child
        while c >= 0:
            if flow[c] >= t:
                newidx[c] = 0  # kept: numbered when reached
            c = nodes[c].sibling
    # compact in place: a kept node moves down (newidx[i] <= i); its children (all after it, not moved yet) get
    # their new sibling links now, the node its new first child
    for i in range(used):
        if newidx[i] < 0:
            continue
        first = -1
        prev = -1
        c = nodes[i].child
        while c >= 0:
            k = nodes[c].sibling
            if newidx[c] >= 0:
                if prev < 0:
                    first = newidx[c]
                else:
                    nodes[prev].sibling = newidx[c]
                prev = c
            c = k
        if prev >= 0:
            nodes[prev].sibling = -1
        nodes[i].child = first
        if newidx[i] != i:
            memcpy(&nodes[newidx[i]], &nodes[i], sizeof(NodeC))
            if S.extra:
                memcpy(&S.extra_reward[<size_t>newidx[i] * S.extra], &S.extra_reward[<size_t>i * S.extra],
                       sizeof(double) * S.extra)
    for k in range(S.n):
        S.roots[k] = newidx[S.roots[k]]
    if S.pimc:
        for k in range(S.num_worlds):
            S.world_roots[k] = newidx[S.world_roots[k]]
    S.freed += used - kept
    S.used = kept
    S.recycled += 1
    S.full = 0
    free(flow)
    free(newidx)
    free(hist)
    return 0


cdef int _subtree_order(const NodeC* src, int root, int limit, int* order, int* newchild,
                        int* newsib) noexcept nogil:
    """The subtree of ``src`` at ``root`` in breadth-first order, at most ``limit`` nodes: ``order[k]`` the source
    index of the k-th node, ``newchild[k]``/``newsib[k]`` its links in that numbering (-1: none; the children
    of a node are numbered together, so a subtree cut at ``limit`` loses a node's last children only). Returns
    the number of nodes."""
    cdef int head = 0, count = 1, c, last
    order[0] = root
    newsib[0] = -1
    while head < count:
        newchild[head] = -1
        last = -1
        c = src[order[head]].child
        while c >= 0 and count < limit:
            order[count] = c
            newsib[count] = -1
            if last < 0:
                newchild[head] = count
            else:
                newsib[last] = count
            last = count
            count += 1
            c = src[c].sibling
        head += 1
    return count


cdef int _copy_subtree(const NodeC* src, int root, int size, NodeC* dst, int base, int limit) noexcept nogil:
    """Copy the subtree of ``src`` (``size`` nodes) at ``root`` to ``dst[base:]`` (at most ``limit`` nodes), its
    root first and every child after its parent; the root becomes a root (no label, no sibling). Returns the
    nodes copied, or -1 without memory."""
    cdef int n = size if size < limit else limit
    cdef int k, count
    cdef int* order = <int*>malloc(sizeof(int) * <size_t>(n + 1))
    cdef int* newchild = <int*>malloc(sizeof(int) * <size_t>(n + 1))
    cdef int* newsib = <int*>malloc(sizeof(int) * <size_t>(n + 1))
    if order == NULL or newchild == NULL or newsib == NULL:
        free(order)
        free(newchild)
        free(newsib)
        return -1
    count = _subtree_order(src, root, n, order, newchild, newsib)
    for k in range(count):
        memcpy(&dst[base + k], &src[order[k]], sizeof(NodeC))
        dst[base + k].child = base + newchild[k] if newchild[k] >= 0 else -1
        dst[base + k].sibling = base + newsib[k] if newsib[k] >= 0 else -1
    dst[base].action = -1
    dst[base].sibling = -1
    free(order)
    free(newchild)
    free(newsib)
    return count


cdef int _subtree_size(const NodeC* src, int root) noexcept nogil:
    """Nodes in the subtree at ``root`` (a depth-first walk with a stack of its own; -1 without memory)."""
    cdef int count = 0, c, top = 0
    cdef int cap = 64
    cdef int* stack = <int*>malloc(sizeof(int) * cap)
    cdef int* grown
    if stack == NULL:
        return -1
    stack[0] = root
    top = 1
    while top > 0:
        top -= 1
        c = stack[top]
        count += 1
        c = src[c].child
        while c >= 0:
            if top >= cap:
                grown = <int*>realloc(stack, sizeof(int) * <size_t>(cap * 2))
                if grown == NULL:
                    free(stack)
                    return -1
                stack = grown
                cap *= 2
            stack[top] = c
            top += 1
            c = src[c].sibling
    free(stack)
    return count


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

cdef int _expand_by_prior(SearchC* S, int node, const int* legal, int n, int stamp,
                          bint* expanded) noexcept nogil:
    """The expansion of a UCB1 node with an action prior: the game scores the legal actions of the current world
    (``S.world``), their softmax (``prior_temperature``) is the prior; the untried action with the largest prior
    is expanded (ties at random) and its child keeps its prior for the progressive bias of :c:func:`_select`.
    So the most promising actions are tried first, which matters most where a node is visited too few times to
    try them all. -1 if the pool is full."""
    cdef NodeC* nodes = S.nodes
    cdef double* pr = S.prior
    cdef double top = -1e300, total = 0.0, best = -1.0, x
    cdef int i, a, c, pick = -1, ties = 0
    S.game.prior(S.game.ctx, S.world, legal, n, pr)
    for i in range(n):
        x = pr[i] / S.prior_temperature
        pr[i] = x if x == x else -1e300  # a NaN score counts as the worst
        if pr[i] > top:
            top = pr[i]
    for i in range(n):
        pr[i] = exp(pr[i] - top)
        total += pr[i]
    for i in range(n):
        pr[i] /= total
        a = legal[i]
        if S.seen[a] == stamp and nodes[S.child_of[a]].visits > 0:
            continue  # tried already
        if pr[i] > best:
            best = pr[i]
            pick = i
            ties = 1
        elif pr[i] == best:
            ties += 1
            if rng_below(&S.rng, ties) == 0:
                pick = i
    a = legal[pick]
    expanded[0] = True
    if S.seen[a] == stamp:
        c = S.child_of[a]
    else:
        c = _new_node(S, node, a)
        if c < 0:
            return -1
        nodes[c].avail = 1
    nodes[c].prior = <uint16_t>(pr[pick] * PRIOR_ONE + 0.5)
    return c


cdef inline double _ucb(SearchC* S, int c, int p) noexcept nogil:
    """UCB1 of a tried child ``c`` for player ``p``, with the prior's progressive bias (Chaslot et al. 2008: its
    pull fades as the edge's own visits grow) when the prior is on."""
    cdef NodeC* nodes = S.nodes
    cdef double u = _reward(S, c, p)[0] / nodes[c].visits + S.c * sqrt(log(<double>nodes[c].avail) / nodes[c].visits)
    if S.prior_weight > 0.0:
        u += S.prior_weight * (nodes[c].prior * (1.0 / PRIOR_ONE)) / (1.0 + nodes[c].visits)
    return u


cdef int _select(SearchC* S, int node, int p, bint exp3, const int* legal, int n, double* prob,
                 bint* expanded) noexcept nogil:
    """The child of ``node`` (tree of ``p``) to follow among the legal actions; -1 if it would need a node
    and the pool is full. Availability counts of the legal children are incremented here."""
    cdef NodeC* nodes = S.nodes
    cdef int i, a, c, stamp, nun, pick, best
    cdef int num_actions = S.game.num_actions
    cdef int* untried = S.untried
    cdef double gmax, total, r, acc, eta, u, bestv, pr
    cdef double* w = S.weight
    S.stamp += 1
    stamp = S.stamp
    for i in range(n):
        S.mark[legal[i]] = stamp
    c = nodes[node].child
    while c >= 0:
        a = nodes[c].action
        if a >= 0 and a < num_actions and S.mark[a] == stamp:
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
        eta = S.exp3_gamma / n
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
            pr = (1.0 - S.exp3_gamma) * w[i] / total + S.exp3_gamma / n
            acc += pr
            if r < acc:
                pick = i
                break
        pr = (1.0 - S.exp3_gamma) * w[pick] / total + S.exp3_gamma / n
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
        if S.prior_weight > 0.0 and S.game.prior != NULL:
            return _expand_by_prior(S, node, legal, n, stamp, expanded)
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
        u = _ucb(S, c, p)
        if u > bestv:
            bestv = u
            best = c
    return best


# =====================================================================================================
# One iteration
# =====================================================================================================

cdef int _finish(SearchC* S, void* w, int npath) noexcept nogil:
    """The end of an iteration whose tree walk left ``w`` and recorded ``npath`` choices: the playout, then
    backpropagation (each choice scored with its chooser's component; EXP3 gains for choices with a
    probability). Returns -1 if cancelled during the playout (nothing backpropagated)."""
    cdef double rewards[MAX_OBSERVERS]
    cdef int i, q, child, p
    if npath > S.max_depth:
        S.max_depth = npath
    if _playout(S, w, rewards) < 0:
        return -1
    for i in range(npath):
        child = S.path[i].node
        p = S.path[i].player
        S.nodes[child].visits += 1
        for q in range(S.n if S.n < NODE_REWARDS else NODE_REWARDS):
            S.nodes[child].reward[q] += rewards[q]
        for q in range(NODE_REWARDS, S.n):
            _reward(S, child, q)[0] += rewards[q]
        if S.path[i].prob > 0.0:
            S.nodes[child].gain += rewards[p] / S.path[i].prob
    S.iterations += 1
    return 0


cdef inline void _draw_world(SearchC* S, void* w) noexcept nogil:
    memcpy(w, S.root, S.game.state_size)
    S.game.determinize(S.game.ctx, w, S.seat, &S.rng, S.beliefs)
    S.worlds += 1


cdef int _iterate(SearchC* S) noexcept nogil:
    """One MO-ISMCTS iteration; returns -1 if cancelled during the playout (nothing backpropagated)."""
    cdef const GameC* G = &S.game
    cdef const void* ctx = G.ctx
    cdef void* w = S.world
    cdef int* legal = S.legal
    cdef int cur[MAX_OBSERVERS]
    cdef int32_t labels[MAX_OBSERVERS]
    cdef int32_t signals[MAX_SIGNALS]
    cdef int q, p, n, a, child, npath = 0, i, nsig
    cdef double prob
    cdef bint expanded, exp3
    cdef int nplayers = S.n
    _draw_world(S, w)
    for q in range(nplayers):
        cur[q] = S.roots[q]
    while True:
        p = G.to_move(ctx, w)
        if p == TO_MOVE_TERMINAL:
            break
        if p == TO_MOVE_CHANCE:
            a = G.sample_chance(ctx, w, &S.rng)
            if a < 0:
                break  # a chance node without outcomes (never in a valid game): evaluate here
            nsig = G.apply_observed(ctx, w, a, labels, signals)
            for q in range(nplayers):
                cur[q] = _descend(S, cur[q], labels[q])
        else:
            if cur[p] < 0:
                break  # off the player's tree (pool full)
            n = G.legal(ctx, w, legal)
            if n <= 0:
                break
            expanded = False
            if n == 1:
                exp3 = False
                a = legal[0]
                child = _descend(S, cur[p], a)
            else:
                exp3 = G.simultaneous(ctx, w, p)
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
            nsig = G.apply_observed(ctx, w, a, labels, signals)
            if expanded:
                break  # the walk ends here: the other trees need no node for this edge yet
            for q in range(nplayers):
                if q == p:
                    cur[q] = child
                else:
                    cur[q] = _descend(S, cur[q], labels[q])
        # public facts revealed by the step (e.g. Feudo's Trading Cards turned over, R9): edges in every tree
        for i in range(nsig):
            for q in range(nplayers):
                cur[q] = _descend(S, cur[q], signals[i])
    return _finish(S, w, npath)


cdef int _iterate_pimc(SearchC* S) noexcept nogil:
    """One PIMC iteration: plain UCT in the tree of world ``iterations mod num_worlds``, where every action
    is seen by every player (one tree, edges are the actions and chance outcomes themselves, UCB1 on the
    chooser's reward also at simultaneous moves). Returns -1 if cancelled during the playout."""
    cdef const GameC* G = &S.game
    cdef const void* ctx = G.ctx
    cdef void* w = S.world
    cdef int* legal = S.legal
    cdef int wi = <int>(S.iterations % S.num_worlds)
    cdef int p, n, a, child, npath = 0, cur
    cdef double prob
    cdef bint expanded
    memcpy(w, S.world_states + <size_t>wi * G.state_size, G.state_size)
    cur = S.world_roots[wi]
    while cur >= 0:
        p = G.to_move(ctx, w)
        if p == TO_MOVE_TERMINAL:
            break
        if p == TO_MOVE_CHANCE:
            a = G.sample_chance(ctx, w, &S.rng)
            if a < 0:
                break
            G.apply(ctx, w, a)
            cur = _descend(S, cur, a)
            continue
        n = G.legal(ctx, w, legal)
        if n <= 0:
            break
        if n == 1:
            a = legal[0]
            G.apply(ctx, w, a)
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
        G.apply(ctx, w, a)
        if expanded:
            break
        cur = child
    return _finish(S, w, npath)


cdef enum:
    DECIDED_EVERY = 16      # early_stop: iterations between two looks at the root (a look walks its children)


cdef bint _decided(SearchC* S, double t0, long long start) noexcept nogil:
    """early_stop: whether the seat's most visited root action leads the runner-up by more visits than the
    iterations left, so no way the rest of the budget could be spent changes the answer (the most visited action,
    c_backend's pick; an action not yet expanded has 0 visits). The iterations left are the iteration limit's
    exactly, and for a deadline the rate of this run so far times the time left (an estimate: a run whose
    iterations get slower could have had fewer)."""
    cdef long long done = S.iterations - start, left = -1, by_time
    cdef double t, spent
    cdef int c
    cdef int32_t first = 0, second = 0, v
    if S.max_iterations > 0:
        left = S.max_iterations - S.iterations
    if S.deadline > 0:
        t = search_now()
        spent = t - t0
        if spent <= 0.0:
            return False
        by_time = <long long>(done / spent * (S.deadline - t)) + 1
        if left < 0 or by_time < left:
            left = by_time
    if left < 0:
        return False  # only a cancel flag: no budget to save
    c = S.nodes[S.roots[S.seat]].child
    while c >= 0:
        if S.nodes[c].action >= 0:
            v = S.nodes[c].visits
            if v > first:
                second = first
                first = v
            elif v > second:
                second = v
        c = S.nodes[c].sibling
    return first - second > left


cdef void _run(SearchC* S) noexcept nogil:
    cdef double t0 = search_now()
    cdef long long start = S.iterations
    S.stop = STOP_NONE
    while True:
        if search_load_flag(S.cancel):
            S.stop = STOP_CANCELLED
            break
        if S.max_iterations > 0 and S.iterations >= S.max_iterations:
            S.stop = STOP_ITERATIONS
            break
        if S.deadline > 0 and search_now() >= S.deadline:
            S.stop = STOP_TIME
            break
        if (S.early_stop and S.iterations > start and (S.iterations - start) % DECIDED_EVERY == 0
                and _decided(S, t0, start)):
            S.stop = STOP_DECIDED
            break
        if S.full and S.recycle:
            _recycle(S)  # between iterations: no walk holds a node index
        if (_iterate_pimc(S) if S.pimc else _iterate(S)) < 0:
            S.stop = STOP_CANCELLED
            break
    S.elapsed += search_now() - t0


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
        search_store_flag(self.flag, 1)

    def clear(self):
        search_store_flag(self.flag, 0)

    def is_set(self):
        return search_load_flag(self.flag) != 0


PLAYOUTS = {"eval": PLAYOUT_EVAL, "truncated": PLAYOUT_TRUNCATED, "random": PLAYOUT_RANDOM}
_STOPS = {STOP_NONE: None, STOP_ITERATIONS: "iterations", STOP_TIME: "time", STOP_CANCELLED: "cancelled",
          STOP_DECIDED: "decided"}


cdef class SearchWorker:
    """One root-parallel worker over a :class:`feudo_ai._game.SearchGame` (its own trees, RNG and statistics).

    Options are validated by :meth:`feudo_ai.settings.SearchOptions.validate` before they get here; this class
    checks only what would be unsafe in C. ``algorithm="pimc"``: PIMC over ``worlds`` worlds drawn at
    construction.
    """

    def __cinit__(self):
        self.S = NULL

    def __init__(self, SearchGame game not None, unsigned long long seed, long long iterations=0,
                 double deadline=0.0, int max_nodes=1000000, str playout="truncated", int playout_turns=0,
                 double c=0.2, double exp3_gamma=0.15, CancelFlag cancel=None, str algorithm="ismcts", int worlds=8,
                 double prior_weight=0.0, double prior_temperature=1.0, bint recycle=False,
                 SavedTree tree=None, path=None, bint early_stop=False):
        cdef SearchC* S
        cdef int q, i, n
        cdef bint pimc
        if not game.ready():
            raise ValueError("game: no root set")
        n = game.c.num_players
        if not 1 <= n <= MAX_OBSERVERS:
            raise ValueError(f"players: the search takes 1 to {MAX_OBSERVERS}, the game has {n}")
        if playout not in PLAYOUTS:
            raise ValueError(f"playout: expected one of {', '.join(PLAYOUTS)}, got {playout!r}")
        if algorithm not in ("ismcts", "pimc"):
            raise ValueError(f"algorithm: expected ismcts or pimc, got {algorithm!r}")
        pimc = algorithm == "pimc"
        if pimc and not 1 <= worlds <= 4096:
            raise ValueError(f"worlds: expected an integer in [1, 4096], got {worlds}")
        if max_nodes < (worlds if pimc else n) + 1:
            raise ValueError(f"max_nodes: expected at least {(worlds if pimc else n) + 1}, got {max_nodes}")
        if game.c.num_actions < 1 or game.c.max_legal < 1:
            raise ValueError("game: no actions")
        if not 0.0 <= prior_weight < float("inf"):
            raise ValueError(f"prior_weight: expected a finite number >= 0, got {prior_weight!r}")
        if not 0.0 < prior_temperature < float("inf"):
            raise ValueError(f"prior_temperature: expected a positive number, got {prior_temperature!r}")
        if tree is not None and (pimc or tree.player != game.seat or tree.players != n):
            raise ValueError("tree: expected a saved MO-ISMCTS tree of the seat's own, in a game of as many players")
        if tree is not None and n > NODE_REWARDS:
            raise ValueError(f"tree: tree reuse keeps games of at most {NODE_REWARDS} players, this one has {n}")
        if early_stop and pimc:
            raise ValueError("early_stop: stops the MO-ISMCTS (the seat's own root), not PIMC")
        if tree is not None and path is None:
            raise ValueError("path: the labels the seat observed since the saved tree's root are needed with tree")
        S = <SearchC*>calloc(1, sizeof(SearchC))
        if S == NULL:
            raise MemoryError()
        self.S = S
        self.game = game
        S.game = game.c
        S.seat = game.seat
        S.n = n
        S.root = malloc(game.c.state_size)
        S.world = malloc(game.c.state_size)
        if S.root == NULL or S.world == NULL:
            raise MemoryError()
        memcpy(S.root, game.root, game.c.state_size)  # already hidden from the seat (SearchGame._set_root)
        S.playout = PLAYOUTS[playout]
        S.playout_turns = playout_turns
        S.c = c
        S.exp3_gamma = exp3_gamma
        S.prior_weight = prior_weight
        S.prior_temperature = prior_temperature
        S.max_iterations = iterations
        S.deadline = deadline
        self.cancel_flag = cancel
        S.cancel = cancel.flag if cancel is not None else NULL
        S.cap = max_nodes
        S.recycle = recycle
        S.early_stop = early_stop
        S.nodes = <NodeC*>malloc(sizeof(NodeC) * <size_t>max_nodes)
        if n > NODE_REWARDS:
            S.extra = n - NODE_REWARDS
            S.extra_reward = <double*>malloc(sizeof(double) * <size_t>S.extra * <size_t>max_nodes)
            if S.extra_reward == NULL:
                raise MemoryError()
        S.legal = <int*>malloc(sizeof(int) * <size_t>(game.c.max_legal + 1))
        S.untried = <int*>malloc(sizeof(int) * <size_t>(game.c.max_legal + 1))
        S.weight = <double*>malloc(sizeof(double) * <size_t>(game.c.max_legal + 1))
        S.prior = <double*>malloc(sizeof(double) * <size_t>(game.c.max_legal + 1))
        S.mark = <int*>calloc(game.c.num_actions + 1, sizeof(int))
        S.seen = <int*>calloc(game.c.num_actions + 1, sizeof(int))
        S.child_of = <int*>calloc(game.c.num_actions + 1, sizeof(int))
        S.path = <StepC*>malloc(sizeof(StepC) * MAX_PATH)
        S.beliefs = <int64_t*>calloc(game.c.num_beliefs + 1, sizeof(int64_t))
        if (S.nodes == NULL or S.legal == NULL or S.untried == NULL or S.weight == NULL or S.prior == NULL
                or S.mark == NULL
                or S.seen == NULL or S.child_of == NULL or S.path == NULL or S.beliefs == NULL):
            raise MemoryError()
        rng_seed(&S.rng, seed)
        if pimc:
            # PIMC: draw the worlds now (from the hidden root) and give each its tree
            S.pimc = 1
            S.num_worlds = worlds
            S.world_states = <char*>malloc(game.c.state_size * <size_t>worlds)
            S.world_roots = <int*>malloc(sizeof(int) * <size_t>worlds)
            if S.world_states == NULL or S.world_roots == NULL:
                raise MemoryError()
            for i in range(worlds):
                _draw_world(S, S.world_states + <size_t>i * game.c.state_size)
                S.world_roots[i] = _new_node(S, -1, -1)
            for q in range(S.n):
                S.roots[q] = S.world_roots[0]
        else:
            start = tree.find(path) if tree is not None else -1
            for q in range(S.n):
                if q == S.seat and start >= 0:
                    # tree reuse: the seat's own tree starts as the saved subtree below the edges it observed
                    # (its own labels: nothing another seat saw and it did not); the other trees start empty
                    i = _copy_subtree(tree.nodes, start, tree.size_at(start), S.nodes, S.used,
                                      S.cap - S.used - (S.n - 1 - q))
                    if i < 0:
                        raise MemoryError()
                    S.roots[q] = S.used
                    S.used += i
                    S.reused = i
                else:
                    S.roots[q] = _new_node(S, -1, -1)

    def __dealloc__(self):
        if self.S != NULL:
            free(self.S.root)
            free(self.S.world)
            free(self.S.nodes)
            free(self.S.extra_reward)
            free(self.S.legal)
            free(self.S.untried)
            free(self.S.weight)
            free(self.S.prior)
            free(self.S.mark)
            free(self.S.seen)
            free(self.S.child_of)
            free(self.S.path)
            free(self.S.beliefs)
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

    @property
    def seat(self) -> int:
        return self.S.seat

    def root_index(self, int player):
        if not 0 <= player < self.S.n:
            raise ValueError(f"player: expected an integer in [0, {self.S.n}), got {player}")
        return self.S.roots[player]

    def children(self, int node):
        """[(label, visits, reward sum of the node's chooser, child index)] of a node, in creation order."""
        cdef SearchC* S = self.S
        cdef int c
        self._check_node(node)
        out = []
        c = S.nodes[node].child
        p = S.nodes[node].actor
        while c >= 0:
            out.append((S.nodes[c].action, S.nodes[c].visits, _reward(S, c, p)[0] if p >= 0 else 0.0, c))
            c = S.nodes[c].sibling
        out.reverse()
        return out

    def node_rewards(self, int node):
        """Every player's reward sum of a node, over its visits (the sums of one iteration add up to what its
        playout's rewards add up to)."""
        cdef int q
        self._check_node(node)
        return [_reward(self.S, node, q)[0] for q in range(self.S.n)]

    def node_visits(self, int node):
        self._check_node(node)
        return self.S.nodes[node].visits

    def world_roots(self):
        """PIMC: the root node of each sampled world's tree ([] for MO-ISMCTS)."""
        cdef int i
        return [self.S.world_roots[i] for i in range(self.S.num_worlds)] if self.S.pimc else []

    def _check_node(self, int node):
        if not 0 <= node < self.S.used:
            raise ValueError(f"node: expected an index in [0, {self.S.used}), got {node}")

    def node_exp3(self, int node):
        """Whether the node's chooser picks by EXP3 (a simultaneous move) rather than UCB1."""
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
        roots = [S.world_roots[i] for i in range(S.num_worlds)] if S.pimc else [S.roots[S.seat]]
        for r in roots:
            c = S.nodes[r].child
            while c >= 0:
                if S.nodes[c].visits > 0 and S.nodes[c].action >= 0:
                    v, t = out.get(S.nodes[c].action, (0, 0.0))
                    out[S.nodes[c].action] = (v + S.nodes[c].visits, t + _reward(S, c, S.seat)[0])
                c = S.nodes[c].sibling
        return out

    def stats(self):
        """The worker's figures: ``nodes`` in its pool now, ``pool_full`` whether the pool ever filled,
        ``recycled`` and ``freed`` how often it was recycled and the nodes that freed, ``reused`` the nodes of an
        earlier search's tree it started with."""
        cdef SearchC* S = self.S
        return {"iterations": S.iterations, "nodes": S.used, "max_depth": S.max_depth, "elapsed": S.elapsed,
                "stopped_by": _STOPS[S.stop], "worlds": S.worlds, "pool_full": bool(S.filled or S.used >= S.cap),
                "recycled": S.recycled, "freed": S.freed, "reused": S.reused}

    def saved_tree(self):
        """A copy of the seat's own tree (MO-ISMCTS), for a later search of the same seat to start from (tree
        reuse: :class:`SavedTree`)."""
        cdef SearchC* S = self.S
        cdef SavedTree out
        cdef int size
        if S.pimc:
            raise ValueError("algorithm: tree reuse needs the MO-ISMCTS (pimc keeps no tree of the seat)")
        if S.extra:
            raise ValueError(f"players: tree reuse keeps games of at most {NODE_REWARDS} players, this one has {S.n}")
        size = _subtree_size(S.nodes, S.roots[S.seat])
        if size < 0:
            raise MemoryError()
        out = SavedTree.__new__(SavedTree)
        out.nodes = <NodeC*>malloc(sizeof(NodeC) * <size_t>size)
        if out.nodes == NULL:
            raise MemoryError()
        out.count = _copy_subtree(S.nodes, S.roots[S.seat], size, out.nodes, 0, size)
        if out.count < 0:
            raise MemoryError()
        out.player = S.seat
        out.players = S.n
        return out

    def belief_counts(self):
        """(the game's belief counters summed over the worlds drawn, number of worlds drawn)."""
        cdef int i
        return [self.S.beliefs[i] for i in range(self.S.game.num_beliefs)], self.S.worlds


cdef class SavedTree:
    """One player's MO-ISMCTS tree kept after its search (:meth:`SearchWorker.saved_tree`): the nodes of its
    own tree only, keyed by the labels that player observed (``apply_observed``), root at index 0. A later
    search of the same player starts from the subtree below the labels it observed since
    (``SearchWorker(..., tree=, path=)``)."""

    def __cinit__(self):
        self.nodes = NULL
        self.count = 0

    def __dealloc__(self):
        free(self.nodes)

    @property
    def size(self) -> int:
        return self.count

    def find(self, path) -> int:
        """The node reached from the root along ``path`` (labels, as the player observed them), -1 if the tree has
        no such edge."""
        cdef int node = 0, c, label
        for label in path:
            c = self.nodes[node].child
            while c >= 0 and self.nodes[c].action != label:
                c = self.nodes[c].sibling
            if c < 0:
                return -1
            node = c
        return node

    def size_at(self, int node) -> int:
        if not 0 <= node < self.count:
            raise ValueError(f"node: expected an index in [0, {self.count}), got {node}")
        return _subtree_size(self.nodes, node)

    def children(self, int node):
        """[(label, visits)] of a node's children, in creation order."""
        cdef int c
        if not 0 <= node < self.count:
            raise ValueError(f"node: expected an index in [0, {self.count}), got {node}")
        out = []
        c = self.nodes[node].child
        while c >= 0:
            out.append((self.nodes[c].action, self.nodes[c].visits))
            c = self.nodes[c].sibling
        out.reverse()
        return out


def node_bytes(int players=NODE_REWARDS):
    """Bytes of one tree node in a game of ``players`` (what the memory limit of a search counts,
    feudo_ai.settings.node_bytes): the node, plus the reward sums of the players beyond NODE_REWARDS."""
    if not 1 <= players <= MAX_OBSERVERS:
        raise ValueError(f"players: expected an integer in [1, {MAX_OBSERVERS}], got {players}")
    return sizeof(NodeC) + sizeof(double) * (players - NODE_REWARDS if players > NODE_REWARDS else 0)
