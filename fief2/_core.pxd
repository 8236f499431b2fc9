# cython: language_level=3
"""C declarations of the Fief 2 core: the compiled game (ruleset + map + players as arrays), the flat state and the
``noexcept nogil`` functions a search links against (``from fief2._core cimport ...``).

The compiled mirror of the reference rules in :mod:`fief2.state` (rulings F1-F53), as :mod:`engine._core` is
Feudo's. Every field of :c:type:`F2State` mirrors one field of the reference :class:`fief2.state.State` (same
meaning, same values; a list becomes a fixed-size array plus a length), except three lists the rules only ever
test for membership, kept as sets (bitsets): ``discards_seen``, ``seen_cards`` (F46, F53.11: what a seat saw;
read by the observation, never by a rule) and ``refused`` (F53.4). The state holds no pointer: a copy is a
``memcpy`` of ``sizeof(F2State)`` bytes, and a state can be copied between threads or processes as bytes (with
the same compiled game). Sizes are upper bounds of the data files (fief2/data.py: 64 villages, 32 persons, 128
cards, 6 fiefs, 4 bishoprics, 10 cards a hand) or of the rules (below); :class:`CompiledFief2` checks the few
that the data files do not bound, so the C code never has to.

Using it from another Cython module::

    from fief2._core cimport F2Game, F2State, F2_MAX_LEGAL, f2_legal, f2_apply, f2_to_move
    cdef Fief2Core py = Fief2Core.from_state(reference_state)   # or fief2._core.new_core(players=4)
    cdef const F2Game* g = py.compiled.g                       # shared by every state of the game
    cdef F2State work = py.s                                   # a copy (one memcpy)
    cdef int buf[F2_MAX_LEGAL]
    with nogil:
        n = f2_legal(g, &work, buf)        # ascending; chance outcomes (deal / die) at chance nodes
        f2_apply(g, &work, buf[0])          # no validation here: only legal actions
"""

from libc.stdint cimport int8_t, int16_t, int32_t, int64_t, uint8_t, uint64_t

from feudo_ai._game cimport Rng

cdef enum:
    F2_MAX_FAMILIES = 6     # F1: 3-6 players; action ids are laid out for 6 whatever the table (fief2.actions)
    F2_MOB = 6              # the mob's "family" code in assaults and battle frames (fief2.state.MOB)
    F2_MAX_VILLAGES = 64    # fief2.data.MAX_VILLAGES
    F2_MAX_PERSONS = 32     # fief2.data.MAX_PERSONS (person masks fit in an int64 frame field)
    F2_MAX_CARDS = 128      # fief2.data.MAX_CARDS (card ids fit in an int8; card sets in two uint64)
    F2_MAX_FIEFS = 6        # F3: six fief titles (map files have exactly 6 fiefs)
    F2_MAX_BISHOPRICS = 4   # map files have exactly 4 bishoprics
    F2_MAX_HAND = 10        # ruleset files allow hand_size <= 10; nothing fills a hand beyond it (F10, F11)
    F2_MAX_NEIGHBORS = 16   # roads out of one village (checked when a game is compiled)
    F2_MAX_ASSAULTS = F2_MAX_FAMILIES * F2_MAX_VILLAGES + 1  # one per (family, village) a turn, joined if
                                                          #   declared again (F26.3); the mob moves once (F18.2)
    F2_MAX_STACK = 24       # nested decisions (deepest seen: movement > evacuation > group > consent, or a
                            #   battle with a loss choice per side and titles; overflow sets F2State.error)
    F2_FRAME = 16           # ints of the widest frame (FR_BATTLE)
    F2_MAX_DICE = F2_MAX_PERSONS  # dice of one roll: plague rolls one per person of the fief (F14), battles <= 6
    F2_MAX_AIMS = 4         # aimed dice of one side (<= 3 dice, F28, F32)
    F2_NUM_KINDS = 30       # action kinds of fief2.actions.Layout
    F2_MAX_LEGAL = 2048     # longest legal action list (negotiation: marriages up to 16 x 32, F44; the
                            #   compiled game checks the amounts' range, F42, fits)

