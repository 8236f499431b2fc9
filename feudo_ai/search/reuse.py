"""Tree reuse between a seat's consecutive decisions (``SearchOptions(reuse_tree=True)``, the ``ismcts`` bot).

A search of the C MO-ISMCTS grows one tree per player, each keyed by what that player observes (the game's
``apply_observed`` labels). After a search, :class:`TreeMemory` keeps a copy of the *seat's own* tree
(:meth:`feudo_ai._search.SearchWorker.saved_tree`), and is then told every action of the game as the seat sees it
(:meth:`TreeMemory.observe`): its label in the seat's tree (the action itself, or ``LABEL_HIDDEN`` for another
seat's secret pick, R6, R22) and the public signals it revealed (Trading Cards turned over, R9). At the seat's next
search the subtree below those labels becomes the seat's tree (the other players' trees start empty), so the
iterations already spent on that information set are not lost.

Honesty: the path is made of the seat's own labels only, the very labels its tree is keyed by, so two games that
differ in a card hidden from the seat lead to the same subtree (``tests/test_search_growth.py`` checks the advice
is the same). Determinism: the saved tree depends on the search's seed and budget only, so the same seed, the
same positions and the same budgets give the same advice.

The labels are Feudo's (:func:`observed_labels`, the Python twin of ``_f_apply_observed`` in
``feudo_ai/_feudo_game.pyx``). A memory that was not told every action since its tree was saved cannot know where
the game went: :meth:`TreeMemory.path` then gives None and the search starts afresh. So does a path that leaves
the tree, or that ends where the seat's tree expects another decision (its children are not the legal actions).
"""

from __future__ import annotations

from typing import Any

from engine.state import Phase

__all__ = ["TreeMemory", "observed_labels", "LABEL_HIDDEN", "LABEL_SIGNAL", "MAX_TRADING"]

LABEL_HIDDEN = -1  # feudo_ai/_game.pxd: an action the observer does not see
LABEL_SIGNAL = -2  # feudo_ai/_game.pxd: signal labels are <= LABEL_SIGNAL
MAX_TRADING = 8  # engine/_core.pxd: the signal label of a Trading Card is numbered with it


def signal_label(player: int, card: int) -> int:
    """The public signal of ``player``'s Trading Card ``card`` turned over (``_f_apply_observed``)."""
    return LABEL_SIGNAL - (player * (MAX_TRADING + 1) + card + 1)


def observed_labels(before: Any, action: int, seat: int) -> tuple[int, list[bool]]:
    """The label under which ``seat``'s tree sees ``action`` played in ``before`` (a state about to play it): the
    action itself, except another player's SELECT pick (R6, R22), which is ``LABEL_HIDDEN``. Also the players'
    Trading Cards face up before it (public), for :func:`revealed_signals` once it is played. Reads only what the
    seat may see: who acts, the phase, the face-up flags, and the action only when it is the seat's own or
    public."""
    actor = before.current_player()
    hidden = before.phase == Phase.SELECT and actor != seat
    return (LABEL_HIDDEN if hidden else int(action)), [bool(x) for x in before.trade_revealed]


def revealed_signals(face_up_before: list[bool], after: Any) -> list[int]:
    """The signals of the Trading Cards turned over by one action (face down before it, face up after: then
    public, R9), in seat order, as ``_f_apply_observed`` reports them."""
    return [signal_label(q, int(after.sel_trade[q])) for q, up in enumerate(after.trade_revealed)
            if up and not face_up_before[q]]


class TreeMemory:
    """One seat's saved trees (one per worker) and the labels it observed since they were saved.

    :meth:`observe` is told every action of the game (before it is played, the full state: only the seat's view of
    it is kept); the search (:func:`feudo_ai.search.c_backend.search_prepared` with ``reuse_tree``) reads
    :meth:`path` and :attr:`trees` and stores the new trees with :meth:`saved`."""

    def __init__(self, seat: int):
        self.seat = seat
        self.trees: list = []  # feudo_ai._search.SavedTree, one per worker of the last search
        self._labels: list[int] = []
        self._pending: list[bool] | None = None  # face-up flags before the last action (its signals not read yet)
        self._root_view: dict | None = None  # the seat's observation at the saved trees' root

    def observe(self, before: Any, action: int) -> None:
        """``action`` is about to be played in ``before``: record its label as the seat sees it (and the signals of
        the action before it, now visible in ``before``)."""
        self._flush(before)
        if not self.trees:
            return
        label, up = observed_labels(before, action, self.seat)
        self._labels.append(label)
        self._pending = up

    def _flush(self, after: Any) -> None:
        if self._pending is not None:
            self._labels.extend(revealed_signals(self._pending, after))
            self._pending = None

    def path(self, root: Any) -> list[int] | None:
        """The labels from the saved trees' root to ``root`` (the state of the seat's decision now), or None when
        no tree is saved, or when nothing was observed but the seat's view changed (a driver that does not tell
        the memory the actions: the path is unknown)."""
        self._flush(root)
        if not self.trees:
            return None
        if not self._labels and root.observation(self.seat) != self._root_view:
            return None
        return list(self._labels)

    def saved(self, trees: list, root: Any) -> None:
        """The trees of a search just made from ``root``, the seat's current decision: the next path starts
        here."""
        self.trees = list(trees)
        self._root_view = root.observation(self.seat)
        self._labels = []
        self._pending = None

    def forget(self) -> None:
        self.trees = []
        self._root_view = None
        self._labels = []
        self._pending = None
