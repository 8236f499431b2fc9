# cython: language_level=3
"""C declarations of the fast MO-ISMCTS (:mod:`feudo_ai._search`): the node pool and one worker's search.

One :c:type:`SearchC` is one root-parallel worker: its own node pool (every player's tree lives in it, each
tree with its own root; for PIMC, one tree per sampled world), its own RNG, its own statistics. Nothing in it is a Python object, so a worker runs
with the GIL released; several workers run in Python threads at once.
"""

from libc.stdint cimport int8_t, int32_t, uint64_t

from engine._core cimport CoreGame, CoreStateC, CoreRng, MAX_PLAYERS, MAX_TOKENS, MAX_TRADING


cdef enum:
    PLAYOUT_EVAL = 0        # evaluate the leaf itself
    PLAYOUT_TRUNCATED = 1   # random actions until playout_turns turns after the root's turn, then evaluate
    PLAYOUT_RANDOM = 2      # random actions to the end of the game, R19 returns

cdef enum:
    SAMPLER_UNIFORM = 0     # every consistent selection equally likely
    SAMPLER_WEIGHTED = 1    # opponent model of feudo_ai.sampler.WeightedSampler (same weights)

cdef enum:
    STOP_NONE = 0
    STOP_ITERATIONS = 1
    STOP_TIME = 2
    STOP_CANCELLED = 3

cdef enum:
    LABEL_HIDDEN = -1       # another player's secret selection pick, seen as "?"
    LABEL_TRADE_SIG = -2    # -2 - (q * (MAX_TRADING + 1) + card + 1): q's Trading Card turned over (R9), public
    MAX_PATH = 4096         # tree steps recorded in one iteration (longer tree descents stop there)


ctypedef struct NodeC:
    int32_t child           # first child in the pool, -1
    int32_t sibling         # next sibling, -1
    int32_t action          # label of the edge into this node (an action, LABEL_HIDDEN or a trade signature)
    int32_t visits          # times the edge was selected by its owner's tree
    int32_t avail           # availability count: parent visits while this edge was legal
    int8_t actor            # player who chose among this node's children (-1 chance/unknown)
    int8_t exp3             # children chosen by EXP3 (secret selection node)
    double gain             # EXP3 cumulative importance-weighted reward of the edge
    double reward[MAX_PLAYERS]  # reward sums per player over the visits


ctypedef struct StepC:
    int32_t node            # child chosen (its stats are updated at backpropagation)
    int32_t player          # who chose it
    double prob             # EXP3 probability of the choice, 0 for UCB


ctypedef struct SearchC:
    const CoreGame* g
    CoreStateC root         # the public root: opponents' unrevealed selections blanked
    int seat
    int n                   # players
    int root_turn
    # options
    int playout
    int playout_turns
    double c                # UCB exploration
    double gamma            # EXP3 exploration
    double temperature      # softmax temperature of the evaluation at the start of the game
    long long max_iterations    # <= 0: no limit
    double deadline         # CLOCK_MONOTONIC seconds, <= 0: none
    int* cancel             # shared flag, stop when non-zero (may be NULL)
    int sampler             # SAMPLER_* of the determinization
    # PIMC (perfect != 0): one perfect-information tree per sampled world; iteration i searches world
    # i mod num_worlds, so the budget is split evenly whatever stops the search
    int perfect
    int num_worlds
    CoreStateC* world_states  # the num_worlds determinized worlds (drawn once, at construction)
    int* world_roots        # root node of each world's tree
    # pool
    NodeC* nodes
    int cap
    int used
    int roots[MAX_PLAYERS]
    # scratch
    int* mark               # per action: stamp when legal at the current step
    int* seen               # per action: stamp when a child exists
    int* child_of           # per action: that child (valid when seen == stamp)
    int stamp
    StepC* path
    CoreRng rng
    # statistics
    long long iterations
    int max_depth
    int stop
    double elapsed
    long long worlds
    long long belief_army[MAX_PLAYERS][MAX_TOKENS]
    long long belief_trade[MAX_PLAYERS][MAX_TRADING]


cdef class SearchWorker:
    cdef SearchC* S
    cdef readonly object state     # the CoreState the root was built from (keeps the compiled game alive)
    cdef readonly object cancel_flag


cdef class CancelFlag:
    cdef int* flag
