# cython: language_level=3
"""The learned evaluation in C (:mod:`feudo_ai._value`): the features of :mod:`feudo_ai.value` and its
conditional-logit rewards, computed at the leaves of the search with the GIL released.

Invariant: the features and their order are those of ``feudo_ai.value.FEATURE_NAMES`` (the tests compare both on
random positions); a weights file of another format is refused in Python before it reaches C.
"""

from engine._core cimport CoreGame, CoreStateC, MAX_PLAYERS

cdef enum:
    NUM_FEATURES = 24       # len(feudo_ai.value.FEATURE_NAMES)


ctypedef struct ValueWeightsC:
    # w[n - 2] is the weight vector of an n-player game (n = 2, 3, 4), over the raw features (no scaling): a
    # seat's utility is the dot product with its features; finite numbers (validated in Python)
    double w[3][NUM_FEATURES]


cdef void value_features(const CoreStateC* s, const CoreGame* g, const double* handmade,
                         double (*out)[NUM_FEATURES]) noexcept nogil
cdef void value_rewards(const ValueWeightsC* vw, const CoreStateC* s, const CoreGame* g, const double* handmade,
                        double temperature, double* out) noexcept nogil


cdef class ValueWeights:
    """The C weights of a validated :class:`feudo_ai.value.ValueModel` (``feudo_ai.value.c_model``)."""
    cdef ValueWeightsC c
