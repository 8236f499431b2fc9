# cython: language_level=3
"""Fief 2 behind the search's game interface (:mod:`feudo_ai._fief2_game`, interface: ``feudo_ai/_game.pxd``)."""

from libc.stdint cimport uint64_t

from fief2._core cimport F2Game, F2_MAX_VILLAGES
from feudo_ai._game cimport SearchGame


ctypedef struct Fief2Ctx:
    # Invariant: g points to the F2Game of the CompiledFief2 held by the Fief2Game (kept alive by it); read-only.
    const F2Game* g
    double temperature          # softmax temperature of the evaluation, in points of power (> 0)
    uint64_t near[F2_MAX_VILLAGES]  # villages one step from v (bitset; V <= 64)
    uint64_t far[F2_MAX_VILLAGES]   # villages exactly two steps from v (F25: a token moves at most two a turn)


cdef class Fief2Game(SearchGame):
    cdef Fief2Ctx ctx           # the table's ctx points here (the object does not move while alive)
