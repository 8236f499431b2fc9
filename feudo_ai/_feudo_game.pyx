# cython: language_level=3
"""Feudo behind the game interface of the search (``feudo_ai/_game.pxd``): :class:`FeudoGame`.

The C search (:mod:`feudo_ai._search`) knows no rule of Feudo; this module tells it, through the function
table of :c:type:`feudo_ai._game.GameC`:

- **the rules**: the Cython core (:mod:`engine._core`): to move, legal actions, apply, chance, R19 returns;
- **who sees what** (``apply_observed``): every action and chance outcome is public except a SELECT-phase pick,
  which the other players see as ``LABEL_HIDDEN`` (R6, R22); a Trading Card turned over without an action of
  its own (R9) is a public signal ``LABEL_SIGNAL - (q * (MAX_TRADING + 1) + card + 1)``;
- **simultaneous moves**: a selection pick while another active player still selects after the chooser (R6);
  the last selector faces selections already made (hidden, but fixed in the world), a one-player choice;
- **determinization** (:c:func:`_determinize`): for every opponent ``q`` the unrevealed part of
  ``sel_army[q]``/``sel_trade[q]`` is first *overwritten* (cleared, :c:func:`_blank_hidden`, also applied once
  to the root by ``hide``), then resampled from public facts only: the selected count
  (``min(army_cards_selected, held)`` once ``q`` is done selecting, R6), a subset of q's held, unrevealed Army
  Cards (uniform, or weighted by :class:`feudo_ai.sampler.WeightedSampler`'s prior), and a Trading Card among
  q's distinct held values that pay for the Mercenaries q has moved (``merc_moved``, R7, with the King's Help,
  R16);
- **evaluation** (:c:func:`_evaluate`): :func:`feudo_ai.evaluate.position_score` in C (public facts only) turned
  into win-probability-like rewards by a softmax whose temperature shrinks as the end nears (the formula of
  :mod:`feudo_ai.search.python_backend`), optionally mixed with a wide softmax of constant temperature (``margin_weight``,
  the diagnosis: the sharp one saturates a few VP from even); or, with ``evaluation="learned"``, the learned model of :mod:`feudo_ai.experimental.value` (its C
  code: :mod:`feudo_ai._value`, which takes the position scores above as one of its features);
- **playout policy** (:c:func:`_playout_action`): uniform, except attacks (only winnable ones, R11) and, with
  probability ``playout_greedy`` (``SearchOptions``, 0 by default), moves: the greedy bot's one-ply best
  (:c:func:`_greedy_pick`);
- **truncation**: a truncated playout stops once ``horizon`` turns after the root's turn have ended.

Belief counters (``num_beliefs = n * tokens + n * trading``): per opponent and Army Card, the worlds in which it
was selected, then per opponent and Trading Card; :meth:`FeudoGame.beliefs` turns them into probabilities.
"""

from libc.math cimport sqrt, exp
from libc.stdint cimport int8_t, int32_t, int64_t, uint32_t, uint64_t
from libc.string cimport memcpy

from engine._core cimport (CoreState, CoreStateC, CoreGame, MAX_PLAYERS, MAX_TOKENS, MAX_TRADING, MAX_ACTIONS,
                           MAX_TERRITORIES, MAX_PLAGUE_KINDS, PH_SELECT, PH_TERMINAL, LOC_CASTLE, LOC_DEAD,
                           K_CITY, K_CENTRAL, PH_ATTACK, PH_ATTACK_JOIN, PH_MOVE, PH_MARCH,
                           PH_ADVANCE, PH_MILADY, core_legal,
                           core_apply, core_current_player, core_chance, core_returns, core_is_chance,
                           core_desperate, core_shillings_of, core_defence_bonus)
from feudo_ai._public_facts cimport numbers_and_forces, plague_danger
from feudo_ai._value cimport ValueWeights, ValueWeightsC, NUM_FEATURES, value_features, value_rewards
from feudo_ai._game cimport (GameC, Rng, SearchGame, MAX_OBSERVERS, LABEL_HIDDEN, LABEL_SIGNAL, MAX_SIGNALS,
                             TO_MOVE_CHANCE, TO_MOVE_TERMINAL, rng_seed, rng_uniform, rng_below)


SAMPLERS = {"uniform": SAMPLER_UNIFORM, "weighted": SAMPLER_WEIGHTED}
EVALUATIONS = {"handmade": EVAL_HANDMADE, "learned": EVAL_LEARNED}


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


cdef int _weighted_index(Rng* rng, const double* weight, int n) noexcept nogil:
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


cdef void _determinize(const FeudoCtx* F, CoreStateC* w, int seat, Rng* rng, int64_t* beliefs) noexcept nogil:
    """Resample every opponent's hidden selection in ``w`` from public facts only.

    The hidden fields are overwritten (``_blank_hidden``) before anything is read, so nothing of a previous
    value can influence the world: the count of selected cards is recomputed from public facts (``sel_done``,
    ``army_held``), the candidates from ``army_held``/``revealed``, the Trading Card from ``trade_held``,
    ``merc_moved``, ``vp`` and ``king``.
    """
    cdef const CoreGame* g = F.g
    cdef int q, t, c, i, j, k, held, need, nrev, hidden, ncand, nchoice, tmp, v
    cdef int cand[MAX_TOKENS]
    cdef int choice[MAX_TRADING]
    cdef int seen_values[MAX_TRADING]
    cdef int nseen
    cdef bint dup, on_map
    cdef double weight[MAX_TOKENS]
    cdef double wt
    _blank_hidden(w, g, seat)
    for q in range(g.num_players):
        if q == seat or not w.sel_done[q]:
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
        if F.sampler == SAMPLER_WEIGHTED:
            for i in range(ncand):
                weight[i] = _army_weight(w, g, q, cand[i])
        for i in range(hidden):
            # one card at a time without replacement (partial Fisher-Yates; weighted: by the weights left)
            if F.sampler == SAMPLER_WEIGHTED:
                j = _weighted_index(rng, weight + i, ncand - i) + i
                wt = weight[i]
                weight[i] = weight[j]
                weight[j] = wt
            else:
                j = i + rng_below(rng, ncand - i)
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
            if nchoice > 0 and F.sampler == SAMPLER_WEIGHTED:
                on_map = False
                for t in range(g.num_tokens):
                    if w.loc[q][t] >= 0:
                        on_map = True
                for i in range(nchoice):
                    weight[i] = 2.0 if g.trading_value[choice[i]] > 0 and on_map else 1.0
                w.sel_trade[q] = choice[_weighted_index(rng, weight, nchoice)]
            elif nchoice > 0:
                w.sel_trade[q] = choice[rng_below(rng, nchoice)]
            else:  # no card explains the evidence (not reachable in a legal game): any held card
                for c in range(g.num_trading):
                    if w.trade_held[q][c]:
                        w.sel_trade[q] = c
                        break
    # beliefs (what the worlds say about the opponents): army counts [q][t], then trading counts [q][c]
    if beliefs == NULL:
        return
    for q in range(g.num_players):
        if q == seat:
            continue
        for t in range(g.num_tokens):
            if w.sel_army[q][t]:
                beliefs[q * g.num_tokens + t] += 1
        if w.sel_trade[q] >= 0:
            beliefs[g.num_players * g.num_tokens + q * g.num_trading + w.sel_trade[q]] += 1


