# cython: language_level=3
"""The learned evaluation in C: the features of :func:`feudo_ai.value.features` (same definitions, same order:
``feudo_ai.value.FEATURE_NAMES``) and the softmax over the seats of ``w[n] . f(p)`` (:class:`feudo_ai.value.
ValueModel`). Called by :mod:`feudo_ai._feudo_game` at the end of a truncated playout when the search's
``evaluation`` is ``"learned"``; public facts only (R22), so every determinized world gives the same rewards.

The hand-made ``position_score`` of every seat (a feature) is handed in by the caller, which computes it anyway
(:c:func:`feudo_ai._feudo_game._position_scores`); so this module does not depend on the game table.
"""

from libc.math cimport exp, tanh
from libc.stdint cimport uint64_t

from feudo_ai._public_facts cimport numbers_and_forces, plague_danger
from engine._core cimport (CoreGame, CoreStateC, MAX_PLAYERS, MAX_TOKENS, MAX_TERRITORIES, PH_TERMINAL, LOC_CASTLE,
                           LOC_DEAD, K_CITY, K_CENTRAL, core_returns,
                           core_defence_bonus)


cdef inline int _enemy_max(const CoreGame* g, int (*force_at)[MAX_TERRITORIES], int n, int p, int x) noexcept nogil:
    """The largest adjacent force of one enemy against territory x (the Central Hill does not attack)."""
    cdef int q, i, y, f, best = 0
    for q in range(n):
        if q == p:
            continue
        f = 0
        for i in range(g.num_neighbors[x]):
            y = g.neighbors[x][i]
            if y != g.central_hill:
                f += force_at[q][y]
        if f > best:
            best = f
    return best


cdef void value_features(const CoreStateC* s, const CoreGame* g, const double* handmade,
                         double (*out)[NUM_FEATURES]) noexcept nogil:
    """out[p] = the features of seat p (feudo_ai.value.features), for every seat."""
    cdef int n = g.num_players, k = g.num_tokens
    cdef int p, q, t, x, i, c, a, d, v, kx, num, bonus, others, lead, vmin, castle, value, force_adj, defence
    cdef int alive, on_map, force, stricken, in_danger, never, in_cities, threatened, cities, city_value, at_risk
    cdef int ready
    cdef bint taker
    cdef int number[MAX_PLAYERS][MAX_TOKENS]
    cdef int force_at[MAX_PLAYERS][MAX_TERRITORIES]
    cdef bint desp[MAX_PLAYERS]
    cdef uint64_t danger[2]
    cdef double prog, leader
    cdef int central = g.central_hill, milady = g.milady
    numbers_and_forces(s, g, desp, number, force_at)
    plague_danger(s, g, danger)  # territories a plague card could hit next (feudo_ai.evaluate._danger_set)
    if s.tiebreak:
        prog = 1.0
    else:
        prog = (s.turn - 1) / <double>(g.turns if g.turns > 1 else 1)
        if prog < 0.0:
            prog = 0.0
        elif prog > 1.0:
            prog = 1.0
    vmin = s.vp[0]
    for q in range(n):
        if s.vp[q] < vmin:
            vmin = s.vp[q]
    for p in range(n):
        others = -(1 << 30)
        for q in range(n):
            if q != p and s.vp[q] > others:
                others = s.vp[q]
        lead = s.vp[p] - others
        leader = 1.0 if lead >= 0 else 0.0
        alive = on_map = force = stricken = in_danger = never = in_cities = threatened = 0
        for t in range(k):
            x = s.loc[p][t]
            if x == LOC_DEAD:
                continue
            alive += 1
            num = number[p][t]
            if t != milady:
                force += num
            if s.stricken[p][t]:
                stricken += 1
            if x == LOC_CASTLE:
                if not s.entered[p][t] and not s.king:
                    never += g.desperate_red if (t == g.baron and desp[p]) else g.token_red[t]
                continue
            on_map += 1
            kx = g.kind[x]
            if kx == K_CITY:
                in_cities += 1
            if ((danger[x >> 6] >> (x & 63)) & 1) and kx != K_CITY and kx != K_CENTRAL:
                in_danger += num
            if x != central and t != milady:
                bonus = core_defence_bonus(g, x)
                if _enemy_max(g, force_at, n, p, x) > force_at[p][x] + bonus:
                    threatened += num
        cities = city_value = at_risk = ready = 0
        castle = g.site_territory[s.castle[p]] if s.castle[p] >= 0 else -1
        for i in range(g.num_cities):
            c = g.cities[i]
            if s.owner[c] == p:
                cities += 1
                if castle >= 0:
                    value = g.distance[castle][c]
                    city_value += value
                    if _enemy_max(g, force_at, n, p, c) > g.defence_city + force_at[p][c]:
                        at_risk += value
                continue
            if castle < 0:
                continue
            force_adj = 0
            taker = False
            for t in range(k):
                x = s.loc[p][t]
                if x < 0 or t == milady or x == central or g.distance[x][c] != 1:
                    continue
                force_adj += number[p][t]
                if g.takes_cities[t]:
                    taker = True
            defence = g.defence_city
            for q in range(n):
                if q != p:
                    defence += force_at[q][c]
            if taker and force_adj > defence:
                ready += g.distance[castle][c]
        out[p][0] = s.vp[p]
        out[p][1] = s.vp[p] * prog
        out[p][2] = lead
        out[p][3] = lead * prog
        out[p][4] = lead * prog * prog
        out[p][5] = leader
        out[p][6] = leader * prog
        out[p][7] = handmade[p] - s.vp[p]
        out[p][8] = (handmade[p] - s.vp[p]) * prog
        out[p][9] = alive
        out[p][10] = on_map
        out[p][11] = force
        out[p][12] = stricken
        out[p][13] = in_danger
        out[p][14] = cities
        out[p][15] = city_value
        out[p][16] = at_risk
        out[p][17] = ready
        out[p][18] = threatened
        out[p][19] = never
        out[p][20] = 1.0 if s.loc[p][g.baron] != LOC_DEAD else 0.0
        out[p][21] = 1.0 if desp[p] else 0.0
        out[p][22] = 1.0 if (s.king and s.vp[p] == vmin) else 0.0
        out[p][23] = in_cities


