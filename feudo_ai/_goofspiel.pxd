# cython: language_level=3
"""Goofspiel with hidden bids behind the search's game interface (:mod:`feudo_ai._goofspiel`): a second,
small hidden-information game that proves :mod:`feudo_ai._search` knows no rule of Feudo."""

from libc.stdint cimport int8_t, int16_t

from feudo_ai._game cimport SearchGame


cdef enum:
    GS_MAX_CARDS = 13       # cards per suit at most (bids and prizes are the values 1..n)


ctypedef struct GoofState:
    # Invariants: hand[0] and hand[1] hold n - round cards each (a bid stays in its hand until the round is
    # resolved); deck holds n - round - (prize >= 0) cards; bid[p] >= 0 only if has_bid[p]; never both has_bid.
    int8_t n                    # cards per suit (card value v is stored as index v - 1)
    int8_t round                # rounds resolved; the game is over when round == n
    int8_t prize                # index of the prize card on the table, -1: the next prize is to be turned (chance)
    int8_t has_bid[2]           # whether player p has bid this round (public)
    int8_t bid[2]               # player p's bid this round (index), -1 when none or hidden (private until both bid)
    int8_t hand[2][GS_MAX_CARDS]    # 1 if player p still holds bid card i
    int8_t deck[GS_MAX_CARDS]       # 1 if prize card i is still face down in the prize deck
    int16_t score[2]            # prize points won so far


ctypedef struct GoofCtx:
    int n                       # cards per suit
    double prior[GS_MAX_CARDS]  # the optional action prior's score of each bid (index = value - 1)


cdef class GoofspielGame(SearchGame):
    cdef GoofCtx ctx
    cdef GoofState start        # the position given (with the true hidden bid), for to_move/legal queries