# =====================================================================================================
# Evaluation: feudo_ai.evaluate.position_score in C, then a softmax
# =====================================================================================================

cdef inline void _position_scores(const CoreStateC* s, const CoreGame* g, double* score) noexcept nogil:
    """position_score(state, p) for every player p (same terms and constants as feudo_ai/evaluate.py)."""
    _position_scores_of(s, g, score, -1)


cdef void _position_scores_of(const CoreStateC* s, const CoreGame* g, double* score, int only) noexcept nogil:
    """position_score(state, p) for every player p, or for p = ``only`` alone (``only >= 0``: the other entries
    are left unwritten; the action prior needs the mover's score only)."""
    cdef int n = g.num_players, k = g.num_tokens
    cdef int p, q, t, u, x, i, d, a, v, kind, best, force, value, defence, castle, c, num, mine, bonus, emax
    cdef int num_of[MAX_PLAYERS][MAX_TOKENS]
    cdef int force_at[MAX_PLAYERS][MAX_TERRITORIES]
    cdef uint64_t danger[2]
    cdef bint taker_adjacent
    cdef bint desp[MAX_PLAYERS]        # R17, once per player: the Baron's numbers below depend on it
    cdef int central = g.central_hill
    cdef int milady = g.milady
    numbers_and_forces(s, g, desp, num_of, force_at)
    plague_danger(s, g, danger)  # territories a plague card could hit next (evaluate._danger_set)
    for p in range(n):
        if only >= 0 and p != only:
            continue
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
            bonus = core_defence_bonus(g, x)
            emax = _largest_enemy_force_next_to(g, force_at, p, x)
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


cdef inline int _largest_enemy_force_next_to(const CoreGame* g, const int (*force_at)[MAX_TERRITORIES], int p,
                                             int x) noexcept nogil:
    """The largest force one enemy of p has on x's neighbours, the Central Hill left out (R11): what could attack
    p's tokens at x (position_score's threat term)."""
    cdef int enemy[MAX_PLAYERS]
    cdef int q, i, y, emax = 0
    for q in range(g.num_players):
        enemy[q] = 0
    for i in range(g.num_neighbors[x]):
        y = g.neighbors[x][i]
        if y == g.central_hill:
            continue
        for q in range(g.num_players):
            if q != p:
                enemy[q] += force_at[q][y]
    for q in range(g.num_players):
        if q != p and enemy[q] > emax:
            emax = enemy[q]
    return emax


cdef inline double _exp_scores(const CoreStateC* s, int n, const double* score, double temp,
                               double* out) noexcept nogil:
    """The unnormalised softmax of score / temp over the players still in the game: out[p] = exp(score[p] / temp -
    the largest of them) for every player in play (everyone, or the tied leaders in a tie-break, R19), 0 for the
    others; returns the sum (the caller divides, so each softmax of :c:func:`_evaluate` keeps its arithmetic)."""
    cdef double top = -1e300, total = 0.0
    cdef int p
    cdef bint inplay
    for p in range(n):
        inplay = s.tiebreak == 0 or s.active[p]
        if inplay and score[p] / temp > top:
            top = score[p] / temp
    for p in range(n):
        inplay = s.tiebreak == 0 or s.active[p]
        out[p] = exp(score[p] / temp - top) if inplay else 0.0
        total += out[p]
    return total


cdef void _evaluate(const CoreStateC* s, const CoreGame* g, double temperature, double margin_weight,
                    double margin_temperature, double* out) noexcept nogil:
    """Win-probability-like rewards: softmax over the players still in the game (the tied leaders in a
    tie-break) of position_score / temp, temp = max(0.5, temperature * sqrt(turns left / turns)).

    With ``margin_weight`` = m > 0, the rewards are (1 - m) times that softmax plus m times a wide one, of
    position_score / ``margin_temperature`` (constant). Why: the sharp softmax saturates; in 2 players a lead of
    3 VP late in the game is worth 0.998 at temp 0.5, so every move of a seat 3 VP ahead (or behind) is worth
    about the same and the search plays at random (docs/search.md, the evaluation's diagnosis). The wide part keeps a
    gradient at any margin: gaining a VP is always worth something. A terminal state keeps its exact R19 returns.
    m = 0: exactly the rewards of before (the wide softmax is not computed)."""
    cdef double score[MAX_PLAYERS]
    if s.phase == PH_TERMINAL:
        core_returns(s, g, out)
        return
    _position_scores(s, g, score)
    _evaluate_scores(s, g, score, temperature, margin_weight, margin_temperature, out)


cdef void _evaluate_scores(const CoreStateC* s, const CoreGame* g, const double* score, double temperature,
                           double margin_weight, double margin_temperature, double* out) noexcept nogil:
    """:c:func:`_evaluate` of a state that is not terminal, from its position scores already computed (the
    learned evaluation computes them too, so a mix of the two computes them once)."""
    cdef double wide[MAX_PLAYERS]
    cdef double total, temp, left, wtotal
    cdef int p, n = g.num_players
    left = g.turns - s.turn + 1
    if left < 0:
        left = 0
    temp = temperature * sqrt(left / (g.turns if g.turns > 1 else 1))
    if temp < 0.5:
        temp = 0.5
    total = _exp_scores(s, n, score, temp, out)
    for p in range(n):
        out[p] /= total
    if margin_weight <= 0.0:
        return
    wtotal = _exp_scores(s, n, score, margin_temperature, wide)
    for p in range(n):
        out[p] = (1.0 - margin_weight) * out[p] + margin_weight * wide[p] / wtotal


