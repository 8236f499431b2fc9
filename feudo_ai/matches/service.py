"""The match service in plain Python: create, observe, act, watch, list, record, replay (gRPC-free).

:class:`MatchService` is what the gRPC servicer calls; it raises the exceptions of
:mod:`feudo_ai.matches.errors` (one per status code). Every seat call checks the seat's token first (constant
time). Every action is logged in the store (one committed transaction) before it is applied and before the
call returns; chance outcomes are drawn and logged the same way right after the action that led to them, so no
caller ever sees a chance node. Bot seats are moved by :class:`feudo_ai.matches.runner.BotRunner` threads.

Retention (:class:`~feudo_ai.matches.hosting.HostedMatches`, shared with Fief 2's matches): the matches in memory are
bounded. A finished match is retired from memory
``finished_seconds`` after it ended, and an idle one (waiting for an external seat's action, no action for
``idle_seconds``, no watch stream open) too; a retired match stays in the store, and any call on it loads it back
on demand (``get_record`` of a finished one and ``list_matches`` read the store without loading it). The cap
``max_matches`` counts the live (unfinished) matches in memory only: a new match beyond it is
:class:`ResourceExhausted` (idle ones are retired first), retired and finished matches never hold it. A server
starting loads only the matches that were live.

Ids are checked before anything is looked up (:data:`MATCH_ID`: ``INVALID_ARGUMENT`` naming the field); client input
is echoed bounded (:func:`feudo_ai.bounded.quoted`).

Submitting is idempotent: ``expected_action_count`` is the number of actions in the log before this one. A retry
of an action that was already applied at that index by that seat gets the same answer and changes nothing; any
other stale or future count, or an action out of turn, is :class:`FailedPrecondition`; an illegal action is
:class:`InvalidArgument` and changes nothing.

Replicas: on a shared database (PostgreSQL, ``db="postgresql://..."``) several services (one per server process)
serve the same matches. The database is the truth; each replica's :class:`Match` in memory is a cache of it:

- *one action per index*: an action is logged with the chance outcomes after it and the match's summary in one
  transaction whose rows are keyed ``(match_id, idx)``; the replica that loses a race for an index gets
  :class:`~feudo_ai.matches.store.Conflict`, catches up and answers as for a retry (the same action by the same
  seat: ``retry``) or a stale count;
- *catch-up*: before answering about a match (observation, submit, record, watch) a replica reads the log's tail
  after its last applied action (one indexed query) and applies it, so an answer never misses an action another
  replica acknowledged before the call came;
- *LISTEN/NOTIFY*: each commit notifies ``act:ID:COUNT``; every replica's listener catches the match up at once,
  which wakes its watch streams and bots (a poll every 0.5 s is the fallback if the listener is down);
- *bot leases*: one replica moves a match's bots, the holder of its ``bot_leases`` row, renewed every
  ``lease_seconds / 6`` and lost after ``lease_seconds`` without renewal (a replica killed: another takes the bots
  within ``lease_seconds`` plus one tick; a replica drained: at once). Each replica takes unleased bot matches
  up to its fair share (the bot matches over the replicas alive, from their heartbeats). Even two replicas
  believing they hold one lease cannot both log an index: the key decides.

Matches are loaded on demand (a replica starting loads none); retention works per replica as above.
"""

from __future__ import annotations

import functools
import json
import logging
import math
import os
import secrets
import socket
import threading
import time
from typing import Any, Iterator

from engine.state import CHANCE

from feudo_ai.bounded import quoted

from .errors import (FailedPrecondition, InvalidArgument, NotFound, PermissionDenied, ResourceExhausted,
                     Unauthenticated)
from .match import SPECTATOR, Match, player_name
from .replay import record_start, replay_view
from .limits import BotLimits
from .runner import BotRunner
from .spec import MatchSetup
from .database import open_store
from .hosting import (FINISHED_SECONDS, IDLE_SECONDS, LIST_CAP, MATCH_ID, HostedMatches,  # noqa: F401 - re-exported
                      check_lifetimes, check_match_id)
