"""A game's action log as one seat saw it, and its replay (R22, R25).

A game is a start position plus a sequence of action ints. What a seat may know of that sequence (R22) is
everything but the other seats' secret Strategy picks (R6: the ``select <Army Card>`` and ``select trading
card`` actions of the SELECT phase). :func:`seat_log` turns the full sequence into one :class:`Entry` per
action as that seat sees it: chance outcomes, castles, orders, reveals, moves, marches, attacks and advances
are public; another seat's pick is an entry with ``action=None`` (:attr:`Entry.hidden`). Trading Cards are
revealed by no action of their own (R7, R9: they are turned over once the Army Card rounds are done), so an
entry also lists the Trading Cards its action turned over (:attr:`Entry.trades`), which is public from then on.

:func:`replay_seat_log` (or :class:`SeatReplay`, entry by entry) rebuilds a reference position consistent with
that seat's observation. Public entries are applied as they are. For another seat's hidden picks it applies
placeholder picks (a *plan*: the lowest held Army Cards, the best Trading Card). When the log later shows a
card the plan does not hold (an Army Card revealed, a Trading Card turned over) or an action the plan makes
illegal (a Mercenary moved that the placeholder card could not pay, R7/R16), the plans of the current turn are
repaired (the revealed card swapped in, another Trading Card tried) and the turn is replayed again from its
selection phase. A log that no repair makes legal raises :class:`HistoryError` naming the entry and why.

R25 makes this exact: the shape of the decision sequence depends only on public facts and the acting seat's own
cards, so for every seat and every prefix of a game
``replay_seat_log(start, seat_log(actions, seat, start), seat).observation(seat) == real.observation(seat)``
(tested on random games in ``tests/test_history.py``).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

from .actions import PLAYER_NAMES
from .core import to_core
from .errors import FeudoError, IllegalActionError
from .record import GameRecord
from .state import CHANCE, Game, Phase, State

__all__ = ["Entry", "HistoryError", "SeatReplay", "apply_logged", "entry_of", "game_log", "seat_log", "seat_view",
           "replay_seat_log"]


class HistoryError(FeudoError):
    """A seat's log that no consistent choice of the hidden picks can produce (names the entry and why)."""


@dataclass(frozen=True)
class Entry:
    """One action of a game as a seat sees it.

    ``player`` is who acted (``-1``: chance). ``action`` is the action int, or ``None`` when it is another
    seat's secret Strategy pick (R6, R22). ``trades`` lists the Trading Cards this action turned over, as
    ``(player, card index)`` pairs (R7, R9): public, so every seat's entry carries the same ones. ``pick``
    says whether the action is a secret Strategy pick (whether one happens, and whose, is public).
    """

    player: int
    action: int | None
    trades: tuple[tuple[int, int], ...] = ()
    pick: bool = False  # a Strategy pick (R6): public that it happens, secret what it picks


    @property
    def hidden(self) -> bool:
        return self.action is None

    def to_dict(self) -> dict:
        d: dict[str, Any] = {"player": self.player, "action": self.action}
        if self.trades:
            d["trades"] = [list(t) for t in self.trades]
        if self.pick:
            d["pick"] = True
        return d

    @classmethod
    def from_dict(cls, d: Any, where: str = "entry") -> "Entry":
        """Read :meth:`to_dict`'s form back; :class:`HistoryError` naming the field for a malformed one."""
        if not isinstance(d, dict):
            raise HistoryError(f"{where}: expected an object, got {type(d).__name__}")
        player, action = d.get("player"), d.get("action")
        if not _is_int(player):
            raise HistoryError(f"{where}.player: expected an integer, got {player!r}")
        if action is not None and not _is_int(action):
            raise HistoryError(f"{where}.action: expected an integer or null, got {action!r}")
        trades = d.get("trades", [])
        if not isinstance(trades, list) or not all(
                isinstance(t, (list, tuple)) and len(t) == 2 and all(_is_int(x) for x in t) for t in trades):
            raise HistoryError(f"{where}.trades: expected a list of [player, card] integer pairs, got {trades!r}")
        pick = d.get("pick", False)
        if not isinstance(pick, bool):
            raise HistoryError(f"{where}.pick: expected true or false, got {pick!r}")
        if action is None and not pick:
            raise HistoryError(f"{where}.action: only a Strategy pick (pick: true) may be hidden (null)")
        return cls(player, action, tuple((int(p), int(c)) for p, c in trades), pick)

    def seen_by(self, seat: int) -> "Entry":
        """This entry as ``seat`` sees it: another seat's Strategy pick becomes hidden (R22)."""
        if self.action is None or self.player == seat or not self.pick:
            return self
        return Entry(self.player, None, self.trades, True)


