# cython: language_level=3
"""C declarations of the game-agnostic MO-ISMCTS (:mod:`feudo_ai._search`): the node pool and one worker.

One :c:type:`SearchC` is one root-parallel worker: its own node pool (every player's tree lives in it, each
tree with its own root; for PIMC, one tree per sampled world), its own RNG, its own scratch states and
statistics. Nothing in it is a Python object, so a worker runs with the GIL released; several workers run in
Python threads at once. The game is reached only through its :c:type:`feudo_ai._game.GameC` table.
"""

from libc.stdint cimport int8_t, int32_t, int64_t, uint16_t, uint64_t

from feudo_ai._game cimport GameC, Rng, SearchGame, MAX_OBSERVERS


cdef enum:
    PLAYOUT_EVAL = 0        # evaluate the leaf itself
    PLAYOUT_TRUNCATED = 1   # playout actions until the game's truncate() says stop, then evaluate
    PLAYOUT_RANDOM = 2      # playout actions to the end of the game, the game's returns

cdef enum:
    STOP_NONE = 0
    STOP_ITERATIONS = 1
    STOP_TIME = 2
    STOP_CANCELLED = 3
    STOP_DECIDED = 4        # early_stop: the seat's most visited root action can no longer be overtaken

cdef enum:
    MAX_PATH = 4096         # tree steps recorded in one iteration (longer tree descents stop there)

cdef enum:
    PRIOR_ONE = 65535       # NodeC.prior of an edge with prior probability 1
    NODE_REWARDS = 4        # players whose reward sums a node holds itself (NodeC.reward)


ctypedef struct NodeC:
    int32_t child           # first child in the pool, -1
    int32_t sibling         # next sibling, -1
    int32_t action          # label of the edge into this node (an action, LABEL_HIDDEN or a signal)
    int32_t visits          # times the edge was selected by its owner's tree
    int32_t avail           # availability count: parent visits while this edge was legal
    int8_t actor            # player who chose among this node's children (-1 chance/unknown)
    int8_t exp3             # children chosen by EXP3 (a simultaneous move)
    uint16_t prior          # the edge's action prior (prior_weight > 0) in units of 1/PRIOR_ONE; it fills the
                            # two bytes of padding before gain, so a node stays 64 bytes
    double gain             # EXP3 cumulative importance-weighted reward of the edge
    # reward sums over the visits of players 0..NODE_REWARDS-1; in games of more players the others' sums are in
    # SearchC.extra_reward (so games of up to 4 players, Feudo's, keep one 64-byte node per cache line)
    double reward[NODE_REWARDS]


ctypedef struct StepC:
    int32_t node            # child chosen (its stats are updated at backpropagation)
    int32_t player          # who chose it
    double prob             # EXP3 probability of the choice, 0 for UCB


ctypedef struct SearchC:
    GameC game              # the game's table (a copy; game.ctx is shared read-only with the other workers)
    void* root              # the seat's root, hidden parts erased (game.state_size bytes, owned)
    void* world             # scratch state of one iteration (owned)
    int seat
    int n                   # players (<= MAX_OBSERVERS)
    # options
    int playout
    int playout_turns       # the horizon handed to game.truncate
    double c                # UCB exploration
    double exp3_gamma       # EXP3 exploration
    double prior_weight     # progressive bias of UCB1: + prior_weight * prior / (1 + visits); 0: no prior
    double prior_temperature    # softmax temperature turning the game's prior scores into a distribution
    long long max_iterations    # <= 0: no limit
    double deadline         # CLOCK_MONOTONIC seconds, <= 0: none
    int* cancel             # shared flag, stop when non-zero (may be NULL)
    # stop once the seat's most visited root action leads the next by more visits than the iterations left (the
    # iteration limit's exactly, the deadline's estimated from the rate so far): the answer, the most visited
    # action, can no longer change (exactly so for an iteration limit on one worker), the rest of the budget is
    # saved. MO-ISMCTS only (0 for PIMC)
    int early_stop
    # PIMC (pimc != 0): one perfect-information tree per sampled world; iteration i searches world
    # i mod num_worlds, so the budget is split evenly whatever stops the search
    int pimc
    int num_worlds
    char* world_states      # the num_worlds determinized worlds (drawn once, at construction)
    int* world_roots        # root node of each world's tree
    # pool
    NodeC* nodes
    int cap
    int used
    # n > NODE_REWARDS only (else NULL, extra 0): the reward sums of players NODE_REWARDS..n-1, extra = n -
    # NODE_REWARDS doubles per node, node i's at extra_reward[i * extra]; moved with their node when recycled
    double* extra_reward
    int extra
    int roots[MAX_OBSERVERS]
    int recycle             # when the pool fills, free its least-travelled subtrees (_recycle) and go on growing
    int full                # an expansion found the pool full since the last recycling
    int filled              # the pool filled at least once (statistics: pool_full)
    long long recycled      # recyclings so far
    long long freed         # nodes freed by them
    long long reused        # nodes of an earlier search's tree this search started with (tree reuse)
    # scratch (max_legal + 1 entries, or num_actions + 1 for the per-action arrays)
    int* legal              # legal actions of the current step
    int* untried            # untried legal actions (UCB expansion)
    double* weight          # EXP3 weights
    double* prior           # the game's prior scores, then their softmax (prior_weight > 0)
    int* mark               # per action: stamp when legal at the current step
    int* seen               # per action: stamp when a child exists
    int* child_of           # per action: that child (valid when seen == stamp)
    int stamp
    StepC* path
    Rng rng
    # statistics
    long long iterations
    int max_depth
    int stop
    double elapsed
    long long worlds
    int64_t* beliefs        # game.num_beliefs counters, added to by game.determinize


cdef class SearchWorker:
    cdef SearchC* S
    cdef readonly SearchGame game  # the searched game (keeps the game's ctx alive)
    cdef readonly object cancel_flag


cdef class CancelFlag:
    cdef int* flag


cdef class SavedTree:
    cdef NodeC* nodes       # one tree, its root at index 0, every child after its parent
    cdef int count
    cdef readonly int player   # whose tree it is
    cdef readonly int players  # players of its game