# =====================================================================================================
# Playouts
# =====================================================================================================

cdef inline int _token_number(const CoreStateC* s, const CoreGame* g, int p, int t) noexcept nogil:
    """The number a token fights with (R11), the desperate Baron's numbers included (R17)."""
    if t == g.baron and core_desperate(s, g, p):
        return g.desperate_black if s.stricken[p][t] else g.desperate_red
    return g.token_black[t] if s.stricken[p][t] else g.token_red[t]


cdef int _defence(const CoreStateC* s, const CoreGame* g, int p, int x) noexcept nogil:
    """Defence of territory x against p (R11): enemy tokens there other than Miladies, plus the bonus."""
    cdef int q, u, d = core_defence_bonus(g, x)
    for q in range(g.num_players):
        if q == p:
            continue
        for u in range(g.num_tokens):
            if s.loc[q][u] == x and u != g.milady:
                d += _token_number(s, g, q, u)
    return d


cdef int _winnable_gain(const CoreGame* g, const CoreStateC* w, int p, int x) noexcept nogil:
    """Twice what p's attack on territory x is worth if every token able to join wins it (R11), else -1."""
    cdef int t, y, force = 0, defence, gain
    for t in range(g.num_tokens):
        y = w.loc[p][t]
        if (y >= 0 and y != g.central_hill and t != g.milady and not w.attacked[p][t]
                and g.adjacent[y][x]):
            force += _token_number(w, g, p, t)
    defence = _defence(w, g, p, x)
    if force <= defence:
        return -1
    # twice what the win is worth: the defenders' numbers in VP (R11: the defence less the
    # territory's bonus), a City's distance from p's Castle (R15), half what the City's owner loses
    gain = 2 * (defence - core_defence_bonus(g, x))
    if g.kind[x] == K_CITY and w.castle[p] >= 0:
        gain += 2 * g.distance[g.site_territory[w.castle[p]]][x]
        if w.owner[x] >= 0 and w.castle[w.owner[x]] >= 0:
            gain += g.distance[g.site_territory[w.castle[w.owner[x]]]][x]
    return gain


cdef int _playout_action(const CoreGame* g, const CoreStateC* w, const int* buf, int n, double greedy,
                         Rng* rng) noexcept nogil:
    """The playout's pick among the n legal actions: uniform, except for attacks (R11) and, with probability
    ``greedy``, a Move, March, Advance or Milady (R8-R14), which is then the greedy bot's pick (:c:func:`_greedy_pick`).
    The Strategy phase (R6-R8) stays uniform: the greedy player's Strategy picks were measured in the playouts and
    did not pay (docs/search-history.md, "The greedy player's Strategy picks in the playouts").

    A uniformly random attacker mostly throws its tokens away on attacks it cannot win (every attacking
    token is lost on a failed attack), which makes the playout's end position say little about the move
    being searched. So: declare only attacks that all the tokens able to join could win, the one worth the
    most VP (R11, R15), join until the force beats the defence, then stop; pass when nothing is winnable.
    The measurements behind this choice (and the variants left out): ``docs/search.md``.
    """
    cdef int p, i, force, nwin, njoin, gain, best = -(1 << 20), pick = 0
    cdef int join[MAX_TOKENS]
    if w.phase == PH_ATTACK:
        p = core_current_player(w, g)
        nwin = 0
        for i in range(1, n):
            gain = _winnable_gain(g, w, p, buf[i] - g.a_attack)
            if gain < 0:
                continue
            if gain > best:
                best = gain
                nwin = 1
                pick = buf[i]
            elif gain == best:
                nwin += 1
                if rng_below(rng, nwin) == 0:
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
            return join[rng_below(rng, njoin)]
        return buf[0]
    # greedy = 0 draws nothing more from rng, so the playouts of before (and ismcts-v1's games) are unchanged
    if (greedy > 0.0 and n > 1 and (w.phase == PH_MOVE or w.phase == PH_MARCH or w.phase == PH_ADVANCE
                                    or w.phase == PH_MILADY)
            and (greedy >= 1.0 or rng_uniform(rng) < greedy)):
        return _greedy_pick(g, w, buf, n, rng)
    return buf[rng_below(rng, n)]


cdef int _greedy_pick(const CoreGame* g, const CoreStateC* w, const int* buf, int n, Rng* rng) noexcept nogil:
    """Among the n legal actions of a Move, March, Advance or Milady, one after which the mover's
    ``position_score`` is highest (ties: uniform): the greedy bot's one-ply rule (:mod:`feudo_ai.greedy`), with
    the scores of :c:func:`_greedy_scores`.

    Why in the playout (``SearchOptions.playout_greedy``): a uniformly random opponent wanders, so the end of a
    truncated playout misses what a purposeful one sets up within the turn (a Baron brought next to a weak
    City, a token walked out of the plague's reach); the evaluation's diagnosis found losses valued as wins that way."""
    cdef double scores[MAX_ACTIONS]
    _greedy_scores(g, w, buf, n, scores)
    return _best_scored(buf, scores, n, rng)


cdef inline int _best_scored(const int* buf, const double* scores, int n, Rng* rng) noexcept nogil:
    """The action of buf with the largest score (ties: uniform, drawn from rng)."""
    cdef double best = -1e300
    cdef int i, ties = 0, pick = buf[0]
    for i in range(n):
        if scores[i] > best:
            best = scores[i]
            ties = 1
            pick = buf[i]
        elif scores[i] == best:
            ties += 1
            if rng_below(rng, ties) == 0:
                pick = buf[i]
    return pick


