"""Fief 2 as an OpenSpiel game: ``python_fief2``, registered with pyspiel on import.

Install the extra (``pip install -e '.[openspiel]'``), then::

    import pyspiel
    import feudo_ai.openspiel_fief2  # registers "python_fief2"
    game = pyspiel.load_game("python_fief2", {"players": 4, "turn_limit": 5})

Parameters: ``players`` (3-6, default 4) and ``turn_limit`` (F51's turn limit, 1-1000, default 30, the standard
ruleset's; a game without a limit has no bounded length, which OpenSpiel needs).

The OpenSpiel game is the engine's own action sequence (fief2/, the reference State): player actions are the
engine's action ints (``num_distinct_actions`` is the layout's size; the chance kinds are never legal for a
player), and chance outcomes are renumbered from 0: ``0..5`` a die's face 1..6, ``6 + c`` blue card ``c`` dealt
(F10, F2-D2: each dealt card is a chance node uniform over the deck). Rewards are F51's, at the end only: 1/k to
each of k winners (constant-sum, utility sum 1).

Information (F46). The observation string of a seat is the engine's ``information_state_string(seat)``: the
position with its own hand, its own discards and the cards it saw change hands, the other hands as counts. The
information-state string is that observation preceded by the number of actions played; it is not a
perfect-recall history (the engine's observation keeps what a seat saw of cards, F46/F53.11, but not the order of
past public actions), which is what OpenSpiel's random-simulation checks and samplers need, not what CFR-family
algorithms need. No tensors yet.

``max_game_length`` is a generous bound (:data:`ACTIONS_PER_TURN_BOUND` per turn of the limit), not a proof:
random games of the standard ruleset play about 100 actions a turn.
"""

from __future__ import annotations

import numbers
from typing import Any

try:
    import pyspiel
except ImportError as _e:  # pragma: no cover - exercised only without the extra
    raise ImportError("feudo_ai.openspiel_fief2 needs OpenSpiel: pip install -e '.[openspiel]' "
                      f"(the package open-spiel); import failed: {_e}") from None

from engine.errors import IllegalActionError
from fief2 import Game, State, load_map, load_ruleset
from fief2.state import CHANCE, TERMINAL

SHORT_NAME = "python_fief2"
MIN_PLAYERS, MAX_PLAYERS = 3, 6
DEFAULT_PARAMS: dict[str, Any] = {"players": 4, "turn_limit": 30}
ACTIONS_PER_TURN_BOUND = 20_000
DIE_FACES = 6

_GAME_TYPE = pyspiel.GameType(
    short_name=SHORT_NAME,
    long_name="Fief 2, Python (rulings F1-F53)",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
    information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.CONSTANT_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=MAX_PLAYERS,
    min_num_players=MIN_PLAYERS,
    provides_information_state_string=True,
    provides_information_state_tensor=False,
    provides_observation_string=True,
    provides_observation_tensor=False,
    parameter_specification=dict(DEFAULT_PARAMS))


def normalize_params(params: dict | None) -> dict:
    """The validated parameters (defaults filled in); ValueError naming the bad parameter."""
    params = dict(params or {})
    unknown = sorted(set(params) - set(DEFAULT_PARAMS))
    if unknown:
        raise ValueError(f"{SHORT_NAME}: unknown parameter {unknown[0]!r}; known: {', '.join(DEFAULT_PARAMS)}")
    out = {}
    for name, (lo, hi) in (("players", (MIN_PLAYERS, MAX_PLAYERS)), ("turn_limit", (1, 1000))):
        value = params.get(name, DEFAULT_PARAMS[name])
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or not lo <= value <= hi:
            raise ValueError(f"{SHORT_NAME}: parameter {name}: expected an integer in [{lo}, {hi}], got {value!r}")
        out[name] = int(value)
    return out


_ENGINE_GAMES: dict[tuple[int, int], Game] = {}


def _engine_game(players: int, turn_limit: int) -> Game:
    key = (players, turn_limit)
    if key not in _ENGINE_GAMES:
        game_map = load_map()
        rs = load_ruleset(game_map=game_map).with_options(turn_limit=turn_limit)
        _ENGINE_GAMES[key] = Game(rs, game_map, players)
    return _ENGINE_GAMES[key]


class _Position:
    """The engine state and the engine actions played: copied by the state's clone (deepcopy), pickled by value."""

    def __init__(self, key: tuple[int, int], st: State, actions: list[int]):
        self.key, self.st, self.actions = key, st, actions

    def __deepcopy__(self, memo: dict) -> "_Position":
        return _Position(self.key, self.st.clone(), list(self.actions))

    def __reduce__(self):
        return (_restore, (self.key, self.st.to_dict(), list(self.actions)))


def _restore(key, d, actions) -> _Position:
    return _Position(tuple(key), State.from_dict(d, _engine_game(*key)), list(actions))


