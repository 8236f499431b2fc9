"""Small helpers for building hand-made Feudo positions in tests, and for loading a benchmark script as a module.

Positions are built by editing a fresh state's fields directly (the state is plain lists of ints and bools),
then clearing the legal-action cache with :func:`touch`. Token slots follow the basic ruleset's roster (R1).
"""

from __future__ import annotations

import importlib
import os
import random
import sys
from types import ModuleType
from typing import Callable, Iterable

from engine import load_map, load_ruleset, new_game
from engine.board import GameMap
from engine.record import sample_chance
from engine.state import CASTLE, DEAD, TERMINAL, Phase, State

RS = load_ruleset()
BARON, MILADY, FK, KN1, KN2, MER1, MER2, INF1, INF2, INF3 = range(10)
BLUE, WHITE, YELLOW, RED = range(4)
# trading card slots of the basic ruleset: values sorted highest first (4, 2, 0, 0, 0)
FOUR, TWO, ZERO = 0, 1, 2

# Castle sites of the default map (seed 0) on the four different boards: C0-0, A0-0, B0-0, D0-0.
DEFAULT_CASTLES = [0, 9, 34, 26]

_MAPS: dict = {}


def game_map(name: str | None = None) -> GameMap:
    key = name or "<default>"
    if key not in _MAPS:
        _MAPS[key] = load_map(name, seed=0)
    return _MAPS[key]


def make(players: int = 2, castles: list[int] | None = None, map_name: str | None = None, ruleset=None) -> State:
    """A game at turn 1 (order choice), Castles placed, every token in its Castle."""
    m = game_map(map_name)
    if castles is None:
        castles = DEFAULT_CASTLES[:players] if map_name is None else None
    return new_game(ruleset or RS, players, seed=0, game_map=m, castles=castles)


def tid(state_or_map, name: str) -> int:
    m = state_or_map.game.map if isinstance(state_or_map, State) else state_or_map
    return m.territory(name).id


def tname(state: State, x: int) -> str:
    if x == CASTLE:
        return "castle"
    if x == DEAD:
        return "dead"
    return state.game.map.territories[x].name


def touch(state: State) -> State:
    if state.turn >= 1 and state.phase > Phase.SELECT and state.phase != Phase.TERMINAL:
        state.sel_done = list(state.active)  # past the Strategy phase every player taking part has selected (R6)
    state._legal = None
    return state


def put(state: State, p: int, t: int, where, stricken: bool = False) -> None:
    """Place token t of player p on a territory (name or id), or CASTLE / DEAD."""
    x = tid(state, where) if isinstance(where, str) else where
    state.loc[p][t] = x
    if x >= 0:
        state.entered[p][t] = True
    state.stricken[p][t] = stricken
    touch(state)


def at(state: State, p: int, t: int) -> str:
    return tname(state, state.loc[p][t])


def set_turn(state: State, turn: int, order: list[int] | None = None) -> None:
    state.turn = turn
    state.order = list(order) if order is not None else list(range(state.num_players))
    touch(state)


def move_options(state: State, p: int, t: int, trade: int | None = None, order: list[int] | None = None) -> set[str]:
    """Put the state in the MOVE phase for player p's revealed token t; return the legal destinations' names."""
    if order is not None or not state.order:
        state.order = list(order) if order is not None else list(range(state.num_players))
    if state.turn == 0:
        state.turn = 1
    state.phase = int(Phase.MOVE)
    state.sel_done = list(state.active)  # in the Movement phase every player taking part has selected (R6)
    state.cursor = state.order.index(p)
    state.round = 0
    state.token = t
    state.sel_army[p][t] = True
    state.revealed[p][t] = True
    if trade is not None:
        state.sel_trade[p] = trade
    elif state.sel_trade[p] < 0:
        state.sel_trade[p] = ZERO
    touch(state)
    L = state.game.layout
    return {tname(state, a - L.MOVE) for a in state.legal_actions() if a != L.PASS}


def attack_targets(state: State, p: int) -> set[str]:
    """Put the state in the ATTACK phase for player p; return the names of the legal targets."""
    if not state.order:
        state.order = list(range(state.num_players))
    state.phase = int(Phase.ATTACK)
    state.cursor = state.order.index(p)
    touch(state)
    L = state.game.layout
    return {tname(state, a - L.ATTACK) for a in state.legal_actions() if a != L.PASS}


def act(state: State, text: str) -> None:
    """Apply the legal action with this text form (see State.action_to_string)."""
    state.apply_action(state.string_to_action(text))


def engine_text(state: State, action: int) -> str:
    """An action's text with places named by the engine's territory names ("move Knight 1 to C2-4"), as the rules
    tests are written (the product's texts name places by board coordinates, "move Knight 1 to Hill E1/F1";
    ``string_to_action`` accepts both)."""
    return state._action_text(action, legacy=True)


def legal_strings(state: State) -> list[str]:
    """The legal actions' texts, places by the engine's territory names (:func:`engine_text`)."""
    return [engine_text(state, a) for a in state.legal_actions()]


def attack(state: State, p: int, target: str, joiners: Iterable[int]) -> None:
    """From the ATTACK phase (player p to act): declare an attack on target with the given tokens and launch."""
    assert state.current_player() == p and state.phase == Phase.ATTACK, (state.phase, state.current_player())
    L = state.game.layout
    state.apply_action(L.ATTACK + tid(state, target))
    for t in joiners:
        if t not in state.joiners:
            state.apply_action(L.JOIN + t)
    state.apply_action(L.PASS)


def chance_action(state: State, name: str) -> int:
    """The chance outcome whose text is ``plague: <name>`` / ``chance: <player>``."""
    for a, _ in state.chance_outcomes():
        if state.action_to_string(a).split(": ", 1)[1].lower() == name.lower():
            return a
    known = [state.action_to_string(a) for a, _ in state.chance_outcomes()]
    raise AssertionError(f"no chance outcome {name!r} in {known}")


def pass_or_first(state: State) -> int:
    legal = state.legal_actions()
    return 0 if 0 in legal else legal[0]


def play_until(state: State, stop: Callable[[State], bool], chooser: Callable[[State], int] = pass_or_first,
               rng: random.Random | None = None, limit: int = 10_000) -> None:
    """Apply actions (chooser for players, sampled chance) until stop(state) or the end."""
    rng = rng or random.Random(0)
    for _ in range(limit):
        if stop(state) or state.current_player() == TERMINAL:
            return
        a = sample_chance(state, rng) if state.is_chance_node() else chooser(state)
        state.apply_action(a)
    raise AssertionError("play_until: limit reached")


def random_chooser(rng: random.Random) -> Callable[[State], int]:
    return lambda s: rng.choice(s.legal_actions())


BENCHMARKS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks")


def benchmark_module(name: str) -> ModuleType:
    """A benchmark script of ``benchmarks/`` imported as a module (``benchmarks/`` is no package; its scripts import
    each other by name, so the folder is on ``sys.path`` while the script loads)."""
    sys.path.insert(0, BENCHMARKS)
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(BENCHMARKS)
