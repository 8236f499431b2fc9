"""Hosted Fief 2 matches in plain Python (gRPC-free): create, observe, act, watch, list, record.

What :class:`Fief2MatchService` shares with Feudo's :class:`~feudo_ai.matches.service.MatchService`: the errors
(:mod:`feudo_ai.matches.errors`, one per status code, each naming the field), the match ids (:data:`~.service.MATCH_ID`,
checked before any look-up), the seat tokens (:mod:`feudo_ai.matches.tokens`: shown once, only their hash kept,
compared in constant time), the checks of those and of a submitted action's fields (the functions ``check_*`` of
:mod:`feudo_ai.matches.service`), the cap on live matches (``max_matches``), the caps on the bots' search settings (a
:class:`~feudo_ai.matches.limits.BotLimits`) and idempotent submits at an expected action count.

What it does not share: Feudo's service is built around Feudo's engine (its setup, its observation, its outcome
events, its SQLite/PostgreSQL store and replicas). Fief 2's matches live **in memory only**: they end with the
process, and finished ones are kept for ``GetRecord`` up to ``max_finished`` (the oldest go first). A hosted
match is the game's state, its action log and its seed: chance (dealt cards, dice) is drawn right after the action
that led to it from ``random.Random(seed)`` (:func:`fief2.sample_chance`), so no caller ever sees a chance node.
The bot seats are moved by a few background threads (one match at a time each); the greedy bots read only what
their family may know (docs/fief2-bots.md), the search bots (``ismcts``, ``pimc``) search from their family's
observation (:func:`feudo_ai.advise`), through the server's admission and within its caps.

Privacy (F46, F52): a seat's observation is fief2's ``State.observation(seat)``; a watched event names a card
dealt, discarded, given or handed over only to the families involved (the receiver, the giver); the record, with
every card and the seed, only once the match is over.
"""

from __future__ import annotations

import collections
import json
import logging
import random
import secrets
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Iterator

from feudo_ai.bounded import quoted

from .errors import FailedPrecondition, InvalidArgument, NotFound, ResourceExhausted
from .limits import BotLimits
from .service import MAX_MATCHES, _is_int, check_action_request, check_match_id, check_seat_token
from .tokens import new_token, token_hash

log = logging.getLogger("feudo.matches")

GAME = "fief2"
MAX_OPENING = 20_000  # actions of a CreateMatch opening (a 6-player game to its end is about 5,000)
MAX_SPEC_CHARS = 256  # a bot spec
MAX_FINISHED = 1000  # finished matches kept for GetRecord (in memory)
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
    id: str
    setup: dict
    seats: list  # spec per seat, "external" for an open seat
    seed: int
    state: Any
    token_hashes: dict  # seat -> SHA-256 of its token (external seats)
    bots: dict  # seat -> Bot
    created: float = field(default_factory=time.time)
    actions: list = field(default_factory=list)
    events: list = field(default_factory=list)
    actors: list = field(default_factory=list)  # who played each logged action (None: chance)
    lock: threading.RLock = field(default_factory=threading.RLock)
    changed: threading.Condition = None  # type: ignore[assignment]
    finished_at: float | None = None

    def __post_init__(self) -> None:
        self.changed = threading.Condition(self.lock)
        self.rng = random.Random(self.seed)

    @property
    def finished(self) -> bool:
        return self.state.is_terminal()

    def to_act(self) -> int | None:
        cp = self.state.current_player()
        return cp if cp >= 0 else None

    def apply(self, action: int) -> None:
        """Apply ``action`` (legal: checked by the caller), log it with who may see its card, then draw the chance
        that follows."""
        self._apply_one(action)
        while self.state.is_chance_node():
            from fief2 import sample_chance

            self._apply_one(sample_chance(self.state, self.rng))
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
            self.finished_at = time.time()

    def end(self) -> dict:
        st = self.state
        return {"winners": list(st.winners), "power": [st.power(f) for f in range(st.num_players)],
                "turns": st.turn}

    def summary(self) -> dict:
        st = self.state
        return {"match_id": self.id, "players": self.setup["players"], "seats": list(self.seats),
                "action_count": len(self.actions), "to_act": self.to_act(), "finished": self.finished,
                "winners": list(st.winners) if self.finished else [],
                "points": [st.power(f) for f in range(st.num_players)], "created": self.created}