def _is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _name(p: int) -> str:
    return "chance" if p == CHANCE else (PLAYER_NAMES[p] if 0 <= p < len(PLAYER_NAMES) else f"P{p}")


def _as_reference(state: Any) -> State:
    """A reference :class:`State` copy of a start position (reference or core)."""
    if isinstance(state, State):
        return state.clone()
    to_reference = getattr(state, "to_reference", None)
    if to_reference is None:
        raise TypeError(f"start: expected an engine State, CoreState, Game or GameRecord, got {type(state).__name__}")
    return to_reference()


def _start_state(start: Any) -> State:
    if isinstance(start, GameRecord):
        return start.initial_state()
    if isinstance(start, Game):
        return State(start)
    return _as_reference(start)


def _is_pick_phase(state: State) -> bool:
    return state.phase == Phase.SELECT


def _trade_marks(state: State) -> list[tuple[int, bool]]:
    """Each player's selected Trading Card and whether it is face up: all :func:`_trades_revealed` needs of
    the position before an action (cheaper than a clone)."""
    return list(zip(state.sel_trade, state.trade_revealed))


def _trades_revealed(before: list[tuple[int, bool]], after: State) -> tuple[tuple[int, int], ...]:
    """Trading Cards turned over by the action from a position with ``before`` marks to ``after`` (R7, R9).

    A card is turned over when its owner had selected it and it was face down before; afterwards it is either
    face up, or already discarded because the turn ended within the same action (then ``sel_trade`` is reset).
    """
    out = []
    sel_after, up_after = after.sel_trade, after.trade_revealed
    for q, (c, up) in enumerate(before):
        if c >= 0 and not up and (up_after[q] or sel_after[q] != c):
            out.append((q, c))
    return tuple(out)


def entry_of(before: State, action: int, after: State) -> Entry:
    """The full (nothing hidden) entry of ``action``, applied to ``before`` giving ``after``."""
    return Entry(before.current_player(), int(action), _trades_revealed(_trade_marks(before), after),
                 _is_pick_phase(before))


def apply_logged(state: State, action: int) -> Entry:
    """Apply ``action`` to ``state`` (IllegalActionError if illegal, nothing changed) and return its full
    entry: the cheap way to log a game as it is played."""
    player, marks, pick = state.current_player(), _trade_marks(state), _is_pick_phase(state)
    state.apply_action(action)
    return Entry(player, int(action), _trades_revealed(marks, state), pick)


def game_log(start: Any, actions: Iterable[int]) -> list[Entry]:
    """The full log (nothing hidden) of ``actions`` played from ``start``; :class:`HistoryError` on an illegal
    action, naming its index."""
    state = _start_state(start)
    out = []
    for i, a in enumerate(actions):
        try:
            out.append(apply_logged(state, a))
        except IllegalActionError as e:
            raise HistoryError(f"actions[{i}]: {e}") from None
    return out


def seat_view(entries: Iterable[Entry], seat: int) -> list[Entry]:
    """A full log (from :func:`game_log` / :func:`entry_of`) as ``seat`` sees it."""
    return [e.seen_by(seat) for e in entries]


