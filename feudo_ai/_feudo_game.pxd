# cython: language_level=3
"""Feudo behind the search's game interface (:mod:`feudo_ai._feudo_game`, interface: ``feudo_ai/_game.pxd``).

Everything the search needs to know about Feudo lives here: who sees which action (another player's secret
selection pick is hidden, R6/R22; a Trading Card turned over without an action is a public signal, R9), which
moves are simultaneous (a selection while another player still selects, R6), the determinization of the
opponents' hidden selections from public facts (R6, R7, R16), the evaluation (feudo_ai.evaluate's
position_score in C plus a softmax), the playout policy (winnable attacks only, R11) and the truncation of
playouts by turns.
"""

from libc.stdint cimport int8_t, int16_t, uint32_t, uint64_t

from engine._core cimport CoreGame, CoreState, MAX_PLAYERS, MAX_TERRITORIES, MAX_TOKENS
from feudo_ai._game cimport SearchGame
from feudo_ai._value cimport ValueWeightsC


cdef enum:
    SAMPLER_UNIFORM = 0     # every consistent selection equally likely
    SAMPLER_WEIGHTED = 1    # opponent model of feudo_ai.sampler.WeightedSampler (same weights)


cdef enum:
    EVAL_HANDMADE = 0       # softmax of feudo_ai.evaluate.position_score (with temperature)
    EVAL_LEARNED = 1        # feudo_ai.value's model (feudo_ai._value), weights in FeudoCtx.value


ctypedef struct FeudoCtx:
    # Invariant: g points to the CoreGame of the CompiledGame held by the FeudoGame (kept alive by it); read-only.
    const CoreGame* g       # the compiled ruleset and map
    int sampler             # SAMPLER_*: how determinize draws the opponents' hidden selections
    double temperature      # softmax temperature of the evaluation at the start of the game (> 0)
    double margin_weight    # EVAL_HANDMADE: weight in [0, 1] of the wide softmax mixed in (0: none, the v1 rewards)
    double margin_temperature   # its constant temperature in VP (> 0): a lead of a few VP is not yet a sure win
    double playout_greedy   # probability in [0, 1] that a playout's Move/March/Advance/Milady is the greedy pick
    int evaluation          # EVAL_*: what evaluates the end of a truncated playout
    const ValueWeightsC* value  # EVAL_LEARNED: the weights (kept alive by FeudoGame.value_weights); else NULL
    double handmade_weight  # EVAL_LEARNED: weight in [0, 1] of the hand-made rewards (with their margin) mixed in
    double final_margin_weight  # weight in [0, 0.5] of the softmax of the final VP (margin_temperature) mixed into
                                # a finished game's R19 returns (0: the R19 returns alone)


ctypedef struct MoveScorer:
    # What the greedy playout reads to score one mover's candidate relocations (``_move_scorer_init``), in
    # centi-VP: every term of feudo_ai.evaluate.position_score is a whole number of hundredths, so the scores are
    # exact integers and ties are true ties. Invariant: describes one state ``w`` and one mover ``p``; a
    # candidate is scored as the difference it makes (``_relocation_delta``), w itself is never changed.
    int p                                       # the mover
    int castle                                  # territory of p's Castle (R21), -1 before it is placed
    bint desp                                   # R17: p's Baron is desperate (his numbers change)
    uint64_t danger[2]                          # bitset: territories the next plague card could hit (R18)
    int num_of[MAX_TOKENS]                      # p's tokens' numbers now (R1: black side when stricken, R18)
    int force_at[MAX_PLAYERS][MAX_TERRITORIES]  # each player's force per territory (Milady adds nothing, R11)
    int enemy[MAX_TERRITORIES]                  # the largest enemy force next to the territory; -1: not yet read
    uint32_t tokens_at[MAX_TERRITORIES]         # bitset of p's tokens standing on the territory (bit t: token t)
    int num_open                                # how many Cities p does not own (0 before p's Castle is placed)
    int open_cities[MAX_TERRITORIES]            # their City indices, ascending: only they have City terms (R15)
    # per open City's index (the others are not filled):
    int city_value[MAX_TERRITORIES]             # its distance from p's Castle, its worth (R15)
    int city_defence[MAX_TERRITORIES]           # City defence plus the enemy force in it (R11)
    # Per open City's index, over all of p's tokens (read when first needed, ``_city_totals``): so a token's row
    # below is these less its own part, not a pass over the other tokens
    bint totals_ready                           # the five arrays below are filled
    int8_t best_all[MAX_TERRITORIES]            # closest City-taker in moves (99: none)
    int8_t best_token[MAX_TERRITORIES]          # which token that is (the first of equals; -1: none)
    int8_t second_all[MAX_TERRITORIES]          # the closest but best_token (99: none; equals best_all on a tie)
    int16_t force_all[MAX_TERRITORIES]          # p's force next to it
    int8_t takers_all[MAX_TERRITORIES]          # how many City-takers of p stand next to it
    bint others_ready[MAX_TOKENS]               # the three arrays below hold token t's row (its open Cities)
    int8_t others_best[MAX_TOKENS][MAX_TERRITORIES]    # per t, City: closest City-taker but t (moves, 99: none)
    int16_t others_force[MAX_TOKENS][MAX_TERRITORIES]  # per t, City: p's force next to it but t's
    int8_t others_taker[MAX_TOKENS][MAX_TERRITORIES]   # per t, City: a City-taker but t stands next to it
    int cities_before[MAX_TOKENS]               # per t: the City terms with t where it stands now


cdef class FeudoGame(SearchGame):
    cdef FeudoCtx ctx       # the table's ctx points here (the object does not move while alive)
    cdef readonly object game       # the reference engine.state.Game
    cdef readonly object value_weights  # the feudo_ai._value.ValueWeights ctx.value points into (or None)
