# cython: language_level=3
"""Goofspiel with hidden bids, a small hidden-information card game behind the search's game interface
(``feudo_ai/_game.pxd``). It exists to prove the boundary: the same C MO-ISMCTS (:mod:`feudo_ai._search`) that
plays Feudo searches it, and its tests (``tests/test_search_toy_game.py``) check the search's answers.

Rules (two players, cards 1..n each, a prize deck 1..n): each round a prize card is turned face up (chance,
uniform among the deck); player 0 then player 1 bid one card of their hand in secret (player 1 does not see
player 0's bid: a simultaneous move serialized); both bids are then revealed; the higher bid wins the prize's
value, a tie wins nothing; both bid cards are discarded. After n rounds the higher score wins (reward 1, a tie
0.5 each).

Information: a bid is seen by its bidder and as ``LABEL_HIDDEN`` by the other player; the reveal of both bids
is a public signal. Player 0's bid is simultaneous with player 1's (EXP3 in the trees); player 1 bids last
(UCB1). ``determinize`` draws the opponent's hidden bid uniformly from its hand. Evaluation of a non-terminal
state: 0.5 plus half the score difference over the points in play. Belief counters: ``[q * n + card]``.
"""

import math

from libc.stdint cimport int32_t, int64_t
from libc.string cimport memcpy

from feudo_ai._game cimport (GameC, Rng, SearchGame, LABEL_HIDDEN, LABEL_SIGNAL, TO_MOVE_CHANCE,
                             TO_MOVE_TERMINAL, rng_below)


cdef int _to_move(const void* ctx, const void* s) noexcept nogil:
    cdef const GoofState* g = <const GoofState*>s
    if g.round >= g.n:
        return TO_MOVE_TERMINAL
    if g.prize < 0:
        return TO_MOVE_CHANCE
    return 1 if g.has_bid[0] else 0


cdef int _legal(const void* ctx, const void* s, int* out) noexcept nogil:
    cdef const GoofState* g = <const GoofState*>s
    cdef int p = 1 if g.has_bid[0] else 0, i, k = 0
    for i in range(g.n):
        if g.hand[p][i]:
            out[k] = i
            k += 1
    return k


cdef int _sample_chance(const void* ctx, const void* s, Rng* rng) noexcept nogil:
    cdef const GoofState* g = <const GoofState*>s
    cdef int i, k = 0, pick
    for i in range(g.n):
        k += g.deck[i]
    if k == 0:
        return -1
    pick = rng_below(rng, k)
    for i in range(g.n):
        if g.deck[i]:
            if pick == 0:
                return i
            pick -= 1
    return -1


cdef int _step(GoofState* g, int a) noexcept nogil:
    """Apply ``a``; returns 1 when the step resolved the round (both bids revealed), else 0."""
    cdef int p, b0, b1
    if g.prize < 0:
        g.prize = a
        g.deck[a] = 0
        return 0
    p = 1 if g.has_bid[0] else 0
    g.has_bid[p] = 1
    g.bid[p] = a
    if p == 0:
        return 0
    b0 = g.bid[0]
    b1 = g.bid[1]
    if b0 > b1:
        g.score[0] += g.prize + 1
    elif b1 > b0:
        g.score[1] += g.prize + 1
    g.hand[0][b0] = 0
    g.hand[1][b1] = 0
    g.round += 1
    g.prize = -1
    g.has_bid[0] = g.has_bid[1] = 0
    g.bid[0] = g.bid[1] = -1
    return 1


cdef void _apply(const void* ctx, void* s, int a) noexcept nogil:
    _step(<GoofState*>s, a)


