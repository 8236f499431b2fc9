"""The Advisor's cache of seat replays: the history form of a position at a cost that does not grow with the game.

A client that keeps its seat's log (e.g. from ``WatchMatch``) sends the whole history at every decision. Replaying
it (:class:`engine.history.SeatReplay`) costs about 0.16 ms an entry, 80 ms at turn 10 of a 4-player game (500
entries). The server keeps the replays of recent histories, so a call pays only for the entries its history adds
to the longest one it has seen.

Key. A replay is stored under a digest of (the ``GameSetup`` bytes, the Castle sites, the seat, its entries):
BLAKE2b-128, chained entry by entry, so that every prefix of a history has its own key and a history's keys are
computed in one pass (``h[0]`` = digest of the setup, Castles and seat; ``h[i+1]`` = digest of ``h[i]`` and
entry ``i``). A call looks its prefixes up from the longest down and replays only the entries after the longest
one found, from a copy of the cached replay (the cached one is never changed).

Privacy (R22). The seat is part of every key, and so is every entry of the prefix: a cached replay is found only
by a request for the same seat that sends the very same log, i.e. knows everything the replay was built from.
A replay holds placeholders for other seats' unrevealed picks, never their cards, as a fresh replay does; so a
hit gives exactly what replaying the request itself gives (same observation: :mod:`engine.history` is a
deterministic function of the start, the seat and the entries).

Bound. At most ``max_entries`` replays (LRU: a hit moves its replay to the front; the least recently used is
dropped beyond the cap). A replay is two engine states (the position and its turn's snapshot) and the entries of
its current turn: about 25 KB in memory in a 4-player game (measured with ``tracemalloc`` at turns 2-10; 19 KB
pickled), so the default cap of 512 holds about 13 MB; ``max_entries=0`` turns the cache off.

Concurrency. One lock guards the table (lookups and inserts are dictionary operations); replaying happens
outside it, on the call's own copy. Two calls extending the same prefix both replay and both store (the second
replaces the first, same content).
"""

from __future__ import annotations

import collections
import hashlib
import threading
from dataclasses import dataclass
from typing import Sequence

from engine.history import Entry, SeatReplay

DEFAULT_MAX_ENTRIES = 512
_DIGEST = 16


def _entry_bytes(e: Entry) -> bytes:
    return repr((e.player, e.action, e.trades, e.pick)).encode()


def prefix_keys(base: bytes, seat: int, entries: Sequence[Entry]) -> list[bytes]:
    """The keys of every prefix of ``entries`` (``len(entries) + 1`` of them, the empty prefix first) for the
    game ``base`` (the setup's bytes and the Castle sites) and ``seat``."""
    h = hashlib.blake2b(digest_size=_DIGEST, person=b"feudo-history/1")
    h.update(len(base).to_bytes(8, "little"))
    h.update(base)
    h.update(int(seat).to_bytes(4, "little"))
    keys = [h.copy().digest()]
    for e in entries:
        data = _entry_bytes(e)
        h.update(len(data).to_bytes(4, "little"))
        h.update(data)
        keys.append(h.copy().digest())
    return keys


@dataclass
class CacheStats:
    hits: int = 0  # calls that found a cached prefix (not the empty one)
    misses: int = 0  # calls that replayed from the start
    replayed: int = 0  # entries replayed over all calls
    stored: int = 0  # replays stored
    evicted: int = 0  # replays dropped by the cap


class HistoryCache:
    """An LRU table of :class:`SeatReplay` snapshots keyed by :func:`prefix_keys` (see the module docstring)."""

    def __init__(self, max_entries: int = DEFAULT_MAX_ENTRIES):
        if not isinstance(max_entries, int) or isinstance(max_entries, bool) or max_entries < 0:
            raise ValueError(f"max_entries: expected a non-negative integer, got {max_entries!r}")
        self.max_entries = max_entries
        self._table: collections.OrderedDict[bytes, SeatReplay] = collections.OrderedDict()
        self._lock = threading.Lock()
        self.stats = CacheStats()

    def __len__(self) -> int:
        return len(self._table)

    def clear(self) -> None:
        with self._lock:
            self._table.clear()

    def longest(self, keys: Sequence[bytes]) -> tuple[int, SeatReplay | None]:
        """The longest cached prefix among ``keys`` (``keys[n]``: the prefix of ``n`` entries): ``(n, replay)``,
        the replay to be copied before use; ``(0, None)`` when none is cached."""
        if not self.max_entries:
            return 0, None
        with self._lock:
            for n in range(len(keys) - 1, 0, -1):
                replay = self._table.get(keys[n])
                if replay is not None:
                    self._table.move_to_end(keys[n])
                    return n, replay
        return 0, None

    def put(self, key: bytes, replay: SeatReplay) -> None:
        """Store ``replay`` (nobody may change it afterwards) under ``key``; the least recently used go beyond
        the cap."""
        if not self.max_entries:
            return
        with self._lock:
            self._table[key] = replay
            self._table.move_to_end(key)
            self.stats.stored += 1
            while len(self._table) > self.max_entries:
                self._table.popitem(last=False)
                self.stats.evicted += 1

    def count(self, hit: bool, replayed: int) -> None:
        with self._lock:
            if hit:
                self.stats.hits += 1
            else:
                self.stats.misses += 1
            self.stats.replayed += replayed


def replay(cache: HistoryCache | None, base: bytes, start, seat: int,
           entries: Sequence[Entry]) -> tuple[SeatReplay, int, int]:
    """The seat's replay of ``entries`` from ``start`` (a callable giving the start state, called only when no
    prefix is cached), through ``cache`` when given: ``(replay, entries taken from the cache, entries replayed)``.
    The replay returned is the caller's (the cache keeps its own). :raises HistoryError: (with the entry's index
    in the whole history) as :meth:`SeatReplay.push`; nothing is stored then."""
    if cache is None or not cache.max_entries:
        r = SeatReplay(start(), seat)
        for e in entries:
            r.push(e)
        return r, 0, len(entries)
    keys = prefix_keys(base, seat, entries)
    n, cached = cache.longest(keys)
    if cached is None:
        r = SeatReplay(start(), seat)
    elif n == len(entries):
        cache.count(True, 0)
        return cached, n, 0  # read only by the caller: nothing is pushed to it
    else:
        r = cached.clone()
    try:
        for e in entries[n:]:
            r.push(e)
    finally:
        cache.count(cached is not None, len(entries) - n)
    cache.put(keys[-1], r)
    return r, n, len(entries) - n
