# cython: language_level=3
"""C declarations of the Feudo core: the compiled game (ruleset + map as arrays), the flat state and the
nogil functions a search links against (``from engine._core cimport ...``).

Every field of :c:type:`CoreStateC` mirrors one field of the reference :class:`engine.state.State` (same
meaning, same values; lists become a fixed-size array plus a length), except two occupancy bitsets derived
from ``loc``. Sizes are upper bounds checked in Python when a game is compiled (:class:`CompiledGame`), so
the C code never has to. The state holds no pointer: ``core_clone`` is a memcpy, and a state can be copied
between threads or processes as bytes (with the same compiled game).

Using it from another Cython module::

    from engine._core cimport CoreState, CoreStateC, CoreGame, CoreRng, MAX_ACTIONS, core_legal, core_apply
    cdef CoreState py_state = ...                  # engine.core.new_game(...) or CoreState.from_reference(s)
    cdef const CoreGame* g = py_state.compiled.g   # shared by every state of the game
    cdef CoreStateC work = py_state.s              # a copy (or core_clone(&work, &py_state.s))
    cdef int buf[MAX_ACTIONS]
    with nogil:
        n = core_legal(&work, g, buf)              # ascending; chance outcomes at chance nodes
        core_apply(&work, g, buf[0])               # no validation here: only legal actions
"""

from libc.stdint cimport int8_t, int16_t, int32_t, uint16_t, uint64_t

cdef enum:
    MAX_PLAYERS = 4         # R: 2-4 players (ruleset files allow no more)
    MAX_TOKENS = 16         # ruleset files allow at most 16 army tokens per player
    MAX_TERRITORIES = 128   # territory ids fit in an int8
    MAX_SITES = 128         # castle sites
    MAX_TRADING = 8         # ruleset files allow 1-8 trading cards
    MAX_PLAGUE_KINDS = 32   # kinds of plague card
    MAX_HISTORY = 128       # plague cards drawn in a game (at most one per regular turn, turns <= 100)
    MAX_WON = 64            # won attacks in one turn (each uses >= 1 token that cannot attack again)
    MAX_NEIGHBORS = 16      # neighbours of one territory
    MAX_ACTIONS = 2 + MAX_TOKENS * MAX_TERRITORIES  # longest legal action list (MARCH: PASS + t*T+x)
    MAX_PERMS = 24          # orders of play of 4 players

# Territory kinds (engine.board.Kind)
cdef enum:
    K_HILL = 0
    K_WOOD = 1
    K_MOUNTAIN = 2
    K_VILLAGE = 3
    K_CITY = 4
    K_CENTRAL = 5

# Token kinds (engine.ruleset.TOKEN_KINDS order)
cdef enum:
    TK_BARON = 0
    TK_MILADY = 1
    TK_FIRST_KNIGHT = 2
    TK_KNIGHT = 3
    TK_MERCENARY = 4
    TK_INFANTRYMAN = 5

# Plague card effects (engine.ruleset.PLAGUE_EFFECTS order)
cdef enum:
    PE_MOVE = 0
    PE_BORDER = 1
    PE_CROSS = 2
    PE_LINGERING = 3
    PE_FOG = 4

# Phases (engine.state.Phase)
cdef enum:
    PH_CHANCE_PLACER = 0
    PH_PLACE_CASTLE = 1
    PH_CHANCE_DECIDER = 2
    PH_CHOOSE_ORDER = 3
    PH_SELECT = 4
    PH_CHANCE_PLAGUE = 5
    PH_REVEAL = 6
    PH_MOVE = 7
    PH_MILADY = 8
    PH_MARCH = 9
    PH_ATTACK = 10
    PH_ATTACK_JOIN = 11
    PH_ADVANCE = 12
    PH_TERMINAL = 13

cdef enum:
    LOC_CASTLE = -1         # token in its Castle (engine.state.CASTLE)
    LOC_DEAD = -2           # token eliminated (engine.state.DEAD)
    PLAYER_CHANCE = -1      # current player at a chance node
    PLAYER_TERMINAL = -4    # current player once the game is over