# reference codes (fief2.state)
cdef enum:
    F2_CHANCE = -1          # current player at a chance node (fief2.state.CHANCE)
    F2_TERMINAL = -4        # current player once the game is over (fief2.state.TERMINAL)
    F2_INF_TURN = 1000000   # fief2.state.INF_TURN

# phases (F8; fief2.state SETUP..OVER)
cdef enum:
    PH_SETUP = 0
    PH_CARDS = 1
    PH_INCOME = 2
    PH_PURCHASES = 3
    PH_MOVEMENT = 4
    PH_COMBAT = 5
    PH_NEGOTIATION = 6
    PH_END_TURN = 7
    PH_OVER = 8

# frame kinds (fief2.state FR_*; the field layout of each is the reference's, documented where it is pushed)
cdef enum:
    FR_SETUP = 0
    FR_DEAL = 1
    FR_CARDTURN = 2
    FR_TARGET = 3
    FR_PLACE = 4
    FR_BIRTH = 5
    FR_JUSTICE = 6
    FR_DICE = 7
    FR_ANSWER = 8
    FR_PURCHASE = 9
    FR_MOVE = 10
    FR_GROUP = 11
    FR_CONSENT = 12
    FR_EVAC = 13
    FR_BATTLE = 14
    FR_LOSSPICK = 15
    FR_TITLE = 16
    FR_HEIR = 17
    FR_CITYSOLDIER = 18
    FR_NEGO = 19
    FR_AMOUNT = 20
    FR_TRANSFER = 21
    FR_ELECT = 22
    FR_RETREAT = 23

# action kinds (fief2.actions.Layout order); F2Game.base[kind] is the first action id of a kind
cdef enum:
    AK_WORD = 0
    AK_DIE = 1
    AK_DEAL = 2
    AK_PLAY = 3
    AK_DISCARD = 4
    AK_GIVE = 5
    AK_ASK = 6
    AK_HAND_OVER = 7
    AK_PERSON = 8
    AK_VILLAGE = 9
    AK_FIEF = 10
    AK_FAMILY = 11
    AK_AMOUNT = 12
    AK_SOLDIERS = 13
    AK_BUY = 14
    AK_MARRY = 15
    AK_ALLY = 16
    AK_UNALLY = 17
    AK_GIFT = 18
    AK_RELEASE = 19
    AK_RANSOM = 20
    AK_TRANSFER = 21
    AK_INSIDE = 22
    AK_GROUP = 23
    AK_MOB = 24
    AK_AIM = 25
    AK_VOTE = 26
    AK_CANDIDATE = 27
    AK_CALM = 28
    AK_PRISONER = 29

# words (fief2.actions.WORDS order)
cdef enum:
    W_END = 0
    W_ACCEPT = 1
    W_REFUSE = 2
    W_ASK_CONSENT = 3
    W_ASSAULT = 4
    W_TURN_BACK = 5
    W_JOIN_ASSAULT = 6
    W_FIGHT_ON = 7
    W_RETREAT = 8
    W_SURRENDER = 9
    W_JOIN_DEFENCE = 10
    W_STAY_OUT = 11
    W_NO_ATTEMPT = 12
    W_ABSTAIN = 13
    W_AIM_DONE = 14
    W_PERSONS_DONE = 15
    W_PRISONERS_DONE = 16
    W_MAKE_PRINCE = 17
    W_BUY_SOLDIER = 18
    W_MOB_STOPS = 19
    W_STOP = 20

# blue card kinds (fief2.data.CARD_KINDS order, F2)
cdef enum:
    CK_LORD = 0
    CK_LADY = 1
    CK_DARC = 2
    CK_BISHOP = 3
    CK_TITHE = 4
    CK_TAX = 5
    CK_ESCAPE = 6
    CK_PLAGUE = 7
    CK_ASSASSIN = 8
    CK_JUSTICE = 9
    CK_BAD_WEATHER = 10
    CK_GOOD_WEATHER = 11
    CK_FAMINE = 12
    CK_GOOD_HARVEST = 13
    CK_PEASANT_REVOLT = 14