cdef double value_utility(const ValueWeightsC* vw, int n, const double* f) noexcept nogil:
    """A seat's utility in an n-player game from its features f (feudo_ai.experimental.value.ValueModel.
    utilities): the linear model's w . f, or the MLP's w2 . tanh(W1 (f - mean) / scale + b1) + b2."""
    cdef int i, j, k = n - 2
    cdef double u = 0.0, h
    cdef double z[NUM_FEATURES]
    if vw.kind == VALUE_LINEAR:
        for j in range(NUM_FEATURES):
            u += vw.w[k][j] * f[j]
        return u
    for j in range(NUM_FEATURES):
        z[j] = (f[j] - vw.mean[k][j]) / vw.scale[k][j]
    for i in range(vw.hidden[k]):
        h = vw.b1[k][i]
        for j in range(NUM_FEATURES):
            h += vw.w1[k][i][j] * z[j]
        u += vw.w2[k][i] * tanh(h)
    return u + vw.b2[k]


cdef void value_rewards(const ValueWeightsC* vw, const CoreStateC* s, const CoreGame* g, const double* handmade,
                        double temperature, double* out) noexcept nogil:
    """The learned rewards (feudo_ai.experimental.value.ValueModel.rewards): softmax over the seats in play of
    utility(f(p)) / temperature (1: the fitted model's win probabilities; below 1: sharper)."""
    cdef double f[MAX_PLAYERS][NUM_FEATURES]
    cdef double u[MAX_PLAYERS]
    cdef double top = -1e300, total = 0.0
    cdef int p, n = g.num_players
    cdef bint inplay
    if s.phase == PH_TERMINAL:
        core_returns(s, g, out)
        return
    value_features(s, g, handmade, f)
    for p in range(n):
        u[p] = value_utility(vw, n, f[p]) / temperature
        inplay = s.tiebreak == 0 or s.active[p]
        if inplay and u[p] > top:
            top = u[p]
    for p in range(n):
        inplay = s.tiebreak == 0 or s.active[p]
        out[p] = exp(u[p] - top) if inplay else 0.0
        total += out[p]
    for p in range(n):
        out[p] /= total