ctypedef struct CoreGame:
    # --- sizes ---------------------------------------------------------------------------------------
    int num_players           # players of this game (2-4)
    int num_tokens            # army tokens per player
    int num_territories       # territories of the map
    int num_sites             # castle sites of the map
    int num_trading           # trading cards per player
    int num_plague_kinds      # kinds of plague card
    # --- action layout (engine.actions.ActionLayout offsets) -----------------------------------------
    int a_place               # PLACE + site
    int a_order               # ORDER + permutation index
    int a_select              # SELECT + token
    int a_trade               # TRADE + trading card
    int a_reveal              # REVEAL + token
    int a_move                # MOVE + territory
    int a_charm               # CHARM + player
    int a_infect              # INFECT
    int a_march               # MARCH + token * T + territory
    int a_attack              # ATTACK + territory
    int a_join                # JOIN + token
    int a_advance             # ADVANCE + token
    int a_chance_player       # CHANCE_PLAYER + player
    int a_plague              # PLAGUE + kind
    int num_actions           # num_distinct_actions
    # --- map -----------------------------------------------------------------------------------------
    int8_t kind[MAX_TERRITORIES]                          # Kind of each territory
    int8_t num_neighbors[MAX_TERRITORIES]                 # neighbour count per territory
    int8_t neighbors[MAX_TERRITORIES][MAX_NEIGHBORS]      # sorted neighbour ids
    uint64_t near_mask[MAX_TERRITORIES][2]                # bitset of the territory and its neighbours
    uint64_t nbr_mask[MAX_TERRITORIES][2]                 # bitset of the neighbours
    uint64_t never_mask[2]                                # Mountains and the Central Hill (entered by no rule
                                                          #   but the Convent's, see convent_mask)
    uint64_t plain_mask[2]                                # Hills and Woods (entered by any token)
    uint64_t village_mask[2]                              # Villages
    uint64_t wood_mask[2]                                 # Woods (hold one token, end a move)
    uint64_t pass_mask[2]                                 # territories a path may continue out of
    uint64_t convent_mask[2]                              # the Convent (entered only by stricken tokens)
    int num_cities                                        # number of Cities
    int16_t cities[MAX_TERRITORIES]                       # City territory ids
    int8_t adjacent[MAX_TERRITORIES][MAX_TERRITORIES]     # 1 if neighbours (adjacency matrix)
    int16_t distance[MAX_TERRITORIES][MAX_TERRITORIES]    # hop counts ignoring types (R15)
    int8_t village_next[MAX_TERRITORIES][4]               # plague lattice step N/E/S/W (-1: not a Village)
    uint64_t border_mask[2]                               # bitset: Border plague card hills (R18)
    uint64_t cross_mask[2]                                # bitset: Cross plague card hills (R18)
    int central_hill          # the map's Central Hill territory, -1 if none
    int central               # the Convent territory (Central Hill if the ruleset has a Convent), else -1
    int plague_start          # Village where the Plague Token starts
    int16_t site_territory[MAX_SITES]                     # territory of each castle site
    int16_t site_board[MAX_SITES]                         # board of each castle site
    # --- ruleset -------------------------------------------------------------------------------------
    int baron                 # token index of the Baron
    int milady                # token index of Milady
    int8_t token_kind[MAX_TOKENS]                         # TK_* of each token
    int8_t token_red[MAX_TOKENS]                          # healthy number
    int8_t token_black[MAX_TOKENS]                        # plague-stricken number
    int8_t enters_towns[MAX_TOKENS]                       # may enter Villages and own Cities (R8)
    int8_t takes_cities[MAX_TOKENS]                       # counts for a City attack (R11)
    uint16_t city_taker_mask                              # bitset of the tokens with takes_cities
    int8_t trading_value[MAX_TRADING]                     # shillings of each trading card (sorted, highest first)
    int8_t plague_effect[MAX_PLAGUE_KINDS]                # PE_* of each plague card kind
    int8_t plague_dir[MAX_PLAGUE_KINDS]                   # 0-3 (N/E/S/W) for PE_MOVE
    int8_t plague_steps[MAX_PLAGUE_KINDS]                 # lattice steps for PE_MOVE
    int8_t plague_count[MAX_PLAGUE_KINDS]                 # copies in the deck
    int turns                 # regular turns (R19, R20)
    int army_cards_selected   # Army Cards selected per turn (R6)
    int desperate_below       # R17 threshold of living non-Milady tokens
    int desperate_red         # R17 Baron numbers
    int desperate_black
    int plague_reshuffle_every  # R20
    int king_threshold        # R16
    int king_help             # R16
    int defence_wood          # R11 defence bonuses
    int defence_village
    int defence_city
    int tiebreak_max_turns    # R19 cap
    int virulent_plague       # R20 option
    int has_plague            # not strategy_only
    # --- orders of play ------------------------------------------------------------------------------
    int8_t perms[MAX_PLAYERS + 1][MAX_PERMS][MAX_PLAYERS]  # perms[k][i] = i-th permutation of 0..k-1 (lexicographic)
    int factorial[MAX_PLAYERS + 1]                         # k!