cdef int _apply_observed(const void* ctx, void* s, int a, int32_t* labels, int32_t* signals) noexcept nogil:
    cdef GoofState* g = <GoofState*>s
    cdef int chance = g.prize < 0
    cdef int p = 1 if g.has_bid[0] else 0
    cdef int b0 = g.bid[0], n = g.n
    if chance:
        labels[0] = labels[1] = a  # the prize card is turned face up: public
        _step(g, a)
        return 0
    labels[p] = a
    labels[1 - p] = LABEL_HIDDEN  # a secret bid
    if _step(g, a):
        signals[0] = LABEL_SIGNAL - (b0 * n + a)  # both bids revealed: public
        return 1
    return 0


cdef void _returns(const void* ctx, const void* s, double* out) noexcept nogil:
    cdef const GoofState* g = <const GoofState*>s
    if g.score[0] > g.score[1]:
        out[0], out[1] = 1.0, 0.0
    elif g.score[1] > g.score[0]:
        out[0], out[1] = 0.0, 1.0
    else:
        out[0] = out[1] = 0.5


cdef void _evaluate(const void* ctx, const void* s, double* out) noexcept nogil:
    cdef const GoofState* g = <const GoofState*>s
    cdef double total = g.n * (g.n + 1) / 2.0
    out[0] = 0.5 + 0.5 * (g.score[0] - g.score[1]) / total
    out[1] = 1.0 - out[0]


cdef int _playout_action(const void* ctx, const void* s, const int* legal, int n, Rng* rng) noexcept nogil:
    return legal[rng_below(rng, n)]


cdef void _prior(const void* ctx, const void* s, const int* legal, int n, double* out) noexcept nogil:
    """The fixed preference table given to GoofspielGame(prior=...), a score per bid."""
    cdef int i
    for i in range(n):
        out[i] = (<const GoofCtx*>ctx).prior[legal[i]]


cdef bint _simultaneous(const void* ctx, const void* s, int p) noexcept nogil:
    return not (<const GoofState*>s).has_bid[1 - p]  # the other player still bids this round


cdef void _hide(const void* ctx, void* s, int seat) noexcept nogil:
    (<GoofState*>s).bid[1 - seat] = -1  # the opponent's bid of this round, if any, is not seen


cdef void _determinize(const void* ctx, void* s, int seat, Rng* rng, int64_t* beliefs) noexcept nogil:
    cdef GoofState* g = <GoofState*>s
    cdef int q = 1 - seat, i, k = 0, pick
    g.bid[q] = -1  # overwritten before anything is read (honesty)
    if not g.has_bid[q]:
        return
    for i in range(g.n):
        k += g.hand[q][i]
    pick = rng_below(rng, k)
    for i in range(g.n):
        if g.hand[q][i]:
            if pick == 0:
                g.bid[q] = i
                break
            pick -= 1
    if beliefs != NULL:
        beliefs[q * g.n + g.bid[q]] += 1


cdef bint _truncate(const void* ctx, const void* root, const void* s, int horizon) noexcept nogil:
    return (<const GoofState*>s).round > (<const GoofState*>root).round + horizon


def _cards(name, value, int n):
    if not isinstance(value, (list, tuple, set, frozenset)) or not all(isinstance(v, int) and not isinstance(v, bool)
                                                                      and 1 <= v <= n for v in value):
        raise ValueError(f"{name}: expected card values in [1, {n}], got {value!r}")
    if len(set(value)) != len(value):
        raise ValueError(f"{name}: a card appears twice in {value!r}")
    return set(value)


