"""One match in memory: its real position, its log, and what each seat may see of it (R22).

The real position never leaves this module except through :meth:`Match.observation` (the engine's R22 view) and
:meth:`Match.event` (the log entry as that seat sees it, :mod:`engine.history`). Bot seats play from a position
rebuilt from their own log (:class:`engine.history.SeatReplay`), so a bot on the server knows exactly what an
external player in its seat would know, whatever the bot does with the position it is given.
"""

from __future__ import annotations

import random
import threading
import time
from typing import Any

from engine import PLAYER_NAMES, sample_chance
from engine.actions import ActionInfo, action_info
from engine.history import Entry, SeatReplay, apply_logged
from engine.outcomes import outcomes
from engine.state import CHANCE, TERMINAL

from .spec import MatchSetup

SPECTATOR = None  # the "seat" of a caller who plays none: every Strategy pick hidden


def player_name(p: int) -> str:
    return "chance" if p == CHANCE else (PLAYER_NAMES[p] if 0 <= p < len(PLAYER_NAMES) else f"P{p}")


def event_as_seen(index: int, full_entry: Entry, text: str, detail: tuple, seat: int | None,
                  trading_values) -> dict[str, Any]:
    """Log entry ``index`` (its full entry, full text and (phase, turn, structured action, public outcomes, the
    actor's own outcomes of a pick or None)) as ``seat`` sees it (``None``: a spectator, every pick hidden)."""
    entry = full_entry.seen_by(-1 if seat is None else seat)
    who = player_name(entry.player)
    shown = "secret Strategy pick" if entry.hidden else text
    if entry.trades:
        shown += "; Trading Cards turned over: " + ", ".join(
            f"{player_name(q)} {trading_values[c]}" for q, c in entry.trades)
    phase, turn, info, public, own = detail
    mine = own is not None and not entry.hidden and seat is not None and seat == entry.player
    return {"kind": "action", "index": index, "action_count": index + 1, "player": entry.player,
            "action": entry.action, "pick": entry.pick, "trades": [list(t) for t in entry.trades],
            "text": shown if entry.player == CHANCE else f"{who}: {shown}", "phase": phase, "turn": turn,
            "info": None if entry.hidden else info, "action_text": None if entry.hidden else text,
            "outcomes": own if mine else public}


def public_view(s) -> dict[str, Any]:
    """Seat 0's observation of ``s`` with seat 0's own unrevealed selection removed as every other seat's is
    (R22): the public facts only. Its ``sel_army``/``sel_trade`` for seat 0 hold only cards turned face up."""
    d = s.observation(0)
    d["sel_army"][0] = [bool(s.revealed[0][t]) for t in range(s.game.num_tokens)]
    if not s.trade_revealed[0]:
        d["sel_trade"][0] = -1
    return d


