"""``feudo play``: a person plays one seat in the terminal, against local bots or in a match hosted by a server.

At each of the person's decisions: what the other seats did since the last one, in a few lines (their secret
picks condensed, "White: selects 3 cards (hidden)"; fights and plague casualties spelled out,
:mod:`feudo_ai.people.narrate`); the board when it changed (column letters and row numbers, the coordinates every
place is named by: "Wood C2"; Castles, tokens and the Plague Token beside the terrain); a status line (turn, VP,
hand, selection, shillings); the choices by number, each with its cost ("2 shillings, 2 left"). Commands: a number,
a choice's text or any part of it naming one choice only (``baron`` for ``select Baron``); ``hint`` (the search's
advice, ranked by visits, and why); ``help`` (the phase, its rules, why an option is missing); ``undo`` (back to
your previous decision while nothing hidden has come out since); ``board``, ``log``, ``save FILE``, ``quit``
(exit status 0). Colour comes from ``rich`` on a terminal; piped output is plain text.

One loop (:class:`HumanSession`) serves both kinds of game through a small :class:`Table`: :class:`LocalTable`
holds the engine position and moves the bots in this process; :class:`feudo_ai.people.hosted_play.HostedTable` follows
a match on a server (bots move there, the person's actions are submitted, hints come from the server's Advisor).
"""

from __future__ import annotations

import abc
import copy
import json
import random
from dataclasses import dataclass, field
from typing import Callable, TextIO

from engine import FeudoError, GameRecord, Phase, sample_chance
from engine.render import PLAYER_STYLES, board_segments, legend_text, render_text, segments_text, tokens_text
from engine.state import State

from feudo_ai.bots import Bot
from feudo_ai.search import advise
from feudo_ai.settings import SearchOptions, resolve

from .guide import (PHASE_NAMES, choice_columns, choice_notes, hint_lines, match_choice, phase_help,
                    readable_text)
from .narrate import narrate

__all__ = ["COMMANDS", "HumanSession", "LocalTable", "Table", "TableError", "default_console"]

COMMANDS = ("hint", "help", "undo", "board", "log", "save FILE", "quit")
_STYLE = PLAYER_STYLES
PLAY_FORMAT = "feudo-play/1"  # the "play" part of a saved game record: what `feudo play --resume` needs

#: What a table reports for each action: the lines narrating it, the player who took it (-1: chance), and
#: whether to print them now (False: an action replayed while reconnecting, kept for ``log`` only).
Report = Callable[[list[str], int, bool], None]


def default_console() -> object:
    """A ``rich`` Console (colour where the terminal has it), or None for plain text without rich."""
    try:
        from rich.console import Console
    except ImportError:
        return None
    return Console(highlight=False)


class TableError(Exception):
    """A table that cannot go on (server lost, match gone): the session ends with this one-line message."""


class Table(abc.ABC):
    """A game as the person's seat takes part in it: what the session loop needs, wherever the game runs."""

    seat: int

    @property
    @abc.abstractmethod
    def view(self) -> State:
        """The position drawn on the screen. Only its public facts and the seat's own cards are shown."""

    @abc.abstractmethod
    def player_names(self) -> list[str]:
        """Who plays each seat ("you" at the person's)."""

    @abc.abstractmethod
    def wait_turn(self, report: Report) -> bool:
        """Let the other seats and chance play until the person decides (True) or the game is over (False),
        reporting each action. :raises TableError: the game cannot go on."""

    @abc.abstractmethod
    def choices(self) -> list[tuple[int, str]]:
        """The person's legal actions now, with their text."""

    def parse(self, text: str) -> int:
        """The legal action whose text is ``text``. :raises ValueError: naming the legal choices."""
        try:
            action = self.view.string_to_action(text)
        except FeudoError as e:  # IllegalActionError names the legal choices
            raise ValueError(str(e)) from None
        if action not in [a for a, _ in self.choices()]:
            raise ValueError(f"{text!r} is not a legal action now")
        return action

    @abc.abstractmethod
    def play(self, action: int, report: Report) -> None:
        """Take the person's action. :raises TableError: refused (the message says why)."""

    @abc.abstractmethod
    def hint(self):
        """The Advisor's answer (an :class:`feudo_ai.Advice`) for the person's decision. :raises TableError: none."""

    @abc.abstractmethod
    def save(self, path: str) -> str:
        """Save the game so far to ``path``; returns what was saved. :raises OSError: cannot write."""

    def undo(self, report: Report) -> str:
        """Take back the person's last decision. :raises TableError: not possible (the message says why)."""
        raise TableError("this game cannot be undone")

    def leave_message(self, saved: str | None) -> str:
        """Printed when the person quits (``saved``: the file last saved at the current position, if any)."""
        if saved:
            return f"game left; resume it with: feudo play --resume {saved}"
        return "game left (not saved: `save FILE` keeps a game, `feudo play --resume FILE` goes on with it)"

    def close(self) -> None:
        """Release what the table holds (connections)."""


