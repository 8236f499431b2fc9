"""Hosted Fief 2 matches in plain Python (gRPC-free): create, observe, act, watch, list, record.

What :class:`Fief2MatchService` shares with Feudo's :class:`~feudo_ai.matches.service.MatchService`: the errors
(:mod:`feudo_ai.matches.errors`, one per status code, each naming the field), the match ids (:data:`~.hosting.MATCH_ID`,
checked before any look-up), the seat tokens (:mod:`feudo_ai.matches.tokens`: shown once, only their hash kept,
compared in constant time), the checks of those and of a submitted action's fields (the functions ``check_*`` of
:mod:`feudo_ai.matches.service` and :mod:`feudo_ai.matches.hosting`), the cap on live matches (``max_matches``),
the caps on the bots' search settings (a :class:`~feudo_ai.matches.limits.BotLimits`) and idempotent submits at an
expected action count.

What it shares with it through :class:`~feudo_ai.matches.hosting.HostedMatches`: the store (the same database,
``--db``: a SQLite file or PostgreSQL; its rows keyed by the game, :data:`~feudo_ai.matches.store.FIEF2`, so the two
games' services never see each other's matches), retention (an idle match is retired from memory after
``idle_seconds``, a finished one after ``finished_seconds``, both loaded back on their next call) and the listing.

Persistence: a hosted match is its setup (the game's setup, the seats' specs, the seed, the length of the opening
given at creation), its seat tokens' hashes and its action log, chance outcomes (dealt cards, dice) included. Chance
is drawn right after the action that led to it from ``random.Random(seed)`` (:func:`fief2.sample_chance`), so no
caller ever sees a chance node; each action is logged with the chance outcomes after it and the match's summary in
one transaction committed before the call returns (a server killed at any moment restarts with every acknowledged
action). A match is loaded by replaying its log, each chance outcome after the opening drawn again from the seed
and checked against the log (so the generator goes on from where it was: the same cards and dice as if the server
had never stopped); a server starting loads the matches that were live and their bots resume.

On a shared database (PostgreSQL, several replicas) each replica's match in memory is a cache of the log: before it
answers it applies the log's tail (catch-up), an action index is taken once (the store's key; the loser of a race
answers as for a retry or a stale count), notifications of other replicas' commits catch it up at once, and one
replica moves a match's bots, the holder of its bot lease (as Feudo's, :mod:`feudo_ai.matches.service`).

The bot seats are moved by a few background threads (one match at a time each); the greedy bots read only what
their family may know (docs/fief2-bots.md), the search bots (``ismcts``, ``pimc``) search from their family's
observation (:func:`feudo_ai.advise`), through the server's admission and within its caps. A bot made again after
a restart has the same seed (drawn from the match's), not the same memory: its decisions from there may differ from
those of a server that never stopped, the game's log and chance do not.

Privacy (F46, F52): a seat's observation is fief2's ``State.observation(seat)``; a watched event names a card
dealt, discarded, given or handed over only to the families involved (the receiver, the giver); the record, with
every card and the seed, only once the match is over.
"""

from __future__ import annotations

import collections
import json
import logging
import os
import random
import secrets
import socket
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Iterator

from feudo_ai.bounded import quoted

from .database import open_store
from .errors import FailedPrecondition, InvalidArgument, NotFound, ResourceExhausted
from .hosting import FINISHED_SECONDS, IDLE_SECONDS, HostedMatches, check_lifetimes
from .limits import BotLimits
from .service import (LEASE_SECONDS, MAX_MATCHES, Raced, _is_int, check_action_request, check_match_id,
                      check_seat_token)
from .store import FIEF2, Conflict, SQLStore, StoreError
from .tokens import new_token, token_hash

log = logging.getLogger("feudo.matches")

GAME = "fief2"
MAX_OPENING = 20_000  # actions of a CreateMatch opening (a 6-player game to its end is about 5,000)
MAX_SPEC_CHARS = 256  # a bot spec
BOT_STEPS = 64  # bot actions of one match before its worker looks at the next match (fairness)
BOT_WORKERS = 4  # threads moving the matches' bots
HIDDEN_KINDS = ("deal", "discard", "give", "hand_over")  # actions whose card only the families involved see (F46)


