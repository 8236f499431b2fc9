# cython: language_level=3
"""Feudo behind the search's game interface (:mod:`feudo_ai._feudo_game`, interface: ``feudo_ai/_game.pxd``).

Everything the search needs to know about Feudo lives here: who sees which action (another player's secret
selection pick is hidden, R6/R22; a Trading Card turned over without an action is a public signal, R9), which
moves are simultaneous (a selection while another player still selects, R6), the determinization of the
opponents' hidden selections from public facts (R6, R7, R16), the evaluation (feudo_ai.evaluate's
position_score in C plus a softmax), the playout policy (winnable attacks only, R11) and the truncation of
playouts by turns.
"""

from engine._core cimport CoreGame, CoreState
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


cdef class FeudoGame(SearchGame):
    cdef FeudoCtx ctx       # the table's ctx points here (the object does not move while alive)
    cdef readonly object game       # the reference engine.state.Game
    cdef readonly object value_weights  # the feudo_ai._value.ValueWeights ctx.value points into (or None)
