"""What searches may run at once on a server: one admission for the Advisor's calls and the matches' bots.

Searches share the cores: every search beyond what they serve makes all answers worse. :class:`SearchSlots`
admits at most ``max_searches`` searches at once and at most ``max_threads`` C search threads over them (a search
of ``threads`` takes that many), whoever asks:

- a **call** (the Advisor's Suggest and Analyze) is admitted at once or refused (:meth:`SearchSlots.try_acquire`
  says why); the caller retries or asks another replica, so no queue grows without bound;
- a **background search** (a bot of a hosted match, moved by the server) waits for its turn instead
  (:meth:`SearchSlots.acquire`), first come first served, until it is admitted or its cancel event is set. Never
  refused forever: the first background search waiting has its room reserved, so no call is admitted into the
  room it waits for, and it starts as soon as the searches running now leave it (each is bounded in time).
  Background searches together hold at most ``background_share`` of both caps (at least one search, and at least
  one search's threads), so the calls always keep the rest: a server full of bot matches still answers Suggest.

Plain Python (no gRPC): the wire's Advisor and the matches' bot runner share one instance.
"""

from __future__ import annotations

import collections
import threading
from typing import Callable

from .cancel import CancelEvent

BACKGROUND_SHARE = 0.5  # of the searches and of the search threads, at most, held by background searches


class SearchSlots:
    """Admission of searches under ``max_searches`` at once and ``max_threads`` C threads over them (see the
    module). ``on_change(searches)`` is called after every change (e.g. a metrics gauge). Thread-safe."""

    def __init__(self, max_searches: int, max_threads: int, *, max_threads_per_search: int = 1,
                 background_share: float = BACKGROUND_SHARE, on_change: Callable[[int], None] | None = None):
        if max_searches < 1 or max_threads < 1:
            raise ValueError("SearchSlots: expected at least one search and one thread")
        self.max_searches = max_searches
        self.max_threads = max_threads
        self.background_searches_cap = max(1, int(max_searches * background_share))
        self.background_threads_cap = min(max_threads, max(int(max_threads * background_share),
                                                           max_threads_per_search))
        self._on_change = on_change
        self._cond = threading.Condition()
        self.searches = 0  # running now, calls and background
        self.threads = 0  # their C threads
        self.background = 0  # background searches running now
        self.background_threads = 0
        self._queue: collections.deque[tuple[object, int]] = collections.deque()  # background searches waiting

    @property
    def waiting(self) -> int:
        """Background searches waiting for their turn."""
        with self._cond:
            return len(self._queue)

    # -- calls ---------------------------------------------------------------------------------------------
    def try_acquire(self, threads: int) -> str | None:
        """Admit a call's search of ``threads`` C threads now: None, or why not (the caller answers it)."""
        with self._cond:
            searches, total = self.searches + 1, self.threads + threads
            if self._queue:  # the first background search waiting keeps its room
                head = self._queue[0][1]
                if self._background_fits(head):
                    searches, total = searches + 1, total + head
            if searches > self.max_searches:
                return (f"{self.max_searches} searches are already running or reserved on this server (its cap); "
                        f"retry later or ask another replica")
            if total > self.max_threads:
                return (f"{self.threads} search threads are running on this server and {threads} more would pass its "
                        f"cap of {self.max_threads} (what its cores serve); retry later or ask another replica")
            self._take(threads)
        self._changed()
        return None

    # -- background searches -------------------------------------------------------------------------------
    def acquire(self, threads: int, cancel: threading.Event | None = None) -> bool:
        """Wait for a background search's turn (first come first served) and admit it: True; False if ``cancel``
        was set first (nothing is then held). :raises ValueError: ``threads`` beyond what background searches may
        ever hold (it would wait forever)."""
        if threads > self.background_threads_cap:
            raise ValueError(f"threads: {threads} is beyond the {self.background_threads_cap} search threads "
                             f"background searches may hold on this server")
        ticket = object()
        remove = None
        with self._cond:
            self._queue.append((ticket, threads))
        try:
            if isinstance(cancel, CancelEvent):
                remove = cancel.add_listener(self._wake)
            with self._cond:
                while True:
                    if cancel is not None and cancel.is_set():
                        return False
                    if self._queue[0][0] is ticket and self._background_fits(threads) and \
                            self.searches + 1 <= self.max_searches and self.threads + threads <= self.max_threads:
                        self._queue.popleft()
                        self._take(threads)
                        self.background += 1
                        self.background_threads += threads
                        break
                    # a CancelEvent wakes this wait at once; a plain Event is looked at every second
                    self._cond.wait(5.0 if isinstance(cancel, CancelEvent) or cancel is None else 1.0)
        finally:
            if remove is not None:
                remove()
            with self._cond:
                if self._queue and any(t is ticket for t, _ in self._queue):
                    self._queue.remove(next(q for q in self._queue if q[0] is ticket))
                    self._cond.notify_all()  # the next one may be first now
        self._changed()
        return True

    def release(self, threads: int, background: bool = False) -> None:
        """A search admitted by :meth:`try_acquire` (or :meth:`acquire`: ``background=True``) has ended."""
        with self._cond:
            self.searches -= 1
            self.threads -= threads
            if background:
                self.background -= 1
                self.background_threads -= threads
            self._cond.notify_all()
        self._changed()

    # -- inside --------------------------------------------------------------------------------------------
    def _background_fits(self, threads: int) -> bool:
        return (self.background + 1 <= self.background_searches_cap
                and self.background_threads + threads <= self.background_threads_cap)

    def _take(self, threads: int) -> None:
        self.searches += 1
        self.threads += threads

    def _wake(self) -> None:
        with self._cond:
            self._cond.notify_all()

    def _changed(self) -> None:
        if self._on_change is not None:
            self._on_change(self.searches)