def check_setup(setup: Any, where: str = "setup") -> dict:
    """A Fief 2 game setup ``{"players", "turn_limit"?, "scored_turns"?}`` checked field by field
    (:raises InvalidArgument: naming the field)."""
    if not isinstance(setup, dict):
        raise InvalidArgument(f"{where}: expected the game's setup")
    players = setup.get("players")
    if not _is_int(players) or not 3 <= players <= 6:
        raise InvalidArgument(f"{where}.players: Fief 2 is for 3 to 6 families (F1), got {quoted(players)}")
    out = {"players": players, "turn_limit": None, "scored_turns": None}
    tl = setup.get("turn_limit")
    if tl is not None:
        if not _is_int(tl) or not 0 <= tl <= 1000:
            raise InvalidArgument(f"{where}.turn_limit: expected an integer in [0, 1000] (F51), got {quoted(tl)}")
        out["turn_limit"] = tl
    st = setup.get("scored_turns")
    if st is not None:
        if st not in (0, 10, 15, 20, 25) or not _is_int(st):
            raise InvalidArgument(f"{where}.scored_turns: expected 0, 10, 15, 20 or 25 (F50), got {quoted(st)}")
        out["scored_turns"] = st
    return out


def new_state(setup: dict):
    """A new game of a checked setup (:func:`check_setup`)."""
    from fief2 import new_game

    return new_game(players=setup["players"], turn_limit=setup["turn_limit"], scored_turns=setup["scored_turns"])


def check_bot_spec(spec: Any, where: str, limits: BotLimits | None, seed: int, players: int):
    """The Fief 2 bot of ``spec`` (the game registry's bots), a search bot's settings (resolved for ``players``, as
    the bot resolves them) within the server's caps, as :meth:`BotLimits.check` checks Feudo's.

    :raises InvalidArgument: an unknown bot or parameter, a time budget below 1 ms; :raises ResourceExhausted: a
        setting beyond a cap; both naming ``where``."""
    from feudo_ai.bots.base import AdviceBot
    from feudo_ai.games import get_game

    if not isinstance(spec, str) or not spec.strip():
        raise InvalidArgument(f"{where}: expected a bot spec, e.g. 'greedy'")
    if len(spec) > MAX_SPEC_CHARS:
        raise InvalidArgument(f"{where}: a bot spec is at most {MAX_SPEC_CHARS} characters, got {len(spec)}")
    if limits is not None:
        limits.check_files(spec, where)  # before the bot is made: no file of a client's choosing is opened
    try:
        made = get_game(GAME).make_bot(spec, seed, flag=where)
    except (ValueError, ImportError) as e:  # ImportError: a search bot on a build without its compiled table
        raise InvalidArgument(str(e) if isinstance(e, ValueError) else f"{where}: {e}") from None
    if isinstance(made, AdviceBot) and limits is not None:
        opts = made.options_for(players) if hasattr(made, "options_for") else made.options
        limits._check_options(where, opts, None)
    return made


@dataclass
class Event:
    """One logged action with who may see its card: ``seen_by`` None is public, else the families that see it."""

    index: int
    actor: int | None  # None: chance
    action: int
    text: str
    hidden_text: str
    seen_by: frozenset | None
    turn: int
    phase: int

    def view(self, seat: int | None) -> dict:
        shown = self.seen_by is None or (seat is not None and seat in self.seen_by)
        return {"index": self.index, "actor": self.actor, "action": self.action if shown else None,
                "text": self.text if shown else self.hidden_text, "turn": self.turn, "phase": self.phase}