ctypedef struct CoreStateC:
    int turn                                   # 1-based turn; 0 during Castle placement
    int phase                                  # PH_*
    int tiebreak                               # extra turns played (R19)
    int decider                                # player deciding the order this turn, -1
    int plague_village                         # Village holding the Plague Token, -1
    int plague_card                            # this turn's plague card kind, -1
    int cursor                                 # index into order (or seat during SELECT / setup)
    int round                                  # reveal round, or index into won during ADVANCE
    int token                                  # revealed token (MOVE / MILADY), -1
    int shillings                              # shillings left to march (R9)
    int target                                 # territory of the attack being declared, -1
    int8_t king                                # the King has intervened (R16)
    int8_t order_len                           # length of order
    int8_t placed_len                          # length of placed
    int8_t winners_len                         # length of winners
    int8_t joiners_len                         # length of joiners
    int8_t advanced_len                        # length of advanced
    int8_t won_len                             # number of won attacks this turn
    int8_t history_len                         # length of plague_history
    int32_t vp[MAX_PLAYERS]                    # victory points
    int8_t active[MAX_PLAYERS]                 # takes part in this turn
    int8_t order[MAX_PLAYERS]                  # order of play of this turn (R5)
    int16_t castle[MAX_PLAYERS]                # castle site per player, -1
    int8_t placed[MAX_PLAYERS]                 # players in Castle placement order
    int8_t sel_trade[MAX_PLAYERS]              # selected trading card, -1
    int8_t sel_done[MAX_PLAYERS]               # finished selecting this turn
    int8_t trade_revealed[MAX_PLAYERS]         # trading card revealed this turn
    int8_t charmed[MAX_PLAYERS]                # charmed by a Milady this turn (R13)
    int8_t merc_moved[MAX_PLAYERS]             # Mercenaries moved this turn (R7)
    int8_t winners[MAX_PLAYERS]                # winners once terminal (R19)
    int8_t loc[MAX_PLAYERS][MAX_TOKENS]        # territory, LOC_CASTLE or LOC_DEAD
    int8_t stricken[MAX_PLAYERS][MAX_TOKENS]   # plague-stricken
    int8_t entered[MAX_PLAYERS][MAX_TOKENS]    # has ever entered the map (R16)
    int16_t rest_until[MAX_PLAYERS][MAX_TOKENS]  # cannot move while turn <= this
    int8_t army_held[MAX_PLAYERS][MAX_TOKENS]  # Army Card not discarded
    int8_t sel_army[MAX_PLAYERS][MAX_TOKENS]   # secret selection (R6)
    int8_t revealed[MAX_PLAYERS][MAX_TOKENS]   # Army Card revealed this turn
    int8_t march_over[MAX_PLAYERS][MAX_TOKENS] # entered a Wood while marching (R9)
    int8_t attacked[MAX_PLAYERS][MAX_TOKENS]   # took part in an attack this turn (R11)
    int8_t trade_held[MAX_PLAYERS][MAX_TRADING]  # trading card not discarded
    int8_t joiners[MAX_TOKENS]                 # tokens of the attack being declared, in join order
    int8_t advanced[MAX_TOKENS]                # tokens advanced for the current won attack
    int8_t owner[MAX_TERRITORIES]              # City owner, -1
    int8_t plague_drawn[MAX_PLAGUE_KINDS]      # drawn since the last shuffle, per kind
    int8_t plague_history[MAX_HISTORY]         # every plague card drawn, in order
    int8_t won_player[MAX_WON]                 # won attack: attacker
    int8_t won_terr[MAX_WON]                   # won attack: territory
    int8_t won_baron[MAX_WON]                  # won attack: the Baron took part
    int8_t won_ntok[MAX_WON]                   # won attack: number of attacking tokens
    int8_t won_tokens[MAX_WON][MAX_TOKENS]     # won attack: attacking tokens, in join order
    # derived from loc (kept up to date by every location change; not part of the position's encoding):
    uint64_t pocc[MAX_PLAYERS][2]              # territories holding >= 1 token of each player (bitset)
    uint64_t pblk[MAX_PLAYERS][2]              # territories holding >= 1 non-Milady token of each player