class Match:
    """A match's setup, tokens' hashes, real position and full log. Callers hold :attr:`lock` around every
    use; :attr:`changed` is notified after every action."""

    def __init__(self, match_id: str, setup: MatchSetup, token_hashes: dict[int, str], created: float):
        self.id = match_id
        self.setup = setup
        self.token_hashes = dict(token_hashes)
        self.created = created
        # The reference engine: its observation carries the VP log, and positions are small. Searches convert
        # the positions they are given to the compiled core themselves.
        self.start = setup.start_state(backend="reference")
        self.state = self.start.clone()
        self.actions: list[int] = []
        self.entries: list[Entry] = []  # full entries: never sent as they are, only through event()
        self._texts: list[str] = []  # full texts (a pick's text names the card): only through event()
        # per action: (phase, turn, structured action, public outcomes, the actor's own outcomes of a pick or None)
        # computed once from the positions before and after it (engine.outcomes); only through event()
        self._details: list[tuple[int, int, ActionInfo, list, list | None]] = []
        self.views = {p: SeatReplay(self.start, p) for p in setup.bot_seats}
        self.lock = threading.RLock()
        self.changed = threading.Condition(self.lock)
        self.bot_errors = 0
        # retention (MatchService): when it last changed, when it ended, the watch streams open on it, and whether
        # it has been retired from memory (this object is then stale: the store, or a reloaded Match, is the truth)
        self.touched = time.monotonic()
        self.finished_at: float | None = None
        self.watchers = 0
        self.retired = False

    # -- facts ---------------------------------------------------------------------------------------------
    @property
    def action_count(self) -> int:
        return len(self.actions)

    @property
    def finished(self) -> bool:
        return self.state.is_terminal()

    def current_player(self) -> int:
        return self.state.current_player()

    def is_external(self, seat: int) -> bool:
        return seat in self.token_hashes

    # -- changes -------------------------------------------------------------------------------------------
    def apply(self, action: int) -> Entry:
        """Apply a legal action (the caller has checked it and logged it in the store)."""
        text = self.state.action_to_string(action)
        before = self.state.clone()
        entry = apply_logged(self.state, action)
        public = outcomes(before, action, self.state)  # a spectator's: every pick hidden (R22)
        own = outcomes(before, action, self.state, viewer=entry.player) if entry.pick else None
        self._details.append((int(before.phase), before.turn, action_info(before, action), public, own))
        self.actions.append(action)
        self.entries.append(entry)
        self._texts.append(text)
        for p, view in self.views.items():
            view.push(entry.seen_by(p))
        self.touched = time.monotonic()
        if self.finished_at is None and self.state.is_terminal():
            self.finished_at = self.touched
        self.changed.notify_all()
        return entry

    def chance_action(self) -> int:
        """The chance outcome at the current (chance) position, drawn from a generator seeded by the match seed
        and the action's index: the same draw whenever it is made, before or after a restart."""
        rng = random.Random(f"feudo-match/{self.setup.seed}/{self.action_count}")
        return sample_chance(self.state, rng)

    def after(self, action: int):
        """The position after the legal ``action`` and the chance outcomes drawn right after it (as
        :meth:`chance_action` draws them), without changing the match: (position, draws)."""
        s = self.state.clone()
        s.apply_action(action)
        draws: list[int] = []
        while s.current_player() == CHANCE:
            rng = random.Random(f"feudo-match/{self.setup.seed}/{self.action_count + 1 + len(draws)}")
            a = sample_chance(s, rng)
            s.apply_action(a)
            draws.append(a)
        return s, draws

    # -- views ---------------------------------------------------------------------------------------------
    def event(self, index: int, seat: int | None) -> dict[str, Any]:
        """Log entry ``index`` as ``seat`` sees it (``None``: a spectator, every pick hidden)."""
        return event_as_seen(index, self.entries[index], self._texts[index], self._details[index], seat,
                             self.state.game.ruleset.trading_cards)

    def end_event(self) -> dict[str, Any]:
        return {"kind": "end", "action_count": self.action_count, "turn": self.state.turn,
                "winners": list(self.state.winners),
                "vp": list(self.state.vp), "returns": list(self.state.returns())}

    def observation(self, seat: int) -> dict[str, Any]:
        """The engine's R22 view of ``seat``, with its legal actions when it is to act."""
        cp = self.state.current_player()
        legal = ([{"action": a, "text": self.state.action_to_string(a), "info": action_info(self.state, a)}
                  for a in self.state.legal_actions()] if cp == seat else [])
        return {"match_id": self.id, "seat": seat, "action_count": self.action_count, "current_player": cp,
                "finished": cp == TERMINAL, "observation": self.state.observation(seat), "legal_actions": legal}

    def public_observation(self) -> dict[str, Any]:
        """Seat 0's view with seat 0's own unrevealed selection removed as every other seat's is (R22): the
        public facts only, which any spectator may see. ``seat`` stays 0 (the projection's frame): its
        ``sel_army``/``sel_trade`` hold only cards turned face up."""
        s = self.state
        d = public_view(s)
        cp = s.current_player()
        return {"match_id": self.id, "seat": None, "action_count": self.action_count, "current_player": cp,
                "finished": cp == TERMINAL, "observation": d, "legal_actions": []}

    def summary(self, state=None, count: int | None = None) -> dict[str, Any]:
        """Public facts for a list of matches (of ``state`` after ``count`` actions: a position not applied yet)."""
        s = self.state if state is None else state
        return {"match_id": self.id, "players": self.setup.players, "seats": list(self.setup.seats),
                "action_count": self.action_count if count is None else count, "turn": s.turn,
                "finished": s.is_terminal(),
                "current_player": s.current_player(), "vp": list(s.vp), "winners": list(s.winners),
                "created": self.created, "setup": self.setup.to_dict()}

    def record(self) -> dict[str, Any]:
        """The whole game: setup and every action (only once finished: by then every pick was revealed)."""
        return {"format": "feudo-match/1", "match_id": self.id, "setup": self.setup.to_dict(),
                "actions": list(self.actions), "winners": list(self.state.winners), "vp": list(self.state.vp)}
