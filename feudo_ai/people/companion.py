"""``feudo companion``: advice during a game played on the real board.

The person enters what happens at the table, event by event: chance (who places a Castle, who decides the
order, the plague card drawn), their own secret selection, each opponent's reveals, moves, marches, attacks and
advances, and the Trading Cards turned over. Opponents' secret selections are never asked for: they are hidden
entries of the seat's log (:mod:`engine.history`), whose replay keeps a position with exactly this seat's
observation (R22, R25), placeholders for the unknown picks repaired as cards are revealed. At any point ``hint``
asks the search (:func:`feudo_ai.advise`) for this seat's selection or move sequence; ``undo`` takes back the
last event; a mistyped event is refused with the legal choices listed. An event with a single possibility is
entered for the person, with a line saying so (it is never asked as "choose 1-1"). Commands: a number, the text
of a choice or a part of it naming one choice only, ``hint``, ``undo``, ``board``, ``log``, ``save FILE``,
``help`` (the phase and its rules), ``quit`` (exit status 0). ``save FILE`` writes the setup and the events;
``feudo companion --resume FILE`` (:meth:`CompanionSession.load`) goes on from them.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from typing import Callable, TextIO

from engine.errors import IllegalActionError, StateError
from engine.history import Entry, HistoryError, SeatReplay
from engine.render import render_text
from engine.state import CHANCE, TERMINAL, Phase, State
from engine.table import next_actions, trade_choices, turned_over

from feudo_ai.people.narrate import describe_action
from feudo_ai.people.guide import (PHASE_NAMES, choice_columns, choice_notes, hint_lines, match_choice, phase_help,
                                   readable_text)

from feudo_ai.search import NotToAct, advise
from feudo_ai.settings import SearchOptions, resolve

__all__ = ["CompanionSession"]

COMMANDS = ("hint", "undo", "board", "log", "save FILE", "help", "quit")


@dataclass
class CompanionSession:
    """One game at a real table, seen by ``seat``; ``start`` is the position before the first event."""

    start: State
    seat: int
    hint_options: SearchOptions | None = None  # None: 1 s a hint, the product's search options for the game's players
    read: Callable[[str], str] = input
    out: TextIO | None = None
    seed: int = 0
    entries: list[Entry] = field(default_factory=list)
    typed: list[bool] = field(default_factory=list)  # per entry: entered by the person (False: a hidden pick)

    def __post_init__(self) -> None:
        if self.hint_options is None:
            self.hint_options = resolve("product", self.start.num_players, {"seconds": 1.0})
        self.replay = SeatReplay(self.start, self.seat)
        for e in self.entries:  # a resumed game: its events so far
            self.replay.push(e)
        self.rng = random.Random(self.seed)
        self.saved: tuple[str, int] | None = None

    @classmethod
    def load(cls, path: str, hint_seconds: float = 1.0, seed: int = 0, **kw) -> "CompanionSession":
        """A companion going on from a file of ``save FILE``. :raises ValueError: not such a file."""
        from engine.errors import FeudoError
        from engine.serialize import state_from_json

        try:
            with open(path, encoding="utf-8") as f:
                doc = json.load(f)
        except json.JSONDecodeError as e:
            raise ValueError(f"{path}: not JSON ({e})") from None
        if not isinstance(doc, dict) or doc.get("format") != "feudo-companion/1":
            raise ValueError(f'{path}: not a companion game (expected format "feudo-companion/1")')
        try:
            start = state_from_json(json.dumps(doc["start"]))
            entries = [Entry.from_dict(e, f"entries[{i}]") for i, e in enumerate(doc["entries"])]
            typed = doc.get("typed") or [not (e.pick and e.action is None) for e in entries]
            session = cls(start, int(doc["seat"]), resolve("product", start.num_players, {"seconds": hint_seconds}),
                          seed=seed, entries=entries, typed=list(typed), **kw)
        except (KeyError, TypeError, FeudoError, HistoryError) as e:
            raise ValueError(f"{path}: {e}") from None
        return session

    def say(self, text: str = "") -> None:
        print(text, file=self.out, flush=True)

    # -- what may come next -----------------------------------------------------------------------------------
    def _candidates(self, state: State) -> list[int]:
        """The events that may come next as the seat knows the game (:func:`engine.table.next_actions`)."""
        return next_actions(state, self.seat)

    def _text(self, state: State, a: int) -> str:
        if state.phase == Phase.REVEAL:  # a placeholder world may not hold the card: name it directly
            return f"reveal {state.game.ruleset.army[a - state.game.layout.REVEAL].name}"
        return state.action_to_string(a)

    def _said(self, state: State, a: int) -> str:
        """An event as entered, with who took it ("chance: White places the next Castle", "Red: reveal Baron")."""
        if state.is_chance_node():
            return describe_action(state, a, self.seat)
        return f"{state.game.player_name(state.current_player())}: {self._text(state, a)}"

    def _trades(self, state: State, action: int) -> tuple[tuple[int, int], ...] | None:
        """The Trading Cards that ``action`` turns over (R7, R9), in order of play, asked of the person for the
        other seats; None when the person quits. One action may turn over several (a card that pays nothing
        gives no march decision, so the next one is turned over at once): each card entered may change what
        follows, so the action is tried again after each answer."""
        known: dict[int, int] = {}
        while True:
            try:
                turned = turned_over(state, action, known)
            except IllegalActionError:  # the card entered cannot pay for it (R7): ask that card again
                if not known:
                    raise
                q = list(known)[-1]
                self.say(f"impossible with that card: {state.game.player_name(q)}'s Trading Card cannot be it")
                del known[q]
                continue
            ask = [q for q in turned if q != self.seat and q not in known]
            if not ask:
                return tuple((q, known.get(q, state.sel_trade[q])) for q in turned)
            q = ask[0]
            choices = {str(v): i for v, i in trade_choices(state, q).items()}
            while True:
                try:
                    line = self.read(f"Trading Card {state.game.player_name(q)} turns over "
                                     f"(shillings: {', '.join(sorted(choices, key=int, reverse=True))})> ").strip()
                except EOFError:
                    return None
                if line.lower() == "quit":
                    return None
                if line in choices:
                    known[q] = choices[line]
                    break
                self.say(f"not a held card: {line!r}; held: {', '.join(choices)}")

    # -- the loop ---------------------------------------------------------------------------------------------
    def _push(self, entry: Entry, typed: bool) -> bool:
        try:
            self.replay.push(entry)
        except HistoryError as e:
            self.say(f"refused: {e}")
            return False
        self.entries.append(entry)
        self.typed.append(typed)
        return True

    def _undo(self) -> None:
        if not any(self.typed):
            self.say("nothing to undo")
            return
        last = max(i for i, t in enumerate(self.typed) if t)
        self.entries, self.typed = self.entries[:last], self.typed[:last]
        self.replay = SeatReplay(self.start, self.seat)
        for e in self.entries:
            self.replay.push(e)
        self.say(f"undone; {len(self.entries)} events kept")

    def _hint(self) -> None:
        self.say("thinking...")
        try:
            advice = advise(self.replay.state, self.seat, self.hint_options.replace(seed=self.rng.getrandbits(32)))
        except NotToAct as e:  # another player or chance is to act: say who, in the table's words
            who = "chance" if e.actor == CHANCE else ("nobody (the game is over)" if e.actor == TERMINAL
                                                      else self.start.game.player_name(e.actor))
            self.say(f"no hint: no decision of yours is pending ({who} is to act); ask at your own decisions, "
                     f"or during the secret selection")
            return
        except (ValueError, StateError) as e:  # a view the loader refuses
            self.say(f"no hint: {e}")
            return
        for line in hint_lines(advice, self.start.game):
            self.say(line)

    def _log_lines(self) -> list[str]:
        """The events entered so far, in words (the others' picks hidden), replayed from the start."""
        g = self.start.game
        replay, out = SeatReplay(self.start, self.seat), []
        for e in self.entries:
            state = replay.state
            if e.action is None:
                out.append(f"{g.player_name(e.player)} selects a card (hidden)")
            else:
                out.append(self._said(state, e.action))
            for q, c in e.trades:
                out.append(f"{g.player_name(q)} turns over a Trading Card of {g.ruleset.trading_cards[c]} shillings")
            replay.push(e)
        return out

    def _save(self, path: str) -> None:
        doc = {"format": "feudo-companion/1", "seat": self.seat, "start": json.loads(self.start.to_json()),
               "entries": [e.to_dict() for e in self.entries], "typed": list(self.typed)}
        try:
            with open(path, "w", encoding="utf-8") as f:
                json.dump(doc, f)
        except OSError as e:
            self.say(f"save: cannot write {path} ({e.strerror})")
            return
        self.saved = (path, len(self.entries))
        self.say(f"saved {len(self.entries)} events to {path} (`feudo companion --resume {path}` goes on with it)")

    def _prompt(self, state: State, cands: list[int]) -> str:
        p = state.current_player()
        who = "chance" if p == CHANCE else ("you" if p == self.seat else state.game.player_name(p))
        phase = Phase(state.phase)
        self.say(f"Next event ({PHASE_NAMES.get(phase, phase.name.lower())}; {who}):")
        if phase == Phase.CHANCE_PLACER:
            self.say("  whose Coat-of-Arms is drawn: that player places the next Castle (R21)")
        elif phase == Phase.CHANCE_DECIDER:
            self.say("  the players tied for fewest VP draw: who decides the order of play (R5)")
        elif phase == Phase.CHANCE_PLAGUE:
            self.say("  the plague card turned over (R18)")
        elif phase == Phase.CHOOSE_ORDER:
            self.say(f"  {'you set' if p == self.seat else who + ' sets'} the order of play for this turn: the "
                     f"player with the fewest VP (on turn 1: who placed the last Castle) decides (R5)")
        notes = choice_notes(state, cands) if p == self.seat else [""] * len(cands)
        for row in choice_columns([f"{i:3d}. {self._text(state, a)}" + (f" ({n})" if n else "")
                                   for i, (a, n) in enumerate(zip(cands, notes), 1)]):
            self.say(row)
        return "> "

    def run(self) -> int:
        """Follow the game to its end (0) or until the person quits (1)."""
        g = self.start.game
        self.say(f"Companion for {g.player_name(self.seat)} ({g.num_players} players). Enter each event as it "
                 f"happens: a number, the event's text or a part of it naming one event only; "
                 f"commands: {', '.join(COMMANDS)}.")
        if self.replay.state.phase == Phase.CHANCE_PLACER:
            self.say("The game starts with the Castles: first, who places a Castle first is drawn by chance (the "
                     "shuffled Coats-of-Arms, R21); enter the player drawn. Places are named by the board's column "
                     "letter and row number (Hill A1: column A, row 1); `board` shows them.")
        shown = None
        while True:
            state = self.replay.state
            p = state.current_player()
            if p == TERMINAL:
                self.say(render_text(state))
                names = ", ".join(g.player_name(w) for w in state.winners)
                self.say(f"Game over: {names} win{'s' if len(state.winners) == 1 else ''}, VP {state.vp}")
                return 0
            if state.phase == Phase.SELECT and p != self.seat:
                self._push(Entry(p, None, (), True), typed=False)  # secret: nothing to enter (R6, R22)
                self.say(f"{g.player_name(p)} selects a card (hidden)")
                continue
            cands = self._candidates(state)
            if len(cands) == 1:  # nothing to ask: entered with a line saying so
                forced = cands[0]
                trades = self._trades(state, forced)
                if trades is None:
                    return 0
                text = self._said(state, forced)
                # not "typed": undo takes back the person's last entry, and this one follows from it again
                if self._push(Entry(p, forced, trades, state.phase == Phase.SELECT), typed=False):
                    self.say(f"{text} (the only possible event: entered)")
                    shown = None
                    continue
            if shown != len(self.entries):
                prompt = self._prompt(state, cands)
                shown = len(self.entries)
            try:
                line = self.read(prompt).strip()
            except EOFError:
                self.say("input ended: leaving the companion")
                return 1
            if not line:
                continue
            cmd, _, rest = line.partition(" ")
            cmd = cmd.lower()
            if cmd == "quit":
                if self.saved and self.saved[1] == len(self.entries):
                    self.say(f"left; go on with: feudo companion --resume {self.saved[0]}")
                else:
                    self.say("left (not saved: `save FILE` keeps the game, `feudo companion --resume FILE` goes "
                             "on with it)")
                return 0
            if cmd == "help":
                for entry in phase_help(state, self.seat):
                    self.say(entry)
                shown = None
                continue
            if cmd == "hint":
                self._hint()
                continue
            if cmd == "undo":
                self._undo()
                shown = None
                continue
            if cmd == "board":
                self.say(render_text(state))
                continue
            if cmd == "log":
                for line in self._log_lines()[-40:]:
                    self.say(line)
                continue
            if cmd == "save":
                self._save(rest.strip()) if rest.strip() else self.say("save: give a file name")
                continue
            action = self._parse(state, cands, line)
            if action is None:
                self.say(f"not a possible event: {line!r}; choose 1-{len(cands)} or type one of: "
                         + "; ".join(self._text(state, a) for a in cands[:12]) + (" ..." if len(cands) > 12 else ""))
                continue
            trades = self._trades(state, action)
            if trades is None:
                return 0
            text = self._said(state, action)
            if self._push(Entry(p, action, trades, state.phase == Phase.SELECT), typed=True):  # moves `state` on
                self.say(text)
            shown = None

    def _parse(self, state: State, cands: list[int], line: str) -> int | None:
        if line.isdigit():
            n = int(line)
            return cands[n - 1] if 1 <= n <= len(cands) else None
        want = " ".join(line.lower().split())
        for a in cands:
            text = self._text(state, a).lower()
            if want in (text, text.split(": ", 1)[-1]):
                return a
        action, _ = match_choice(line, [(a, readable_text(state.game, a, self._text(state, a)))  # "baron", "c2"
                                        for a in cands])
        return action
