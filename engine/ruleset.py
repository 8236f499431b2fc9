"""Rulesets: every number of Feudo's rules as data (R1, R2, R16, R17, R19, R20).

A ruleset file (``feudo-ruleset/1``) is loaded and validated into an immutable :class:`Ruleset`. Nothing in
the engine hard-codes the roster, the trading cards, the plague deck or the turn count: a player who owns the
box can correct any of them in a file. The optional rules of R20 are switches on the ruleset
(:meth:`Ruleset.with_options`), so a game record names exactly what it was played under.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .errors import DataFileError
from .checker import Checker, json_type, read_json_file

DATA_DIR = Path(__file__).resolve().parent / "data" / "rulesets"

TOKEN_KINDS = ("baron", "milady", "first_knight", "knight", "mercenary", "infantryman")
PLAGUE_EFFECTS = ("move", "border", "cross", "lingering", "fog")
DIRECTIONS = ("N", "E", "S", "W")


@dataclass(frozen=True)
class ArmyToken:
    """One army token (and its Army Card), R1. ``index`` is its slot in every player's roster."""

    index: int
    name: str  # e.g. "Knight 2": the card's text form
    kind: str  # one of TOKEN_KINDS; abilities follow from the kind (R8, R11, R13)
    red: int  # healthy number: movement capacity, force and VP when eliminated
    black: int  # plague-stricken number

    @property
    def enters_villages_and_cities(self) -> bool:
        """R8: only the Baron, Mercenaries and Infantrymen may enter Villages and (own) Cities."""
        return self.kind in ("baron", "mercenary", "infantryman")

    @property
    def takes_cities(self) -> bool:
        """R11: a City attack needs a Mercenary or an Infantryman among the attackers."""
        return self.kind in ("mercenary", "infantryman")


@dataclass(frozen=True)
class PlagueCard:
    """One kind of plague card (R2, R18); ``count`` copies are in the full deck."""

    index: int
    name: str
    effect: str  # one of PLAGUE_EFFECTS
    direction: str  # N/E/S/W for "move", "" otherwise
    steps: int  # lattice steps for "move", 0 otherwise
    count: int


@dataclass(frozen=True)
class Ruleset:
    name: str
    min_players: int
    max_players: int
    turns: int  # regular turns before the tie-break (R19, R20 longer game)
    army: tuple[ArmyToken, ...]  # one entry per token, in card order
    army_cards_selected: int  # R6: each player selects min(this, held) Army Cards
    desperate_below: int  # R17: fewer than this many living non-Milady tokens...
    desperate_red: int  # ...turns the Baron into these numbers
    desperate_black: int
    trading_cards: tuple[int, ...]  # printed shillings of each player's Trading Cards
    plague_cards: tuple[PlagueCard, ...]
    plague_reshuffle_every: int  # R20: all cards reshuffled after this many turns (10)
    king_threshold: int  # R16
    king_help: int  # R16
    defence_wood: int  # R11
    defence_village: int
    defence_city: int
    tiebreak_max_turns: int  # R19 software cap
    virulent_plague: bool = False  # R20
    strategy_only: bool = False  # R20: no Convent, no Plague Token, no plague cards
    source: str = field(default="<dict>", compare=False)

    # -- derived facts -------------------------------------------------------------------------------------
    @property
    def tokens_per_player(self) -> int:
        return len(self.army)

    @property
    def baron(self) -> int:
        return next(t.index for t in self.army if t.kind == "baron")

    @property
    def milady(self) -> int:
        return next(t.index for t in self.army if t.kind == "milady")

    @property
    def has_convent(self) -> bool:
        """R10, R20: Virulent Plague and Only Strategy and Tactics play without the Convent."""
        return not (self.virulent_plague or self.strategy_only)

    @property
    def has_plague(self) -> bool:
        return not self.strategy_only

    def refreshes_trading_cards(self, turn: int) -> bool:
        """R4: Trading Cards come back when every one has been played: turns 6, 11, 16 with five cards."""
        period = len(self.trading_cards)
        return turn > 1 and (turn - 1) % period == 0

    def with_options(self, *, turns: int | None = None, virulent_plague: bool | None = None,
                     strategy_only: bool | None = None) -> "Ruleset":
        """The same ruleset with R20's optional rules switched."""
        changes: dict[str, Any] = {}
        if turns is not None:
            if not isinstance(turns, int) or turns < 1:
                raise DataFileError(f"{self.source}: turns: expected a positive integer, got {turns!r}")
            changes["turns"] = turns
        if virulent_plague is not None:
            changes["virulent_plague"] = bool(virulent_plague)
        if strategy_only is not None:
            changes["strategy_only"] = bool(strategy_only)
        return replace(self, **changes)

    def to_dict(self) -> dict:
        """The ``feudo-ruleset/1`` form, which :func:`ruleset_from_dict` reads back to an equal ruleset."""
        groups: list[dict] = []
        for token in self.army:
            base = token.name.rsplit(" ", 1)[0] if token.name[-1].isdigit() else token.name
            if groups and groups[-1]["name"] == base and groups[-1]["kind"] == token.kind:
                groups[-1]["count"] += 1
            else:
                groups.append({"name": base, "kind": token.kind, "count": 1, "red": token.red, "black": token.black})
        return {
            "format": "feudo-ruleset/1",
            "name": self.name,
            "players": {"min": self.min_players, "max": self.max_players},
            "turns": self.turns,
            "army": groups,
            "army_cards_selected": self.army_cards_selected,
            "desperate": {"below_tokens": self.desperate_below, "baron_red": self.desperate_red,
                          "baron_black": self.desperate_black},
            "trading_cards": list(self.trading_cards),
            "plague_cards": [
                {"name": c.name, "effect": c.effect, "count": c.count,
                 **({"direction": c.direction, "steps": c.steps} if c.effect == "move" else {})}
                for c in self.plague_cards
            ],
            "plague_reshuffle_every": self.plague_reshuffle_every,
            "king": {"threshold": self.king_threshold, "help": self.king_help},
            "defence": {"wood": self.defence_wood, "village": self.defence_village, "city": self.defence_city},
            "tiebreak_max_turns": self.tiebreak_max_turns,
            "options": {"virulent_plague": self.virulent_plague, "strategy_only": self.strategy_only},
        }


