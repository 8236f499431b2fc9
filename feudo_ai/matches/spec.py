"""What a match is played under: players, seats (bots or external), ruleset options, map, seed, Castles.

:class:`MatchSetup` is validated field by field (:class:`~feudo_ai.matches.errors.InvalidArgument` naming the
field), stored as JSON with the match, and builds the start position. Only packaged rulesets and maps are
accepted by name: a match request never makes the server read an arbitrary file.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Any

from engine import DataFileError, FeudoError, load_map, load_ruleset
from engine.core import new_game

from feudo_ai.bots import make_bot
from feudo_ai.bounded import quoted

from .errors import InvalidArgument

EXTERNAL = "external"
_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_MAX_SEED = 2**63 - 1
MAX_SPEC_CHARS = 256  # a seat's bot spec, at most


def _int(value: Any, name: str, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise InvalidArgument(f"{name}: expected an integer in [{lo}, {hi}], got {quoted(value)}")
    return value


@dataclass(frozen=True)
class MatchSetup:
    """A match's setup. ``seats[p]`` is ``"external"`` (played through the service with a seat token) or a bot
    spec (``"ismcts:seconds=1"``, see :func:`feudo_ai.bots.make_bot`). ``board_order`` places the packaged map's
    boards as at a real table; without it the order is drawn from ``board_seed`` (default: ``seed``).
    ``seed`` drives chance (placement order, order decider, plague cards) and the bots' seeds. ``castles``
    gives the Castle sites (R21); without them placing the Castles is part of the match."""

    players: int = 4
    seats: tuple[str, ...] = ()
    seed: int = 0
    ruleset: str = "basic"
    turns: int | None = None
    virulent_plague: bool = False
    strategy_only: bool = False
    map: str = "default"
    board_order: tuple[int, ...] | None = None
    board_seed: int | None = None
    castles: tuple[int, ...] | None = None

    @classmethod
    def from_dict(cls, d: Any) -> "MatchSetup":
        """A validated setup from plain values; InvalidArgument naming the first bad field."""
        if not isinstance(d, dict):
            raise InvalidArgument(f"setup: expected an object, got {type(d).__name__}")
        known = {f for f in cls.__dataclass_fields__}
        unknown = sorted(set(d) - known)
        if unknown:
            raise InvalidArgument(f"setup: unknown field(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
        players = _int(d.get("players", 4), "players", 2, 4)
        seats = d.get("seats") or [EXTERNAL] * players
        if isinstance(seats, str) or not isinstance(seats, (list, tuple)) or len(seats) != players:
            raise InvalidArgument(f"seats: expected a list of {players} seats (\"external\" or a bot spec), "
                                  f"got {quoted(seats)}")
        for i, s in enumerate(seats):
            if not isinstance(s, str) or not s.strip() or len(s) > MAX_SPEC_CHARS:
                raise InvalidArgument(f"seats[{i}]: expected \"external\" or a bot spec of at most "
                                      f"{MAX_SPEC_CHARS} characters, got {quoted(s)}")
        seats = tuple(s.strip() for s in seats)
        seed = _int(d.get("seed", 0), "seed", 0, _MAX_SEED)
        ruleset = d.get("ruleset") or "basic"
        if not isinstance(ruleset, str) or not _NAME.match(ruleset):
            raise InvalidArgument(f"ruleset: expected the name of a packaged ruleset, got {quoted(ruleset)}")
        turns = d.get("turns")
        if turns is not None:
            turns = _int(turns, "turns", 1, 100)
        flags = {}
        for name in ("virulent_plague", "strategy_only"):
            v = d.get(name, False)
            if not isinstance(v, bool):
                raise InvalidArgument(f"{name}: expected true or false, got {quoted(v)}")
            flags[name] = v
        map_name = d.get("map") or "default"
        if not isinstance(map_name, str) or not _NAME.match(map_name):
            raise InvalidArgument(f"map: expected the name of a packaged map, got {quoted(map_name)}")
        order = d.get("board_order")
        if order is not None:
            if (not isinstance(order, (list, tuple)) or sorted(order) != [0, 1, 2, 3]
                    or not all(isinstance(x, int) and not isinstance(x, bool) for x in order)):
                raise InvalidArgument(f"board_order: expected a permutation of 0, 1, 2, 3, got {quoted(order)}")
            order = tuple(order)
        board_seed = d.get("board_seed")
        if board_seed is not None:
            board_seed = _int(board_seed, "board_seed", 0, _MAX_SEED)
        castles = d.get("castles")
        if castles is not None:
            if not isinstance(castles, (list, tuple)) or len(castles) != players:
                raise InvalidArgument(f"castles: expected a list of {players} castle site ids, got "
                                      f"{quoted(castles)}")
            castles = tuple(_int(c, f"castles[{i}]", 0, 10_000) for i, c in enumerate(castles))
        setup = cls(players, seats, seed, ruleset, turns, flags["virulent_plague"], flags["strategy_only"],
                    map_name, order, board_seed, castles)
        setup.start_state()  # rejects what only the engine can check (ruleset, map, castles)
        return setup

    def to_dict(self) -> dict:
        d = asdict(self)
        for k in ("seats", "board_order", "castles"):
            if d[k] is not None:
                d[k] = list(d[k])
        return d

    @property
    def external_seats(self) -> list[int]:
        return [p for p, s in enumerate(self.seats) if s == EXTERNAL]

    @property
    def bot_seats(self) -> list[int]:
        return [p for p, s in enumerate(self.seats) if s != EXTERNAL]

    def check_bots(self) -> None:
        """Every bot spec names a known bot with good parameters (InvalidArgument naming the seat)."""
        for p in self.bot_seats:
            try:
                make_bot(self.seats[p], 0)
            except ValueError as e:
                raise InvalidArgument(f"seats[{p}]: {e}") from None

    def start_state(self, backend: str = "auto"):
        """The match's start position (Castle placement, or turn 1 when ``castles`` are given)."""
        try:
            rs = load_ruleset(self.ruleset)
        except (DataFileError, OSError) as e:
            raise InvalidArgument(f"ruleset: unknown ruleset {self.ruleset!r} ({e})") from None
        try:
            rs = rs.with_options(turns=self.turns, virulent_plague=self.virulent_plague,
                                 strategy_only=self.strategy_only)
            game_map = load_map(self.map, seed=self.seed if self.board_seed is None else self.board_seed,
                                order=list(self.board_order) if self.board_order is not None else None)
        except DataFileError as e:
            raise InvalidArgument(f"map: {e}") from None
        try:
            return new_game(rs, self.players, seed=self.seed, game_map=game_map,
                            castles=list(self.castles) if self.castles is not None else None, backend=backend)
        except FeudoError as e:
            raise InvalidArgument(str(e)) from None
