"""The match service in plain Python: create, observe, act, watch, list, record (gRPC-free).

:class:`MatchService` is what the gRPC servicer calls; it raises the exceptions of
:mod:`feudo_ai.matches.errors` (one per status code). Every seat call checks the seat's token first (constant
time). Every action is logged in the store (one committed transaction) before it is applied and before the
call returns; chance outcomes are drawn and logged the same way right after the action that led to them, so no
caller ever sees a chance node. Bot seats are moved by :class:`feudo_ai.matches.runner.BotRunner` threads.

Submitting is idempotent: ``expected_action_count`` is the number of actions in the log before this one. A retry
of an action that was already applied at that index by that seat gets the same answer and changes nothing; any
other stale or future count, or an action out of turn, is :class:`FailedPrecondition`; an illegal action is
:class:`InvalidArgument` and changes nothing.
"""

from __future__ import annotations

import logging
import secrets
import threading
import time
from typing import Any, Iterator

from engine.state import CHANCE

from .errors import (FailedPrecondition, InvalidArgument, NotFound, PermissionDenied, ResourceExhausted,
                     Unauthenticated)
from .match import SPECTATOR, Match, player_name
from .runner import BotRunner
from .spec import MatchSetup
from .store import Store, StoreError
from .tokens import new_token, token_hash, token_matches

log = logging.getLogger("feudo.matches")


def _is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