def seat_log(source: GameRecord | Sequence[int] | Sequence[Entry], seat: int, start: Any = None) -> list[Entry]:
    """The log of a game as ``seat`` may see it (R22): another seat's Strategy picks are hidden entries,
    everything else is public. ``source`` is a :class:`GameRecord` (its own start unless ``start`` is given),
    a list of action ints played from ``start`` (a State, CoreState or Game), or a full log of entries."""
    if isinstance(source, GameRecord):
        entries = game_log(start if start is not None else source, source.actions)
    else:
        items = list(source)
        if all(isinstance(e, Entry) for e in items):
            entries = items
        else:
            if start is None:
                raise TypeError("seat_log: a list of actions needs the start position (start=)")
            entries = game_log(start, items)
    if not _is_int(seat) or seat < 0:
        raise HistoryError(f"seat: expected a non-negative integer, got {seat!r}")
    return seat_view(entries, seat)


# ----------------------------------------------------------------------------------------------------------
# Replay
# ----------------------------------------------------------------------------------------------------------
class _Mismatch(Exception):
    """An entry the current plans cannot produce (a repair may still find plans that do)."""


@dataclass
class _Plan:
    """Placeholder secret selection of one hidden seat for one turn: Army Cards and a Trading Card."""

    army: tuple[int, ...]
    trade: int

    def picks(self, layout) -> list[int]:
        return [layout.SELECT + t for t in sorted(self.army)] + [layout.TRADE + self.trade]


