"""Rulesets: every number of Feudo's rules as data (R1, R2, R16, R17, R19, R20).

A ruleset file (``feudo-ruleset/1``) is loaded and validated into an immutable :class:`Ruleset`. Nothing in
the engine hard-codes the roster, the trading cards, the plague deck or the turn count: a player who owns the
box can correct any of them in a file. The optional rules of R20 are switches on the ruleset
(:meth:`Ruleset.with_options`), so a game record names exactly what it was played under.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .errors import DataFileError

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


class _Reader:
    """Typed field access that reports ``file: field.path: expected ..., got ...`` on any mismatch."""

    def __init__(self, source: str):
        self.source = source

    def fail(self, path: str, expected: str, got: Any) -> DataFileError:
        return DataFileError(f"{self.source}: {path}: expected {expected}, got {got!r}")

    def get(self, obj: Any, key: str, path: str, kind: type | tuple, expected: str, default: Any = ...) -> Any:
        if not isinstance(obj, dict):
            raise self.fail(path or "<top>", "an object", obj)
        full = f"{path}.{key}" if path else key
        if key not in obj:
            if default is ...:
                raise DataFileError(f"{self.source}: {full}: missing (expected {expected})")
            return default
        value = obj[key]
        if isinstance(value, bool) and kind is not bool and bool not in (kind if isinstance(kind, tuple) else (kind,)):
            raise self.fail(full, expected, value)
        if not isinstance(value, kind):
            raise self.fail(full, expected, value)
        return value

    def int_in(self, obj: Any, key: str, path: str, lo: int, hi: int, default: Any = ...) -> int:
        value = self.get(obj, key, path, int, f"an integer in [{lo}, {hi}]", default)
        if not lo <= value <= hi:
            raise self.fail(f"{path}.{key}" if path else key, f"an integer in [{lo}, {hi}]", value)
        return value


def ruleset_from_dict(data: Any, source: str = "<dict>") -> Ruleset:
    """Validate a ``feudo-ruleset/1`` object into a :class:`Ruleset`; any fault raises :class:`DataFileError`."""
    r = _Reader(source)
    fmt = r.get(data, "format", "", str, '"feudo-ruleset/1"')
    if fmt != "feudo-ruleset/1":
        raise r.fail("format", '"feudo-ruleset/1"', fmt)
    name = r.get(data, "name", "", str, "a string")
    players = r.get(data, "players", "", dict, "an object {min, max}")
    min_players = r.int_in(players, "min", "players", 2, 4)
    max_players = r.int_in(players, "max", "players", min_players, 4)
    turns = r.int_in(data, "turns", "", 1, 100)

    army_groups = r.get(data, "army", "", list, "a list of token groups")
    army: list[ArmyToken] = []
    for i, group in enumerate(army_groups):
        path = f"army[{i}]"
        gname = r.get(group, "name", path, str, "a string")
        kind = r.get(group, "kind", path, str, f"one of {', '.join(TOKEN_KINDS)}")
        if kind not in TOKEN_KINDS:
            raise r.fail(f"{path}.kind", f"one of {', '.join(TOKEN_KINDS)}", kind)
        count = r.int_in(group, "count", path, 1, 10)
        red = r.int_in(group, "red", path, 1, 20)
        black = r.int_in(group, "black", path, 0, red)
        for k in range(count):
            army.append(ArmyToken(len(army), gname if count == 1 else f"{gname} {k + 1}", kind, red, black))
    for unique in ("baron", "milady"):
        n = sum(1 for t in army if t.kind == unique)
        if n != 1:
            raise r.fail("army", f"exactly one token of kind {unique!r}", f"{n} of them")
    if len(army) > 16:
        raise r.fail("army", "at most 16 tokens per player", len(army))
    if not any(t.takes_cities for t in army):
        raise r.fail("army", "at least one mercenary or infantryman (R11 City attacks)", "none")

    selected = r.int_in(data, "army_cards_selected", "", 1, len(army))
    desperate = r.get(data, "desperate", "", dict, "an object {below_tokens, baron_red, baron_black}")
    below = r.int_in(desperate, "below_tokens", "desperate", 0, len(army))
    d_red = r.int_in(desperate, "baron_red", "desperate", 1, 20)
    d_black = r.int_in(desperate, "baron_black", "desperate", 0, d_red)

    trading = r.get(data, "trading_cards", "", list, "a list of shilling values")
    if not 1 <= len(trading) <= 8:
        raise r.fail("trading_cards", "1 to 8 cards", trading)
    for i, v in enumerate(trading):
        if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= 20:
            raise r.fail(f"trading_cards[{i}]", "an integer in [0, 20]", v)
    # Cards are kept sorted by value, highest first, so "the first held card of value v" is well defined.
    trading_cards = tuple(sorted(trading, reverse=True))

    plague_raw = r.get(data, "plague_cards", "", list, "a list of plague card kinds")
    plague: list[PlagueCard] = []
    for i, card in enumerate(plague_raw):
        path = f"plague_cards[{i}]"
        cname = r.get(card, "name", path, str, "a string")
        effect = r.get(card, "effect", path, str, f"one of {', '.join(PLAGUE_EFFECTS)}")
        if effect not in PLAGUE_EFFECTS:
            raise r.fail(f"{path}.effect", f"one of {', '.join(PLAGUE_EFFECTS)}", effect)
        count = r.int_in(card, "count", path, 1, 50)
        direction, steps = "", 0
        if effect == "move":
            direction = r.get(card, "direction", path, str, "one of N, E, S, W")
            if direction not in DIRECTIONS:
                raise r.fail(f"{path}.direction", "one of N, E, S, W", direction)
            steps = r.int_in(card, "steps", path, 1, 3)
        plague.append(PlagueCard(i, cname, effect, direction, steps, count))
    if not plague:
        raise r.fail("plague_cards", "at least one card", plague_raw)
    reshuffle = r.int_in(data, "plague_reshuffle_every", "", 1, 100)
    if reshuffle > sum(c.count for c in plague):
        raise r.fail("plague_reshuffle_every", "at most the number of plague cards", reshuffle)

    king = r.get(data, "king", "", dict, "an object {threshold, help}")
    defence = r.get(data, "defence", "", dict, "an object {wood, village, city}")
    options = r.get(data, "options", "", dict, "an object", {})
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
        king_threshold=r.int_in(king, "threshold", "king", 1, 1000),
        king_help=r.int_in(king, "help", "king", 0, 20),
        defence_wood=r.int_in(defence, "wood", "defence", 0, 50),
        defence_village=r.int_in(defence, "village", "defence", 0, 50),
        defence_city=r.int_in(defence, "city", "defence", 0, 50),
        tiebreak_max_turns=r.int_in(data, "tiebreak_max_turns", "", 0, 100),
        virulent_plague=r.get(options, "virulent_plague", "options", bool, "true or false", False),
        strategy_only=r.get(options, "strategy_only", "options", bool, "true or false", False),
        source=source,
    )


def load_json_file(path: str | os.PathLike) -> Any:
    """Read a JSON data file; an unreadable or malformed file raises :class:`DataFileError` naming it."""
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except FileNotFoundError:
        raise DataFileError(f"{path}: file not found") from None
    except json.JSONDecodeError as e:
        raise DataFileError(f"{path}: line {e.lineno}: not valid JSON ({e.msg})") from None
    except (OSError, UnicodeDecodeError) as e:
        raise DataFileError(f"{path}: cannot read ({e})") from None


def load_ruleset(path_or_name: str | os.PathLike | None = None) -> Ruleset:
    """Load a ruleset: ``None``/``"basic"`` (the packaged default), another packaged name, or a file path."""
    name = "basic" if path_or_name is None else str(path_or_name)
    packaged = DATA_DIR / f"{name}.json"
    path = packaged if (os.sep not in name and not name.endswith(".json") and packaged.exists()) else Path(name)
    return ruleset_from_dict(load_json_file(path), source=path.name)