class MatchService:
    """Matches in a store at ``db`` (a SQLite path; ``":memory:"`` keeps nothing). Matches found in the store
    are loaded at once and their bots resume (``run_bots=False``: nobody moves the bots, for tests)."""

    def __init__(self, db: str = ":memory:", run_bots: bool = True, max_matches: int = 1000):
        self.store = Store(db)
        self.max_matches = max_matches
        self._run_bots = run_bots
        self._lock = threading.Lock()
        self._matches: dict[str, Match] = {}
        self._runners: dict[str, BotRunner] = {}
        self._closed = threading.Event()
        self.unloadable: dict[str, str] = {}  # match id -> why it could not be loaded (it stays in the store)
        for stored in self.store.load_all():
            try:
                self._load(stored)
            except Exception as e:  # noqa: BLE001 - one damaged match must not keep the others from resuming
                self.unloadable[stored.id] = f"{type(e).__name__}: {e}"
                log.error("match %s could not be loaded and is not served: %s", stored.id, self.unloadable[stored.id])

    # -- lifecycle -----------------------------------------------------------------------------------------
    def _load(self, stored) -> None:
        setup = MatchSetup.from_dict(stored.setup)
        m = Match(stored.id, setup, stored.token_hashes, stored.created)
        with m.lock:
            for i, a in enumerate(stored.actions):
                if a not in m.state.legal_actions():
                    raise StoreError(f"{self.store.path}: match {stored.id}: logged action {i} ({a}) is not legal")
                m.apply(a)
            self._draw_chance(m)  # a restart between an action and the chance draw after it
        self._matches[m.id] = m
        self._start_bots(m)
        log.info("match %s loaded at action %d%s", m.id, m.action_count, " (finished)" if m.finished else "")

    def _start_bots(self, m: Match) -> None:
        if self._run_bots and m.setup.bot_seats and not m.finished:
            self._runners[m.id] = BotRunner(m, self._commit).start()

    def begin_close(self) -> None:
        """Shutting down: watch streams end, new matches are refused, bots stop after their current decision;
        calls on existing matches still work until :meth:`close`."""
        self._closed.set()
        for r in list(self._runners.values()):
            r.stop()
        for m in list(self._matches.values()):
            with m.lock:
                m.changed.notify_all()

    def close(self, timeout: float = 5.0) -> None:
        """Stop the bots (a search under way finishes its decision, which is then dropped) and the store."""
        self.begin_close()
        for r in list(self._runners.values()):
            r.join(timeout)
        self.store.close()

    # -- helpers -------------------------------------------------------------------------------------------
    def _match(self, match_id: Any) -> Match:
        if not isinstance(match_id, str) or not match_id:
            raise InvalidArgument(f"match_id: expected a match id, got {match_id!r}")
        m = self._matches.get(match_id)
        if m is None:
            raise NotFound(f"match_id: no match {match_id!r}")
        return m

    @staticmethod
    def _check_seat(m: Match, seat: Any, token: Any) -> int:
        if not _is_int(seat) or not 0 <= seat < m.setup.players:
            raise InvalidArgument(f"seat: expected an integer in [0, {m.setup.players}), got {seat!r}")
        if not isinstance(token, str) or not token:
            raise Unauthenticated("token: this call needs the seat's token")
        stored = m.token_hashes.get(seat)
        if stored is None:
            token_matches(token, token_hash(""))  # same work either way: no timing hint of which seats are bots
            raise PermissionDenied(f"seat {seat} is played by a bot on the server")
        if not token_matches(token, stored):
            raise PermissionDenied(f"token: not the token of seat {seat}")
        return seat

    def _commit(self, m: Match, action: int, expected: int) -> None:
        """Log then apply one legal action at index ``expected``, then the chance outcomes that follow."""
        with m.lock:
            if m.action_count != expected:
                raise FailedPrecondition(f"expected_action_count: the match is at action {m.action_count}, "
                                         f"not {expected}")
            self.store.append_actions(m.id, expected, [action])
            m.apply(action)
            self._draw_chance(m)

    def _draw_chance(self, m: Match) -> None:
        while m.current_player() == CHANCE:
            a = m.chance_action()
            self.store.append_actions(m.id, m.action_count, [a])
            m.apply(a)

    # -- calls ---------------------------------------------------------------------------------------------
    def create_match(self, setup: dict | MatchSetup) -> dict[str, Any]:
        """A new match; returns its id and a token for each external seat (shown only here)."""
        if self._closed.is_set():
            raise FailedPrecondition("the service is shutting down")
        if not isinstance(setup, MatchSetup):
            setup = MatchSetup.from_dict(setup)
        setup.check_bots()
        tokens = {p: new_token() for p in setup.external_seats}
        with self._lock:
            if len(self._matches) >= self.max_matches:
                raise ResourceExhausted(f"the server holds {len(self._matches)} matches, its limit")
            match_id = secrets.token_hex(8)
            m = Match(match_id, setup, {p: token_hash(t) for p, t in tokens.items()}, time.time())
            with m.lock:
                draws = []
                while m.current_player() == CHANCE:  # the first Castle placer (R21) is drawn at creation
                    a = m.chance_action()
                    draws.append(a)
                    m.apply(a)
                self.store.create_match(match_id, setup.to_dict(), m.token_hashes, m.created, draws)
            self._matches[match_id] = m
        self._start_bots(m)
        log.info("match %s created: %s", match_id, ", ".join(setup.seats))
        return {"match_id": match_id, "tokens": tokens}

    def game_of(self, match_id: str):
        """The match's :class:`engine.Game` (ruleset, map, players: public)."""
        return self._match(match_id).state.game

    def castles_of(self, match_id: str) -> tuple[int, ...]:
        """The Castle sites the match started with, per seat (empty: placing them is part of the match)."""
        return tuple(self._match(match_id).setup.castles or ())

    def get_observation(self, match_id: str, seat: int, token: str) -> dict[str, Any]:
        m = self._match(match_id)
        self._check_seat(m, seat, token)
        with m.lock:
            return m.observation(seat)

    def submit_action(self, match_id: str, seat: int, token: str, action: int,
                      expected_action_count: int) -> dict[str, Any]:
        """Apply ``action`` for ``seat``; returns ``{"action_count": n}``, n the count right after it."""
        m = self._match(match_id)
        self._check_seat(m, seat, token)
        if not _is_int(action):
            raise InvalidArgument(f"action: expected an integer, got {action!r}")
        if not _is_int(expected_action_count) or expected_action_count < 0:
            raise InvalidArgument(f"expected_action_count: expected a non-negative integer, got "
                                  f"{expected_action_count!r}")
        with m.lock:
            n = m.action_count
            if expected_action_count < n:
                if m.actions[expected_action_count] == action and m.entries[expected_action_count].player == seat:
                    return {"action_count": expected_action_count + 1, "retry": True}  # already applied
                raise FailedPrecondition(f"expected_action_count: stale, the match is at action {n}, not "
                                         f"{expected_action_count}")
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
                raise InvalidArgument(f"action: {action} ({m.state.action_to_string(action)}) is not legal now; "
                                      f"{len(legal)} legal actions (GetObservation lists them)")
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
            raise InvalidArgument(f"from_count: expected a non-negative integer, got {from_count!r}")
        return self._events(m, seat, from_count, cancel, poll)

    def _events(self, m: Match, seat, i: int, cancel, poll) -> Iterator[dict[str, Any]]:
        while True:
            with m.lock:
                while (i >= m.action_count and not m.finished and not self._closed.is_set()
                       and not (cancel is not None and cancel.is_set())):
                    m.changed.wait(poll)
                batch = [m.event(j, seat) for j in range(i, m.action_count)]
                done = m.finished and i + len(batch) >= m.action_count
                end = m.end_event() if done else None
            yield from batch
            i += len(batch)
            if end is not None:
                yield end
                return
            if self._closed.is_set() or (cancel is not None and cancel.is_set()):
                return

    def list_matches(self) -> list[dict[str, Any]]:
        out = []
        for m in list(self._matches.values()):
            with m.lock:
                out.append(m.summary())
        return out

    def get_record(self, match_id: str) -> dict[str, Any]:
        """The whole game once the match is over (every pick has been revealed by then, R7)."""
        m = self._match(match_id)
        with m.lock:
            if not m.finished:
                raise FailedPrecondition(f"match {match_id} is not over (action {m.action_count}); its record is "
                                         f"given once it ends")
            return m.record()

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
        return True