cdef void _greedy_scores(const CoreGame* g, const CoreStateC* w, const int* legal, int n,
                         double* out) noexcept nogil:
    """The greedy playout's score of each of the n legal actions of a Move, March, Advance (R8-R11) or Milady
    (R13) decision: how much the mover's ``position_score`` gains once the action's token stands on its
    destination (PASS: 0).

    A Move, March or Advance only places one token of the mover, so it is scored as the difference that makes
    (:c:func:`_relocation_delta`, exact integers in centi-VP, from one :c:type:`MoveScorer` of ``w`` shared by
    all the candidates): no copy of the state, no ``core_apply``, no recount of the whole position per candidate
    (that scoring made a greedy playout 9 times as dear as a uniform one, docs/search.md). What the rules do
    after the placement within the same step (the next reveal, the end of the turn and its cures, R18) is left
    out: it is where the game goes next, not the move's merit. A Milady's charm or infection changes more than a
    location, so it is scored on a copy with the action applied (:c:func:`_prior_scores`)."""
    cdef MoveScorer m
    cdef int i, a, moved, dest
    cdef int ph = w.phase
    if ph == PH_MILADY:
        _prior_scores(g, w, legal, n, out)
        return
    _move_scorer_init(&m, g, w, core_current_player(w, g))
    for i in range(n):
        a = legal[i]
        if a == 0:  # PASS places nothing
            out[i] = 0.0
            continue
        if ph == PH_MOVE:
            moved = w.token
            dest = a - g.a_move
        elif ph == PH_MARCH:
            moved = (a - g.a_march) // g.num_territories
            dest = (a - g.a_march) % g.num_territories
        else:  # PH_ADVANCE: into the territory of the won attack being advanced into
            moved = a - g.a_advance
            dest = w.won_terr[w.round]
        out[i] = 0.01 * _relocation_delta(&m, g, w, moved, dest)


cdef void _move_scorer_init(MoveScorer* m, const CoreGame* g, const CoreStateC* w, int p) noexcept nogil:
    """Fill ``m`` for mover p in ``w`` (the enemy forces and the token rows of the City terms are read when first
    needed)."""
    cdef bint desp[MAX_PLAYERS]
    cdef int num_of[MAX_PLAYERS][MAX_TOKENS]
    cdef int q, t, x, i, c
    numbers_and_forces(w, g, desp, num_of, m.force_at)
    plague_danger(w, g, m.danger)
    m.p = p
    m.desp = desp[p]
    m.castle = g.site_territory[w.castle[p]] if w.castle[p] >= 0 else -1
    for x in range(g.num_territories):
        m.enemy[x] = -1
        m.tokens_at[x] = 0
    for t in range(g.num_tokens):
        m.num_of[t] = num_of[p][t]
        m.others_ready[t] = False
        x = w.loc[p][t]
        if x >= 0:
            m.tokens_at[x] |= (<uint32_t>1) << t
    m.totals_ready = False
    m.num_open = 0
    for i in range(g.num_cities):  # (the City terms are read only for p's open Cities, and only once p has a Castle)
        c = g.cities[i]
        if m.castle < 0 or w.owner[c] == p:
            continue
        m.open_cities[m.num_open] = i
        m.num_open += 1
        m.city_value[i] = g.distance[m.castle][c]
        m.city_defence[i] = g.defence_city
        for q in range(g.num_players):
            if q != p:
                m.city_defence[i] += m.force_at[q][c]


cdef inline int _enemy_next_to(MoveScorer* m, const CoreGame* g, int x) noexcept nogil:
    """:c:func:`_largest_enemy_force_next_to` for the mover, kept in m.enemy (a relocation of the mover's token
    changes no enemy force)."""
    if m.enemy[x] < 0:
        m.enemy[x] = _largest_enemy_force_next_to(g, m.force_at, m.p, x)
    return m.enemy[x]


cdef inline int _token_term(MoveScorer* m, const CoreGame* g, const CoreStateC* w, int t, int x, int mine,
                            bint entered) noexcept nogil:
    """Token t's own terms of position_score in centi-VP, standing on x with the mover's force ``mine`` there."""
    cdef int num, v, kind
    if x == LOC_DEAD:
        return 0
    if x == LOC_CASTLE:
        if entered or w.king:
            return 0
        return -15 * (g.desperate_red if t == g.baron and m.desp else g.token_red[t])  # R16
    num = m.num_of[t]
    v = 30 * num
    kind = g.kind[x]
    if ((m.danger[x >> 6] >> (x & 63)) & 1) and kind != K_CITY and kind != K_CENTRAL:
        v -= (60 if w.stricken[m.p][t] else 25) * num  # R18
    if x == g.central_hill or t == g.milady:
        return v
    if _enemy_next_to(m, g, x) > mine + core_defence_bonus(g, x):
        v -= 50 * num  # R11: out-forced by a neighbour
    return v


cdef inline int _city_term(int value, int best, int force, bint taker, int defence) noexcept nogil:
    """One City's terms of position_score in centi-VP (R15, R11): closeness of the nearest City-taker, and an
    attack ready."""
    cdef int v = 0
    if best < 5:
        v = 8 * value * (5 - best)
    if taker and force > defence:
        v += 50 * value
    return v


cdef void _city_totals(MoveScorer* m, const CoreGame* g, const CoreStateC* w) noexcept nogil:
    """Per open City, position_score's aggregates over all the mover's tokens, with the closest City-taker's token
    and the second closest, so that a token's row of :c:func:`_others_row` is one pass over the Cities, not over the
    Cities and the other tokens (a March scores every token on the map, R9)."""
    cdef int i, k, c, t, best, force, b1, b2, who, forces, takers
    cdef bint taker
    cdef int p = m.p
    for k in range(m.num_open):
        i = m.open_cities[k]
        c = g.cities[i]
        b1 = b2 = 99
        who = -1
        forces = takers = 0
        for t in range(g.num_tokens):
            best = 99
            force = 0
            taker = False
            _add_to_city(m, g, c, t, w.loc[p][t], &best, &force, &taker)
            if best < b1:
                b2 = b1
                b1 = best
                who = t
            elif best < b2:
                b2 = best
            forces += force
            takers += taker
        m.best_all[i] = <int8_t>b1
        m.best_token[i] = <int8_t>who
        m.second_all[i] = <int8_t>b2
        m.force_all[i] = <int16_t>forces
        m.takers_all[i] = <int8_t>takers
    m.totals_ready = True


