"""Game records: a game is (ruleset, map, players, seed, actions); replay reproduces every state.

The record holds chance outcomes as ordinary actions, so replay needs no random generator; the seed is
kept so a game driven by :func:`play_game` can be re-generated from scratch too.
"""

from __future__ import annotations

import json
import os
import random
from dataclasses import dataclass, field
from typing import Callable, Iterator

from .board import GameMap
from .errors import DataFileError, IllegalActionError, StateError
from .ruleset import Ruleset, load_json_file, ruleset_from_dict
from .state import Game, State, TERMINAL

RECORD_FORMAT = "feudo-game/1"


def sample_chance(state: State, rng: random.Random) -> int:
    """Draw a chance outcome with the given generator (the one place chance is resolved)."""
    outcomes = state.chance_outcomes()
    r = rng.random()
    acc = 0.0
    for action, prob in outcomes:
        acc += prob
        if r < acc:
            return action
    return outcomes[-1][0]


@dataclass
class GameRecord:
    ruleset: Ruleset
    game_map: GameMap
    players: int
    seed: int
    actions: list[int] = field(default_factory=list)
    bots: list[str] = field(default_factory=list)  # who played each seat (informational)

    def initial_state(self) -> State:
        return State(Game(self.ruleset, self.game_map, self.players))

    def states(self) -> Iterator[State]:
        """Every state of the game, from the first to the last (clones)."""
        state = self.initial_state()
        yield state.clone()
        for i, action in enumerate(self.actions):
            try:
                state.apply_action(action)
            except IllegalActionError as e:
                raise IllegalActionError(f"actions[{i}]: {e}") from None
            yield state.clone()

    def replay(self) -> State:
        state = self.initial_state()
        for i, action in enumerate(self.actions):
            try:
                state.apply_action(action)
            except IllegalActionError as e:
                raise IllegalActionError(f"actions[{i}]: {e}") from None
        return state

    def to_dict(self) -> dict:
        return {"format": RECORD_FORMAT, "ruleset": self.ruleset.to_dict(), "map": self.game_map.to_dict(),
                "players": self.players, "seed": self.seed, "bots": list(self.bots), "actions": list(self.actions)}

    def to_json(self) -> str:
        return json.dumps(self.to_dict())

    def save(self, path: str | os.PathLike) -> None:
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.to_json())

    @classmethod
    def from_dict(cls, d: dict, source: str = "<record>") -> "GameRecord":
        if not isinstance(d, dict) or d.get("format") != RECORD_FORMAT:
            raise DataFileError(f'{source}: format: expected "{RECORD_FORMAT}"')
        for key in ("ruleset", "map", "players", "seed", "actions"):
            if key not in d:
                raise DataFileError(f"{source}: {key}: missing")
        actions = d["actions"]
        if not isinstance(actions, list) or not all(isinstance(a, int) and not isinstance(a, bool) for a in actions):
            raise DataFileError(f"{source}: actions: expected a list of integers")
        if not isinstance(d["seed"], int):
            raise DataFileError(f"{source}: seed: expected an integer, got {d['seed']!r}")
        record = cls(ruleset_from_dict(d["ruleset"], f"{source}: ruleset"),
                     GameMap.from_dict(d["map"], f"{source}: map"), d["players"], d["seed"], list(actions),
                     [str(b) for b in d.get("bots", [])])
        try:
            Game(record.ruleset, record.game_map, record.players)
        except StateError as e:
            raise DataFileError(f"{source}: {e}") from None
        return record

    @classmethod
    def load(cls, path: str | os.PathLike) -> "GameRecord":
        return cls.from_dict(load_json_file(path), source=str(path))


Chooser = Callable[[State], int]


def play_game(choosers: list[Chooser], state: State, seed: int, max_actions: int = 100_000,
              on_action: Callable[[State, int], None] | None = None) -> tuple[GameRecord, State]:
    """Play a game to the end: ``choosers[p](state)`` picks player p's actions, chance is drawn from
    ``random.Random(seed)``. Returns the record (actions from ``state`` onwards) and the final state."""
    rng = random.Random(seed)
    record = GameRecord(state.game.ruleset, state.game.map, state.num_players, seed)
    for _ in range(max_actions):
        player = state.current_player()
        if player == TERMINAL:
            return record, state
        action = sample_chance(state, rng) if state.is_chance_node() else choosers[player](state)
        if on_action is not None:
            on_action(state, action)
        state.apply_action(action)
        record.actions.append(action)
    raise StateError(f"game did not end within {max_actions} actions")