class LocalTable(Table):
    """A game in this process: the person at ``seat``, ``bots[p]`` at the other seats (``bots[seat]`` is ignored),
    chance drawn from ``seed``.

    ``undo`` goes back to the person's previous decision: the position, the chance generator and the bots (copied
    at each decision) are restored, so the same decision again gives the same game. It is refused once something
    hidden from the person has come out since that decision (a card revealed by another seat, a Trading Card
    turned over, a chance draw): undoing then would choose again with knowledge the decision did not have.
    ``specs`` (the bots' specs) and ``hint_seconds`` are saved with the game for ``feudo play --resume``."""

    def __init__(self, state: State, seat: int, bots: list[Bot | None], seed: int,
                 hint_options: SearchOptions | None = None, specs: list[str] | None = None,
                 record: GameRecord | None = None, chance_state: object = None, hint_seconds: float = 1.0):
        self.state = state
        self.seat = seat
        self.bots = bots
        self.seed = seed
        self.rng = random.Random(seed)  # chance only: hints have their own generator (a hint changes no draw)
        if chance_state is not None:
            self.rng.setstate(chance_state)
        self.hint_rng = random.Random(seed + 1)
        self.hint_options = hint_options or resolve("product", state.num_players, {"seconds": 1.0})
        self.hint_seconds = hint_seconds
        self.specs = list(specs) if specs is not None else [getattr(b, "name", "?") if b else "you" for b in bots]
        g = state.game
        self.record = record or GameRecord(g.ruleset, g.map, state.num_players, seed, bots=list(self.specs))
        self._marks: list[tuple[int, State, object, list[Bot | None] | None]] = []  # the person's decision points

    @property
    def view(self) -> State:
        return self.state

    def player_names(self) -> list[str]:
        return [("you" if p == self.seat else (self.bots[p].name if self.bots[p] else "?"))
                for p in range(self.state.num_players)]

    def _apply(self, action: int, report: Report) -> None:
        before = self.state.clone()
        self.state.apply_action(action)
        self.record.actions.append(action)
        report(narrate(before, action, self.state, viewer=self.seat), before.current_player(), True)

    def wait_turn(self, report: Report) -> bool:
        while not self.state.is_terminal():
            if self.state.is_chance_node():
                self._apply(sample_chance(self.state, self.rng), report)
                continue
            p = self.state.current_player()
            if p == self.seat:
                self._mark()
                return True
            self._apply(self.bots[p](self.state), report)
        return False

    def _mark(self) -> None:
        """Keep what undo restores at this decision of the person's."""
        n = len(self.record.actions)
        if self._marks and self._marks[-1][0] == n:
            return
        try:
            bots = copy.deepcopy(self.bots)
        except Exception:  # a bot holding something that cannot be copied: undo restores no bots  # noqa: BLE001
            bots = None
        self._marks.append((n, self.state.clone(), self.rng.getstate(), bots))

    def _hidden_came_out(self) -> str | None:
        """What hidden from the person came out after their last decision but one (None: nothing)."""
        n, s = self._marks[-2][0], self._marks[-2][1].clone()
        s.apply_action(self.record.actions[n])  # the decision to take back
        for a in self.record.actions[n + 1:]:
            p = s.current_player()
            if s.is_chance_node():
                return f"chance drew {s.action_to_string(a).removeprefix('chance: ')}"
            if p != self.seat and s.phase == Phase.REVEAL:
                return f"{s.game.player_name(p)} revealed a card"
            shown = [q for q in range(s.num_players) if not s.trade_revealed[q]]
            s.apply_action(a)
            if any(s.trade_revealed[q] for q in shown if q != self.seat):
                return "a Trading Card was turned over"
        return None

    def undo(self, report: Report) -> str:
        if len(self._marks) < 2:
            raise TableError("nothing to undo: this is your first decision")
        n, state, chance, bots = self._marks[-2]
        why = self._hidden_came_out()
        if why is not None:
            raise TableError(f"cannot undo: {why} since your last decision (you would decide again knowing it)")
        if bots is None:
            raise TableError("cannot undo: a bot of this game cannot be restored")
        mine = self._marks[-2][1].action_to_string(self.record.actions[n])
        others = len(self.record.actions) - n - 1
        self._marks.pop()
        self.state = state.clone()
        self.rng.setstate(chance)
        self.bots = copy.deepcopy(bots)
        del self.record.actions[n:]
        return (f"undone: {mine}" + (f" and the {others} action{'s' if others != 1 else ''} after it" if others else "")
                + "; back at your previous decision")

    def choices(self) -> list[tuple[int, str]]:
        return [(a, self.state.action_to_string(a)) for a in self.state.legal_actions()]

    def play(self, action: int, report: Report) -> None:
        self._apply(action, report)

    def hint(self):
        return advise(self.state, self.seat, self.hint_options.replace(seed=self.hint_rng.getrandbits(32)))

    def save(self, path: str) -> str:
        doc = self.record.to_dict()
        doc["play"] = {"format": PLAY_FORMAT, "seat": self.seat, "bots": self.specs, "seed": self.seed,
                       "hint_seconds": self.hint_seconds, "chance_state": _jsonable(self.rng.getstate())}
        with open(path, "w", encoding="utf-8") as f:
            json.dump(doc, f)
        return (f"saved {len(self.record.actions)} actions to {path} (`feudo play --resume {path}` goes on with it; "
                f"`feudo replay {path}` shows it)")