ctypedef struct CoreRng:
    uint64_t s[4]                              # xoshiro256** state (seeded by splitmix64)


# --- RNG ---------------------------------------------------------------------------------------------
cdef void rng_seed(CoreRng* rng, uint64_t seed) noexcept nogil
cdef uint64_t rng_next(CoreRng* rng) noexcept nogil
cdef double rng_uniform(CoreRng* rng) noexcept nogil
cdef int rng_below(CoreRng* rng, int n) noexcept nogil

# --- the stable C API for search -----------------------------------------------------------------------
cdef void core_clone(CoreStateC* dst, const CoreStateC* src) noexcept nogil
cdef int core_current_player(const CoreStateC* s, const CoreGame* g) noexcept nogil
cdef int core_legal(const CoreStateC* s, const CoreGame* g, int* out) noexcept nogil
cdef int core_chance(const CoreStateC* s, const CoreGame* g, int* actions, double* probs) noexcept nogil
cdef void core_apply(CoreStateC* s, const CoreGame* g, int action) noexcept nogil
cdef bint core_is_terminal(const CoreStateC* s) noexcept nogil
cdef void core_returns(const CoreStateC* s, const CoreGame* g, double* out) noexcept nogil
cdef int core_sample_chance(const CoreStateC* s, const CoreGame* g, CoreRng* rng) noexcept nogil
cdef int core_playout(CoreStateC* s, const CoreGame* g, CoreRng* rng) noexcept nogil
cdef bint core_is_chance(const CoreStateC* s) noexcept nogil
cdef bint core_desperate(const CoreStateC* s, const CoreGame* g, int p) noexcept nogil  # R17
cdef int core_shillings_of(const CoreStateC* s, const CoreGame* g, int p, int card) noexcept nogil  # R9, R16
cdef int _playout(CoreStateC* s, const CoreGame* g, CoreRng* rng, int* record, int cap) noexcept nogil


cdef inline int core_defence_bonus(const CoreGame* g, int x) noexcept nogil:
    """The terrain's defence bonus of territory x (R11): what a defender adds in a Wood, a Village or a City.
    Inline here so the rules core and both evaluations of feudo_ai read one definition in their hot loops."""
    cdef int kind = g.kind[x]
    if kind == K_WOOD:
        return g.defence_wood
    if kind == K_VILLAGE:
        return g.defence_village
    if kind == K_CITY:
        return g.defence_city
    return 0


cdef class CompiledGame:
    cdef CoreGame* g                           # malloc'd compiled arrays
    cdef readonly object game                  # the reference engine.state.Game


cdef class CoreState:
    cdef CoreStateC s                          # the whole position
    cdef readonly CompiledGame compiled        # compiled ruleset + map
    cdef readonly object game                  # the reference engine.state.Game
    cdef CoreState _new_like(self)
    cdef bint _is_legal(self, int action)
