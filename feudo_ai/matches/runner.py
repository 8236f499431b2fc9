"""Bots on the server: one background thread per match with bot seats moves them, with their own budgets.

A bot thinks outside the match's lock, on the position rebuilt from its own seat's log
(:class:`engine.history.SeatReplay`), so other calls on the match (observations, watches, other matches) never
wait for a search. The move is then committed through the service like any other action (logged in the store,
then applied). Bots are made from their spec (:func:`feudo_ai.bots.make_bot`) with seeds drawn from the match
seed; a bot that fails or returns an illegal action is logged and replaced, for that decision only, by a seeded
random legal action, so that a faulty bot never stalls a match.

On a server each bot search goes through the server's admission and caps (``slots``,
:class:`feudo_ai.search.admission.SearchSlots`, shared with the Advisor's calls; ``limits``,
:class:`feudo_ai.matches.limits.BotLimits`): it waits for its turn among the searches (never refused), runs within
the caps and as nice as the Advisor's searches. :meth:`BotRunner.stop` cancels the search under way (or the wait
for its turn) at once: the decision is dropped, nothing is committed.
"""

from __future__ import annotations

import logging
import random
import threading
from typing import Callable

from feudo_ai.bots import make_bot
from feudo_ai.bots.base import AdviceBot
from feudo_ai.search import advise
from feudo_ai.search.cancel import CancelEvent

from .errors import FailedPrecondition
from .match import Match, player_name

log = logging.getLogger("feudo.matches")

Commit = Callable[[Match, int, int], None]  # (match, action, expected action count): logs then applies


class SearchCancelled(Exception):
    """A bot's search was cancelled while it waited for its turn (the runner is stopping)."""


class BotRunner:
    """Moves the bot seats of one match until it ends or :meth:`stop` is called; its bots' searches go through
    ``slots`` and ``limits`` when given (see the module)."""

    def __init__(self, match: Match, commit: Commit, poll: float = 0.5, limits=None, slots=None, refresh=None):
        """``refresh(match)``: brings the match up to date with the database before each decision (replicas:
        actions other servers logged); a commit refused as stale (:class:`FailedPrecondition`: another server
        logged that index) is decided again."""
        self.match = match
        self._refresh = refresh
        self._commit = commit
        self._poll = poll
        self._stop = CancelEvent()  # set by stop(): also cancels the search under way
        self.limits = limits
        self.slots = slots
        self.bots = {p: make_bot(match.setup.seats[p], match.setup.seed * 1000 + p) for p in match.setup.bot_seats}
        for bot in self.bots.values():
            if isinstance(bot, AdviceBot):
                bot.cancel = self._stop
                if limits is not None or slots is not None:
                    bot.searcher = self._search
        self.thread = threading.Thread(target=self._run, name=f"bots-{match.id}", daemon=True)

    def _search(self, state, seat: int, options, cancel) -> object:
        """One bot search: its turn among the server's searches, then within the caps."""
        threads = min(options.threads, self.limits.max_threads) if self.limits is not None else options.threads
        if self.slots is not None and not self.slots.acquire(threads, cancel):
            raise SearchCancelled()
        try:
            if self.limits is not None:
                options = self.limits.bounded(options, self.match.setup.players)
            return advise(state, seat, options, cancel=cancel)
        finally:
            if self.slots is not None:
                self.slots.release(threads, background=True)

    def start(self) -> "BotRunner":
        self.thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        with self.match.lock:
            self.match.changed.notify_all()

    def join(self, timeout: float | None = None) -> None:
        self.thread.join(timeout)

    def _run(self) -> None:
        m = self.match
        while not self._stop.is_set():
            if self._refresh is not None:
                try:
                    self._refresh(m)
                except Exception:  # noqa: BLE001 - the database is unreachable: try again after a pause
                    log.exception("match %s: could not read the action log", m.id)
                    self._stop.wait(self._poll)
                    continue
            with m.lock:
                if m.finished:
                    return
                p = m.current_player()
                if p not in self.bots:
                    m.changed.wait(self._poll)  # an external seat's turn: wait for its action
                    continue
                count = m.action_count
                view = m.views[p].state.clone()
            action = self._decide(p, view, count)
            if self._stop.is_set():
                return
            with m.lock:
                if m.action_count != count or m.current_player() != p:
                    continue  # cannot happen (only this thread moves bot seats); decide again if it does
                if action not in m.state.legal_actions():
                    m.bot_errors += 1
                    log.error("match %s: bot %r (%s) chose illegal action %r at action %d; playing a random one",
                              m.id, m.setup.seats[p], player_name(p), action, count)
                    action = random.Random(f"{m.setup.seed}/{count}/fallback").choice(m.state.legal_actions())
                try:
                    self._commit(m, action, count)
                except FailedPrecondition:
                    continue  # another server logged that index first (a lease lost meanwhile): decide again
                except Exception:  # the store refused the write: stop moving this match, loudly
                    log.exception("match %s: could not log the bot's action %d; bot thread stops", m.id, count)
                    return

    def _decide(self, p: int, view, count: int) -> int | None:
        try:
            return self.bots[p](view)
        except Exception:
            if self._stop.is_set():
                return None  # stopping: the decision is dropped anyway
            self.match.bot_errors += 1
            log.exception("match %s: bot %r (%s) failed at action %d", self.match.id, self.match.setup.seats[p],
                          player_name(p), count)
            return None