@dataclass
class Fief2Match:
    """A match in memory: its setup, state and log (a replay of the store's). Callers hold :attr:`lock`."""

    id: str
    setup: dict
    seats: list  # spec per seat, "external" for an open seat
    seed: int
    state: Any
    token_hashes: dict  # seat -> SHA-256 of its token (external seats)
    bots: dict  # seat -> Bot
    created: float = field(default_factory=time.time)
    opening: int = 0  # the first actions of the log, given at creation (chance in them was not drawn here)
    actions: list = field(default_factory=list)
    events: list = field(default_factory=list)
    actors: list = field(default_factory=list)  # who played each logged action (None: chance)
    lock: threading.RLock = field(default_factory=threading.RLock)
    changed: threading.Condition = None  # type: ignore[assignment]
    finished_at: float | None = None  # time.monotonic() when it ended (retention)
    touched: float = field(default_factory=time.monotonic)  # its last action or load (retention)
    watchers: int = 0  # watch streams open (a match watched is never idle)
    retired: bool = False  # retired from memory: a call looks it up (loads it back) again

    def __post_init__(self) -> None:
        self.changed = threading.Condition(self.lock)
        self.rng = random.Random(self.seed)

    @property
    def finished(self) -> bool:
        return self.state.is_terminal()

    @property
    def action_count(self) -> int:
        return len(self.actions)

    def to_act(self) -> int | None:
        cp = self.state.current_player()
        return cp if cp >= 0 else None

    def stored_setup(self) -> dict:
        """The setup as the store keeps it (:meth:`Fief2MatchService._load` makes the match again from it)."""
        return {"setup": dict(self.setup), "seats": list(self.seats), "seed": self.seed, "opening": self.opening}

    def after(self, action: int) -> tuple[list[int], Any]:
        """The chance outcomes that follow ``action`` (legal: checked by the caller) and the state after them,
        on copies: nothing of the match changes (it changes once they are logged, :meth:`play`)."""
        from fief2 import sample_chance

        st = self.state.clone()
        rng = random.Random()
        rng.setstate(self.rng.getstate())
        st.apply_action(action)
        draws = []
        while st.is_chance_node():
            draws.append(sample_chance(st, rng))
            st.apply_action(draws[-1])
        return draws, st

    def play(self, actions: list[int]) -> None:
        """Apply logged actions (each legal, each chance outcome after the opening the seed's next draw: a log
        that says otherwise is damaged, :class:`StoreError`), then wake the watchers."""
        from fief2 import sample_chance

        for a in actions:
            st, i = self.state, len(self.actions)
            if not _is_int(a) or a not in st.legal_actions():
                raise StoreError(f"fief2 match {self.id}: logged action {i} ({a}) is not legal")
            if i >= self.opening and st.is_chance_node():
                drawn = sample_chance(st, self.rng)
                if drawn != a:
                    raise StoreError(f"fief2 match {self.id}: logged chance outcome {i} ({a}) is not the seed's "
                                     f"draw ({drawn})")
            self._apply_one(a)
        self.touched = time.monotonic()
        self.changed.notify_all()

    def _apply_one(self, action: int) -> None:
        st = self.state
        cp = st.current_player()
        actor = cp if cp >= 0 else None
        kind, x = st.game.layout.decode(action)
        text = st.action_to_string(action)
        before = [list(h) for h in st.hands]
        turn, phase = st.turn, st.phase
        st.apply_action(action)
        seen_by, hidden = None, text
        if kind in HIDDEN_KINDS:
            changed = {f for f in range(st.num_players) if before[f] != st.hands[f]}
            involved = set(changed) | ({actor} if actor is not None else set())
            if kind == "give":
                involved.add(x % st.game.layout.MAX_FAMILIES)
            seen_by = frozenset(involved)
            if kind == "deal":
                to = sorted(changed)
                hidden = f"deal a card to family {to[0]}" if to else "deal a card"
                text = f"{text} to family {to[0]}" if to else text
            elif kind == "give":
                hidden = f"give a card to family {x % st.game.layout.MAX_FAMILIES}"
            else:
                hidden = f"{kind.replace('_', ' ')} a card"
        if actor is not None:
            text, hidden = f"family {actor}: {text}", f"family {actor}: {hidden}"
        self.events.append(Event(len(self.actions), actor, action, text, hidden, seen_by, turn, phase))
        self.actions.append(action)
        self.actors.append(actor)
        if st.is_terminal() and self.finished_at is None:
            self.finished_at = time.monotonic()

    def end(self) -> dict:
        st = self.state
        return {"winners": list(st.winners), "power": [st.power(f) for f in range(st.num_players)],
                "turns": st.turn}

    def summary(self, st: Any = None, action_count: int | None = None) -> dict:
        """The public summary (ListMatches), of the match now or of ``st`` after ``action_count`` actions."""
        st = self.state if st is None else st
        cp = st.current_player()
        return {"match_id": self.id, "players": self.setup["players"], "seats": list(self.seats),
                "action_count": len(self.actions) if action_count is None else action_count,
                "to_act": cp if cp >= 0 else None, "finished": st.is_terminal(),
                "winners": list(st.winners) if st.is_terminal() else [],
                "points": [st.power(f) for f in range(st.num_players)], "created": self.created}


