# cython: language_level=3
"""The game interface of the search (declarations and invariants: ``feudo_ai/_game.pxd``).

:class:`SearchGame` is the base of every searchable game: a subclass fills the C table (``GameC``) and hands the
root state to :meth:`SearchGame._set_root`, which copies it and hides from it what the seat may not know.
"""

from libc.stdlib cimport malloc, free
from libc.string cimport memcpy


cdef class SearchGame:
    """A game ready to be searched from one seat's root (see ``feudo_ai/_game.pxd``). Not built directly: use a
    game's subclass (:class:`feudo_ai._feudo_game.FeudoGame`, :class:`feudo_ai._goofspiel.GoofspielGame`)."""

    def __cinit__(self):
        self.root = NULL
        self.seat = -1

    def __dealloc__(self):
        free(self.root)
        self.root = NULL

    cdef int _set_root(self, const void* state, int seat) except -1:
        """Copy ``state`` as the root and erase from it what ``seat`` may not know (the table must be filled)."""
        if self.c.state_size == 0 or self.c.hide == NULL:
            raise ValueError("game: the C table is not filled")
        if not 1 <= self.c.num_players <= MAX_OBSERVERS:
            raise ValueError(f"game: expected 1 to {MAX_OBSERVERS} players, got {self.c.num_players}")
        if not 0 <= seat < self.c.num_players:
            raise ValueError(f"seat: expected an integer in [0, {self.c.num_players}), got {seat}")
        free(self.root)
        self.root = malloc(self.c.state_size)
        if self.root == NULL:
            raise MemoryError()
        memcpy(self.root, state, self.c.state_size)
        self.c.hide(self.c.ctx, self.root, seat)
        self.seat = seat
        return 0

    @property
    def num_players(self) -> int:
        return self.c.num_players

    @property
    def num_actions(self) -> int:
        return self.c.num_actions

    @property
    def num_beliefs(self) -> int:
        return self.c.num_beliefs

    def ready(self) -> bool:
        """Whether the table and the root are set (a search may start)."""
        return self.root != NULL and self.seat >= 0