# purchase items (fief2.actions.BUY_ITEMS order, F22-F23)
cdef enum:
    BUY_SOLDIER = 0
    BUY_KINGS_GUARD = 1
    BUY_QUEENS_GUARD = 2
    BUY_PEASANT = 3
    BUY_WINE_PRESS = 4
    BUY_MILL = 5
    BUY_CASTLE = 6
    BUY_CARDINAL = 7
    BUY_FIEF_TITLE = 8


ctypedef struct F2Game:
    # --- sizes ---------------------------------------------------------------------------------------------
    int n                     # families at the table, 3..6 (F1)
    int V                     # villages of the map, <= F2_MAX_VILLAGES
    int P                     # persons of the ruleset, <= F2_MAX_PERSONS
    int C                     # blue cards, <= F2_MAX_CARDS
    int NF                    # fiefs (6)
    int NB                    # bishoprics (4)
    # --- action layout (fief2.actions.Layout) ----------------------------------------------------------------
    int base[F2_NUM_KINDS]    # first action id of each kind (AK_*)
    int size[F2_NUM_KINDS]    # number of ids of each kind
    int num_actions           # Layout.size
    int K                     # soldiers_per_family + 1 (the "soldiers" kind: used * K + count)
    int calm_steps            # calm_max_steps + 1 (the "calm" kind: bishop * calm_steps + k)
    # --- map ---------------------------------------------------------------------------------------------
    int8_t num_adj[F2_MAX_VILLAGES]                        # roads out of each village
    int8_t adj[F2_MAX_VILLAGES][F2_MAX_NEIGHBORS]           # neighbours, ascending (Map.adj)
    int8_t village_fief[F2_MAX_VILLAGES]                   # fief of each village (F6)
    int8_t village_bishopric[F2_MAX_VILLAGES]              # bishopric of each village
    int8_t fief_nv[F2_MAX_FIEFS]                           # villages of each fief (3, 4 or 5)
    int8_t fief_villages[F2_MAX_FIEFS][5]                  # ascending
    int32_t fief_rank[F2_MAX_FIEFS]                        # 30 baron / 40 count / 50 duke (RANK_VALUE)
    int32_t fief_price[F2_MAX_FIEFS]                       # price of the title (F23)
    int32_t fief_points[F2_MAX_FIEFS]                      # power points of the title (F50)
    # --- ruleset -------------------------------------------------------------------------------------------
    int8_t person_male[F2_MAX_PERSONS]                     # 1 for a man
    int8_t person_card[F2_MAX_PERSONS]                     # the Lord/Lady card of each person
    int8_t card_kind[F2_MAX_CARDS]                         # CK_* of each card
    int8_t card_person[F2_MAX_CARDS]                       # person of a Lord/Lady card, else -1
    int8_t card_bishopric[F2_MAX_CARDS]                    # bishopric of a Bishop card, else -1
    int darc_card             # the d'Arc card, -1 if the ruleset has none
    int justice_card          # the Justice card, -1 if none
    int8_t bishop_card[F2_MAX_BISHOPRICS]                  # the Bishop card of each bishopric, -1 if none
    int hand_size, card_actions, max_persons
    int start_cash, start_soldiers, start_castles
    int lim_soldiers, lim_kg, lim_qg, lim_peasants, lim_castles, lim_cities, lim_mills, lim_presses, lim_improvements
    int pr_soldier, pr_peasant, pr_press, pr_mill, pr_castle, pr_cardinal
    int inc_castle, inc_city, inc_press, inc_mill, inc_tax, inc_king, inc_queen
    int pt_king, pt_queen, pt_prince, pt_bishop, pt_cardinal, florins_per_point
    int th[3]                 # dice thresholds (F28)
    int pips_open, pips_castle, pips_city
    int darc_force, aimed_kill_face, allowance, darc_allowance
    int revolt_dice, calm_success, calm_step_price, calm_max_steps, plague_survive_from
    int regency_turns, negotiation_rounds, min_votes, bishops_to_anoint, money_unit, max_transfer
    int scored_turns, turn_limit
    int cardinal_cards        # red Cardinal cards (F22)


ctypedef struct F2Assault:
    # one declared assault of this turn (F26, F29): the reference's [family, village, frm, target, soldiers]
    int8_t f                  # family or F2_MOB
    int8_t v                  # village assaulted
    int8_t frm                # village the road comes from, -1 for an inside assault (F26.5)
    int8_t target             # the family attacked inside, else -1
    int8_t soldiers           # ordinary Soldiers waiting on the road (0 once they entered)


