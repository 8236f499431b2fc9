# cython: language_level=3
"""The C interface between the search (:mod:`feudo_ai._search`) and a game: what the search may ask a game.

The search knows nothing of any game's rules, cards or scores. A game (Feudo: :mod:`feudo_ai._feudo_game`; the
toy Goofspiel of the tests: :mod:`feudo_ai._goofspiel`) fills one :c:type:`GameC`, a table of ``noexcept nogil``
C functions plus its constant data (``ctx``), once per search; the search calls them through the pointers with
the GIL released, from several threads at once. In the spirit of OpenSpiel's search, which is handed an
``Evaluator`` and calls the game's ``resample_from_infostate``.

Invariants every game must keep (the search relies on them, nothing checks them in C):

- A state is a flat ``state_size``-byte struct with no pointers, copied with ``memcpy`` (a world, a scratch
  playout state, the root are all such copies).
- Functions never touch ``ctx`` for writing (it is shared by every worker thread) and never allocate.
- Actions and chance outcomes are ints in ``[0, num_actions)``; a decision state has between 1 and
  ``max_legal`` legal actions.
- Edge labels handed back by :c:member:`GameC.apply_observed` are either an action/outcome id in
  ``[0, num_actions)``, :c:macro:`LABEL_HIDDEN`, or a signal label ``<= LABEL_SIGNAL`` (a public fact revealed
  without an action of its own). Labels seen by one observer from one information set must tell apart what
  that observer can tell apart, and nothing more.
- ``hide`` then ``determinize`` give a world that depends only on what ``seat`` may know: ``determinize`` must
  overwrite every hidden field before reading any (honesty).
"""

from libc.stdint cimport int32_t, int64_t, uint64_t


cdef enum:
    TO_MOVE_CHANCE = -1     # to_move() of a chance node
    TO_MOVE_TERMINAL = -2   # to_move() once the game is over
    LABEL_HIDDEN = -1       # an action the observer does not see (another player's secret pick), seen as "?"
    LABEL_SIGNAL = -2       # signal labels are <= LABEL_SIGNAL (public facts without an action of their own)
    MAX_SIGNALS = 16        # signals one apply_observed may report
    MAX_OBSERVERS = 6       # most players of a searched game (Fief 2 has up to 6 families)


# ---------------------------------------------------------------------------------------------------------------
# The search's random numbers: xoshiro256** seeded with splitmix64 (the generator of engine._core, so a game
# may draw from the same stream as the search and the draws stay reproducible from one seed).
# ---------------------------------------------------------------------------------------------------------------

ctypedef struct Rng:
    uint64_t s[4]           # xoshiro256** state; never all zero (seeded by splitmix64)


cdef inline uint64_t _rng_rotl(uint64_t x, int k) noexcept nogil:
    return (x << k) | (x >> (64 - k))


cdef inline void rng_seed(Rng* rng, uint64_t seed) noexcept nogil:
    cdef uint64_t x = seed, z
    cdef int i
    for i in range(4):
        x += <uint64_t>0x9E3779B97F4A7C15ULL
        z = x
        z = (z ^ (z >> 30)) * <uint64_t>0xBF58476D1CE4E5B9ULL
        z = (z ^ (z >> 27)) * <uint64_t>0x94D049BB133111EBULL
        rng.s[i] = z ^ (z >> 31)


cdef inline uint64_t rng_next(Rng* rng) noexcept nogil:
    cdef uint64_t* s = rng.s
    cdef uint64_t result = _rng_rotl(s[1] * 5, 7) * 9
    cdef uint64_t t = s[1] << 17
    s[2] ^= s[0]
    s[3] ^= s[1]
    s[1] ^= s[2]
    s[0] ^= s[3]
    s[2] ^= t
    s[3] = _rng_rotl(s[3], 45)
    return result


cdef inline double rng_uniform(Rng* rng) noexcept nogil:
    """Uniform double in [0, 1) (53 random bits)."""
    return <double>(rng_next(rng) >> 11) * (1.0 / 9007199254740992.0)


cdef inline int rng_below(Rng* rng, int n) noexcept nogil:
    """Uniform int in [0, n), n >= 1 (multiply-shift; the bias is below 2^-32)."""
    return <int>(((rng_next(rng) >> 32) * <uint64_t>n) >> 32)