_TOP_KEYS = ("format", "name", "description", "players", "turns", "army", "army_cards_selected", "desperate",
             "trading_cards", "plague_cards", "plague_reshuffle_every", "king", "defence", "tiebreak_max_turns",
             "options")
_ARMY_KEYS = ("name", "kind", "count", "red", "black")
_PLAGUE_KEYS = ("name", "effect", "count", "direction", "steps")
_OPTION_KEYS = ("virulent_plague", "strategy_only")


def ruleset_from_dict(data: Any, source: str = "<dict>") -> Ruleset:
    """Validate a ``feudo-ruleset/1`` object into a :class:`Ruleset`; any fault raises :class:`DataFileError`
    naming the field. Objects are closed: an unknown or misspelt field (``options.virulent``) is an error
    listing the known ones, never silently ignored."""
    ck = Checker(source)
    ck.obj(data, "", _TOP_KEYS)
    ck.fmt(data, "feudo-ruleset/1")

    def req(key: str) -> Any:  # fields are read (and reported missing) in file order
        if key not in data:
            ck.fail(key, "missing required field")
        return data[key]

    name = ck.string(req("name"), "name")
    if "description" in data:
        ck.string(data["description"], "description", nonempty=False)
    players = ck.obj(req("players"), "players", ("min", "max"), required=("min", "max"))
    min_players = ck.integer(players["min"], "players.min", 2, 4)
    max_players = ck.integer(players["max"], "players.max", min_players, 4)
    turns = ck.integer(req("turns"), "turns", 1, 100)

    army_groups = ck.array(req("army"), "army", nonempty=True, max_len=16)
    army: list[ArmyToken] = []
    for i, group in enumerate(army_groups):
        path = f"army[{i}]"
        ck.obj(group, path, _ARMY_KEYS, required=_ARMY_KEYS)
        gname = ck.string(group["name"], f"{path}.name", max_len=60)
        kind = group["kind"]
        if kind not in TOKEN_KINDS:
            ck.fail(f"{path}.kind", f"expected one of {', '.join(TOKEN_KINDS)}, got {json_type(kind)}")
        count = ck.integer(group["count"], f"{path}.count", 1, 10)
        red = ck.integer(group["red"], f"{path}.red", 1, 20)
        black = ck.integer(group["black"], f"{path}.black", 0, red)
        for k in range(count):
            army.append(ArmyToken(len(army), gname if count == 1 else f"{gname} {k + 1}", kind, red, black))
    for unique in ("baron", "milady"):
        n = sum(1 for t in army if t.kind == unique)
        if n != 1:
            ck.fail("army", f"expected exactly one token of kind {unique!r}, got {n} of them")
    if len(army) > 16:
        ck.fail("army", f"expected at most 16 tokens per player, got {len(army)}")
    if not any(t.takes_cities for t in army):
        ck.fail("army", "expected at least one mercenary or infantryman (R11 City attacks), got none")

    selected = ck.integer(req("army_cards_selected"), "army_cards_selected", 1, len(army))
    keys = ("below_tokens", "baron_red", "baron_black")
    desperate = ck.obj(req("desperate"), "desperate", keys, required=keys)
    below = ck.integer(desperate["below_tokens"], "desperate.below_tokens", 0, len(army))
    d_red = ck.integer(desperate["baron_red"], "desperate.baron_red", 1, 20)
    d_black = ck.integer(desperate["baron_black"], "desperate.baron_black", 0, d_red)

    trading = ck.array(req("trading_cards"), "trading_cards")
    if not 1 <= len(trading) <= 8:
        ck.fail("trading_cards", f"expected 1 to 8 cards, got {len(trading)}")
    for i, v in enumerate(trading):
        ck.integer(v, f"trading_cards[{i}]", 0, 20)
    # Cards are kept sorted by value, highest first, so "the first held card of value v" is well defined.
    trading_cards = tuple(sorted(trading, reverse=True))

    plague_raw = ck.array(req("plague_cards"), "plague_cards", nonempty=True, max_len=32)
    plague: list[PlagueCard] = []
    for i, card in enumerate(plague_raw):
        path = f"plague_cards[{i}]"
        ck.obj(card, path, _PLAGUE_KEYS, required=("name", "effect", "count"))
        cname = ck.string(card["name"], f"{path}.name", max_len=60)
        effect = card["effect"]
        if effect not in PLAGUE_EFFECTS:
            ck.fail(f"{path}.effect", f"expected one of {', '.join(PLAGUE_EFFECTS)}, got {json_type(effect)}")
        count = ck.integer(card["count"], f"{path}.count", 1, 50)
        direction, steps = "", 0
        if effect == "move":
            for key in ("direction", "steps"):
                if key not in card:
                    ck.fail(f"{path}.{key}", "missing required field (a move card has a direction and steps)")
            direction = card["direction"]
            if direction not in DIRECTIONS:
                ck.fail(f"{path}.direction", f"expected one of N, E, S, W, got {json_type(direction)}")
            steps = ck.integer(card["steps"], f"{path}.steps", 1, 3)
        else:
            for key in ("direction", "steps"):
                if key in card:
                    ck.fail(f"{path}.{key}", f"only move cards have a {key} (this card's effect is {effect})")
        plague.append(PlagueCard(i, cname, effect, direction, steps, count))
    reshuffle = ck.integer(req("plague_reshuffle_every"), "plague_reshuffle_every", 1, 100)
    if reshuffle > sum(c.count for c in plague):
        ck.fail("plague_reshuffle_every", f"expected at most the number of plague cards, got {reshuffle}")

    king = ck.obj(req("king"), "king", ("threshold", "help"), required=("threshold", "help"))
    defence = ck.obj(req("defence"), "defence", ("wood", "village", "city"), required=("wood", "village", "city"))
    options = ck.obj(data.get("options", {}), "options", _OPTION_KEYS)
    return Ruleset(
        name=name,
        min_players=min_players,
        max_players=max_players,
        turns=turns,
        army=tuple(army),
        army_cards_selected=selected,
        desperate_below=below,
        desperate_red=d_red,
        desperate_black=d_black,
        trading_cards=trading_cards,
        plague_cards=tuple(plague),
        plague_reshuffle_every=reshuffle,
        king_threshold=ck.integer(king["threshold"], "king.threshold", 1, 1000),
        king_help=ck.integer(king["help"], "king.help", 0, 20),
        defence_wood=ck.integer(defence["wood"], "defence.wood", 0, 50),
        defence_village=ck.integer(defence["village"], "defence.village", 0, 50),
        defence_city=ck.integer(defence["city"], "defence.city", 0, 50),
        tiebreak_max_turns=ck.integer(req("tiebreak_max_turns"), "tiebreak_max_turns", 0, 100),
        virulent_plague=ck.boolean(options.get("virulent_plague", False), "options.virulent_plague"),
        strategy_only=ck.boolean(options.get("strategy_only", False), "options.strategy_only"),
        source=source,
    )


def load_json_file(path: str | os.PathLike) -> Any:
    """Read a JSON data file; an unreadable or malformed file raises :class:`DataFileError` naming it."""
    return read_json_file(path, DataFileError)


def load_ruleset(path_or_name: str | os.PathLike | None = None) -> Ruleset:
    """Load a ruleset: ``None``/``"basic"`` (the packaged default), another packaged name, or a file path."""
    name = "basic" if path_or_name is None else str(path_or_name)
    packaged = DATA_DIR / f"{name}.json"
    bare = os.sep not in name and not name.endswith(".json")
    path = packaged if (bare and packaged.exists()) else Path(name)
    if bare and not path.exists():
        known = sorted(p.stem for p in DATA_DIR.glob("*.json"))
        raise DataFileError(f"{name}: unknown ruleset (packaged rulesets: {', '.join(known)}; "
                            f"or give the path of a ruleset JSON file)")
    return ruleset_from_dict(load_json_file(path), source=path.name)
