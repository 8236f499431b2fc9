"""Feudo rules engine: rulesets and maps as data, a readable reference state, game records.

The public API re-exported here is what the rest of the project (and other front-ends) build on.
"""

from .actions import PLAYER_NAMES, ActionLayout
from .board import GameMap, Kind, load_map
from .errors import DataFileError, FeudoError, IllegalActionError, StateError
from .record import GameRecord, play_game, sample_chance
from .ruleset import ArmyToken, PlagueCard, Ruleset, load_ruleset, ruleset_from_dict
from .state import CASTLE, CHANCE, DEAD, TERMINAL, Game, Phase, State, new_game
from . import render, serialize  # noqa: F401 - imported for effect: they install str(state), State.from_json
from .core import core_available, new_game as new_fast_game

__all__ = [
    "PLAYER_NAMES", "ActionLayout", "GameMap", "Kind", "load_map", "DataFileError", "FeudoError",
    "IllegalActionError", "StateError", "GameRecord", "play_game", "sample_chance", "ArmyToken", "PlagueCard",
    "Ruleset", "load_ruleset", "ruleset_from_dict", "CASTLE", "CHANCE", "DEAD", "TERMINAL", "Game", "Phase",
    "State", "new_game",
    "core_available", "new_fast_game",
]