ctypedef struct F2State:
    # --- turn and phase (F8) ---------------------------------------------------------------------------------
    int32_t turn              # 0 during setup, then 1, 2, ...
    int32_t step              # position inside the phase driver
    int32_t seq               # counter for assault stamps and deaths
    int32_t history_len       # actions applied
    int32_t regency_end       # last turn of a Regency (F39), F2_INF_TURN without a Prince
    int8_t phase              # PH_*
    int8_t first              # holder of the First Player card (F7)
    int8_t error              # 0; 1 if a fixed bound overflowed (never in a legal game: tests assert 0)
    # --- families ----------------------------------------------------------------------------------------
    int8_t alive[F2_MAX_FAMILIES]                         # not eliminated (F49)
    int32_t cash[F2_MAX_FAMILIES]                         # florins
    int32_t tally[F2_MAX_FAMILIES]                        # scored game's points (F50)
    int8_t hand_len[F2_MAX_FAMILIES]                      # cards in each hand (<= hand_size)
    int8_t hands[F2_MAX_FAMILIES][F2_MAX_HAND]            # card ids, ascending (private, F46)
    uint64_t discards_seen[F2_MAX_FAMILIES][2]            # set of own discards (F46)
    uint64_t seen_cards[F2_MAX_FAMILIES][2]               # set of cards seen change hands (F53.11)
    int8_t allied[F2_MAX_FAMILIES][F2_MAX_FAMILIES]       # symmetric (F43)
    int8_t cand[F2_MAX_FAMILIES]                          # candidate of each family, -1 (F45)
    uint8_t winners                                       # bitmask of winners once over (F51)
    # --- persons (F4): fam -1 = not on the board (then loc, onroad, captor are -1) -----------------------
    int8_t fam[F2_MAX_PERSONS]
    int8_t loc[F2_MAX_PERSONS]        # village
    int8_t onroad[F2_MAX_PERSONS]     # village it came from when on a road into loc (F26.3), else -1
    int8_t captor[F2_MAX_PERSONS]     # -1 free, else the holding family (F35)
    int8_t conduct[F2_MAX_PERSONS]    # F35.4: former captor of a ransomed person (safe conduct), -1
    int8_t used[F2_MAX_PERSONS]       # movement counter (F25)
    int8_t spouse[F2_MAX_PERSONS]
    int8_t wed[F2_MAX_PERSONS]
    int8_t bishop[F2_MAX_PERSONS]     # bishopric, -1
    int8_t cardinal[F2_MAX_PERSONS]
    int8_t darc[F2_MAX_PERSONS]
    int8_t votes[F2_MAX_PERSONS]      # election votes; -1 marks the elected candidate while anointing (F45)
    int32_t escrow[F2_MAX_PERSONS]    # F21
    # --- villages (F9) ----------------------------------------------------------------------------------
    int8_t sold[F2_MAX_FAMILIES][F2_MAX_VILLAGES][4]      # ordinary Soldiers by movement counter 0..3 (F25)
    int8_t owner[F2_MAX_VILLAGES]
    int8_t castle[F2_MAX_VILLAGES]
    int8_t city[F2_MAX_VILLAGES]
    int8_t mills[F2_MAX_VILLAGES]
    int8_t presses[F2_MAX_VILLAGES]
    int32_t stamp[F2_MAX_VILLAGES]        # order of the first assault on the village, F2_INF_TURN (F29.1)
    int8_t garrison[F2_MAX_VILLAGES]      # bitmask of families occupying it at the first assault (F30.1)
    int8_t first_owner[F2_MAX_VILLAGES]   # owner at the first assault (F30.5)
    int8_t mob_held[F2_MAX_VILLAGES]      # the mob held it at the first assault (F30.4)
    int8_t battle_lost[F2_MAX_VILLAGES]   # the defence lost a token there this turn (F9.4)
    int8_t won_by[F2_MAX_VILLAGES]        # family that led a winning attack there this turn (F53.2)
    uint64_t refused                      # set of villages refused to the moving family (F53.4)
    uint64_t exit_refused[F2_MAX_FAMILIES]  # per family, the villages it was refused leaving this turn (F26.4)
    # --- fiefs and cards in play ------------------------------------------------------------------------
    int8_t title[F2_MAX_FIEFS]            # person holding it, -1
    int8_t pending[F2_MAX_FIEFS]          # family for which it is pending (F37), -1
    int8_t pend_spouse[F2_MAX_FIEFS]      # family of the dead holder's spouse (F38.2), -1
    int32_t pend_seq[F2_MAX_FIEFS]        # order of death (F38)
    int8_t retained[F2_MAX_FIEFS]         # family retaining it (F38.4), -1
    int8_t capital[F2_MAX_FIEFS]          # village, -1
    int32_t esc_wait[F2_MAX_FIEFS]        # escrow waiting for the heir (F21)
    int8_t bad_weather[F2_MAX_FIEFS]      # card id or -1
    int8_t famine[F2_MAX_FIEFS]
    int8_t tax[F2_MAX_FIEFS]
    int8_t tithe[F2_MAX_BISHOPRICS]
    # --- the crown and the mob ----------------------------------------------------------------------------
    int8_t king, queen, prince            # persons, -1 (F36, F39, F40)
    int8_t regent                         # a Regency (F39)
    int16_t kg, qg                        # Guard strengths, -1 in the supply
    int8_t mob_v, mob_road, mob_ctrl, revolt_card   # F17, F18 (-1 when no mob)
    int16_t mob_n                         # Peasants
    int8_t calm_bishop                    # F18.5, -1
    int8_t answer                         # last consent answer: 1 grant, 0 refuse, -1 none
    # --- this turn's assaults ------------------------------------------------------------------------------
    int16_t n_assaults
    F2Assault assaults[F2_MAX_ASSAULTS]   # in declaration order
    # --- decisions -----------------------------------------------------------------------------------------
    int8_t stack_len                      # frames on the stack; 0 only between driver steps and once over
    int64_t stack[F2_MAX_STACK][F2_FRAME] # frame i: [FR_*, fields...] exactly as the reference (unused: 0)
    int8_t dice_len
    int8_t dice[F2_MAX_DICE]              # dice rolled so far for the top FR_DICE frame, 1..6
    int8_t aims_len[2]
    int8_t aims[2][F2_MAX_AIMS]           # persons aimed at by the defence, the attack (F32)