class SeatReplay:
    """Rebuilds, entry by entry, a reference position consistent with what ``seat`` has seen.

    ``push(entry)`` applies one entry of the seat's log (:func:`seat_log`); ``state`` is the position so far
    (a reference :class:`State`; use ``engine.core.to_core`` for the fast one). The positions it builds agree
    with the real game on everything ``seat`` may know (:meth:`State.observation`); the other seats' unrevealed
    picks in it are placeholders, never their real cards.
    """

    def __init__(self, start: Any, seat: int):
        self._state = _start_state(start)
        if not (_is_int(seat) and 0 <= seat < self._state.num_players):
            raise HistoryError(f"seat: expected an integer in [0, {self._state.num_players}), got {seat!r}")
        self.seat = seat
        self.count = 0  # entries applied
        # The current turn's window: the position before its first Strategy pick, the entries since, and the
        # plans of the hidden seats. A repair replays the window from its snapshot with new plans.
        self._snapshot: State | None = None
        self._window: list[Entry] = []
        self._window_start = 0
        self._plans: dict[int, _Plan] = {}

    @property
    def state(self) -> State:
        return self._state

    def clone(self) -> "SeatReplay":
        """An independent copy: pushing entries to it leaves this replay as it is (the Advisor's history cache
        keeps replays and goes on from copies of them)."""
        other = SeatReplay.__new__(SeatReplay)
        other._state = self._state.clone()
        other.seat = self.seat
        other.count = self.count
        other._snapshot = self._snapshot  # never changed in place: replaced at a new turn, cloned to replay
        other._window = list(self._window)  # entries are frozen
        other._window_start = self._window_start
        other._plans = dict(self._plans)  # plans are replaced, never changed in place
        return other

    def push(self, entry: Entry) -> None:
        """Apply the next entry; :class:`HistoryError` (naming the entry) when no repair makes it possible."""
        if not isinstance(entry, Entry):
            raise HistoryError(f"entry {self.count}: expected an Entry, got {type(entry).__name__}")
        index = self.count
        state = self._state
        if _is_pick_phase(state) and (self._snapshot is None or self._snapshot.turn != state.turn
                                      or self._snapshot.tiebreak != state.tiebreak):
            self._snapshot, self._window, self._window_start, self._plans = state.clone(), [], index, {}
        if self._snapshot is None:  # before the first Strategy phase (Castles, first order): all public
            try:
                self._step(state, entry, index, {}, {})
            except _Mismatch as e:
                raise HistoryError(f"entry {index}: {e}") from None
            self.count += 1
            return
        self._window.append(entry)
        try:
            self._check_reveals(entry, index)
            self._step(state, entry, index, self._plans, self._pick_counts(len(self._window) - 1))
        except (_Mismatch, HistoryError) as first:
            try:
                if isinstance(first, HistoryError):
                    raise first
                self._repair(index, str(first))
            except HistoryError:
                # Leave the replay as it was before this entry, so that a caller may go on with another one.
                self._window.pop()
                self._state = self._replay_window(self._plans)
                raise
        self.count += 1

    # -- one entry -----------------------------------------------------------------------------------------
    def _pick_counts(self, upto: int) -> dict[int, int]:
        counts: dict[int, int] = {}
        for e in self._window[:upto]:
            if e.hidden:
                counts[e.player] = counts.get(e.player, 0) + 1
        return counts

    def _step(self, state: State, entry: Entry, index: int, plans: dict[int, _Plan], counts: dict[int, int]) -> None:
        """Apply ``entry`` to ``state`` under ``plans`` (``counts``: hidden picks of each seat so far in the
        window); :class:`_Mismatch` if the entry is not what ``state`` would produce."""
        actor = state.current_player()
        if entry.player != actor:
            raise _Mismatch(f"the log says {_name(entry.player)} acts, but it is {_name(actor)}'s turn "
                            f"(phase {Phase(state.phase).name})")
        for q, c in entry.trades:
            if not (0 <= q < state.num_players) or state.sel_trade[q] < 0 or state.trade_revealed[q]:
                raise _Mismatch(f"the log turns over {_name(q)}'s Trading Card, which is not selected and face down")
            if state.sel_trade[q] != c:
                raise _Mismatch(f"{_name(q)}'s Trading Card is turned over as card {c}")
        if entry.hidden:
            if actor == self.seat:
                raise _Mismatch("the seat's own Strategy pick is hidden in its own log")
            if not _is_pick_phase(state):
                raise _Mismatch(f"a hidden Strategy pick outside the Strategy phase "
                                f"(phase {Phase(state.phase).name})")
            plan = plans.get(actor)
            if plan is None:
                plan = plans[actor] = self._default_plan(state, actor)
            picks = plan.picks(state.game.layout)
            k = counts.get(actor, 0)
            if k >= len(picks):
                raise _Mismatch(f"{_name(actor)} makes more Strategy picks than a selection has ({len(picks)})")
            counts[actor] = k + 1
            action = picks[k]
        else:
            action = entry.action
        marks = _trade_marks(state)
        try:
            state.apply_action(action)
        except IllegalActionError as e:
            raise _Mismatch(str(e)) from None
        got = _trades_revealed(marks, state)
        if set(got) != set(entry.trades):
            raise _Mismatch(f"it turns over the Trading Cards of {', '.join(_name(q) for q, _ in got) or 'nobody'}, "
                            f"the log says of {', '.join(_name(q) for q, _ in entry.trades) or 'nobody'}")

    def _default_plan(self, state: State, q: int) -> _Plan:
        """Placeholder picks: the lowest held Army Cards and the highest-valued held Trading Card (a card that
        pays whenever any card could, so a Mercenary's paid move never needs a repair, R7)."""
        need = state._army_to_select(q)
        held = [t for t in range(state.game.num_tokens) if state.army_held[q][t]]
        return _Plan(tuple(held[:need]), self._trade_choices(state, q)[0])

    @staticmethod
    def _trade_choices(state: State, q: int) -> list[int]:
        """Held Trading Cards of q, one per value (the first held index, as TRADE actions name them),
        highest value first."""
        values = state.game.ruleset.trading_cards
        seen: set[int] = set()
        out = []
        for c in sorted(range(len(values)), key=lambda c: (-values[c], c)):
            if state.trade_held[q][c] and values[c] not in seen:
                seen.add(values[c])
                out.append(c)
        if not out:
            raise _Mismatch(f"{_name(q)} holds no Trading Card")
        return out

    # -- repairs -------------------------------------------------------------------------------------------
    def _known(self, upto: int) -> tuple[dict[int, set[int]], dict[int, int]]:
        """What the window's entries up to ``upto`` (inclusive) reveal: Army Cards and Trading Cards per seat."""
        L = self._snapshot.game.layout
        army: dict[int, set[int]] = {}
        trade: dict[int, int] = {}
        for e in self._window[:upto + 1]:
            if e.action is not None and L.REVEAL <= e.action < L.MOVE:
                army.setdefault(e.player, set()).add(e.action - L.REVEAL)
            for q, c in e.trades:
                trade[q] = c
        return army, trade

    def _check_reveals(self, entry: Entry, index: int) -> None:
        """Refuse at once what no plan can explain: an Army Card revealed that its owner does not hold, more
        reveals than selected cards, a Trading Card turned over that is not held."""
        snap = self._snapshot
        L = snap.game.layout
        if entry.action is not None and entry.player != self.seat and L.REVEAL <= entry.action < L.MOVE \
                and 0 <= entry.player < snap.num_players:
            q, t = entry.player, entry.action - L.REVEAL
            if not snap.army_held[q][t]:
                raise HistoryError(f"entry {index}: {_name(q)} reveals {snap.game.ruleset.army[t].name}, an Army "
                                   f"Card {_name(q)} does not hold (R6)")
            cards = self._known(len(self._window) - 1)[0].get(q, set())
            need = snap._army_to_select(q)
            if len(cards) > need:
                raise HistoryError(f"entry {index}: {_name(q)} reveals {len(cards)} Army Cards but selected {need}")
        for q, c in entry.trades:
            if not 0 <= q < snap.num_players or not 0 <= c < len(snap.game.ruleset.trading_cards):
                raise HistoryError(f"entry {index}: a Trading Card ({q}, {c}) outside the game")
            if not snap.trade_held[q][c]:
                raise HistoryError(f"entry {index}: {_name(q)}'s Trading Card {c} is turned over, a card "
                                   f"{_name(q)} does not hold (R6)")

    def _candidate_plans(self, index: int) -> Iterable[dict[int, _Plan]]:
        """Plans consistent with everything revealed up to the window's last entry, the current ones first:
        each hidden seat's Army Cards hold every card it revealed; its Trading Card is the one turned over, or
        any held value when none is yet."""
        snap = self._snapshot
        army, trade = self._known(len(self._window) - 1)
        hidden = sorted({e.player for e in self._window if e.hidden})
        options: list[list[_Plan]] = []
        for q in hidden:
            need = snap._army_to_select(q)
            required = army.get(q, set())
            current = self._plans.get(q)
            keep = [t for t in (current.army if current else ()) if t not in required]
            rest = [t for t in range(snap.game.num_tokens)
                    if snap.army_held[q][t] and t not in required and t not in keep]
            cards = tuple(sorted(list(required) + (keep + rest)[:need - len(required)]))
            if q in trade:
                trades = [trade[q]]
            else:
                trades = self._trade_choices(snap, q)
                if current is not None and current.trade in trades:
                    trades.remove(current.trade)
                    trades.insert(0, current.trade)
            options.append([_Plan(cards, c) for c in trades])
        for combo in itertools.product(*options):
            yield dict(zip(hidden, combo))

    def _replay_window(self, plans: dict[int, _Plan]) -> State:
        """The window replayed from its snapshot under ``plans`` (:class:`_Mismatch` if it does not replay)."""
        state = self._snapshot.clone()
        counts: dict[int, int] = {}
        for j, e in enumerate(self._window):
            self._step(state, e, self._window_start + j, plans, counts)
        return state

    def _repair(self, index: int, why: str) -> None:
        """Find plans under which the whole window, through entry ``index``, replays; else HistoryError."""
        for plans in self._candidate_plans(index):
            try:
                state = self._replay_window(plans)
            except _Mismatch:
                continue
            self._state, self._plans = state, plans
            return
        entry = self._window[-1]
        what = "a hidden Strategy pick" if entry.hidden else self._snapshot.action_to_string(entry.action)
        raise HistoryError(f"entry {index} ({_name(entry.player)}: {what}): impossible under every selection "
                           f"consistent with the log: {why}")


def replay_seat_log(start: Any, entries: Iterable[Entry], seat: int, backend: str = "reference"):
    """A position consistent with ``seat``'s log (see the module docstring): same observation for ``seat``
    as the real game. ``start`` is the game's start (State, CoreState, Game or GameRecord); ``backend``
    ``"core"`` returns the compiled core's state, ``"reference"`` (default) the readable one."""
    replay = SeatReplay(start, seat)
    for entry in entries:
        replay.push(entry)
    if backend == "core":
        return to_core(replay.state)
    if backend != "reference":
        raise ValueError(f"backend: expected 'reference' or 'core', got {backend!r}")
    return replay.state