# ---------------------------------------------------------------------------------------------------------------
# The game table
# ---------------------------------------------------------------------------------------------------------------

ctypedef struct GameC:
    const void* ctx         # the game's constant data for this search (rules, options); read-only, shared
    int num_players         # players, 1..MAX_OBSERVERS
    int num_actions         # action and chance-outcome ids are in [0, num_actions)
    int max_legal           # most legal actions (or chance outcomes) of any state
    size_t state_size       # bytes of one flat state struct
    int num_beliefs         # belief counters determinize() adds to (0: none)

    # --- rules (OpenSpiel-style) -----------------------------------------------------------------------
    # the player to move (>= 0), TO_MOVE_CHANCE or TO_MOVE_TERMINAL
    int (*to_move)(const void* ctx, const void* s) noexcept nogil
    # the legal actions written to out (at most max_legal); returns their count (>= 1 at a decision)
    int (*legal)(const void* ctx, const void* s, int* out) noexcept nogil
    # play action (or chance outcome) a in place
    void (*apply)(const void* ctx, void* s, int a) noexcept nogil
    # a chance outcome drawn with its probability; -1 when the node has no outcome (a broken state)
    int (*sample_chance)(const void* ctx, const void* s, Rng* rng) noexcept nogil
    # the final rewards of a terminal state, one per player, in [0, 1]
    void (*returns)(const void* ctx, const void* s, double* out) noexcept nogil

    # --- information (who sees what) --------------------------------------------------------------------
    # play a in place like apply(), and say how every player sees it: labels[q] is the edge label of observer
    # q's tree (the actor's own label is ignored: its tree follows its choice, the action); signals receives
    # the public signal labels (<= LABEL_SIGNAL, seen alike by every player, in order) revealed by the step;
    # returns the number of signals (at most MAX_SIGNALS)
    int (*apply_observed)(const void* ctx, void* s, int a, int32_t* labels, int32_t* signals) noexcept nogil
    # whether player p, to move in s, chooses simultaneously with a player still to choose after it (then its
    # tree picks with EXP3, a regret minimiser, instead of UCB1)
    bint (*simultaneous)(const void* ctx, const void* s, int p) noexcept nogil
    # erase from s everything seat may not know (done once to the root: the search never holds it)
    void (*hide)(const void* ctx, void* s, int seat) noexcept nogil
    # resample in place every hidden part of s from what seat may know (a world of the information set);
    # beliefs (num_beliefs counters, may be NULL) gets the counts the game keeps about the drawn world
    void (*determinize)(const void* ctx, void* s, int seat, Rng* rng, int64_t* beliefs) noexcept nogil

    # --- evaluation and playouts ------------------------------------------------------------------------
    # rewards of a non-terminal state, one per player, in [0, 1] (an evaluator)
    void (*evaluate)(const void* ctx, const void* s, double* out) noexcept nogil
    # the playout's pick among the n legal actions of s (may use rng)
    int (*playout_action)(const void* ctx, const void* s, const int* legal, int n, Rng* rng) noexcept nogil
    # whether a truncated playout from root stops at s (horizon: the option playout_turns)
    bint (*truncate)(const void* ctx, const void* root, const void* s, int horizon) noexcept nogil

    # --- optional (may be NULL: the game has no opinion) ------------------------------------------------
    # the tree's action prior: a score for each of the n legal actions of s for the player to move (out[i] for
    # legal[i]; larger is better, any scale: the search takes a softmax with its prior_temperature). Called at
    # most once per tree expansion with prior_weight > 0 (never at a simultaneous move); keep it cheap
    void (*prior)(const void* ctx, const void* s, const int* legal, int n, double* out) noexcept nogil


cdef class SearchGame:
    """A game ready to be searched from one seat's root: the table, the root (already hidden from the seat)
    and the Python objects that keep ``ctx`` alive. Subclasses (one per game) fill them in ``__init__``."""
    cdef GameC c
    cdef void* root             # state_size bytes, hide(seat) applied; owned (freed by __dealloc__)
    cdef readonly int seat      # the searching seat
    cdef readonly object owner  # whatever keeps c.ctx's data alive (e.g. the compiled Feudo map)

    cdef int _set_root(self, const void* state, int seat) except -1