class Fief2MatchService(HostedMatches):
    """Fief 2's hosted matches (see the module) in a store: ``store``, an open one shared with Feudo's service (not
    closed by this one), or else the one of ``db`` (a SQLite path, ``":memory:"`` keeping nothing, or a
    ``postgresql://`` URL), opened and closed here. ``run_bots=False``: nobody moves the bots (for tests)."""

    game = FIEF2
    label = "Fief 2 match"

    def __init__(self, db: str = ":memory:", *, store: SQLStore | None = None, max_matches: int = MAX_MATCHES,
                 bot_limits: BotLimits | None = None, run_bots: bool = True, slots: Any = None,
                 bot_workers: int = BOT_WORKERS, idle_seconds: float | None = IDLE_SECONDS,
                 finished_seconds: float | None = FINISHED_SECONDS, sweep_every: float | None = None,
                 lease_seconds: float = LEASE_SECONDS, db_pool: int = 10):
        """``bot_limits``/``slots``: the server's caps and admission of the bots' searches (as Feudo's matches':
        a search bot waits for its turn among the server's searches, and each search is cut to the caps);
        ``bot_workers``: threads moving the matches' bots (one match at a time each); ``idle_seconds``,
        ``finished_seconds``, ``sweep_every``: retention (:class:`~feudo_ai.matches.hosting.HostedMatches`);
        ``lease_seconds``: on a shared database, how long a replica's bot lease lasts without renewal."""
        from feudo_ai.search.cancel import CancelEvent

        check_lifetimes(idle_seconds, finished_seconds, max_matches)
        if not (isinstance(lease_seconds, (int, float)) and lease_seconds > 0):
            raise ValueError(f"lease_seconds: expected a positive number, got {lease_seconds!r}")
        self._owns_store = store is None
        self.store = open_store(db, pool_size=db_pool) if store is None else store
        self.shared = self.store.shared
        self.replica_id = f"{socket.gethostname()}/{os.getpid()}/{secrets.token_hex(4)}/fief2"
        self.lease_seconds = float(lease_seconds)
        self.max_matches = max_matches
        self.idle_seconds = idle_seconds
        self.finished_seconds = finished_seconds
        self.bot_limits = bot_limits
        self.slots = slots
        self._run_bots = run_bots
        self._lock = threading.Lock()
        self._load_lock = threading.Lock()
        self._matches: dict[str, Fief2Match] = {}
        self.unloadable: dict[str, str] = {}
        self._todo: collections.deque[str] = collections.deque()
        self._busy: set[str] = set()  # matches a bot worker is moving (never two workers on one match)
        self._wake = threading.Condition(self._lock)
        self._closed = CancelEvent()  # set by close(): also cancels the bots' searches under way
        self._close_done = False
        if not self.shared:  # on a shared database matches are loaded on demand and bots by lease
            self._load_live()
        self._threads = [threading.Thread(target=self._bot_loop, name=f"fief2-bots-{i}", daemon=True)
                         for i in range(bot_workers if run_bots else 0)]
        if self.shared:
            self.store.listen(self._on_notification)
            if run_bots:
                self._threads.append(threading.Thread(target=self._lease_loop, name="fief2-leases", daemon=True))
        for t in self._threads:
            t.start()
        self._sweeper = self._start_retention(sweep_every)

    # -- the calls -------------------------------------------------------------------------------------------
    def create_match(self, setup: Any, seats: Any, seed: Any = None, opening: Any = ()) -> dict:
        """A new match; returns ``{"match_id", "tokens": {seat: token}}`` (the external seats' tokens)."""
        if self._closed.is_set():
            raise FailedPrecondition("the service is shutting down")
        s = check_setup(setup)
        if not isinstance(seats, (list, tuple)) or len(seats) != s["players"]:
            n = len(seats) if isinstance(seats, (list, tuple)) else quoted(seats)
            raise InvalidArgument(f"seats: expected one seat per family ({s['players']}), got {n}")
        if seed is None:
            seed = secrets.randbits(63)
        elif not _is_int(seed) or not 0 <= seed < 2 ** 64:
            raise InvalidArgument(f"seed: expected an integer in [0, 2^64), got {quoted(seed)}")
        if not isinstance(opening, (list, tuple)):
            raise InvalidArgument("opening: expected a list of actions")
        if len(opening) > MAX_OPENING:
            raise InvalidArgument(f"opening: at most {MAX_OPENING} actions, got {len(opening)}")
        bots, hashes, tokens, specs = {}, {}, {}, []
        for i, spec in enumerate(seats):
            if spec is None:  # external
                tokens[i] = new_token()
                hashes[i] = token_hash(tokens[i])
                specs.append("external")
            else:
                bots[i] = check_bot_spec(spec, f"seats[{i}].bot", self.bot_limits, bot_seed(seed, i), s["players"])
                self._hook(bots[i], s["players"])
                specs.append(spec)
        st = new_state(s)
        m = Fief2Match(secrets.token_hex(8), s, specs, seed, st, hashes, bots, opening=len(opening))
        with m.lock:
            for i, a in enumerate(opening):
                if st.is_terminal():
                    raise InvalidArgument(f"opening[{i}]: the game is over before this action")
                legal = st.legal_actions()
                if not _is_int(a) or a not in legal:
                    what = (f"{quoted(a)} is not an action of this game (ids 0..{st.game.num_distinct_actions() - 1})"
                            if not _is_int(a) or not 0 <= a < st.game.num_distinct_actions()
                            else f"{a} ({st.action_to_string(a)}) is not legal here")
                    raise InvalidArgument(f"opening[{i}]: {what}; {len(legal)} legal actions")
                m._apply_one(a)
            while st.is_chance_node():
                from fief2 import sample_chance

                m._apply_one(sample_chance(st, m.rng))
        if self.live_count() >= self.max_matches:
            self.sweep()  # idle and finished ones go first
        with self._lock:
            live = sum(1 for x in self._matches.values() if not x.finished)
            if live >= self.max_matches:
                raise ResourceExhausted(f"the server holds {live} live Fief 2 matches, its cap (--max-matches); "
                                        f"retry later")
            with m.lock:
                self.store.create_match(m.id, m.stored_setup(), hashes, m.created, m.actions, summary=m.summary(),
                                        bots=bool(bots), game=FIEF2)
            self._matches[m.id] = m
            self._todo.append(m.id)
            self._wake.notify_all()
        log.info("fief2 match %s created: %s", m.id, ", ".join(quoted(x) for x in specs))
        return {"match_id": m.id, "tokens": tokens}

    def get_observation(self, match_id: Any, seat: Any, token: Any) -> dict:
        m = self._match(match_id)
        self._check_seat(m, seat, token)
        with m.lock:
            self._catch_up(m)
            st = m.state
            legal = [] if m.to_act() != seat else [(a, st.action_to_string(a)) for a in st.legal_actions()]
            return {"observation": st.observation(seat), "action_count": len(m.actions), "finished": m.finished,
                    "legal_actions": legal, "setup": dict(m.setup)}

    def seat_state(self, match_id: Any, seat: Any, token: Any):
        """A copy of the match's state for one of its seats, the token checked (the Advisor's match form: its
        answers read only what the seat may know)."""
        m = self._match(match_id)
        self._check_seat(m, seat, token)
        with m.lock:
            self._catch_up(m)
            return m.state.clone()

    def submit_action(self, match_id: Any, seat: Any, token: Any, action: Any, expected_action_count: Any) -> dict:
        for _ in range(3):  # a match retired between the lookup and the lock is looked up (loaded back) again
            m = self._match(match_id)
            self._check_seat(m, seat, token)
            check_action_request(action, expected_action_count)
            with m.lock:
                if m.retired:
                    continue
                self._catch_up(m)
                try:
                    r = self._submit_once(m, seat, action, expected_action_count)
                except Raced:  # another replica logged that index at the same moment: a retry if it was this one
                    r = self._submit_once(m, seat, action, expected_action_count)
                finished = m.finished
            if not r["retry"]:
                self._after_change(m, finished)
            return r
        raise FailedPrecondition("the match was being retired from memory; retry")

    def _submit_once(self, m: Fief2Match, seat: int, action: int, expected_action_count: int) -> dict:
        n = len(m.actions)
        if expected_action_count < n:
            if m.actions[expected_action_count] == action and m.actors[expected_action_count] == seat:
                return {"action_count": expected_action_count + 1, "retry": True}
            raise FailedPrecondition(f"expected_action_count: stale: the match is now at action {n}; "
                                     f"GetObservation gives the position")
        if expected_action_count > n:
            raise FailedPrecondition(f"expected_action_count: the match is at action {n}, not "
                                     f"{expected_action_count}")
        if m.finished:
            raise FailedPrecondition("the match is over")
        cp = m.to_act()
        if cp != seat:
            raise FailedPrecondition(f"out of turn: family {cp} is to act, not family {seat}")
        legal = m.state.legal_actions()
        if action not in legal:
            count = m.state.game.num_distinct_actions()
            what = (f"is not an action of this game (ids 0..{count - 1})" if not 0 <= action < count
                    else f"({m.state.action_to_string(action)}) is not legal now")
            raise InvalidArgument(f"action: {action} {what}; {len(legal)} legal actions (GetObservation lists "
                                  f"them)")
        self._commit(m, action, n)
        return {"action_count": n + 1, "retry": False}

    def watch(self, match_id: Any, seat: Any, token: Any, from_count: Any,
              cancel: threading.Event | None = None) -> Iterator[dict]:
        """The events as ``seat`` (None: a spectator) may see them from ``from_count``, then as they happen; the
        last is ``{"end": {...}}``. Checked now (not at the first ``next``)."""
        m = self._match(match_id)
        if seat is not None:
            self._check_seat(m, seat, token)
        if not _is_int(from_count) or from_count < 0:
            raise InvalidArgument(f"from_action_count: expected a non-negative integer, got {quoted(from_count)}")
        return self._events(m, seat, from_count, cancel or threading.Event())

    def _events(self, m: Fief2Match, seat: int | None, i: int, cancel: threading.Event) -> Iterator[dict]:
        with m.lock:
            m.watchers += 1
        try:
            while not cancel.is_set() and not self._closed.is_set():
                with m.lock:
                    self._watch_catch_up(m)
                    batch = [e.view(seat) for e in m.events[i:]]
                    done = m.finished
                    stale = m.retired and not done
                    if not batch and not done and not stale:
                        m.changed.wait(0.5)  # an action here wakes it; on a shared database, a notification
                        continue
                i += len(batch)
                yield from batch
                if done and i >= len(m.events):
                    with m.lock:
                        yield {"end": m.end()}
                    return
                if stale:  # retired meanwhile: go on with the match loaded back
                    m = self._watch_again(m)
        finally:
            with m.lock:
                m.watchers -= 1

    def get_record(self, match_id: Any) -> dict:
        """The whole game (every card, the seed) once the match is over; a finished match retired from memory is
        read from the store as it is, without loading it back."""
        from fief2 import GameRecord

        check_match_id(match_id)
        if match_id not in self._matches:
            retired = self.store.retired(match_id, game=FIEF2)
            if retired is not None and retired[0]:
                stored = self.store.load(match_id, game=FIEF2)
                game = new_state(stored.setup["setup"]).game
                rec = GameRecord(game, stored.setup["seed"], list(stored.actions))
                return {"format": "fief2-game/1", "json": rec.to_json(), "seats": list(stored.setup["seats"])}
        m = self._match(match_id)
        with m.lock:
            self._catch_up(m)
            if not m.finished:
                raise FailedPrecondition(f"match {m.id} is not over: its record (every card, the seed) is given "
                                         f"once it ends")
            rec = GameRecord(m.state.game, m.seed, list(m.actions))
            return {"format": "fief2-game/1", "json": rec.to_json(), "seats": list(m.seats)}

    def wait(self, match_id: Any, timeout: float = 60.0, until=None) -> bool:
        """Block until the match is over (or ``until(match)`` holds); False on timeout. For tests and tools."""
        m = self._match(match_id)
        deadline = time.monotonic() + timeout
        with m.lock:
            self._catch_up(m)
            while not (until(m) if until else m.finished):
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                m.changed.wait(min(left, 0.5))
                self._catch_up(m)
        return True

    def close(self, timeout: float = 5.0) -> None:
        """Stop the bots (their searches cancelled at once), end the watch streams, mark the finished matches
        retired (a server starting again does not load them), free this replica's bot leases, and close the
        store if it was opened here. Closing again does nothing."""
        if self._close_done:
            return
        self._close_done = True
        self._closed.set()
        with self._lock:
            self._wake.notify_all()
        for m in list(self._matches.values()):
            with m.lock:
                m.changed.notify_all()
        end = time.monotonic() + timeout
        for t in self._threads:
            t.join(max(0.0, end - time.monotonic()))
        try:
            self._retire_finished()
            if self.shared:
                self.store.leave(self.replica_id)  # its bot matches are taken over at once, not after the lease
        except StoreError as e:  # pragma: no cover - the database is gone: loaded next time, leases expire
            log.warning("fief2 matches: closing: %s", e)
        if self._owns_store:
            self.store.close()

    # -- store: loading, committing, replicas ----------------------------------------------------------------
    def _load(self, stored) -> Fief2Match | None:
        """Replay a stored match into memory and queue its bots (None: it cannot be loaded, logged)."""
        try:
            d = stored.setup
            s = check_setup(d["setup"])
            seats, seed = list(d["seats"]), d["seed"]
            bots = {}
            for i, spec in enumerate(seats):
                if spec != "external":  # made as at creation, without the caps' check (each search is cut to them)
                    bots[i] = check_bot_spec(spec, f"seats[{i}].bot", None, bot_seed(seed, i), s["players"])
                    self._hook(bots[i], s["players"])
            m = Fief2Match(stored.id, s, seats, seed, new_state(s), dict(stored.token_hashes), bots,
                           created=stored.created, opening=d["opening"])
            with m.lock:
                m.play(stored.actions)
                self._draw_chance(m)  # (a log always ends past its chance; this keeps a damaged one playable)
        except Exception as e:  # noqa: BLE001 - one damaged match must not keep the others from resuming
            self.unloadable[stored.id] = f"{type(e).__name__}: {e}"
            log.error("fief2 match %s could not be loaded and is not served: %s", stored.id,
                      self.unloadable[stored.id])
            return None
        with self._lock:
            self._matches[m.id] = m
            if m.bots and not m.finished:
                self._todo.append(m.id)
                self._wake.notify_all()
        log.info("fief2 match %s loaded at action %d%s", m.id, m.action_count, " (finished)" if m.finished else "")
        return m

    def _waits_for_bot(self, m: Fief2Match) -> bool:
        return m.to_act() in m.bots

    def _retired(self, m: Fief2Match) -> None:
        if self.shared and m.bots:
            self.store.release(m.id, self.replica_id)

    def _commit(self, m: Fief2Match, action: int, expected: int) -> None:
        """(under ``m.lock``) Log one legal action at index ``expected`` with the chance outcomes that follow it and
        the match's summary after them (one transaction), then apply them. :class:`Raced` if another replica
        logged that index first: the match is then brought up to date."""
        draws, after = m.after(action)
        try:
            self.store.append_actions(m.id, expected, [action, *draws],
                                      summary=m.summary(after, expected + 1 + len(draws)),
                                      finished=after.is_terminal())
        except Conflict:
            if not self.shared:
                raise
            self._catch_up(m)
            raise Raced(f"expected_action_count: action {expected} was logged by another server; the match is at "
                        f"action {m.action_count}") from None
        m.play([action, *draws])

    def _draw_chance(self, m: Fief2Match) -> None:
        """(under ``m.lock``) Draw and log the chance outcomes at the end of the log, if any."""
        from fief2 import sample_chance

        while m.state.is_chance_node():
            rng = random.Random()
            rng.setstate(m.rng.getstate())
            a = sample_chance(m.state, rng)
            try:
                self.store.append_actions(m.id, m.action_count, [a])
            except Conflict:
                if not self.shared:
                    raise
            if self.shared:
                self._catch_up(m)  # the draw logged here or by another replica: the same draw either way
            else:
                m.play([a])

    def _catch_up(self, m: Fief2Match) -> None:
        """(under ``m.lock``) Apply what other replicas logged after this one's last action of ``m``; nothing on a
        database of one server."""
        if self.shared and not m.finished:
            tail = self.store.actions_from(m.id, m.action_count)
            if tail:
                m.play(tail)

    def _watch_catch_up(self, m: Fief2Match) -> None:
        if self.shared:
            try:
                self._catch_up(m)
            except StoreError as e:  # the database is unreachable: the stream waits and tries again
                log.warning("fief2 match %s: watch could not read the action log: %s", m.id, e)

    def _on_notification(self, payload: str) -> None:
        """Another replica (or this one) committed: ``act:ID:COUNT`` catches the match up (its bots move if this
        replica holds their lease); ``listening``: (re)connected, every match in memory is caught up."""
        kind, _, rest = payload.partition(":")
        if kind == "act":
            mid, _, count = rest.rpartition(":")
            ms = [self._matches.get(mid)]
        elif kind == "listening":
            ms = list(self._matches.values())
        else:
            return
        for m in ms:
            if m is None:
                continue
            with m.lock:
                if kind == "listening" or m.action_count < int(count):
                    self._catch_up(m)
                finished = m.finished
            self._after_change(m, finished)  # (even if a call caught it up first: its bots may be to act now)

    def _lease_loop(self) -> None:
        """(shared database) Renew this replica's bot leases and take the unleased bot matches of Fief 2."""
        tick = self.lease_seconds / 6
        while not self._closed.wait(tick):
            try:
                self.store.renew(self.replica_id, self.lease_seconds)
                candidates, _ = self.store.unleased(64, game=FIEF2)
                for mid in candidates:
                    if self._closed.is_set():
                        return
                    if self.store.claim(mid, self.replica_id, self.lease_seconds):
                        try:
                            m = self._match(mid)
                        except NotFound:  # damaged (logged once when it failed to load): its lease expires
                            continue
                        with m.lock:
                            self._catch_up(m)
                        self._after_change(m, m.finished)
            except Exception:  # noqa: BLE001 - the database is unreachable: the next tick tries again
                if self._closed.is_set():
                    return
                log.exception("fief2 bot lease tick failed")

    # -- helpers ---------------------------------------------------------------------------------------------
    @staticmethod
    def _check_seat(m: Fief2Match, seat: Any, token: Any) -> int:
        return check_seat_token(seat, token, m.setup["players"], m.token_hashes)

    def _after_change(self, m: Fief2Match, finished: bool) -> None:
        if m.bots and not finished:
            with self._lock:
                self._todo.append(m.id)
                self._wake.notify_all()

    def _hook(self, bot: Any, players: int) -> None:
        """A search bot's searches through the server's admission and caps, cancelled when the service closes."""
        from feudo_ai.bots.base import AdviceBot

        if not isinstance(bot, AdviceBot):
            return
        bot.cancel = self._closed
        if self.bot_limits is None and self.slots is None:
            return

        def search(state: Any, seat: int, options: Any, cancel: Any) -> Any:
            from feudo_ai.search import advise

            threads = min(options.threads, self.bot_limits.max_threads) if self.bot_limits else options.threads
            if self.slots is not None and not self.slots.acquire(threads, cancel):
                raise _Closed()
            try:
                if self.bot_limits is not None:
                    options = self.bot_limits.bounded(options, players)
                return advise(state, seat, options, cancel=cancel)
            finally:
                if self.slots is not None:
                    self.slots.release(threads, background=True)
        bot.searcher = search

    def _bot_loop(self) -> None:
        while not self._closed.is_set():
            with self._lock:
                while not self._closed.is_set() and not any(x not in self._busy for x in self._todo):
                    self._wake.wait(1.0)
                if self._closed.is_set():
                    return
                match_id = next(x for x in self._todo if x not in self._busy)
                self._todo = collections.deque(x for x in self._todo if x != match_id)
                self._busy.add(match_id)
                m = self._matches.get(match_id)
            again = finished = False
            try:
                if m is not None:
                    again = self._move_bots(m)
                    with m.lock:
                        finished = m.finished
                    if finished and self.shared:
                        self.store.release(m.id, self.replica_id)
            except _Closed:
                return
            except Exception:  # noqa: BLE001 - one match's failure must not stop the others' bots
                if self._closed.is_set():
                    return
                log.exception("fief2 match %s: a bot failed; its bots stop", match_id)
            finally:
                with self._lock:
                    self._busy.discard(match_id)
                    self._wake.notify_all()
            if m is not None and again and not finished:
                self._after_change(m, finished)

    def _move_bots(self, m: Fief2Match) -> bool:
        """Up to :data:`BOT_STEPS` bot actions of ``m``; True if a bot is still to act. A bot decides on a copy,
        without the match's lock (a search may take seconds; the match's calls go on meanwhile): only this worker
        moves the match's bots (on a shared database: only the replica holding the match's bot lease), and no
        external seat can act while a bot is to act."""
        for _ in range(BOT_STEPS):
            if self._closed.is_set() or m.retired:
                return False
            with m.lock:
                self._catch_up(m)
                seat = m.to_act()
                if m.finished or seat is None or seat not in m.bots:
                    return False
                st, count = m.state.clone(), len(m.actions)
            if self.shared and not self.store.claim(m.id, self.replica_id, self.lease_seconds):
                return False  # another replica moves this match's bots
            legal = st.legal_actions()
            action = legal[0] if len(legal) == 1 else m.bots[seat].choose(st)
            if self._closed.is_set():
                return False
            with m.lock:
                if len(m.actions) != count or m.retired:  # another replica logged meanwhile: decide again
                    continue
                if action not in legal:  # pragma: no cover - a bot's bug, not the client's
                    raise RuntimeError(f"bot of seat {seat} chose an illegal action {action}")
                try:
                    self._commit(m, action, count)
                except Raced:
                    continue
        return True


def bot_seed(seed: int, seat: int) -> int:
    """The seed of a match's bot seat, drawn from the match's (the same at creation and when loaded again)."""
    return (seed * 1_000_003 + seat) % 2 ** 63


class _Closed(Exception):
    """A bot's search was cancelled while it waited for its turn (the service is closing)."""


def observation_json(observation: dict) -> str:
    """fief2's observation as canonical JSON text (sorted keys: the same observation is the same text)."""
    return json.dumps(observation, sort_keys=True, separators=(",", ":"))
