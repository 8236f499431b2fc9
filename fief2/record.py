"""Fief 2 game records: a game is (ruleset, map, players, seed, actions); replay reproduces every state.

Chance outcomes are recorded as ordinary actions, so replay needs no generator; the seed is kept so a game
played by :func:`play_random` can be regenerated from scratch too.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field

from engine.checker import Checker, parse_json
from engine.errors import DataFileError, IllegalActionError

from .data import map_from_dict, ruleset_from_dict
from .state import Game, State

RECORD_FORMAT = "fief2-game/1"
MAX_ACTIONS = 5_000_000


def sample_chance(st: State, rng: random.Random) -> int:
    """The one place chance is resolved: draw an outcome of a chance node with the given generator."""
    r, acc = rng.random(), 0.0
    outcomes = st.chance_outcomes()
    for a, prob in outcomes:
        acc += prob
        if r < acc:
            return a
    return outcomes[-1][0]


@dataclass
class GameRecord:
    game: Game
    seed: int
    actions: list[int] = field(default_factory=list)

    def replay(self, upto: int | None = None) -> State:
        """The state after the first ``upto`` actions (all of them by default)."""
        st = State(self.game)
        st._settle()
        for i, a in enumerate(self.actions[:upto]):
            try:
                st.apply_action(a)
            except IllegalActionError as e:
                raise IllegalActionError(f"actions[{i}]: {e}") from None
        return st

    def to_dict(self) -> dict:
        g = self.game
        return {"format": RECORD_FORMAT, "players": g.num_players, "seed": self.seed,
                "ruleset": dict(g.ruleset._source, options={"scored_turns": g.ruleset.scored_turns,
                                                            "turn_limit": g.ruleset.turn_limit}),
                "map": g.map.to_dict(), "actions": list(self.actions)}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), separators=(",", ":"))

    @classmethod
    def from_dict(cls, d: dict, source: str = "record") -> "GameRecord":
        c = Checker(source)
        keys = ("format", "players", "seed", "ruleset", "map", "actions")
        c.obj(d, "", keys, keys)
        if d["format"] != RECORD_FORMAT:
            c.fail("format", f"expected {RECORD_FORMAT!r}, got {d['format']!r}")
        players = c.integer(d["players"], "players", 3, 6)
        seed = c.integer(d["seed"], "seed", 0, 2 ** 63)
        try:
            gm = map_from_dict(d["map"], f"{source}: map")
            rs = ruleset_from_dict(d["ruleset"], gm.bishopric_ids, f"{source}: ruleset")
        except DataFileError:
            raise
        game = Game(rs, gm, players)
        acts = c.array(d["actions"], "actions", max_len=MAX_ACTIONS)
        for i, a in enumerate(acts):
            c.integer(a, f"actions[{i}]", 0, game.layout.size - 1)
        return cls(game, seed, list(acts))

    @classmethod
    def from_json(cls, text: str) -> "GameRecord":
        return cls.from_dict(parse_json(text, "record"))


def play_random(players: int = 4, seed: int = 0, game: Game | None = None, max_actions: int = 1_000_000,
                check=None) -> GameRecord:
    """A game between uniform random players, chance sampled from ``random.Random(seed)``."""
    game = game or Game(players=players)
    rng = random.Random(seed)
    st = State(game)
    st._settle()
    rec = GameRecord(game, seed)
    while not st.is_terminal() and len(rec.actions) < max_actions:
        a = sample_chance(st, rng) if st.is_chance_node() else rng.choice(st.legal_actions())
        st.apply_action(a)
        rec.actions.append(a)
        if check is not None:
            check(st)
    rec.final = st  # type: ignore[attr-defined]
    return rec