cdef void _others_row(MoveScorer* m, const CoreGame* g, const CoreStateC* w, int moved) noexcept nogil:
    """Per open City, the aggregates of the mover's tokens other than ``moved`` (the totals of
    :c:func:`_city_totals` less its own part: the closest City-taker but it is the second closest when it is the
    closest), and the City terms with ``moved`` where it stands (the same loop as position_score's)."""
    cdef int i, k, c, best, force, before = 0
    cdef bint taker
    cdef int p = m.p
    cdef int x = w.loc[p][moved]
    if not m.totals_ready:
        _city_totals(m, g, w)
    for k in range(m.num_open):
        i = m.open_cities[k]
        c = g.cities[i]
        best = 99
        force = 0
        taker = False
        _add_to_city(m, g, c, moved, x, &best, &force, &taker)
        m.others_best[moved][i] = m.second_all[i] if m.best_token[i] == moved else m.best_all[i]
        m.others_force[moved][i] = <int16_t>(m.force_all[i] - force)
        m.others_taker[moved][i] = m.takers_all[i] - taker > 0
        before += _city_with(m, g, w, i, moved, x)
    m.cities_before[moved] = before
    m.others_ready[moved] = True


cdef inline int _city_with(const MoveScorer* m, const CoreGame* g, const CoreStateC* w, int i, int t,
                           int x) noexcept nogil:
    """City i's terms in centi-VP with the mover's token t on x and the others where they stand."""
    cdef int c = g.cities[i]
    cdef int best = m.others_best[t][i], force = m.others_force[t][i]
    cdef bint taker = m.others_taker[t][i]
    _add_to_city(m, g, c, t, x, &best, &force, &taker)
    return _city_term(m.city_value[i], best, force, taker, m.city_defence[i])


cdef inline void _add_to_city(const MoveScorer* m, const CoreGame* g, int c, int t, int x, int* best, int* force,
                              bint* taker) noexcept nogil:
    """Fold the mover's token t standing on x into City c's aggregates (position_score's loop): the closest
    City-taker in moves (one more from the Castle: entering the map takes a move, R15), the force next to the City
    and whether a City-taker stands next to it (R11). Milady counts for neither."""
    cdef int d
    if t == g.milady:
        return
    if x == LOC_CASTLE:
        if g.takes_cities[t]:
            d = g.distance[m.castle][c] + 1
            if d < best[0]:
                best[0] = d
        return
    if x < 0:
        return
    d = g.distance[x][c]
    if g.takes_cities[t] and d < best[0]:
        best[0] = d
    if d == 1 and x != g.central_hill:
        force[0] += m.num_of[t]
        if g.takes_cities[t]:
            taker[0] = True


cdef inline int _force_change(MoveScorer* m, const CoreGame* g, const CoreStateC* w, uint32_t tokens, int x,
                              int change) noexcept nogil:
    """How much the terms of the mover's ``tokens`` (a bitset, all standing on x) change, in centi-VP, when the
    mover's force on x changes by ``change`` (a token left them or joined them); 0 for no token."""
    cdef int u = 0, d = 0
    cdef int force = m.force_at[m.p][x]
    while tokens:
        if tokens & 1:
            d += _token_term(m, g, w, u, x, force + change, True) - _token_term(m, g, w, u, x, force, True)
        tokens >>= 1
        u += 1
    return d


cdef int _relocation_delta(MoveScorer* m, const CoreGame* g, const CoreStateC* w, int t, int dest) noexcept nogil:
    """How much the mover's position_score changes, in centi-VP, when its token t goes from where it stands to
    territory ``dest`` (and so has entered the map, R16), nothing else changed."""
    cdef int p = m.p
    cdef int src = w.loc[p][t]
    cdef int moved_force = 0 if t == g.milady else m.num_of[t]  # Milady adds nothing to a force (R11)
    cdef int k, after = 0, delta
    cdef uint32_t me = (<uint32_t>1) << t, left = 0, joined = 0
    delta = (_token_term(m, g, w, t, dest, m.force_at[p][dest] + moved_force, True)
             - _token_term(m, g, w, t, src, m.force_at[p][src] if src >= 0 else 0, w.entered[p][t]))
    # the tokens left behind and the ones joined see another force of their own (none there: nothing to add)
    if moved_force > 0:
        if src >= 0:
            left = m.tokens_at[src] & ~me
            delta += _force_change(m, g, w, left, src, -moved_force)
        joined = m.tokens_at[dest] & ~left & ~me
        delta += _force_change(m, g, w, joined, dest, moved_force)
    if m.castle < 0 or t == g.milady:  # Milady counts for no City term (R11, R15)
        return delta
    if not m.others_ready[t]:
        _others_row(m, g, w, t)
    for k in range(m.num_open):
        after += _city_with(m, g, w, m.open_cities[k], t, dest)
    return delta + after - m.cities_before[t]


# =====================================================================================================
# The tree's action prior (SearchOptions.prior_weight > 0): the greedy bot's one-ply idea, in C
# =====================================================================================================

cdef void _prior_scores(const CoreGame* g, const CoreStateC* w, const int* legal, int n,
                        double* out) noexcept nogil:
    """Scores (VP-like units: the search's softmax divides them by its prior_temperature) of the n legal
    actions of the player to move, from the world ``w`` (public facts and the mover's own cards; the
    opponents' selections are the world's draw): the greedy bot's rules of :mod:`feudo_ai.greedy`.

    - Move, March, Advance, Milady (R8-R14): the mover's ``position_score`` after the action (one ply);
    - Attack (R11): half the playout's gain of a winnable attack (what the win is worth in VP), an attack
      that every joining token could not win -2, PASS 0;
    - joining an attack: a join 1 and PASS 0 until the force beats the defence, then PASS 1 and a join 0;
    - any other decision (Castle, order, selection, reveal): 0 for every action, a uniform prior.
    """
    cdef CoreStateC c
    cdef double score[MAX_PLAYERS]
    cdef int i, p, gain, force
    cdef int ph = w.phase
    cdef bint winning
    for i in range(n):
        out[i] = 0.0
    if ph == PH_ATTACK:
        p = core_current_player(w, g)
        for i in range(n):
            if legal[i] != 0:  # PASS is action 0
                gain = _winnable_gain(g, w, p, legal[i] - g.a_attack)
                out[i] = 0.5 * gain if gain >= 0 else -2.0
        return
    if ph == PH_ATTACK_JOIN:
        p = core_current_player(w, g)
        force = 0
        for i in range(w.joiners_len):
            force += _token_number(w, g, p, w.joiners[i])
        winning = force > _defence(w, g, p, w.target)
        for i in range(n):
            out[i] = 1.0 if (legal[i] == 0) == winning else 0.0
        return
    if ph == PH_MOVE or ph == PH_MARCH or ph == PH_ADVANCE or ph == PH_MILADY:
        p = core_current_player(w, g)
        for i in range(n):
            memcpy(&c, w, sizeof(CoreStateC))
            core_apply(&c, g, legal[i])
            _position_scores_of(&c, g, score, p)
            out[i] = score[p]


