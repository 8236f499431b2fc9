"""Fief 2 actions: ints inside, stable readable text outside.

An action is ``base(kind) + argument``. The kinds and their sizes depend only on the map and the ruleset (number
of villages, persons, cards, money steps), so an action int means the same thing in every state of a game, and
``action_to_string`` names places as the board does (``group at V08 Hautefort``, ``play B35 assassin``).

Compound choices of the rulings (a step with persons, soldiers and prisoners, F25; a purchase with its place,
F22; a proposal with its amount, F42) are made as a short sequence of these actions by the same seat; the set of
complete choices is exactly the rulings' (F-preamble: "an implementation may encode actions differently").
"""

from __future__ import annotations

# One-word answers and ends. Their meaning is always read with the decision they answer (F26, F31, F42, F45...).
WORDS = ("end", "accept", "refuse", "ask consent", "assault", "turn back", "join assault", "fight on", "retreat",
         "surrender", "join defence", "stay out", "no attempt", "abstain", "aim done", "persons done",
         "prisoners done", "make prince", "buy soldier", "mob stops", "stop")
W = {w.replace(" ", "_").upper(): i for i, w in enumerate(WORDS)}

BUY_ITEMS = ("soldier", "king's guard", "queen's guard", "peasant", "wine press", "mill", "castle", "cardinal",
             "fief title")


class Layout:
    """Offsets of every action kind. ``MAX_FAMILIES`` is 6 whatever the table size, so ints do not depend on n."""

    MAX_FAMILIES = 6

    def __init__(self, villages: int, persons: int, cards: int, money_steps: int, max_soldiers: int,
                 fiefs: int = 6, calm_steps: int = 4):
        F = self.MAX_FAMILIES
        self.V, self.P, self.C, self.M, self.K, self.NF = villages, persons, cards, money_steps, max_soldiers + 1, fiefs
        self.calm_steps = calm_steps
        kinds = [("word", len(WORDS)), ("die", 6), ("deal", cards), ("play", cards), ("discard", cards),
                 ("give", cards * F), ("ask", F), ("hand_over", cards), ("person", persons), ("village", villages),
                 ("fief", fiefs), ("family", F), ("amount", money_steps), ("soldiers", 4 * self.K),
                 ("buy", len(BUY_ITEMS)), ("marry", persons * persons), ("ally", F), ("unally", F), ("gift", F),
                 ("release", persons), ("ransom", persons), ("transfer", fiefs), ("inside", villages * F),
                 ("group", villages), ("mob", villages), ("aim", persons), ("vote", persons), ("candidate", persons),
                 ("calm", persons * calm_steps), ("prisoner", persons)]
        self.base: dict[str, int] = {}
        self.kinds: list[tuple[str, int, int]] = []
        off = 0
        for name, size in kinds:
            self.base[name] = off
            self.kinds.append((name, off, size))
            off += size
        self.size = off

    def a(self, kind: str, arg: int = 0) -> int:
        return self.base[kind] + arg

    def word(self, name: str) -> int:
        return self.base["word"] + W[name]

    def decode(self, action: int) -> tuple[str, int]:
        for name, off, size in self.kinds:
            if off <= action < off + size:
                return name, action - off
        raise ValueError(f"action {action} is outside the action space [0, {self.size})")
