"""``feudo play``: a person plays one seat in the terminal, against local bots or in a match hosted by a server.

The screen at each of the person's decisions: the board (text picture with a legend), VP, the cards in hand and
the secret selection, what has been revealed this turn, and the legal choices by number and by text. Commands:
a number or the text of a choice plays it; ``hint`` asks the search for this seat's whole decision with
alternatives and beliefs; ``board``, ``log``, ``save FILE``, ``help``, ``quit``. Other seats' actions are printed
as they happen, as this seat may see them (R22): their secret picks are "(hidden)"; fights and plague casualties
are spelled out (:mod:`feudo_ai.people.narrate`). Colour comes from ``rich`` where the terminal has it, plain text
otherwise.

One loop (:class:`HumanSession`) serves both kinds of game through a small :class:`Table`: :class:`LocalTable`
holds the engine position and moves the bots in this process; :class:`feudo_ai.people.hosted_play.HostedTable` follows
a match on a server (bots move there, the person's actions are submitted, hints come from the server's Advisor).
"""

from __future__ import annotations

import abc
import random
from dataclasses import dataclass, field
from typing import Callable, TextIO

from engine import FeudoError, GameRecord, Phase, sample_chance
from engine.render import legend_text, render_text
from engine.state import State

from feudo_ai.bots import Bot
from feudo_ai.search import advise
from feudo_ai.settings import SearchOptions, resolve

from .narrate import narrate

__all__ = ["COMMANDS", "HumanSession", "LocalTable", "Table", "TableError", "default_console"]

COMMANDS = ("hint", "board", "log", "save FILE", "help", "quit")
_STYLE = ("bold blue", "bold white", "bold yellow", "bold red")

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
    def hint(self) -> str:
        """The Advisor's answer for the person's decision, as text. :raises TableError: no answer."""

    @abc.abstractmethod
    def save(self, path: str) -> str:
        """Save the game so far to ``path``; returns what was saved. :raises OSError: cannot write."""

    def leave_message(self) -> str:
        """Printed when the person quits."""
        return "game left; `save FILE` before quitting keeps it"

    def close(self) -> None:
        """Release what the table holds (connections)."""


class LocalTable(Table):
    """A game in this process: the person at ``seat``, ``bots[p]`` at the other seats (``bots[seat]`` is ignored),
    chance drawn from ``seed``."""

    def __init__(self, state: State, seat: int, bots: list[Bot | None], seed: int,
                 hint_options: SearchOptions | None = None):
        self.state = state
        self.seat = seat
        self.bots = bots
        self.rng = random.Random(seed)
        self.hint_options = hint_options or resolve("product", state.num_players, {"seconds": 1.0})
        g = state.game
        self.record = GameRecord(g.ruleset, g.map, state.num_players, seed)

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
                return True
            self._apply(self.bots[p](self.state), report)
        return False

    def choices(self) -> list[tuple[int, str]]:
        return [(a, self.state.action_to_string(a)) for a in self.state.legal_actions()]

    def play(self, action: int, report: Report) -> None:
        self._apply(action, report)

    def hint(self) -> str:
        return str(advise(self.state, self.seat, self.hint_options.replace(seed=self.rng.getrandbits(32))))

    def save(self, path: str) -> str:
        self.record.save(path)
        return f"saved {len(self.record.actions)} actions to {path}"