# =====================================================================================================
# The table (GameC) entries
# =====================================================================================================

cdef int _f_to_move(const void* ctx, const void* s) noexcept nogil:
    cdef const CoreStateC* w = <const CoreStateC*>s
    if w.phase == PH_TERMINAL:
        return TO_MOVE_TERMINAL
    if core_is_chance(w):
        return TO_MOVE_CHANCE
    return core_current_player(w, (<const FeudoCtx*>ctx).g)


cdef int _f_legal(const void* ctx, const void* s, int* out) noexcept nogil:
    return core_legal(<const CoreStateC*>s, (<const FeudoCtx*>ctx).g, out)


cdef void _f_apply(const void* ctx, void* s, int a) noexcept nogil:
    core_apply(<CoreStateC*>s, (<const FeudoCtx*>ctx).g, a)


cdef int _f_sample_chance(const void* ctx, const void* s, Rng* rng) noexcept nogil:
    """A chance outcome drawn by its probability (the cumulative scheme of engine.record.sample_chance)."""
    cdef int actions[MAX_PLAYERS + MAX_PLAGUE_KINDS]
    cdef double probs[MAX_PLAYERS + MAX_PLAGUE_KINDS]
    cdef int n = core_chance(<const CoreStateC*>s, (<const FeudoCtx*>ctx).g, actions, probs)
    cdef double r, acc = 0.0
    cdef int i
    if n <= 0:
        return -1
    r = rng_uniform(rng)
    for i in range(n):
        acc += probs[i]
        if r < acc:
            return actions[i]
    return actions[n - 1]


cdef void _f_returns(const void* ctx, const void* s, double* out) noexcept nogil:
    """A finished game's rewards: its R19 returns, with ``final_margin_weight`` = m > 0 (1 - m) times them plus m
    times a softmax of the final VP at ``margin_temperature`` (R19's optional VP-margin term).

    Why: in 2 players the playouts end the game, so a leaf is worth 1 or 0 and nothing between; where every
    playout of every move ends the same way (a game already decided either way) the moves are all worth the
    same and the search picks among them at random, where a larger lead would survive more of the plague's and
    the cards' luck. m <= 0.5 keeps a sole win above any loss in 2 players. m = 0: the R19 returns, bit for bit
    (the softmax is not computed)."""
    cdef const FeudoCtx* F = <const FeudoCtx*>ctx
    cdef const CoreStateC* w = <const CoreStateC*>s
    cdef double m = F.final_margin_weight
    cdef double vp[MAX_PLAYERS]
    cdef double wide[MAX_PLAYERS]
    cdef double total
    cdef int p, n = F.g.num_players
    core_returns(w, F.g, out)
    if m <= 0.0:
        return
    for p in range(n):
        vp[p] = w.vp[p]
    total = _exp_scores(w, n, vp, F.margin_temperature, wide)
    for p in range(n):
        out[p] = (1.0 - m) * out[p] + m * wide[p] / total


cdef int _f_apply_observed(const void* ctx, void* s, int a, int32_t* labels, int32_t* signals) noexcept nogil:
    """Apply ``a``; another player's SELECT pick is hidden from the others (R6, R22), anything else public;
    Trading Cards turned over by the step (R9, no action of their own) are public signals, in seat order."""
    cdef const CoreGame* g = (<const FeudoCtx*>ctx).g
    cdef CoreStateC* w = <CoreStateC*>s
    cdef int8_t shown[MAX_PLAYERS]
    cdef int q, nsig = 0, label
    cdef int n = g.num_players
    for q in range(n):
        shown[q] = w.trade_revealed[q]
    label = LABEL_HIDDEN if w.phase == PH_SELECT else a
    core_apply(w, g, a)
    for q in range(n):
        labels[q] = label
    for q in range(n):
        if w.trade_revealed[q] and not shown[q]:
            signals[nsig] = LABEL_SIGNAL - (q * (MAX_TRADING + 1) + w.sel_trade[q] + 1)
            nsig += 1
    return nsig


cdef bint _f_simultaneous(const void* ctx, const void* s, int p) noexcept nogil:
    """A selection pick while another active player still selects after p this turn (R6): a simultaneous move
    inside the trees (EXP3). The last to select faces selections already made, hidden but fixed in each world:
    a one-player bandit (UCB1)."""
    cdef const CoreStateC* w = <const CoreStateC*>s
    cdef int q
    if w.phase != PH_SELECT:
        return False
    for q in range((<const FeudoCtx*>ctx).g.num_players):
        if q != p and w.active[q] and not w.sel_done[q]:
            return True
    return False


cdef void _f_hide(const void* ctx, void* s, int seat) noexcept nogil:
    _blank_hidden(<CoreStateC*>s, (<const FeudoCtx*>ctx).g, seat)


cdef void _f_determinize(const void* ctx, void* s, int seat, Rng* rng, int64_t* beliefs) noexcept nogil:
    _determinize(<const FeudoCtx*>ctx, <CoreStateC*>s, seat, rng, beliefs)


cdef void _f_evaluate(const void* ctx, const void* s, double* out) noexcept nogil:
    cdef const FeudoCtx* F = <const FeudoCtx*>ctx
    cdef double score[MAX_PLAYERS]
    cdef double hand[MAX_PLAYERS]
    cdef double w = F.handmade_weight
    cdef int p
    if F.evaluation == EVAL_LEARNED and (<const CoreStateC*>s).phase != PH_TERMINAL:
        _position_scores(<const CoreStateC*>s, F.g, score)  # a feature of the learned model
        value_rewards(F.value, <const CoreStateC*>s, F.g, score, F.temperature, out)
        if w > 0.0:  # the model's rewards and the hand-made ones, mixed (handmade_weight)
            _evaluate_scores(<const CoreStateC*>s, F.g, score, F.temperature, F.margin_weight,
                             F.margin_temperature, hand)
            for p in range(F.g.num_players):
                out[p] = (1.0 - w) * out[p] + w * hand[p]
        return
    if (<const CoreStateC*>s).phase == PH_TERMINAL:
        _f_returns(ctx, s, out)
        return
    _evaluate(<const CoreStateC*>s, F.g, F.temperature, F.margin_weight, F.margin_temperature, out)