class Fief2MatchService:
    """Fief 2 matches in memory (see the module). ``run_bots=False``: nobody moves the bots (for tests)."""

    def __init__(self, max_matches: int = MAX_MATCHES, bot_limits: BotLimits | None = None, run_bots: bool = True,
                 max_finished: int = MAX_FINISHED, slots: Any = None, bot_workers: int = BOT_WORKERS):
        """``bot_limits``/``slots``: the server's caps and admission of the bots' searches (as Feudo's matches':
        a search bot waits for its turn among the server's searches, and each search is cut to the caps);
        ``bot_workers``: threads moving the matches' bots (one match at a time each)."""
        from feudo_ai.search.cancel import CancelEvent

        if not isinstance(max_matches, int) or max_matches < 1:
            raise ValueError(f"max_matches: expected a positive integer, got {max_matches!r}")
        self.max_matches = max_matches
        self.max_finished = max_finished
        self.bot_limits = bot_limits
        self.slots = slots
        self._lock = threading.Lock()
        self._matches: dict[str, Fief2Match] = {}
        self._finished: collections.OrderedDict[str, None] = collections.OrderedDict()
        self._todo: collections.deque[str] = collections.deque()
        self._busy: set[str] = set()  # matches a bot worker is moving (never two workers on one match)
        self._wake = threading.Condition(self._lock)
        self._closed = CancelEvent()  # set by close(): also cancels the bots' searches under way
        self._threads = [threading.Thread(target=self._bot_loop, name=f"fief2-bots-{i}", daemon=True)
                         for i in range(bot_workers if run_bots else 0)]
        for t in self._threads:
            t.start()

    # -- the calls -------------------------------------------------------------------------------------------
    def create_match(self, setup: Any, seats: Any, seed: Any = None, opening: Any = ()) -> dict:
        """A new match; returns ``{"match_id", "tokens": {seat: token}}`` (the external seats' tokens)."""
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
                bots[i] = check_bot_spec(spec, f"seats[{i}].bot", self.bot_limits, (seed * 1_000_003 + i) % 2 ** 63,
                                         s["players"])
                self._hook(bots[i], s["players"])
                specs.append(spec)
        st = new_state(s)
        m = Fief2Match(secrets.token_hex(8), s, specs, seed, st, hashes, bots)
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
        with self._lock:
            live = sum(1 for x in self._matches.values() if not x.finished)
            if live >= self.max_matches:
                raise ResourceExhausted(f"the server holds {live} live Fief 2 matches, its cap (--max-matches); "
                                        f"retry later")
            self._matches[m.id] = m
            if m.finished:
                self._retain_finished(m.id)
            self._todo.append(m.id)
            self._wake.notify_all()
        log.info("fief2 match %s created: %s", m.id, ", ".join(quoted(x) for x in specs))
        return {"match_id": m.id, "tokens": tokens}

    def get_observation(self, match_id: Any, seat: Any, token: Any) -> dict:
        m = self._match(match_id)
        self._check_seat(m, seat, token)
        with m.lock:
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
            return m.state.clone()

    def submit_action(self, match_id: Any, seat: Any, token: Any, action: Any, expected_action_count: Any) -> dict:
        m = self._match(match_id)
        self._check_seat(m, seat, token)
        check_action_request(action, expected_action_count)
        with m.lock:
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
            m.apply(action)
            finished = m.finished
        self._after_change(m, finished)
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
        cancel = cancel or threading.Event()

        def events() -> Iterator[dict]:
            i = from_count
            while not cancel.is_set() and not self._closed.is_set():
                with m.lock:
                    batch = [e.view(seat) for e in m.events[i:]]
                    done = m.finished
                    if not batch and not done:
                        m.changed.wait(0.5)
                        continue
                i += len(batch)
                yield from batch
                if done and i >= len(m.events):
                    with m.lock:
                        yield {"end": m.end()}
                    return
        return events()

    def list_matches(self) -> list[dict]:
        with self._lock:
            ms = list(self._matches.values())
        out = []
        for m in sorted(ms, key=lambda x: x.created):
            with m.lock:
                out.append(m.summary())
        return out[-MAX_FINISHED - self.max_matches:]

    def get_record(self, match_id: Any) -> dict:
        from fief2 import GameRecord

        m = self._match(match_id)
        with m.lock:
            if not m.finished:
                raise FailedPrecondition(f"match {m.id} is not over: its record (every card, the seed) is given "
                                         f"once it ends")
            rec = GameRecord(m.state.game, m.seed, list(m.actions))
            return {"format": "fief2-game/1", "json": rec.to_json(), "seats": list(m.seats)}

    def close(self, timeout: float = 5.0) -> None:
        """Stop the bots (their searches cancelled at once) and end the watch streams."""
        self._closed.set()
        with self._lock:
            self._wake.notify_all()
        end = time.monotonic() + timeout
        for t in self._threads:
            t.join(max(0.0, end - time.monotonic()))

    # -- helpers ---------------------------------------------------------------------------------------------
    def _match(self, match_id: Any) -> Fief2Match:
        check_match_id(match_id)
        with self._lock:
            m = self._matches.get(match_id)
        if m is None:
            raise NotFound(f"match_id: no Fief 2 match {quoted(match_id)}")
        return m

    @staticmethod
    def _check_seat(m: Fief2Match, seat: Any, token: Any) -> int:
        return check_seat_token(seat, token, m.setup["players"], m.token_hashes)

    def _after_change(self, m: Fief2Match, finished: bool) -> None:
        with self._lock:
            if finished:
                self._retain_finished(m.id)
            elif m.bots:
                self._todo.append(m.id)
                self._wake.notify_all()

    def _retain_finished(self, match_id: str) -> None:
        """(under ``_lock``) keep at most ``max_finished`` finished matches: the oldest go first."""
        self._finished[match_id] = None
        while len(self._finished) > self.max_finished:
            old, _ = self._finished.popitem(last=False)
            self._matches.pop(old, None)

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
            except _Closed:
                return
            except Exception:  # noqa: BLE001 - one match's failure must not stop the others' bots
                log.exception("fief2 match %s: a bot failed; its bots stop", match_id)
            finally:
                with self._lock:
                    self._busy.discard(match_id)
                    self._wake.notify_all()
            if m is not None and (again or finished):
                self._after_change(m, finished)

    def _move_bots(self, m: Fief2Match) -> bool:
        """Up to :data:`BOT_STEPS` bot actions of ``m``; True if a bot is still to act. A bot decides on a copy,
        without the match's lock (a search may take seconds; the match's calls go on meanwhile): only this worker
        moves the match's bots, and no external seat can act while a bot is to act."""
        for _ in range(BOT_STEPS):
            if self._closed.is_set():
                return False
            with m.lock:
                seat = m.to_act()
                if m.finished or seat is None or seat not in m.bots:
                    return False
                st, count = m.state.clone(), len(m.actions)
            legal = st.legal_actions()
            action = legal[0] if len(legal) == 1 else m.bots[seat].choose(st)
            if self._closed.is_set():
                return False
            with m.lock:
                if len(m.actions) != count:  # pragma: no cover - nobody else moves a bot's seat
                    continue
                if action not in legal:  # pragma: no cover - a bot's bug, not the client's
                    raise RuntimeError(f"bot of seat {seat} chose an illegal action {action}")
                m.apply(action)
        return True


class _Closed(Exception):
    """A bot's search was cancelled while it waited for its turn (the service is closing)."""


def observation_json(observation: dict) -> str:
    """fief2's observation as canonical JSON text (sorted keys: the same observation is the same text)."""
    return json.dumps(observation, sort_keys=True, separators=(",", ":"))