# --- the nogil API ---------------------------------------------------------------------------------------------
cdef int f2_current_player(const F2Game* g, const F2State* s) noexcept nogil   # reference codes (F2_CHANCE...)
cdef int f2_to_move(const F2Game* g, const F2State* s) noexcept nogil  # _game.pxd codes (TO_MOVE_CHANCE...)
cdef bint f2_is_terminal(const F2State* s) noexcept nogil
cdef bint f2_is_chance(const F2Game* g, const F2State* s) noexcept nogil
cdef int f2_legal(const F2Game* g, const F2State* s, int* out) noexcept nogil   # ascending, F2_MAX_LEGAL at most
cdef void f2_apply(const F2Game* g, F2State* s, int a) noexcept nogil           # a legal action or outcome
cdef int f2_chance(const F2Game* g, const F2State* s, int* actions, double* probs) noexcept nogil
cdef int f2_sample_chance(const F2Game* g, const F2State* s, Rng* rng) noexcept nogil  # -1 if not chance
cdef void f2_returns(const F2Game* g, const F2State* s, double* out) noexcept nogil   # F51
cdef int f2_deck(const F2Game* g, const F2State* s, int* out) noexcept nogil   # F10: cards in no hand, not in play
cdef int f2_power(const F2Game* g, const F2State* s, int f) noexcept nogil     # F50
cdef int f2_playout(const F2Game* g, F2State* s, Rng* rng, int max_actions) noexcept nogil  # uniform random


cdef class CompiledFief2:
    cdef F2Game* g                        # malloc'd compiled arrays
    cdef readonly object game             # the reference fief2.state.Game


cdef class Fief2Core:
    cdef F2State s                        # the whole position
    cdef readonly CompiledFief2 compiled  # compiled ruleset + map + players