cdef int _f_playout_action(const void* ctx, const void* s, const int* legal, int n, Rng* rng) noexcept nogil:
    cdef const FeudoCtx* F = <const FeudoCtx*>ctx
    return _playout_action(F.g, <const CoreStateC*>s, legal, n, F.playout_greedy, rng)


cdef void _f_prior(const void* ctx, const void* s, const int* legal, int n, double* out) noexcept nogil:
    _prior_scores((<const FeudoCtx*>ctx).g, <const CoreStateC*>s, legal, n, out)


cdef bint _f_truncate(const void* ctx, const void* root, const void* s, int horizon) noexcept nogil:
    """Stop once ``horizon`` turns after the root's turn have ended."""
    return (<const CoreStateC*>s).turn > (<const CoreStateC*>root).turn + horizon


# =====================================================================================================
# Python side
# =====================================================================================================

cdef class FeudoGame(SearchGame):
    """Feudo from ``seat``'s root, ready for :class:`feudo_ai._search.SearchWorker`.

    ``state``: a :class:`engine.core.CoreState` (its opponents' unrevealed selections are erased from the copy
    the search keeps: the search never holds them). ``sampler``: "uniform" or "weighted"; ``temperature``: of the
    evaluation's softmax at the start of the game (learned: the divisor of the utilities); ``evaluation``: "handmade" (that softmax) or "learned" (the
    model whose C weights ``value`` is, :func:`feudo_ai.value.c_model`); ``margin_weight`` in [0, 1] and
    ``margin_temperature`` (> 0): the wide softmax mixed into the handmade rewards (:c:func:`_evaluate`);
    ``playout_greedy`` in [0, 1]: the share of the playouts' moves that are the greedy pick; ``handmade_weight`` in
    [0, 1], learned only: the rewards are (1 - w) times the model's plus w times the hand-made ones (same
    ``temperature``, with their margin); ``final_margin_weight`` in [0, 0.5]: the final VP's softmax mixed into a
    finished game's R19 returns (:c:func:`_f_returns`). Options are validated by
    :meth:`feudo_ai.settings.SearchOptions.validate`; this checks only what would be unsafe in C.
    """

    def __init__(self, CoreState state not None, int seat, str sampler="uniform", double temperature=1.0,
                 str evaluation="handmade", ValueWeights value=None, double margin_weight=0.0,
                 double margin_temperature=4.0, double playout_greedy=0.0, double handmade_weight=0.0,
                 double final_margin_weight=0.0):
        cdef const CoreGame* g = state.compiled.g
        if sampler not in SAMPLERS:
            raise ValueError(f"sampler: expected one of {', '.join(SAMPLERS)}, got {sampler!r}")
        if evaluation not in EVALUATIONS:
            raise ValueError(f"evaluation: expected one of {', '.join(EVALUATIONS)}, got {evaluation!r}")
        if evaluation == "learned" and value is None:
            raise ValueError("evaluation: 'learned' needs the model's weights (feudo_ai.value.c_model())")
        _check_evaluation(temperature, margin_weight, margin_temperature)
        if not 0.0 <= playout_greedy <= 1.0:
            raise ValueError(f"playout_greedy: expected a probability in [0, 1], got {playout_greedy!r}")
        if not 0.0 <= handmade_weight <= 1.0:
            raise ValueError(f"handmade_weight: expected a number in [0, 1], got {handmade_weight!r}")
        if not 0.0 <= final_margin_weight <= 0.5:
            raise ValueError(f"final_margin_weight: expected a number in [0, 0.5], got {final_margin_weight!r}")
        if g.num_players > MAX_OBSERVERS:
            raise ValueError(f"players: the search takes at most {MAX_OBSERVERS}, got {g.num_players}")
        self.ctx.g = g
        self.ctx.sampler = SAMPLERS[sampler]
        self.ctx.temperature = temperature
        self.ctx.margin_weight = margin_weight
        self.ctx.margin_temperature = margin_temperature
        self.ctx.playout_greedy = playout_greedy
        self.ctx.evaluation = EVALUATIONS[evaluation]
        self.value_weights = value if evaluation == "learned" else None
        self.ctx.value = &value.c if evaluation == "learned" else NULL
        self.ctx.handmade_weight = handmade_weight if evaluation == "learned" else 0.0
        self.ctx.final_margin_weight = final_margin_weight
        self.owner = state.compiled  # keeps ctx.g alive
        self.game = state.game
        self.c.ctx = &self.ctx
        self.c.num_players = g.num_players
        self.c.num_actions = g.num_actions
        self.c.max_legal = MAX_ACTIONS
        self.c.state_size = sizeof(CoreStateC)
        self.c.num_beliefs = g.num_players * g.num_tokens + g.num_players * g.num_trading
        self.c.to_move = _f_to_move
        self.c.legal = _f_legal
        self.c.apply = _f_apply
        self.c.sample_chance = _f_sample_chance
        self.c.returns = _f_returns
        self.c.apply_observed = _f_apply_observed
        self.c.simultaneous = _f_simultaneous
        self.c.hide = _f_hide
        self.c.determinize = _f_determinize
        self.c.evaluate = _f_evaluate
        self.c.playout_action = _f_playout_action
        self.c.truncate = _f_truncate
        self.c.prior = _f_prior
        self._set_root(&state.s, seat)

    def leaf_rewards(self, CoreState state not None):
        """The rewards the search scores ``state`` with at the end of a playout (this game's evaluation and its
        settings; a terminal state's R19 returns, with their final margin if set), for the tests. ``state`` must be
        of this game's ruleset and map."""
        cdef double out[MAX_PLAYERS]
        if state.compiled.g != self.ctx.g:
            raise ValueError("state: expected a state of this game's ruleset and map")
        _f_evaluate(&self.ctx, &state.s, out)
        return [out[p] for p in range(self.ctx.g.num_players)]

    def beliefs(self, counts, long long worlds):
        """{opponent: {"army": [P(card t selected)], "trade": [P(trading card c selected)]}} from the belief
        counters of the workers (summed) and the number of worlds they drew."""
        cdef const CoreGame* g = self.ctx.g
        n, k, nt = g.num_players, g.num_tokens, g.num_trading
        if len(counts) != self.c.num_beliefs:
            raise ValueError(f"counts: expected {self.c.num_beliefs} counters, got {len(counts)}")
        out = {}
        for q in range(n):
            if q == self.seat:
                continue
            trade = [counts[n * k + q * nt + c] for c in range(nt)]
            tt = sum(trade)
            out[q] = {"army": [counts[q * k + t] / max(1, worlds) for t in range(k)],
                      "trade": [x / tt if tt else 0.0 for x in trade]}
        return out