class Fief2Game(pyspiel.Game):
    """``python_fief2``: see the module docstring."""

    def __init__(self, params: dict | None = None):
        p = normalize_params(params)
        self.params = p
        self.key = (p["players"], p["turn_limit"])
        self.engine_game = g = _engine_game(*self.key)
        L = g.layout
        self.layout = L
        self._deal, self._die = L.base["deal"], L.base["die"]
        info = pyspiel.GameInfo(
            num_distinct_actions=L.size,
            max_chance_outcomes=DIE_FACES + g.C,
            num_players=p["players"],
            min_utility=0.0,
            max_utility=1.0,
            utility_sum=1.0,
            max_game_length=ACTIONS_PER_TURN_BOUND * (p["turn_limit"] + 1))
        super().__init__(_GAME_TYPE, info, dict(p))

    def new_initial_state(self, *args) -> "Fief2State":
        if args:
            raise ValueError(f"{SHORT_NAME}: new_initial_state takes no arguments")
        return Fief2State(self)

    def make_py_observer(self, iig_obs_type=None, params=None) -> "Fief2Observer":
        return Fief2Observer(self, iig_obs_type, params)

    # -- chance numbering ------------------------------------------------------------------------------------
    def from_engine_chance(self, action: int) -> int:
        kind, x = self.layout.decode(action)
        return x if kind == "die" else DIE_FACES + x

    def to_engine_chance(self, outcome: int) -> int:
        if not 0 <= outcome < DIE_FACES + self.engine_game.C:
            raise IllegalActionError(f"{SHORT_NAME}: chance outcome {outcome} out of range")
        return self._die + outcome if outcome < DIE_FACES else self._deal + outcome - DIE_FACES


class Fief2State(pyspiel.State):
    """A position of ``python_fief2``: a :class:`fief2.State` and the engine actions that led to it."""

    def __init__(self, game: Fief2Game):
        super().__init__(game)
        st = State(game.engine_game)
        st._settle()
        self._p = _Position(game.key, st, [])

    def engine_state(self) -> State:
        """A copy of the engine position (hidden hands included: give a seat only ``observation(seat)``)."""
        return self._p.st.clone()

    def engine_history(self) -> list[int]:
        return list(self._p.actions)

    def current_player(self) -> int:
        p = self._p.st.current_player()
        if p == TERMINAL:
            return pyspiel.PlayerId.TERMINAL
        if p == CHANCE:
            return pyspiel.PlayerId.CHANCE
        return p

    def is_terminal(self) -> bool:
        return self._p.st.is_terminal()

    def _legal_actions(self, player: int) -> list[int]:
        return self._p.st.legal_actions()

    def chance_outcomes(self) -> list[tuple[int, float]]:
        game = self.get_game()
        return [(game.from_engine_chance(a), p) for a, p in self._p.st.chance_outcomes()]

    def _apply_action(self, action: int) -> None:
        st = self._p.st
        a = int(action)
        if st.is_chance_node():
            a = self.get_game().to_engine_chance(a)
        st.apply_action(a)
        self._p.actions.append(a)

    def _action_to_string(self, player: int, action: int) -> str:
        a = int(action)
        if player == pyspiel.PlayerId.CHANCE:
            a = self.get_game().to_engine_chance(a)
        try:
            return self._p.st.action_to_string(a)
        except ValueError as e:
            return f"<{e}>"

    def returns(self) -> list[float]:
        return self._p.st.returns()

    def rewards(self) -> list[float]:
        st = self._p.st
        return st.returns() if st.is_terminal() else [0.0] * st.num_players

    def information_state_string(self, player: int | None = None) -> str:
        seat = self.current_player() if player is None else player
        return f"{len(self._p.actions)}|{self._p.st.information_state_string(seat)}"

    def observation_string(self, player: int | None = None) -> str:
        seat = self.current_player() if player is None else player
        return self._p.st.information_state_string(seat)

    def __str__(self) -> str:
        return str(self._p.st)


class Fief2Observer:
    """Strings only (no tensors yet): the seat's observation (F46), with the move number when perfect recall is
    asked for (see the module docstring: it is not a perfect-recall history)."""

    def __init__(self, game: Fief2Game, iig_obs_type, params):
        if params:
            raise ValueError(f"{SHORT_NAME}: observation parameters are not supported, got {params!r}")
        self.game = game
        self.perfect_recall = bool(iig_obs_type.perfect_recall) if iig_obs_type is not None else False
        self.dict: dict = {}
        self.tensor = None

    def set_from(self, state: Fief2State, player: int) -> None:
        pass

    def string_from(self, state: Fief2State, player: int) -> str:
        if self.perfect_recall:
            return state.information_state_string(player)
        return state.observation_string(player)


if SHORT_NAME not in pyspiel.registered_names():  # importing the module twice (e.g. reloading) is harmless
    pyspiel.register_game(_GAME_TYPE, Fief2Game)