from .store import FEUDO, Conflict, StoreError
from .tokens import TOKEN_LENGTH, new_token, token_hash, token_matches

log = logging.getLogger("feudo.matches")

MAX_TOKEN_CHARS = 256  # a seat token is TOKEN_LENGTH characters; anything much longer is not one
MAX_MATCHES = 1000
LEASE_SECONDS = 3.0  # a bot lease not renewed for this long is another replica's to take


class Raced(FailedPrecondition):
    """Another server logged that action index first; the match has been brought up to date."""


def _is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def check_seat_token(seat: Any, token: Any, players: int, token_hashes: dict[int, str]) -> int:
    """``seat`` if it is one of ``players`` seats and ``token`` is its token (``token_hashes``: seat -> the hash
    of its token; a seat without one is a bot's). Errors name the field; a bot's seat costs the same hashing work
    as a wrong token, so the timing does not tell which seats are bots."""
    if not _is_int(seat) or not 0 <= seat < players:
        raise InvalidArgument(f"seat: expected an integer in [0, {players}), got {quoted(seat)}")
    if not isinstance(token, str) or not token:
        raise Unauthenticated("token: this call needs the seat's token")
    if len(token) > MAX_TOKEN_CHARS:
        raise InvalidArgument(f"token: expected a seat token ({TOKEN_LENGTH} characters), got {len(token)} "
                              f"characters")
    stored = token_hashes.get(seat)
    if stored is None:
        token_matches(token, token_hash(""))  # same work either way: no timing hint of which seats are bots
        raise PermissionDenied(f"seat {seat} is played by a bot on the server")
    if not token_matches(token, stored):
        raise PermissionDenied(f"token: not the token of seat {seat}")
    return seat


def check_action_request(action: Any, expected_action_count: Any) -> None:
    """A submitted action's fields: an integer action id at a non-negative expected action count
    (:raises InvalidArgument: naming the field; whether the action is legal is the match's to say)."""
    if not _is_int(action):
        raise InvalidArgument(f"action: expected an integer, got {quoted(action)}")
    if not _is_int(expected_action_count) or expected_action_count < 0:
        raise InvalidArgument(f"expected_action_count: expected a non-negative integer, got "
                              f"{quoted(expected_action_count)}")