def _check_evaluation(double temperature, double margin_weight, double margin_temperature):
    """The evaluation's numbers, checked before any C reads them (the search's game and :func:`evaluate_state`).

    :raises ValueError: naming the field that is out of range."""
    if not temperature > 0:
        raise ValueError(f"temperature: expected a positive number, got {temperature!r}")
    if not 0.0 <= margin_weight <= 1.0:
        raise ValueError(f"margin_weight: expected a number in [0, 1], got {margin_weight!r}")
    if not margin_temperature > 0:
        raise ValueError(f"margin_temperature: expected a positive number, got {margin_temperature!r}")


def evaluate_state(CoreState state, double temperature=1.0, double margin_weight=0.0,
                   double margin_temperature=4.0):
    """(position scores, rewards) of the C evaluation, for tests against feudo_ai.evaluate."""
    cdef double score[MAX_PLAYERS]
    cdef double out[MAX_PLAYERS]
    cdef const CoreGame* g = state.compiled.g
    _check_evaluation(temperature, margin_weight, margin_temperature)
    _position_scores(&state.s, g, score)
    _evaluate(&state.s, g, temperature, margin_weight, margin_temperature, out)
    return [score[p] for p in range(g.num_players)], [out[p] for p in range(g.num_players)]


def learned_features(CoreState state):
    """The learned evaluation's features of every seat as the C search computes them (a list of rows), for the
    tests against feudo_ai.value.features and for feudo_ai.train."""
    cdef double score[MAX_PLAYERS]
    cdef double f[MAX_PLAYERS][NUM_FEATURES]
    cdef const CoreGame* g = state.compiled.g
    _position_scores(&state.s, g, score)
    value_features(&state.s, g, score, f)
    return [[f[p][j] for j in range(NUM_FEATURES)] for p in range(g.num_players)]


def learned_rewards(CoreState state, ValueWeights value not None, double temperature=1.0):
    """The learned evaluation's rewards as the C search computes them, for the tests against
    feudo_ai.value.ValueModel.rewards."""
    if not temperature > 0:
        raise ValueError(f"temperature: expected a positive number, got {temperature!r}")
    cdef double score[MAX_PLAYERS]
    cdef double out[MAX_PLAYERS]
    cdef const CoreGame* g = state.compiled.g
    _position_scores(&state.s, g, score)
    value_rewards(&value.c, &state.s, g, score, temperature, out)
    return [out[p] for p in range(g.num_players)]


def prior_scores(CoreState state):
    """{legal action: score} of the tree's action prior for the player to act in ``state`` (as the C search
    computes it from a world), for tests against feudo_ai.greedy."""
    cdef int legal[MAX_ACTIONS]
    cdef double out[MAX_ACTIONS]
    cdef const CoreGame* g = state.compiled.g
    cdef int i, n
    if state.s.phase == PH_TERMINAL or core_is_chance(&state.s):
        raise ValueError("state: no player to act")
    n = core_legal(&state.s, g, legal)
    _prior_scores(g, &state.s, legal, n, out)
    return {legal[i]: out[i] for i in range(n)}


def greedy_scores(CoreState state):
    """{legal action: score} of the greedy playout (:c:func:`_greedy_scores`) for the player to act in a Move,
    March, Advance or Milady decision of ``state``, for tests against feudo_ai.evaluate.

    :raises ValueError: if ``state`` is not such a decision."""
    cdef int legal[MAX_ACTIONS]
    cdef double out[MAX_ACTIONS]
    cdef const CoreGame* g = state.compiled.g
    cdef int i, n
    if state.s.phase not in (PH_MOVE, PH_MARCH, PH_ADVANCE, PH_MILADY):
        raise ValueError("state: not a Move, March, Advance or Milady decision")
    n = core_legal(&state.s, g, legal)
    _greedy_scores(g, &state.s, legal, n, out)
    return {legal[i]: out[i] for i in range(n)}


def playout_action(CoreState state, unsigned long long seed, double greedy=0.0):
    """The action a truncated playout plays at ``state`` (:c:func:`_playout_action`, its random draws seeded by
    ``seed``; ``greedy`` as ``SearchOptions.playout_greedy``), for tests against feudo_ai.evaluate.

    :raises ValueError: if nobody is to act in ``state`` or ``greedy`` is not in [0, 1]."""
    cdef int legal[MAX_ACTIONS]
    cdef const CoreGame* g = state.compiled.g
    cdef Rng rng
    cdef int n
    if state.s.phase == PH_TERMINAL or core_is_chance(&state.s):
        raise ValueError("state: no player to act")
    if not 0.0 <= greedy <= 1.0:
        raise ValueError(f"greedy: expected a probability in [0, 1], got {greedy!r}")
    n = core_legal(&state.s, g, legal)
    rng_seed(&rng, seed)
    return _playout_action(g, &state.s, legal, n, greedy, &rng)


def determinize(CoreState state, int seat, unsigned long long seed, str sampler="uniform"):
    """One world drawn by the search's determinization (a new CoreState), for tests."""
    cdef FeudoCtx F
    cdef Rng rng
    cdef CoreState out = state.clone()
    if sampler not in SAMPLERS:
        raise ValueError(f"sampler: expected one of {', '.join(SAMPLERS)}, got {sampler!r}")
    if not 0 <= seat < state.compiled.g.num_players:
        raise ValueError(f"seat: expected an integer in [0, {state.compiled.g.num_players}), got {seat}")
    F.g = state.compiled.g
    F.sampler = SAMPLERS[sampler]
    F.temperature = 1.0
    F.margin_weight = 0.0
    F.margin_temperature = 4.0
    F.playout_greedy = 0.0
    F.evaluation = EVAL_HANDMADE
    F.value = NULL
    F.handmade_weight = 0.0
    rng_seed(&rng, seed)
    _determinize(&F, &out.s, seat, &rng, NULL)
    return out