cdef class GoofspielGame(SearchGame):
    """A Goofspiel position searched from ``seat``.

    :param n: cards per suit (2..13).
    :param hands: the two players' hands (card values; a card bid this round is still in its hand).
    :param deck: the prize cards still face down.
    :param prize: the prize on the table, or None when the next one is to be turned (chance).
    :param bids: this round's bids (a value or None); at most player 0's (it bids first).
    :param scores: points won so far.
    :param prior: None (the game offers no action prior), or a score per bid value 1..n: the preferences the
        search's action prior (``prior_weight > 0``) turns into a distribution (tests set one to steer it).
    :raises ValueError: naming the field of an inconsistent position.
    """

    def __init__(self, int n, hands, deck, prize, bids, scores, int seat, prior=None):
        cdef GoofState* g = &self.start
        cdef int p, i
        if not 2 <= n <= GS_MAX_CARDS:
            raise ValueError(f"n: expected an integer in [2, {GS_MAX_CARDS}], got {n}")
        if not isinstance(hands, (list, tuple)) or len(hands) != 2:
            raise ValueError(f"hands: expected two hands, got {hands!r}")
        h = [_cards(f"hands[{p}]", hands[p], n) for p in range(2)]
        d = _cards("deck", deck, n)
        if len(h[0]) != len(h[1]) or not h[0]:
            raise ValueError(f"hands: expected two non-empty hands of one size, got {hands!r}")
        rnd = n - len(h[0])
        if prize is not None and (not isinstance(prize, int) or not 1 <= prize <= n or prize in d):
            raise ValueError(f"prize: expected a card value in [1, {n}] not in the deck, or None, got {prize!r}")
        if len(d) != n - rnd - (prize is not None):
            raise ValueError(f"deck: expected {n - rnd - (prize is not None)} cards after {rnd} rounds, got {len(d)}")
        if not isinstance(bids, (list, tuple)) or len(bids) != 2:
            raise ValueError(f"bids: expected two entries (a card value or None), got {bids!r}")
        if bids[1] is not None or (bids[0] is not None and prize is None):
            raise ValueError(f"bids: player 0 bids first, once the prize is turned, got {bids!r}")
        if bids[0] is not None and bids[0] not in h[0]:
            raise ValueError(f"bids[0]: expected a card of hands[0], got {bids[0]!r}")
        if (not isinstance(scores, (list, tuple)) or len(scores) != 2
                or not all(isinstance(x, int) and 0 <= x <= n * (n + 1) // 2 for x in scores)):
            raise ValueError(f"scores: expected two point totals, got {scores!r}")
        g.n = n
        g.round = rnd
        g.prize = -1 if prize is None else prize - 1
        for p in range(2):
            g.has_bid[p] = bids[p] is not None
            g.bid[p] = -1 if bids[p] is None else bids[p] - 1
            g.score[p] = scores[p]
            for i in range(GS_MAX_CARDS):
                g.hand[p][i] = (i + 1) in h[p]
        for i in range(GS_MAX_CARDS):
            g.deck[i] = (i + 1) in d
        if prior is not None and (not isinstance(prior, (list, tuple)) or len(prior) != n or not all(
                isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) for x in prior)):
            raise ValueError(f"prior: expected None or {n} finite scores (one per bid value), got {prior!r}")
        self.ctx.n = n
        for i in range(GS_MAX_CARDS):
            self.ctx.prior[i] = prior[i] if prior is not None and i < n else 0.0
        self.c.ctx = &self.ctx
        self.c.num_players = 2
        self.c.num_actions = n
        self.c.max_legal = n
        self.c.state_size = sizeof(GoofState)
        self.c.num_beliefs = 2 * n
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
        if prior is not None:
            self.c.prior = _prior
        else:
            self.c.prior = NULL  # no opinion: the search expands and selects as without a prior
        self._set_root(g, seat)

    def to_move(self) -> int:
        """The player to move in the given position (-1 chance, -2 over)."""
        return _to_move(&self.ctx, &self.start)

    def legal_actions(self) -> list:
        """The bids (card index = value - 1) of the player to move in the given position."""
        cdef int out[GS_MAX_CARDS]
        cdef int k = _legal(&self.ctx, &self.start, out)
        return [out[i] for i in range(k)]

    def root_bids(self) -> tuple:
        """The bids of the root the search holds (the opponent's hidden bid erased: -1)."""
        cdef const GoofState* r = <const GoofState*>self.root
        return (r.bid[0], r.bid[1])
