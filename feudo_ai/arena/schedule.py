"""Tournament configuration and its fair schedule: which bots sit where, on which deal.

A *deal* is a game seed: the map's board order (R3) and every chance outcome (placement order, order decider,
plague draws) are drawn from it, so two games on one deal differ only by the players' choices. The deal seeds are
drawn from ``random.Random(config.seed)``, the same list for every table of the tournament.

A *table* is the multiset of entrants that play together (a *lineup*); a *seating* puts the lineup into seats.
Every table plays every deal once per seating, so every entrant plays every deal from every seat:

- ``rotate`` (default): the cyclic rotations of the lineup (P seatings for P players);
- ``permute``: every distinct permutation (also balances who sits left of whom; up to 24 in 4 players).

Tables:

- ``round-robin`` (default): with at least as many entrants as players, every combination of ``players``
  distinct entrants; with fewer (e.g. 2 entrants, 4 players) every ordered pair "X against P-1 copies of Y";
- ``gauntlet``: the first entrant against each of the others, the other filling every other seat
  ("ismcts vs 3 greedy" in 4 players).

``games`` is the number of games per table, rounded up to a whole number of deals times seatings. Games are
numbered deal by deal (all tables of deal 0, then deal 1, ...) so a partial run is balanced over the tables.
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json
import math
import random
from dataclasses import dataclass, field
from typing import Any

from engine import DataFileError

FORMATS = ("round-robin", "gauntlet")
SEATINGS = ("rotate", "permute")
ENGINES = ("auto", "core", "reference")
CONFIG_FORMAT = "feudo-arena/1"


class ArenaError(ValueError):
    """A bad tournament (bad entrant, option, output or resume directory): reported before any game starts."""


@dataclass(frozen=True)
class TournamentConfig:
    """Everything that decides a tournament's games (and so its results, for deterministic bots)."""

    bots: tuple[str, ...]  # entrant bot specs, e.g. ("ismcts:iterations=2000", "greedy")
    players: int = 2
    games: int = 20  # games per table, rounded up to a whole number of deals x seatings
    seed: int = 1
    format: str = "round-robin"
    seating: str = "rotate"
    ruleset: str | None = None  # ruleset name or file (None: the packaged "basic")
    map: str | None = None  # map name or file (None: the packaged "default" assembly)
    turns: int | None = None  # R20 optional rules
    virulent: bool = False
    strategy_only: bool = False
    engine: str = "auto"  # rules implementation: compiled core when built ("auto"), "core" or "reference"
    game: str = "feudo"  # the game (feudo_ai/games.py): "feudo" or "fief2"; Feudo's configs never store it

    def __post_init__(self) -> None:
        if self.game != "feudo":
            self._check_other_game()
            return
        object.__setattr__(self, "bots", tuple(str(b).strip() for b in self.bots))
        if len(self.bots) < 2:
            raise ArenaError(f"--bots: a tournament needs at least 2 entrants, got {len(self.bots)}")
        if any(not b for b in self.bots):
            raise ArenaError("--bots: empty bot spec")
        dup = sorted({b for b in self.bots if self.bots.count(b) > 1})
        if dup:
            raise ArenaError(f"--bots: entrant {dup[0]!r} listed twice (each entrant once; seats are scheduled)")
        if not isinstance(self.players, int) or not 2 <= self.players <= 4:
            raise ArenaError(f"--players: expected 2, 3 or 4, got {self.players!r}")
        if not isinstance(self.games, int) or isinstance(self.games, bool) or self.games < 1:
            raise ArenaError(f"--games: expected a positive integer, got {self.games!r}")
        if not isinstance(self.seed, int) or isinstance(self.seed, bool):
            raise ArenaError(f"--seed: expected an integer, got {self.seed!r}")
        if self.format not in FORMATS:
            raise ArenaError(f"--format: expected one of {', '.join(FORMATS)}, got {self.format!r}")
        if self.seating not in SEATINGS:
            raise ArenaError(f"--seating: expected one of {', '.join(SEATINGS)}, got {self.seating!r}")
        if self.engine not in ENGINES:
            raise ArenaError(f"--engine: expected one of {', '.join(ENGINES)}, got {self.engine!r}")
        if self.turns is not None and (not isinstance(self.turns, int) or self.turns < 1):
            raise ArenaError(f"--turns: expected a positive integer, got {self.turns!r}")

    def _check_other_game(self) -> None:
        """The checks of a tournament of another game than Feudo: its player range, no Feudo-only option."""
        from feudo_ai.games import GAME_NAMES, get_game

        if self.game not in GAME_NAMES:
            raise ArenaError(f"--game: unknown game {self.game!r}; known games: {', '.join(GAME_NAMES)}")
        object.__setattr__(self, "bots", tuple(str(b).strip() for b in self.bots))
        if len(self.bots) < 2:
            raise ArenaError(f"--bots: a tournament needs at least 2 entrants, got {len(self.bots)}")
        if any(not b for b in self.bots):
            raise ArenaError("--bots: empty bot spec")
        dup = sorted({b for b in self.bots if self.bots.count(b) > 1})
        if dup:
            raise ArenaError(f"--bots: entrant {dup[0]!r} listed twice (each entrant once; seats are scheduled)")
        entry = get_game(self.game)
        try:
            entry.check_players(self.players)
        except ValueError as e:
            raise ArenaError(str(e)) from None
        for name, flag, default in (("ruleset", "--ruleset", None), ("map", "--map", None),
                                    ("virulent", "--virulent", False), ("strategy_only", "--strategy-only", False),
                                    ("engine", "--engine", "auto")):
            if getattr(self, name) != default:
                raise ArenaError(f"{flag}: a Feudo option, not for --game {self.game}")
        if not isinstance(self.games, int) or isinstance(self.games, bool) or self.games < 1:
            raise ArenaError(f"--games: expected a positive integer, got {self.games!r}")
        if not isinstance(self.seed, int) or isinstance(self.seed, bool):
            raise ArenaError(f"--seed: expected an integer, got {self.seed!r}")
        if self.format not in FORMATS:
            raise ArenaError(f"--format: expected one of {', '.join(FORMATS)}, got {self.format!r}")
        if self.seating not in SEATINGS:
            raise ArenaError(f"--seating: expected one of {', '.join(SEATINGS)}, got {self.seating!r}")
        if self.turns is not None and (not isinstance(self.turns, int) or not 1 <= self.turns <= 1000):
            raise ArenaError(f"--turns: expected the turn limit (F51), an integer in [1, 1000], got {self.turns!r}")

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["bots"] = list(self.bots)
        if d["game"] == "feudo":  # Feudo's configs (and their fingerprints) are what they were before games
            del d["game"]
        return d

    @classmethod
    def from_dict(cls, d: Any, source: str = "tournament") -> "TournamentConfig":
        if not isinstance(d, dict):
            raise ArenaError(f"{source}: expected an object")
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(d) - names)
        if unknown:
            raise ArenaError(f"{source}: unknown field {unknown[0]!r}")
        if not isinstance(d.get("bots"), list):
            raise ArenaError(f"{source}: bots: expected a list of bot specs")
        return cls(**{**d, "bots": tuple(d["bots"])})

    def fingerprint(self) -> str:
        """A short hash of the configuration: two runs with the same fingerprint schedule the same games."""
        text = json.dumps(self.to_dict(), sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Table:
    """Entrants (indices into ``config.bots``) playing together, and the seatings they are played in."""

    index: int
    lineup: tuple[int, ...]  # one entrant per seat in the first seating
    seatings: tuple[tuple[int, ...], ...]

    def label(self, bots: tuple[str, ...]) -> str:
        """"A vs B", "A vs 3 B" or "A, B, C"."""
        distinct = sorted(set(self.lineup), key=self.lineup.index)
        if len(distinct) == 2:
            a, b = distinct
            na, nb = self.lineup.count(a), self.lineup.count(b)
            left = bots[a] if na == 1 else f"{na} {bots[a]}"
            right = bots[b] if nb == 1 else f"{nb} {bots[b]}"
            return f"{left} vs {right}"
        return ", ".join(bots[e] for e in self.lineup)


@dataclass(frozen=True)
class GameSpec:
    """One scheduled game: everything a worker needs to play it (besides the config's rules options)."""

    index: int
    table: int
    deal: int
    deal_seed: int
    seats: tuple[int, ...]  # entrant index per seat
    bots: tuple[str, ...]  # bot spec per seat
    bot_seeds: tuple[int, ...]  # seed of each seat's bot

    def to_dict(self) -> dict[str, Any]:
        return {"index": self.index, "table": self.table, "deal": self.deal, "deal_seed": self.deal_seed,
                "seats": list(self.seats), "bots": list(self.bots), "bot_seeds": list(self.bot_seeds)}


@dataclass(frozen=True)
class Schedule:
    config: TournamentConfig
    tables: tuple[Table, ...]
    deals: int  # deals per table
    games: tuple[GameSpec, ...] = field(repr=False)

    @property
    def games_per_table(self) -> int:
        return self.deals * len(self.tables[0].seatings)


def _seatings(lineup: tuple[int, ...], mode: str) -> tuple[tuple[int, ...], ...]:
    if mode == "rotate":
        rots = [lineup[i:] + lineup[:i] for i in range(len(lineup))]
    else:
        rots = sorted(set(itertools.permutations(lineup)))
    out: list[tuple[int, ...]] = []
    for r in rots:  # keep the first occurrence: a lineup of identical entrants would repeat itself
        if r not in out:
            out.append(r)
    return tuple(out)


def lineups(n: int, players: int, fmt: str) -> list[tuple[int, ...]]:
    """The tables' lineups for ``n`` entrants (see the module docstring)."""
    if fmt == "gauntlet":
        return [(0,) + (j,) * (players - 1) for j in range(1, n)]
    if n >= players:
        return list(itertools.combinations(range(n), players))
    return [(i,) + (j,) * (players - 1) for i in range(n) for j in range(n) if i != j]


def deal_seeds(seed: int, count: int) -> list[int]:
    """The first ``count`` deal seeds of a tournament (a prefix of the same list for every count)."""
    rng = random.Random(seed)
    return [rng.getrandbits(31) for _ in range(count)]


def bot_seed(deal_seed: int, seat: int) -> int:
    """The seed of the bot in ``seat`` on a deal: whoever sits there gets it (common random numbers)."""
    return deal_seed * 4 + seat


def build_schedule(config: TournamentConfig) -> Schedule:
    tables = []
    for t, lineup in enumerate(lineups(len(config.bots), config.players, config.format)):
        tables.append(Table(t, lineup, _seatings(lineup, config.seating)))
    per_deal = len(tables[0].seatings)
    if any(len(t.seatings) != per_deal for t in tables):  # cannot happen with the lineups above; be sure
        raise ArenaError("internal: tables with different numbers of seatings")
    deals = math.ceil(config.games / per_deal)
    seeds = deal_seeds(config.seed, deals)
    games: list[GameSpec] = []
    for d, ds in enumerate(seeds):
        for table in tables:
            for seating in table.seatings:
                games.append(GameSpec(len(games), table.index, d, ds, seating,
                                      tuple(config.bots[e] for e in seating),
                                      tuple(bot_seed(ds, p) for p in range(config.players))))
    return Schedule(config, tuple(tables), deals, tuple(games))