@dataclass
class HumanSession:
    """The person's loop over a :class:`Table`: screen, choices, commands, narration."""

    table: Table
    read: Callable[[str], str] = input
    console: object = None  # a rich Console; None: plain print
    out: TextIO | None = None
    log: list[str] = field(default_factory=list)

    @property
    def seat(self) -> int:
        return self.table.seat

    # -- output ------------------------------------------------------------------------------------------------
    def say(self, text: str = "", style: str | None = None) -> None:
        if self.console is not None:
            self.console.print(text, style=style, markup=False, highlight=False, soft_wrap=True)
        else:
            print(text, file=self.out, flush=True)

    def _report(self, lines: list[str], actor: int, show: bool) -> None:
        for line in lines:
            self.log.append(line)
            if show:
                self.say(line, style=_STYLE[actor % 4] if actor >= 0 and not line.startswith("  ") else None)

    def _screen(self) -> None:
        s = self.table.view
        g = s.game
        self.say(render_text(s, legend=False))
        self.say(legend_text(s), style="dim")
        rs = g.ruleset
        held = [rs.army[t].name for t in range(g.num_tokens) if s.army_held[self.seat][t]]
        trade = [str(rs.trading_cards[c]) for c in range(len(rs.trading_cards)) if s.trade_held[self.seat][c]]
        self.say(f"Your hand ({g.player_name(self.seat)}): Army Cards {', '.join(held) or 'none'}; "
                 f"Trading Cards {', '.join(trade) or 'none'} shillings", style=_STYLE[self.seat % 4])
        own = [rs.army[t].name for t in range(g.num_tokens) if s.sel_army[self.seat][t]]
        if own or s.sel_trade[self.seat] >= 0:
            card = f", {rs.trading_cards[s.sel_trade[self.seat]]} shillings" if s.sel_trade[self.seat] >= 0 else ""
            self.say(f"Your selection: {', '.join(own)}{card}")
        for q in range(s.num_players):  # public: revealed Army Cards and turned-over Trading Cards only (R22)
            shown = [rs.army[t].name for t in range(g.num_tokens) if s.revealed[q][t]]
            if s.trade_revealed[q] and s.sel_trade[q] >= 0:
                shown.append(f"{rs.trading_cards[s.sel_trade[q]]} shillings")
            if shown:
                self.say(f"Revealed this turn by {g.player_name(q)}: {', '.join(shown)}")

    def _choices(self, legal: list[tuple[int, str]]) -> None:
        self.say(f"Your decision ({Phase(self.table.view.phase).name.lower()}):", style="bold")
        for i, (_, text) in enumerate(legal, 1):
            self.say(f"  {i:3d}. {text}")
        self.say("  (or: " + ", ".join(COMMANDS) + ")", style="dim")

    # -- the game ----------------------------------------------------------------------------------------------
    def _human(self) -> int | None:
        """The person's action, or None to quit."""
        legal = self.table.choices()
        self._screen()
        self._choices(legal)
        while True:
            try:
                line = self.read("> ").strip()
            except EOFError:
                self.say("input ended: leaving the game")
                return None
            if not line:
                continue
            word, _, rest = line.partition(" ")
            cmd = word.lower()
            if line.isdigit():
                n = int(line)
                if 1 <= n <= len(legal):
                    return legal[n - 1][0]
                self.say(f"no choice {n}: pick 1-{len(legal)}")
            elif cmd == "quit":
                return None
            elif cmd == "help":
                self._choices(legal)
            elif cmd == "board":
                self._screen()
            elif cmd == "log":
                for entry in self.log[-40:]:
                    self.say(entry)
            elif cmd == "save":
                self._save(rest.strip())
            elif cmd == "hint":
                self._hint()
            else:
                try:
                    return self.table.parse(line)
                except ValueError as e:  # names the legal choices
                    self.say(f"not a choice: {e}")

    def _hint(self) -> None:
        self.say("thinking...", style="dim")
        try:
            self.say(self.table.hint(), style="green")
        except TableError as e:
            self.say(f"hint: {e}")

    def _save(self, path: str) -> None:
        if not path:
            self.say("save: give a file name, e.g. save game.json")
            return
        try:
            self.say(self.table.save(path))
        except OSError as e:
            self.say(f"save: cannot write {path} ({e.strerror})")

    def run(self) -> int:
        """Play to the end (0) or until the person quits (1). :raises TableError: the game cannot go on."""
        g = self.table.view.game
        names = self.table.player_names()
        self.say("Players: " + ", ".join(f"{g.player_name(p)} = {n}" for p, n in enumerate(names)), style="bold")
        while self.table.wait_turn(self._report):
            action = self._human()
            if action is None:
                self.say(self.table.leave_message())
                return 1
            try:
                self.table.play(action, self._report)
            except TableError as e:  # e.g. refused by the server: the loop asks again at the next decision
                self.say(f"not played: {e}")
        self.say(render_text(self.table.view))
        return 0
