"""``feudo play``: a person plays one seat against bots in the terminal.

The screen at each of the person's decisions: the board (text picture with a legend), VP, the cards in hand and
the secret selection, what has been revealed this turn, and the legal choices by number and by text. Commands:
a number or the text of a choice plays it; ``hint`` asks the search (``feudo_ai.advise``) for this seat's whole
decision with alternatives and beliefs; ``board``, ``log``, ``save FILE``, ``help``, ``quit``. Other seats'
actions are printed as they happen, as this seat may see them (R22): their secret picks are "(hidden)"; fights
and plague casualties are spelled out (:mod:`feudo_ai.narrate`). Colour comes from ``rich`` where the terminal
has it, plain text otherwise.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Callable, TextIO

from engine import GameRecord, Phase, sample_chance
from engine.render import legend_text, render_text

from .advice import SearchOptions, advise
from .bots import Bot
from .narrate import describe_action, narrate

__all__ = ["HumanSession", "COMMANDS"]

COMMANDS = ("hint", "board", "log", "save FILE", "help", "quit")
_STYLE = ("bold blue", "bold white", "bold yellow", "bold red")


@dataclass
class HumanSession:
    """One game: the person at ``seat``, ``bots[p]`` at the other seats (``bots[seat]`` is ignored)."""

    state: object  # engine State or CoreState at the start
    seat: int
    bots: list[Bot | None]
    seed: int
    hint_options: SearchOptions = field(default_factory=lambda: SearchOptions(seconds=1.0))
    read: Callable[[str], str] = input
    console: object = None  # a rich Console; None: plain print
    out: TextIO | None = None
    log: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)
        g = self.state.game
        self.record = GameRecord(g.ruleset, g.map, self.state.num_players, self.seed)

    # -- output ------------------------------------------------------------------------------------------------
    def say(self, text: str = "", style: str | None = None) -> None:
        if self.console is not None:
            self.console.print(text, style=style, markup=False, highlight=False, soft_wrap=True)
        else:
            print(text, file=self.out, flush=True)

    def _screen(self) -> None:
        s = self.state
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
        for q in range(s.num_players):
            shown = [rs.army[t].name for t in range(g.num_tokens) if s.revealed[q][t]]
            if s.trade_revealed[q] and s.sel_trade[q] >= 0:
                shown.append(f"{rs.trading_cards[s.sel_trade[q]]} shillings")
            if shown:
                self.say(f"Revealed this turn by {g.player_name(q)}: {', '.join(shown)}")

    def _choices(self, legal: list[int]) -> None:
        self.say(f"Your decision ({Phase(self.state.phase).name.lower()}):", style="bold")
        for i, a in enumerate(legal, 1):
            self.say(f"  {i:3d}. {self.state.action_to_string(a)}")
        self.say("  (or: " + ", ".join(COMMANDS) + ")", style="dim")

    # -- the game ----------------------------------------------------------------------------------------------
    def _apply(self, action: int) -> None:
        before = self.state.clone()
        self.state.apply_action(action)
        self.record.actions.append(action)
        lines = narrate(before, action, self.state, viewer=self.seat)
        for line in lines:
            self.log.append(line)
            actor = before.current_player()
            self.say(line, style=_STYLE[actor % 4] if actor >= 0 and not line.startswith("  ") else None)

    def _human(self) -> int | None:
        """The person's action, or None to quit."""
        legal = self.state.legal_actions()
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
                    return legal[n - 1]
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
                    return self.state.string_to_action(line)
                except Exception as e:  # IllegalActionError names the legal choices
                    self.say(f"not a choice: {e}")

    def _hint(self) -> None:
        self.say("thinking...", style="dim")
        advice = advise(self.state, self.seat, self.hint_options.replace(seed=self.rng.getrandbits(32)))
        self.say(str(advice), style="green")

    def _save(self, path: str) -> None:
        if not path:
            self.say("save: give a file name, e.g. save game.json")
            return
        try:
            self.record.save(path)
        except OSError as e:
            self.say(f"save: cannot write {path} ({e.strerror})")
        else:
            self.say(f"saved {len(self.record.actions)} actions to {path}")

    def run(self) -> int:
        """Play to the end (0) or until the person quits (1)."""
        g = self.state.game
        names = [("you" if p == self.seat else (self.bots[p].name if self.bots[p] else "?"))
                 for p in range(self.state.num_players)]
        self.say("Players: " + ", ".join(f"{g.player_name(p)} = {n}" for p, n in enumerate(names)), style="bold")
        while not self.state.is_terminal():
            if self.state.is_chance_node():
                self._apply(sample_chance(self.state, self.rng))
                continue
            p = self.state.current_player()
            if p == self.seat:
                action = self._human()
                if action is None:
                    self.say("game left; `save FILE` before quitting keeps it")
                    return 1
            else:
                action = self.bots[p](self.state)
            self._apply(action)
        self.say(render_text(self.state))
        return 0
