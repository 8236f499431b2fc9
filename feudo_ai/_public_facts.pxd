# cython: language_level=3
"""Public facts of a Feudo position that both evaluations read (inline C, no module of its own): the hand-made
score (:mod:`feudo_ai._feudo_game`) and the learned features (:mod:`feudo_ai._value`). Public facts only (R22):
tokens' numbers, locations and the plague village, never a selection.
"""

from libc.stdint cimport uint64_t

from engine._core cimport CoreGame, CoreStateC, MAX_TERRITORIES, MAX_TOKENS, core_desperate


cdef inline void numbers_and_forces(const CoreStateC* s, const CoreGame* g, bint* desp,
                                    int (*number)[MAX_TOKENS], int (*force_at)[MAX_TERRITORIES]) noexcept nogil:
    """For every player p: desp[p] (R17, the desperate Baron), number[p][t] (each token's current number, R1:
    black side when stricken, R18) and force_at[p][x] (the sum of p's numbers in territory x; Milady adds
    nothing, R11)."""
    cdef int p, t, x
    for p in range(g.num_players):
        desp[p] = core_desperate(s, g, p)
        for t in range(g.num_tokens):
            if t == g.baron and desp[p]:
                number[p][t] = g.desperate_black if s.stricken[p][t] else g.desperate_red
            else:
                number[p][t] = g.token_black[t] if s.stricken[p][t] else g.token_red[t]
        for x in range(g.num_territories):
            force_at[p][x] = 0
        for t in range(g.num_tokens):
            x = s.loc[p][t]
            if x >= 0 and t != g.milady:
                force_at[p][x] += number[p][t]


cdef inline void plague_danger(const CoreStateC* s, const CoreGame* g, uint64_t* danger) noexcept nogil:
    """danger (a 2-word territory bitset): the territories a plague card could hit next (feudo_ai.evaluate.
    _danger_set): the plague village, the villages one and two lattice steps away, and their neighbours (R18).
    Empty without plague or in a tie-break."""
    cdef int v = s.plague_village, d, a
    danger[0] = danger[1] = 0
    if not g.has_plague or s.tiebreak != 0 or v < 0:
        return
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