def _jsonable(x: object) -> object:
    return [_jsonable(v) for v in x] if isinstance(x, (tuple, list)) else x


def _tuples(x: object) -> object:
    return tuple(_tuples(v) for v in x) if isinstance(x, list) else x


def resume_local(path: str, make_bot: Callable[[str, int], Bot], backend: str = "auto",
                 hint_seconds: float | None = None) -> LocalTable:
    """The table of a game saved by ``save FILE`` in ``feudo play``: the record replayed, the same seat, the bots
    made again from their specs and seeds, the chance generator where it was. A resumed bot starts afresh (a
    search bot's banked time and plan are not saved), so its later choices may differ from an unsaved game's.

    :raises ValueError: not a saved ``feudo play`` game (the message names what is missing)."""
    from engine.core import to_core, core_available

    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    meta = doc.get("play") if isinstance(doc, dict) else None
    if not isinstance(meta, dict) or meta.get("format") != PLAY_FORMAT:
        raise ValueError(f"{path}: not a game saved by `feudo play` (no \"play\" part of format {PLAY_FORMAT})")
    record = GameRecord.from_dict(doc, source=path)
    seat, seed, specs = int(meta["seat"]), int(meta["seed"]), list(meta["bots"])
    state = record.replay()
    if backend != "reference" and core_available():
        state = to_core(state)
    if state.is_terminal():
        raise ValueError(f"{path}: that game is over")
    bots = [None if p == seat else make_bot(specs[p], seed * 1000 + p) for p in range(record.players)]
    seconds = float(meta.get("hint_seconds", 1.0)) if hint_seconds is None else hint_seconds
    hints = resolve("product", record.players, {"seconds": seconds})
    return LocalTable(state, seat, bots, seed, hints, specs=specs, record=record,
                      chance_state=_tuples(meta["chance_state"]), hint_seconds=seconds)


def _condense(lines: list[tuple[str, int]]) -> list[tuple[str, int]]:
    """Runs of one seat's hidden picks as one line ("White: selects 4 cards (hidden)")."""
    out: list[tuple[str, int]] = []
    for line, actor in lines:
        if line.endswith(": selects a card (hidden)") and out and out[-1][1] == actor \
                and out[-1][0].startswith(line.split(":")[0] + ": selects ") and out[-1][0].endswith("(hidden)"):
            prev = out[-1][0]
            n = 1 if "a card" in prev else int(prev.split("selects ")[1].split()[0])
            out[-1] = (f"{line.split(':')[0]}: selects {n + 1} cards (hidden)", actor)
        else:
            out.append((line, actor))
    return out


