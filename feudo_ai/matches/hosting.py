"""What the hosted-match services of both games share, whatever the game: one game's matches in a store, a cache of
them in memory that is retired and loaded back, and the listing.

:class:`HostedMatches` is the base of Feudo's :class:`~feudo_ai.matches.service.MatchService` and Fief 2's
:class:`~feudo_ai.matches.fief2_service.Fief2MatchService`. The store is the truth (:mod:`.store`: each match is its
setup, its token hashes and its action log, every action committed before the call that made it returns); the
service's matches in memory are replays of it. Each service reads and writes only its own game's rows (the
store's ``game`` key, :attr:`HostedMatches.game`).

Retention: a finished match is retired from memory ``finished_seconds`` after it ended, an idle one (no action for
``idle_seconds``, no watch stream open, an external seat to act) too; a retired match has a ``retired`` row with
its summary and any call on it loads it back (:meth:`HostedMatches._match`). The finished matches in memory are
also kept to at most ``max_matches``. What a match in memory must have: ``id``, ``lock`` (an ``RLock``),
``changed`` (a ``Condition`` on it), ``finished``, ``finished_at`` and ``touched`` (``time.monotonic()``),
``watchers``, ``retired``, ``action_count`` and ``summary()``.

The subclass gives the game: :attr:`game`, :attr:`label` (in messages), :meth:`_load` (a stored match replayed into
memory, its bots started) and :meth:`_waits_for_bot`; and may stop a retired match's bots in :meth:`_retired`.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from abc import ABC, abstractmethod
from typing import Any

from feudo_ai.bounded import quoted

from .errors import InvalidArgument, NotFound
from .store import SQLStore

log = logging.getLogger("feudo.matches")

MATCH_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")  # what a match id may be (the server makes 16 hex digits)
LIST_CAP = 1000  # ListMatches: the live matches, then the most recent retired ones, at most this many in all
IDLE_SECONDS = 3600.0
FINISHED_SECONDS = 300.0


def check_match_id(match_id: Any) -> str:
    """``match_id`` if it is a match id (:data:`MATCH_ID`), checked before any look-up (:raises InvalidArgument:)."""
    if not isinstance(match_id, str) or not MATCH_ID.match(match_id):
        raise InvalidArgument(f"match_id: expected a match id (1 to 64 letters, digits, '-' or '_'), got "
                              f"{quoted(match_id)}")
    return match_id


def check_lifetimes(idle_seconds: Any, finished_seconds: Any, max_matches: Any) -> None:
    """The retention settings (:raises ValueError: naming the setting)."""
    for name, v in (("idle_seconds", idle_seconds), ("finished_seconds", finished_seconds)):
        if v is not None and not (isinstance(v, (int, float)) and v >= 0):
            raise ValueError(f"{name}: expected a non-negative number or None, got {v!r}")
    if not isinstance(max_matches, int) or isinstance(max_matches, bool) or max_matches < 1:
        raise ValueError(f"max_matches: expected a positive integer, got {max_matches!r}")


class HostedMatches(ABC):
    """One game's hosted matches: the store, the matches in memory, retention and listing (see the module)."""

    game: str  # the store's key of this service's matches
    label = "match"  # what a match is called in messages ("Fief 2 match")
    store: SQLStore
    shared: bool
    max_matches: int
    idle_seconds: float | None
    finished_seconds: float | None
    _lock: threading.Lock
    _load_lock: threading.Lock
    _matches: dict
    _closed: threading.Event
    unloadable: dict[str, str]  # match id -> why it could not be loaded (it stays in the store)

    # -- what the game gives --------------------------------------------------------------------------------
    @abstractmethod
    def _load(self, stored) -> Any:
        """Replay a stored match into memory and start its bots (None: it cannot be loaded, logged)."""

    @abstractmethod
    def _waits_for_bot(self, m: Any) -> bool:
        """Whether a bot seat of ``m`` is to act (such a match is never idle)."""

    def _retired(self, m: Any) -> None:
        """``m`` was just retired from memory: stop its bots."""

    # -- retention ------------------------------------------------------------------------------------------
    def _start_retention(self, sweep_every: float | None) -> threading.Thread | None:
        """The retention thread (None if nothing is ever retired)."""
        lifetimes = [v for v in (self.idle_seconds, self.finished_seconds) if v is not None]
        if not lifetimes:
            return None
        every = sweep_every if sweep_every is not None else min(5.0, max(0.1, min(lifetimes) / 4))
        t = threading.Thread(target=self._sweep_loop, args=(every,), name=f"{self.game}-retention", daemon=True)
        t.start()
        return t

    def live_count(self) -> int:
        """Unfinished matches in memory (what ``max_matches`` caps)."""
        with self._lock:
            return sum(1 for m in self._matches.values() if not m.finished)

    def _due(self, m: Any, now: float) -> bool:
        """Whether ``m`` is to be retired now (the caller holds its lock)."""
        if m.finished:
            return self.finished_seconds is not None and now - (m.finished_at or m.touched) >= self.finished_seconds
        return (self.idle_seconds is not None and m.watchers == 0 and now - m.touched >= self.idle_seconds
                and not self._waits_for_bot(m))

    def sweep(self) -> int:
        """Retire the matches that are due (see the module); returns how many. Also keeps the finished matches
        in memory (loaded back to be read) to at most ``max_matches``, the oldest retired first."""
        now = time.monotonic()
        with self._lock:
            matches = list(self._matches.values())
        retired = 0
        for m in matches:
            with m.lock:
                due = self._due(m, now)
            if due:
                retired += self._retire(m)
        finished = sorted((m for m in matches if m.finished and not m.retired), key=lambda m: m.touched)
        for m in finished[:max(0, len(finished) - self.max_matches)]:
            retired += self._retire(m)
        return retired

    def _retire(self, m: Any) -> int:
        """Retire ``m`` from memory (its summary stored); 1 if it was, 0 if it was not live."""
        with self._lock:
            if self._matches.get(m.id) is not m:
                return 0
            with m.lock:
                self.store.retire(m.id, m.finished, m.summary())
                m.retired = True
                del self._matches[m.id]
                m.changed.notify_all()
        self._retired(m)
        log.info("%s %s retired from memory at action %d (%s)", self.label, m.id, m.action_count,
                 "finished" if m.finished else "idle")
        return 1

    def _retire_finished(self) -> None:
        """Closing: the finished matches in memory are marked retired, so that a server starting again does not
        load them."""
        with self._lock:
            finished = [m for m in self._matches.values() if m.finished]
        for m in finished:
            try:
                self._retire(m)
            except Exception:  # noqa: BLE001 - the database refused: they are loaded next time instead
                log.warning("%s %s: could not be marked retired", self.label, m.id)
                break

    def _sweep_loop(self, every: float) -> None:
        while not self._closed.wait(every):
            try:
                self.sweep()
            except Exception:  # noqa: BLE001 - the sweeper must go on (e.g. the store closed under it)
                if self._closed.is_set():
                    return
                log.exception("retention sweep failed")

    # -- matches --------------------------------------------------------------------------------------------
    def _watch_again(self, m: Any) -> Any:
        """A watched match retired meanwhile: the same match loaded back, the watcher counted there instead."""
        with m.lock:
            m.watchers -= 1
        m = self._match(m.id)
        with m.lock:
            m.watchers += 1
        return m

    def _match(self, match_id: Any) -> Any:
        """The live match of that id, loaded back from the store if it is not in memory (retired, or created on
        another replica). The id is checked first (:func:`check_match_id`)."""
        check_match_id(match_id)
        m = self._matches.get(match_id)
        if m is not None:
            return m
        with self._load_lock:
            m = self._matches.get(match_id)
            if m is not None:
                return m
            stored = None if match_id in self.unloadable else self.store.load(match_id, game=self.game)
            if stored is None:
                raise NotFound(f"match_id: no {self.label} {quoted(match_id)}")
            m = self._load(stored)
            if m is None:
                raise NotFound(f"match_id: {self.label} {quoted(match_id)} could not be loaded (the server logged "
                               f"why)")
            if not m.finished:
                self.store.unretire(m.id)  # live again (and resumed by a server starting again)
            return m

    def _load_live(self) -> None:
        """A server starting on a database of its own loads the matches that were live (on a shared database
        they are loaded on demand)."""
        for stored in self.store.load_all(live_only=True, game=self.game):
            self._load(stored)

    def list_matches(self) -> list[dict[str, Any]]:
        """The summaries of the matches in memory (on a shared database: every replica's, from the store), then
        of the most recent retired ones (read from the store), at most :data:`LIST_CAP` in all, each group oldest
        first."""
        out = []
        if self.shared:  # every replica's matches: their summaries as of their last actions, from the database
            for mid, summary in self.store.live_summaries(LIST_CAP, game=self.game):
                m = self._matches.get(mid)
                if summary is None and m is not None:
                    with m.lock:
                        summary = m.summary()
                if summary is not None:
                    out.append(summary)
        else:
            with self._lock:
                live = list(self._matches.values())
            for m in live[:LIST_CAP]:
                with m.lock:
                    out.append(m.summary())
        room = LIST_CAP - len(out)
        if room > 0:
            ids = {s["match_id"] for s in out}
            retired = [s for s in self.store.retired_summaries(LIST_CAP, game=self.game) if s["match_id"] not in ids]
            out += retired[len(retired) - room:] if len(retired) > room else retired
        return out