def _finite(name, value, shape):
    import numpy as np  # here, not at import: a search with the hand-made evaluation never loads numpy (whose
    # import, some 0.1 s cold, would fall in the first timed search of a process)

    a = np.asarray(value, dtype=np.float64)
    if a.shape != shape:
        raise ValueError(f"{name}: expected shape {shape}, got {a.shape}")
    if not np.isfinite(a).all():
        raise ValueError(f"{name}: expected finite numbers")
    return a


cdef class ValueWeights:
    """The weights of a validated model in C (checked again here: nothing unchecked reaches C). Linear:
    ``ValueWeights(weights)``, a (3, NUM_FEATURES) array, row n - 2 for n players. MLP: ``ValueWeights(mlp=[...])``,
    one dict per player count 2, 3, 4 with ``mean`` and ``scale`` (NUM_FEATURES, scale > 0), ``w1`` (H,
    NUM_FEATURES), ``b1`` (H), ``w2`` (H) and ``b2`` (a number), 1 <= H <= MAX_HIDDEN."""

    def __init__(self, weights=None, *, mlp=None):
        if (weights is None) == (mlp is None):
            raise ValueError("weights: expected either linear weights or mlp layers")
        if weights is not None:
            a = _finite("weights", weights, (3, NUM_FEATURES))
            self.c.kind = VALUE_LINEAR
            for i in range(3):
                for j in range(NUM_FEATURES):
                    self.c.w[i][j] = a[i, j]
            return
        if len(mlp) != 3:
            raise ValueError(f"mlp: expected 3 player counts, got {len(mlp)}")
        self.c.kind = VALUE_MLP
        import numpy as np

        for k in range(3):
            layer = mlp[k]
            w1 = np.asarray(layer["w1"], dtype=np.float64)
            h = w1.shape[0] if w1.ndim == 2 else -1
            if not 1 <= h <= MAX_HIDDEN:
                raise ValueError(f"mlp[{k}].w1: expected 1 to {MAX_HIDDEN} rows, got shape {w1.shape}")
            w1 = _finite(f"mlp[{k}].w1", w1, (h, NUM_FEATURES))
            b1 = _finite(f"mlp[{k}].b1", layer["b1"], (h,))
            w2 = _finite(f"mlp[{k}].w2", layer["w2"], (h,))
            b2 = _finite(f"mlp[{k}].b2", layer["b2"], ())
            mean = _finite(f"mlp[{k}].mean", layer["mean"], (NUM_FEATURES,))
            scale = _finite(f"mlp[{k}].scale", layer["scale"], (NUM_FEATURES,))
            if not (scale > 0).all():
                raise ValueError(f"mlp[{k}].scale: expected positive numbers")
            self.c.hidden[k] = h
            self.c.b2[k] = b2
            for j in range(NUM_FEATURES):
                self.c.mean[k][j] = mean[j]
                self.c.scale[k][j] = scale[j]
            for i in range(MAX_HIDDEN):
                self.c.b1[k][i] = b1[i] if i < h else 0.0
                self.c.w2[k][i] = w2[i] if i < h else 0.0
                for j in range(NUM_FEATURES):
                    self.c.w1[k][i][j] = w1[i, j] if i < h else 0.0

    @property
    def kind(self):
        """"linear" or "mlp"."""
        return "linear" if self.c.kind == VALUE_LINEAR else "mlp"

    def weights(self):
        """The linear weights as a (3, NUM_FEATURES) array (zeros for an MLP)."""
        import numpy as np

        return np.array([[self.c.w[i][j] for j in range(NUM_FEATURES)] for i in range(3)])

    def utility(self, int players, features):
        """The C utility of one seat's features in a ``players``-player game (tests against numpy)."""
        f = _finite("features", features, (NUM_FEATURES,))
        if not 2 <= players <= 4:
            raise ValueError(f"players: expected 2, 3 or 4, got {players}")
        cdef double buf[NUM_FEATURES]
        for j in range(NUM_FEATURES):
            buf[j] = f[j]
        return value_utility(&self.c, players, buf)


def num_features():
    """NUM_FEATURES of the C code (the tests compare it with feudo_ai.value.NUM_FEATURES)."""
    return NUM_FEATURES


def max_hidden():
    """MAX_HIDDEN of the C code (the tests compare it with feudo_ai.experimental.value.MAX_HIDDEN)."""
    return MAX_HIDDEN