@dataclass
class HumanSession:
    """The person's loop over a :class:`Table`: screen, choices, commands, narration."""

    table: Table
    read: Callable[[str], str] = input
    console: object = None  # a rich Console; None: plain print
    out: TextIO | None = None
    log: list[str] = field(default_factory=list)
    pending: list[tuple[str, int]] = field(default_factory=list)  # the others' actions since the last decision
    shown_board: str | None = None
    saved: tuple[str, int] | None = None  # (file, actions) of the last save

    @property
    def seat(self) -> int:
        return self.table.seat

    # -- output ------------------------------------------------------------------------------------------------
    def say(self, text: str = "", style: str | None = None) -> None:
        if self.console is not None:
            self.console.print(text, style=style, markup=False, highlight=False, soft_wrap=True)
        else:
            print(text, file=self.out, flush=True)

    def say_segments(self, lines: list) -> None:
        if self.console is not None:
            from rich.text import Text

            for segs in lines:
                t = Text()
                for text, style in segs:
                    t.append(text, style=style)
                t.rstrip()
                self.console.print(t, highlight=False, soft_wrap=True)
        else:
            self.say(segments_text(lines))

    def _report(self, lines: list[str], actor: int, show: bool) -> None:
        for line in lines:
            self.log.append(line)
            if show:
                self.pending.append((line, actor))

    def _flush(self) -> None:
        """The others' actions since the person's last decision, condensed."""
        for line, actor in _condense(self.pending):
            self.say(line, style=_STYLE[actor % 4] if actor >= 0 and not line.startswith("  ") else None)
        self.pending.clear()

    def _board(self, force: bool = False) -> None:
        s = self.table.view
        lines = board_segments(s)
        plain = segments_text(lines)
        if force or plain != self.shown_board:
            self.say_segments(lines)
            self.say(legend_text(s), style="dim")
            self.shown_board = plain
            g = s.game
            for q in range(s.num_players):
                tag = " (you)" if q == self.seat else ""
                self.say(f"  {g.player_name(q)}{tag}: {tokens_text(s, q)}", style=_STYLE[q % 4])

    def _status(self) -> None:
        s = self.table.view
        g = s.game
        rs = g.ruleset
        vp = ", ".join(f"{g.player_name(q)} {s.vp[q]}" for q in range(s.num_players))
        turn = f"Turn {s.turn} of {rs.turns}" if s.turn else "Setup"
        self.say(f"{turn} | {PHASE_NAMES.get(Phase(s.phase), Phase(s.phase).name)} | VP {vp}", style="bold")
        held = [rs.army[t].name for t in range(g.num_tokens) if s.army_held[self.seat][t]]
        count: dict[int, int] = {}
        for c in range(len(rs.trading_cards)):
            if s.trade_held[self.seat][c]:
                count[rs.trading_cards[c]] = count.get(rs.trading_cards[c], 0) + 1
        trade = ", ".join(f"{n} of {v} shillings" for v, n in sorted(count.items(), reverse=True))
        self.say(f"Your hand ({g.player_name(self.seat)}): Army Cards {', '.join(held) or 'none'}; "
                 f"Trading Cards: {trade or 'none'}", style=_STYLE[self.seat % 4])
        own = [rs.army[t].name for t in range(g.num_tokens) if s.sel_army[self.seat][t]]
        if own or s.sel_trade[self.seat] >= 0:
            card = f"; Trading Card {rs.trading_cards[s.sel_trade[self.seat]]} shillings" \
                if s.sel_trade[self.seat] >= 0 else ""
            self.say(f"Your selection: {', '.join(own)}{card}")
        if s.phase == Phase.MARCH and s.current_player() == self.seat:
            self.say(f"Shillings left to march: {s.shillings}")
        for q in range(s.num_players):  # public: revealed Army Cards and turned-over Trading Cards only (R22)
            shown = [rs.army[t].name for t in range(g.num_tokens) if s.revealed[q][t]]
            if s.trade_revealed[q] and s.sel_trade[q] >= 0:
                shown.append(f"{rs.trading_cards[s.sel_trade[q]]} shillings")
            if shown:
                self.say(f"Revealed this turn by {g.player_name(q)}: {', '.join(shown)}")

    def _choices(self, legal: list[tuple[int, str]]) -> None:
        notes = choice_notes(self.table.view, [a for a, _ in legal])
        items = [f"{i:3d}. {text}" + (f" ({note})" if note else "") for i, ((_, text), note)
                 in enumerate(zip(legal, notes), 1)]
        phase = Phase(self.table.view.phase)
        self.say(f"Your decision ({PHASE_NAMES.get(phase, phase.name.lower())}):", style="bold")
        for row in choice_columns(items):
            self.say(row)
        self.say("  (type a number, a choice or a part of it naming one choice; or: " + ", ".join(COMMANDS) + ")",
                 style="dim")

    # -- the game ----------------------------------------------------------------------------------------------
    def _human(self) -> int | None:
        """The person's action, or None to quit."""
        legal = self.table.choices()
        self._flush()
        self._board()
        self._status()
        self._choices(legal)
        while True:
            try:
                line = self.read("> ").strip()
            except EOFError:
                self.say("input ended: leaving the game")
                raise
            if not line:
                continue
            word, _, rest = line.partition(" ")
            cmd = word.lower()
            if line.isdigit():
                n = int(line)
                if 1 <= n <= len(legal):
                    return legal[n - 1][0]
                self.say(f"no choice {n}: pick 1-{len(legal)}")
            elif cmd == "quit" and not rest:
                return None
            elif cmd == "help" and not rest:
                for entry in phase_help(self.table.view, self.seat):
                    self.say(entry)
                self._choices(legal)
            elif cmd == "board" and not rest:
                self._board(force=True)
                self._status()
            elif cmd == "log" and not rest:
                for entry in self.log[-40:]:
                    self.say(entry)
            elif cmd == "save":
                self._save(rest.strip())
            elif cmd == "hint" and not rest:
                self._hint()
            elif cmd == "undo" and not rest:
                try:
                    self.say(self.table.undo(self._report))
                except TableError as e:
                    self.say(str(e))
                    continue
                self.pending.clear()
                return self._human()
            else:
                game = self.table.view.game  # "4 shillings" names the Trading Card pick too
                action, several = match_choice(line, [(a, readable_text(game, a, t)) for a, t in legal])
                if action is not None:
                    return action
                if several:
                    self.say(f"{line!r} names {len(several)} choices: " + "; ".join(several[:8])
                             + (" ..." if len(several) > 8 else "") + " (type more of one, or its number)")
                    continue
                try:
                    return self.table.parse(line)
                except ValueError as e:  # names the legal choices
                    self.say(f"not a choice: {e}")

    def _hint(self) -> None:
        self.say("thinking...", style="dim")
        try:
            advice = self.table.hint()
        except TableError as e:
            self.say(f"hint: {e}")
            return
        for line in hint_lines(advice, self.table.view.game) if not isinstance(advice, str) else [advice]:
            self.say(line, style="green")

    def _save(self, path: str) -> None:
        if not path:
            self.say("save: give a file name, e.g. save game.json")
            return
        try:
            self.say(self.table.save(path))
            self.saved = (path, len(self.log))
        except OSError as e:
            self.say(f"save: cannot write {path} ({e.strerror})")

    def run(self) -> int:
        """Play to the end or until the person quits (0 both); 1 when the input ends mid-game.
        :raises TableError: the game cannot go on."""
        g = self.table.view.game
        names = self.table.player_names()
        self.say("Players: " + ", ".join(f"{g.player_name(p)} = {n}" for p, n in enumerate(names)), style="bold")
        self.say("Places are named by the board's column letter and row number (Wood C2: column C, row 2); "
                 "`help` explains the phase at hand.", style="dim")
        try:
            while self.table.wait_turn(self._report):
                action = self._human()
                if action is None:
                    current = self.saved[0] if self.saved and self.saved[1] == len(self.log) else None
                    self.say(self.table.leave_message(current))
                    return 0
                try:
                    self.table.play(action, self._report)
                except TableError as e:  # e.g. refused by the server: the loop asks again at the next decision
                    self.say(f"not played: {e}")
        except EOFError:
            return 1
        self._flush()
        self.say(render_text(self.table.view))
        return 0
