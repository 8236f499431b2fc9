"""A person plays Fief 2 against bots in the terminal (``feudo play --game fief2``).

At each of your decisions: your hand, the numbered choices (the engine's ``action_to_string``), and a prompt.
Type a number, or a choice's text, or ``board`` (the text board, fief2/render.py), ``picture FILE`` (the board as
SVG, or PNG for a ``.png`` name, with your own hand), ``hand``, ``help``, ``quit``.
The other families' moves are printed as they happen, as you would see them at the table (F46): a card dealt to
another family, its discards and the cards it gives or hands over are not named.
"""

from __future__ import annotations

import random
import sys
from typing import Callable, TextIO

from fief2 import render_png, render_svg, sample_chance

HELP = """Type the number of a choice (or its text). Commands:
  board   the board (families, villages, fiefs)
  picture FILE   the board as a picture: SVG, or PNG when FILE ends in .png
  hand    your cards
  help    this text
  quit    leave the game"""

_HIDDEN_KINDS = ("deal", "discard", "give", "hand_over")


def public_text(before, action: int, seat: int) -> str | None:
    """What ``seat`` sees of an action taken at ``before`` (None: nothing worth a line)."""
    actor = before.current_player()
    kind, x = before.game.layout.decode(action)
    text = before.action_to_string(action)
    if actor < 0:  # chance
        if kind == "deal":
            return None  # the receiver is told by its hand; others only see that a card was dealt
        return f"  chance: {text}"
    if actor != seat and kind in _HIDDEN_KINDS:
        if kind == "give":
            return f"  family {actor}: offers a card to family {x % before.game.layout.MAX_FAMILIES}"
        return f"  family {actor}: {'discards a card' if kind == 'discard' else 'hands over a card'}"
    if actor == seat:
        return None
    return f"  family {actor}: {text}"


class Fief2Session:
    """One game: ``seat`` is the person's, ``bots[p]`` (None at ``seat``) play the others; chance from ``seed``."""

    def __init__(self, state, seat: int, bots: list, seed: int, inp: Callable[[str], str] = input,
                 out: TextIO | None = None):
        self.state, self.seat, self.bots = state, seat, bots
        self.rng = random.Random(seed)
        self.input, self.out = inp, out or sys.stdout
        self.actions: list[int] = []

    def say(self, text: str = "") -> None:
        print(text, file=self.out)

    def hand_text(self) -> str:
        g, st = self.state.game, self.state
        cards = ", ".join(g.card_name(c) for c in st.hands[self.seat]) or "no cards"
        return f"Your hand (family {self.seat}): {cards}; {st.cash[self.seat]} florins"

    def run(self) -> int:
        """Play to the end (0) or until the person quits (1), as ``feudo play`` does for Feudo."""
        st = self.state
        self.say(f"Fief 2, {st.num_players} families; you are family {self.seat}. Type help for the commands.")
        self.say(str(st))
        turn = st.turn
        while not st.is_terminal():
            if st.turn != turn:
                turn = st.turn
                self.say(f"=== Turn {turn} ===")
            if st.is_chance_node():
                a = sample_chance(st, self.rng)
            elif st.current_player() == self.seat:
                a = self.ask()
                if a is None:
                    self.say("You left the game.")
                    return 1
            else:
                a = self.bots[st.current_player()](st)
            line = public_text(st, a, self.seat)
            if line:
                self.say(line)
            st.apply_action(a)
            self.actions.append(a)
        self.say(str(st))
        winners = ", ".join(f"family {w}" + (" (you)" if w == self.seat else "") for w in st.winners)
        self.say(f"Game over after turn {st.turn}. Winner{'s' if len(st.winners) > 1 else ''}: {winners}. "
                 f"Power (F50): {[st.power(f) for f in range(st.num_players)]}")
        return 0

    def picture(self, path: str) -> str:
        """Write the board as the person's family sees it (its own hand, F46) to ``path``: SVG, or PNG."""
        if not path:
            return "picture FILE: the board as SVG, or PNG when FILE ends in .png"
        try:
            if path.lower().endswith(".png"):
                render_png(self.state, path, seat=self.seat)
            else:
                with open(path, "w", encoding="utf-8") as f:
                    f.write(render_svg(self.state, seat=self.seat))
        except (OSError, ImportError) as e:  # a bad path, or no cairosvg for PNG: said, and the game goes on
            return f"picture: {e}"
        return f"wrote {path}"

    def ask(self) -> int | None:
        st = self.state
        legal = st.legal_actions()
        if len(legal) == 1:
            return legal[0]  # a forced decision is played for you
        texts = [st.action_to_string(a) for a in legal]
        self.say(self.hand_text())
        for i, t in enumerate(texts, 1):
            self.say(f"  {i:3d}. {t}")
        while True:
            try:
                answer = self.input(f"family {self.seat}> ").strip()
            except EOFError:
                return None
            low = answer.lower()
            if low in ("quit", "exit", "q"):
                return None
            if low in ("help", "?", "h"):
                self.say(HELP)
            elif low == "board":
                self.say(str(st))
            elif low.split(" ", 1)[0] == "picture":
                self.say(self.picture(answer[len("picture"):].strip()))
            elif low == "hand":
                self.say(self.hand_text())
            elif answer.isdigit() and 1 <= int(answer) <= len(legal):
                return legal[int(answer) - 1]
            elif answer in texts:
                return legal[texts.index(answer)]
            else:
                self.say(f"Not a choice: {answer!r}. Type a number 1-{len(legal)}, or help.")