class MatchService(HostedMatches):
    """Feudo's matches in a store at ``db`` (a SQLite path; ``":memory:"`` keeps nothing). Matches found in the store
    are loaded at once and their bots resume (``run_bots=False``: nobody moves the bots, for tests). Retention,
    loading back and listing are :class:`~feudo_ai.matches.hosting.HostedMatches`'."""

    game = FEUDO

    def __init__(self, db: str = ":memory:", run_bots: bool = True, max_matches: int = MAX_MATCHES, *,
                 idle_seconds: float | None = IDLE_SECONDS, finished_seconds: float | None = FINISHED_SECONDS,
                 bot_limits: BotLimits | None = None, slots=None, sweep_every: float | None = None,
                 db_pool: int = 10, lease_seconds: float = LEASE_SECONDS):
        """``max_matches``: live matches in memory; ``idle_seconds``/``finished_seconds``: when an idle or a
        finished match is retired from memory (None: never); ``bot_limits``/``slots``: the server's caps and
        admission of the bots' searches (:class:`~feudo_ai.matches.limits.BotLimits`,
        :class:`~feudo_ai.search.admission.SearchSlots`); ``sweep_every``: seconds between retention sweeps
        (default: a quarter of the shorter lifetime, between 0.1 and 5 s). ``db``: a SQLite path or a
        ``postgresql://`` URL (:func:`~feudo_ai.matches.database.open_store`; ``db_pool``: its connections); on a
        shared database (PostgreSQL) the service is one of several replicas (see the module's "Replicas") and ``lease_seconds`` is how long a replica's bot lease lasts without renewal."""
        check_lifetimes(idle_seconds, finished_seconds, max_matches)
        if not (isinstance(lease_seconds, (int, float)) and lease_seconds > 0):
            raise ValueError(f"lease_seconds: expected a positive number, got {lease_seconds!r}")
        self.store = open_store(db, pool_size=db_pool)
        self.shared = self.store.shared
        self.replica_id = f"{socket.gethostname()}/{os.getpid()}/{secrets.token_hex(4)}"
        self.lease_seconds = float(lease_seconds)
        self._share = 1 << 30  # bot matches this replica takes on (its fair share: set by each lease tick)
        self._wake = threading.Event()  # a lease tick now (a new match, a lease freed)
        self.max_matches = max_matches
        self.idle_seconds = idle_seconds
        self.finished_seconds = finished_seconds
        self.bot_limits = bot_limits
        self.slots = slots
        self._run_bots = run_bots
        self._lock = threading.Lock()
        self._load_lock = threading.Lock()  # one match loaded back at a time
        self._matches: dict[str, Match] = {}
        self._runners: dict[str, BotRunner] = {}
        self._closed = threading.Event()
        self.unloadable: dict[str, str] = {}  # match id -> why it could not be loaded (it stays in the store)
        if not self.shared:  # on a shared database matches are loaded on demand and bots by lease
            self._load_live()
        self._leaser = None
        if self.shared:
            self.store.listen(self._on_notification)
            if run_bots:
                self._leaser = threading.Thread(target=self._lease_loop, name="matches-leases", daemon=True)
                self._leaser.start()
        self._sweeper = self._start_retention(sweep_every)

    # -- lifecycle -----------------------------------------------------------------------------------------
    def _load(self, stored) -> Match | None:
        """Replay a stored match into memory and start its bots (None: it cannot be loaded, logged)."""
        try:
            setup = MatchSetup.from_dict(stored.setup)
            m = Match(stored.id, setup, stored.token_hashes, stored.created)
            with m.lock:
                for i, a in enumerate(stored.actions):
                    if a not in m.state.legal_actions():
                        raise StoreError(f"{self.store.path}: match {stored.id}: logged action {i} ({a}) is not "
                                         f"legal")
                    m.apply(a)
                self._draw_chance(m)  # a restart between an action and the chance draw after it
                m.touched = time.monotonic()
        except Exception as e:  # noqa: BLE001 - one damaged match must not keep the others from resuming
            self.unloadable[stored.id] = f"{type(e).__name__}: {e}"
            log.error("match %s could not be loaded and is not served: %s", stored.id, self.unloadable[stored.id])
            return None
        with self._lock:
            self._matches[m.id] = m
        self._start_bots(m)
        log.info("match %s loaded at action %d%s", m.id, m.action_count, " (finished)" if m.finished else "")
        return m

    def _start_bots(self, m: Match, force: bool = False) -> None:
        """Move the match's bots here; on a shared database only with the match's lease, and (unless ``force``)
        only while this replica moves fewer bot matches than its fair share (others take the rest)."""
        if not (self._run_bots and m.setup.bot_seats and not m.finished and not self._closed.is_set()):
            return
        if self.shared:
            with self._lock:
                if m.id in self._runners:
                    return
                mine = len(self._runners)
            if not force and mine >= self._share:
                return
            if not self.store.claim(m.id, self.replica_id, self.lease_seconds):
                return
        runner = BotRunner(m, self._commit, limits=self.bot_limits, slots=self.slots,
                           refresh=self._catch_up if self.shared else None)
        runner.claimed = time.monotonic()
        with self._lock:
            if m.id in self._runners:
                return
            self._runners[m.id] = runner
        runner.start()

    # -- replicas ------------------------------------------------------------------------------------------
    def _catch_up(self, m: Match) -> None:
        """Apply what other replicas logged after this replica's last action of ``m`` (the log's tail, one
        indexed read); nothing on a database of one server."""
        if not self.shared:
            return
        with m.lock:
            if m.finished:
                return
            for i, a in enumerate(self.store.actions_from(m.id, m.action_count)):
                if a not in m.state.legal_actions():
                    raise StoreError(f"{self.store.path}: match {m.id}: logged action {m.action_count} ({a}) is "
                                     f"not legal")
                m.apply(a)
            self._draw_chance(m)

    def _on_notification(self, payload: str) -> None:
        """What another replica (or this one) committed: ``act:ID:COUNT``, ``new:ID``, ``leases``."""
        kind, _, rest = payload.partition(":")
        if kind == "act":
            mid, _, count = rest.rpartition(":")
            m = self._matches.get(mid)
            if m is not None and m.action_count < int(count):
                self._catch_up(m)
        elif kind in ("new", "leases"):
            self._wake.set()
        elif kind == "listening":  # (re)connected: notifications may have been missed
            for m in list(self._matches.values()):
                self._catch_up(m)
            self._wake.set()

    def _lease_loop(self) -> None:
        tick = self.lease_seconds / 6
        while not self._closed.is_set():
            try:
                self._lease_tick()
            except Exception:  # noqa: BLE001 - the database is unreachable: the next tick tries again
                if self._closed.is_set():
                    return
                log.exception("bot lease tick failed")
            self._wake.wait(tick)
            self._wake.clear()

    def _lease_tick(self) -> None:
        """Renew this replica's leases (stop the bots of a lease lost), free those of ended runners, then take
        unleased bot matches up to this replica's fair share (the leased and unleased ones over the replicas
        alive)."""
        began = time.monotonic()
        alive = self.store.heartbeat(self.replica_id, self.lease_seconds)
        held = self.store.renew(self.replica_id, self.lease_seconds)
        with self._lock:
            runners = dict(self._runners)
        for mid, r in runners.items():
            if mid not in held and r.claimed < began:
                log.warning("match %s: bot lease lost; its bots stop here", mid)
                r.stop()
                with self._lock:
                    if self._runners.get(mid) is r:
                        del self._runners[mid]
            elif not r.thread.is_alive() and r.claimed < began:
                with self._lock:
                    if self._runners.get(mid) is r:
                        del self._runners[mid]
                self.store.release(mid, self.replica_id)
        for mid in held - set(runners):
            with self._lock:
                running = mid in self._runners
            if not running:
                self.store.release(mid, self.replica_id)
        candidates, leased = self.store.unleased(64, game=FEUDO)
        self._share = max(1, math.ceil((leased + len(candidates)) / alive))
        for mid in candidates:
            if self._closed.is_set():
                return
            with self._lock:
                if len(self._runners) >= self._share:
                    return
            try:
                m = self._match(mid)
            except NotFound:
                continue
            self._catch_up(m)
            self._start_bots(m, force=True)

    # -- retention (HostedMatches) ----------------------------------------------------------------------------
    def _waits_for_bot(self, m: Match) -> bool:
        return m.current_player() in m.setup.bot_seats

    def _retired(self, m: Match) -> None:
        with self._lock:
            runner = self._runners.pop(m.id, None)
        if runner is not None:
            runner.stop()  # an idle match's bots are waiting for the external seat: they just stop
            if self.shared:
                self.store.release(m.id, self.replica_id)

    def begin_close(self) -> None:
        """Shutting down: watch streams end, new matches are refused, bots stop after their current decision;
        calls on existing matches still work until :meth:`close`."""
        self._closed.set()
        self._wake.set()  # the lease thread ends now
        for r in list(self._runners.values()):
            r.stop()
        for m in list(self._matches.values()):
            with m.lock:
                m.changed.notify_all()

    def close(self, timeout: float = 5.0) -> None:
        """Stop the bots (a search under way is cancelled and its decision dropped), wait for their threads
        together up to ``timeout`` seconds in all, and close the store (the finished matches marked retired, so
        that a server starting again does not load them)."""
        self.begin_close()
        deadline = time.monotonic() + timeout
        for r in list(self._runners.values()):  # all were stopped at once: their threads end together
            r.join(max(0.0, deadline - time.monotonic()))
        self._retire_finished()
        if self.shared:
            if self._leaser is not None:
                self._leaser.join(2.0)
            try:
                self.store.leave(self.replica_id)  # its bot matches are taken over at once, not after the lease
            except StoreError:  # pragma: no cover - the database is gone: the leases expire instead
                log.warning("could not free this replica's bot leases; they expire in %g s", self.lease_seconds)
        self.store.close()

    # -- helpers -------------------------------------------------------------------------------------------
    @staticmethod
    def _check_seat(m: Match, seat: Any, token: Any) -> int:
        return check_seat_token(seat, token, m.setup.players, m.token_hashes)

    def _commit(self, m: Match, action: int, expected: int) -> None:
        """Log one legal action at index ``expected`` with the chance outcomes that follow it and the match's
        summary after them (one transaction), then apply them. :class:`Raced` if another server logged that
        index first (the database's key ``(match_id, idx)``): the match is then brought up to date."""
        with m.lock:
            before = m.action_count
            self._catch_up(m)
            if m.action_count != expected:
                kind = Raced if before == expected else FailedPrecondition  # Raced: checked, then overtaken
                raise kind(f"expected_action_count: the match is at action {m.action_count}, not {expected}")
            after, draws = m.after(action)
            try:
                self.store.append_actions(m.id, expected, [action, *draws],
                                          summary=m.summary(after, expected + 1 + len(draws)),
                                          finished=after.is_terminal())
            except Conflict:
                self._catch_up(m)
                raise Raced(f"expected_action_count: action {expected} was logged by another server; the match "
                            f"is at action {m.action_count}") from None
            m.apply(action)
            for a in draws:
                m.apply(a)

    def _draw_chance(self, m: Match) -> None:
        """Draw the chance outcomes at the end of the log (a log written before they were logged with their
        action); the same draw whichever server makes it."""
        while m.current_player() == CHANCE:
            a = m.chance_action()
            try:
                self.store.append_actions(m.id, m.action_count, [a])
            except Conflict:
                if not self.shared:
                    raise
                tail = self.store.actions_from(m.id, m.action_count)
                a = tail[0] if tail else a
            m.apply(a)

    # -- calls ---------------------------------------------------------------------------------------------
    def create_match(self, setup: dict | MatchSetup) -> dict[str, Any]:
        """A new match; returns its id and a token for each external seat (shown only here)."""
        if self._closed.is_set():
            raise FailedPrecondition("the service is shutting down")
        if not isinstance(setup, MatchSetup):
            setup = MatchSetup.from_dict(setup)
        if self.bot_limits is not None:
            for p in setup.bot_seats:  # before the bots are made: no file of a client's choosing is opened
                self.bot_limits.check_files(setup.seats[p], f"seats[{p}]")
        setup.check_bots()
        if self.bot_limits is not None:
            self.bot_limits.check(setup, None if self.slots is None else self.slots.background_threads_cap)
        tokens = {p: new_token() for p in setup.external_seats}
        if self.live_count() >= self.max_matches:
            self.sweep()  # idle and finished ones go first
        with self._lock:
            live = sum(1 for x in self._matches.values() if not x.finished)
            if live >= self.max_matches:
                raise ResourceExhausted(f"the server holds {live} live matches, its limit (--max-matches); "
                                        f"retry when one ends")
            match_id = secrets.token_hex(8)
            m = Match(match_id, setup, {p: token_hash(t) for p, t in tokens.items()}, time.time())
            with m.lock:
                draws = []
                while m.current_player() == CHANCE:  # the first Castle placer (R21) is drawn at creation
                    a = m.chance_action()
                    draws.append(a)
                    m.apply(a)
                self.store.create_match(match_id, setup.to_dict(), m.token_hashes, m.created, draws,
                                        summary=m.summary(), bots=bool(setup.bot_seats), game=FEUDO)
            self._matches[match_id] = m
        self._start_bots(m)
        log.info("match %s created: %s", match_id, ", ".join(quoted(x) for x in setup.seats))
        return {"match_id": match_id, "tokens": tokens}

    def game_of(self, match_id: str):
        """The match's :class:`engine.Game` (ruleset, map, players: public)."""
        return self._match(match_id).state.game

    def game_of_summary(self, summary: dict[str, Any]):
        """The :class:`engine.Game` of a match's summary (:meth:`list_matches`), built from the setup it carries,
        without loading a retired match back into memory."""
        return _game_of_setup(json.dumps(summary["setup"], sort_keys=True))

    def castles_of(self, match_id: str) -> tuple[int, ...]:
        """The Castle sites the match started with, per seat (empty: placing them is part of the match)."""
        return tuple(self._match(match_id).setup.castles or ())

    def get_observation(self, match_id: str, seat: int, token: str) -> dict[str, Any]:
        m = self._match(match_id)
        self._check_seat(m, seat, token)
        with m.lock:  # (a match retired meanwhile has not changed: its observation is still true)
            self._catch_up(m)
            return m.observation(seat)

    def public_observation(self, match_id: str) -> dict[str, Any]:
        """A spectator's view (R22): what every player sees, no seat's selection, no legal actions."""
        m = self._match(match_id)
        with m.lock:
            self._catch_up(m)
            return m.public_observation()

    def submit_action(self, match_id: str, seat: int, token: str, action: int,
                      expected_action_count: int) -> dict[str, Any]:
        """Apply ``action`` for ``seat``; returns ``{"action_count": n}``, n the count right after it."""
        for _ in range(3):  # a match retired between the lookup and the lock is looked up (loaded back) again
            m = self._match(match_id)
            self._check_seat(m, seat, token)
            check_action_request(action, expected_action_count)
            with m.lock:
                if not m.retired:
                    return self._submit(m, seat, action, expected_action_count)
        raise FailedPrecondition("the match was being retired from memory; retry")

    def _submit(self, m: Match, seat: int, action: int, expected_action_count: int) -> dict[str, Any]:
        with m.lock:
            self._catch_up(m)
            try:
                return self._submit_once(m, seat, action, expected_action_count)
            except Raced:  # another replica logged that index at the same moment: a retry if it was this action
                return self._submit_once(m, seat, action, expected_action_count)

    def _submit_once(self, m: Match, seat: int, action: int, expected_action_count: int) -> dict[str, Any]:
        with m.lock:
            n = m.action_count
            if expected_action_count < n:
                if m.actions[expected_action_count] == action and m.entries[expected_action_count].player == seat:
                    return {"action_count": expected_action_count + 1, "retry": True}  # already applied
                done = m.actions[expected_action_count]
                who = player_name(m.entries[expected_action_count].player)
                raise FailedPrecondition(
                    f"expected_action_count: stale: action {expected_action_count} was already played ({who}: "
                    f"{m.state.action_to_string(done) if m.entries[expected_action_count].player == seat else 'taken'})"
                    f" and the match is now at action {n}; GetObservation gives the position")
            if expected_action_count > n:
                raise FailedPrecondition(f"expected_action_count: the match is at action {n}, not "
                                         f"{expected_action_count}")
            if m.finished:
                raise FailedPrecondition("the match is over")
            cp = m.current_player()
            if cp != seat:
                raise FailedPrecondition(f"out of turn: {player_name(cp)} is to act, not {player_name(seat)}")
            legal = m.state.legal_actions()
            if action not in legal:
                count = m.state.game.num_distinct_actions
                what = (f"is not legal: no action of this game has that id (ids 0..{count - 1})"
                        if not 0 <= action < count else f"({m.state.action_to_string(action)}) is not legal now")
                raise InvalidArgument(f"action: {action} {what}; {len(legal)} legal actions (GetObservation lists "
                                      f"them)")
            self._commit(m, action, n)
        return {"action_count": n + 1, "retry": False}

    def watch(self, match_id: str, seat: int | None, token: str | None, from_count: int = 0,
              cancel: threading.Event | None = None, poll: float = 0.5) -> Iterator[dict[str, Any]]:
        """The match's events as ``seat`` sees them (``seat=None``: a spectator, every pick hidden), from
        action ``from_count`` on, as they happen; ends with an ``end`` event once the match is over, or when
        ``cancel`` is set or the service closes. Checks happen at the call, before the first event."""
        m = self._match(match_id)
        if seat is not SPECTATOR:
            self._check_seat(m, seat, token)
        if not _is_int(from_count) or from_count < 0:
            raise InvalidArgument(f"from_count: expected a non-negative integer, got {quoted(from_count)}")
        return self._events(m, seat, from_count, cancel, poll)

    def _events(self, m: Match, seat, i: int, cancel, poll) -> Iterator[dict[str, Any]]:
        with m.lock:
            m.watchers += 1  # a match watched is never idle
        try:
            while True:
                with m.lock:
                    self._watch_catch_up(m)
                    while (i >= m.action_count and not m.finished and not m.retired and not self._closed.is_set()
                           and not (cancel is not None and cancel.is_set())):
                        m.changed.wait(poll)
                        self._watch_catch_up(m)  # LISTEN wakes it at once; this is the fallback
                    batch = [m.event(j, seat) for j in range(i, m.action_count)]
                    done = m.finished and i + len(batch) >= m.action_count
                    end = m.end_event() if done else None
                    stale = m.retired and not m.finished
                yield from batch
                i += len(batch)
                if end is not None:
                    yield end
                    return
                if self._closed.is_set() or (cancel is not None and cancel.is_set()):
                    return
                if stale:  # retired meanwhile: go on with the match loaded back
                    m = self._watch_again(m)
        finally:
            with m.lock:
                m.watchers -= 1

    def _watch_catch_up(self, m: Match) -> None:
        if self.shared:
            try:
                self._catch_up(m)
            except StoreError as e:  # the database is unreachable: the stream waits and tries again
                log.warning("match %s: watch could not read the action log: %s", m.id, e)

    def get_record(self, match_id: str) -> dict[str, Any]:
        """The whole game once the match is over (every pick has been revealed by then, R7). A finished match
        retired from memory is read from the store as it is, without loading it back."""
        check_match_id(match_id)
        if match_id not in self._matches:
            retired = self.store.retired(match_id, game=FEUDO)
            if retired is not None and retired[0]:
                stored = self.store.load(match_id, game=FEUDO)
                summary = retired[1]
                return {"format": "feudo-match/1", "match_id": match_id, "setup": stored.setup,
                        "actions": list(stored.actions), "winners": list(summary["winners"]),
                        "vp": list(summary["vp"])}
        m = self._match(match_id)
        with m.lock:
            self._catch_up(m)
            if not m.finished:
                raise FailedPrecondition(f"match {match_id} is not over (action {m.action_count}); its record is "
                                         f"given once it ends")
            return m.record()

    def replay_record(self, action_count: int, seat: int | None, match_id: str | None = None,
                      record_json: str | None = None) -> dict[str, Any]:
        """A finished match's record (``match_id``) or a "feudo-game/1" document (``record_json``) replayed to
        ``action_count`` as ``seat`` saw it (``None``: a spectator); see :mod:`feudo_ai.matches.replay`."""
        if match_id is not None:
            r = self.get_record(match_id)  # FailedPrecondition before the match is over
            start = MatchSetup.from_dict(r["setup"]).start_state(backend="reference")
            return replay_view(start, list(r["actions"]), action_count, seat, path="match_id")
        if record_json is None:
            raise InvalidArgument("record: expected match_id or record_json")
        start, actions = record_start(record_json)
        return replay_view(start, actions, action_count, seat)

    def wait(self, match_id: str, timeout: float = 60.0, until=None) -> bool:
        """Block until the match is over (or ``until(match)`` holds); False on timeout. For tests and tools."""
        m = self._match(match_id)
        deadline = time.monotonic() + timeout
        with m.lock:
            while not (until(m) if until else m.finished):
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                m.changed.wait(min(left, 0.5))
                self._catch_up(m)
        return True


@functools.lru_cache(maxsize=64)
def _game_of_setup(setup_json: str):
    """The game (ruleset, map, players) of a setup, by its JSON: many matches share a few setups."""
    return MatchSetup.from_dict(json.loads(setup_json)).start_state().game
