# cython: language_level=3
"""The learned evaluation in C (:mod:`feudo_ai._value`): the features of :mod:`feudo_ai.value` and its
conditional-logit rewards, computed at the leaves of the search with the GIL released.

Invariant: the features and their order are those of ``feudo_ai.value.FEATURE_NAMES`` (the tests compare both on
random positions); a weights file of another format is refused in Python before it reaches C.
"""

from engine._core cimport CoreGame, CoreStateC, MAX_PLAYERS

cdef enum:
    NUM_FEATURES = 24       # len(feudo_ai.value.FEATURE_NAMES)
    MAX_HIDDEN = 64         # feudo_ai.experimental.value.MAX_HIDDEN: the most hidden units of an "mlp" model


cdef enum:
    VALUE_LINEAR = 0        # utility = w . f
    VALUE_MLP = 1           # utility = w2 . tanh(W1 z + b1) + b2, z = (f - mean) / scale


ctypedef struct ValueWeightsC:
    # One model for every player count n = 2, 3, 4 (index n - 2), all numbers finite (validated in Python, then
    # again by ValueWeights). A seat's utility depends on its own features only (the same function for every seat).
    int kind                # VALUE_*
    # VALUE_LINEAR: w[n - 2] over the raw features (no scaling): the utility is the dot product with the features
    double w[3][NUM_FEATURES]
    # VALUE_MLP: hidden[n - 2] in [1, MAX_HIDDEN] units are used (rows past it are zero and never read);
    # scale > 0 (ValueWeights refuses anything else, so the division is safe)
    int hidden[3]
    double mean[3][NUM_FEATURES]
    double scale[3][NUM_FEATURES]
    double w1[3][MAX_HIDDEN][NUM_FEATURES]
    double b1[3][MAX_HIDDEN]
    double w2[3][MAX_HIDDEN]
    double b2[3]


cdef void value_features(const CoreStateC* s, const CoreGame* g, const double* handmade,
                         double (*out)[NUM_FEATURES]) noexcept nogil
cdef void value_rewards(const ValueWeightsC* vw, const CoreStateC* s, const CoreGame* g, const double* handmade,
                        double temperature, double* out) noexcept nogil


cdef double value_utility(const ValueWeightsC* vw, int n, const double* f) noexcept nogil


cdef class ValueWeights:
    """The C weights of a validated :class:`feudo_ai.experimental.value.ValueModel` (``c_model``)."""
    cdef ValueWeightsC c
