"""Feudo as an OpenSpiel game: ``python_feudo``, registered with pyspiel on import.

Install the extra (``pip install -e '.[openspiel]'``), then::

    import pyspiel
    import feudo_ai.openspiel_game  # registers "python_feudo"
    game = pyspiel.load_game("python_feudo", {"players": 3, "turns": 4})

Parameters: ``players`` (2-4), ``turns`` (regular turns, R20 longer game 15/20; default the ruleset's 10),
``virulent`` and ``strategy_only`` (R20 optional rules), ``map_seed`` (the board order of the default map, R3)
and ``backend`` (``auto``: the compiled core when built; ``core``; ``reference``).

The OpenSpiel game is the engine's own action sequence, unchanged (sequential moves; the secret selection of
R6 is the engine's sequence of hidden ``select`` actions, one player after another), with two renumberings
that OpenSpiel's conventions need:

- player actions are the engine's action ints below ``layout.CHANCE_PLAYER`` (``num_distinct_actions``);
- chance outcomes are renumbered from 0: ``q`` (chance picks player ``q``: Castle placer R21, order decider
  R5) and ``players + k`` (plague card of kind ``k`` drawn, R18), so ``max_chance_outcomes`` is
  ``players + plague kinds``. Every random draw during play is such an explicit chance node; the map's
  board order (R3) is fixed before play by the ``map_seed`` parameter, as a game variant.

Rewards are R19's, at the end only: 1 for a sole win, 1/k each for a k-way shared win, 0 otherwise
(constant-sum: the returns add up to 1).

Information (R22). A seat observes every action except the other players' secret ``select`` actions, which
it sees as ``?`` (the number and kind of them is public), and it sees each Trading Card when it is revealed
(R9; the reveal is no action of its own, so it is recorded with the action that triggered it). The
information-state string and tensor are that whole sequence from the seat's point of view: perfect recall,
as OpenSpiel's CFR-family and exploitability tools require (two different orders of the same marches are two
information states). The observation string and tensor are the current position as the seat sees it
(:meth:`engine.state.State.observation`'s content). The engine's own compact key
(``State.information_state_string``) is untouched and separate.

Hidden information is confined to the current turn: every selected card is revealed before the turn ends
(R7, R9). :meth:`FeudoState.resample_from_infostate` therefore keeps the history up to the current turn's
selection, draws the other players' selections from :class:`feudo_ai.sampler.UniformSampler` (built from the
seat's observation only) and replays the turn with them, rejecting a draw whose replay would not show the
seat exactly what it saw (a revealed Mercenary whose owner cannot pay gets no move decision in the engine
until R25 is enforced there, and that skip is public: such draws are the ones rejected).

:func:`decision_bounds` derives the game's maximum length from the rules; the docstring there gives the proof.
"""

from __future__ import annotations

import base64
import copy
import json
import numbers
import pickle
import random
from typing import Any, Callable

import numpy as np

try:
    import pyspiel
except ImportError as _e:  # pragma: no cover - exercised only without the extra
    raise ImportError("feudo_ai.openspiel_game needs OpenSpiel: pip install -e '.[openspiel]' "
                      f"(the package open-spiel); import failed: {_e}") from None

from engine.actions import PLAYER_NAMES, permutations_of
from engine.board import load_map
from engine.core import new_game as _new_engine_game
from engine.errors import IllegalActionError
from engine.ruleset import Ruleset, load_ruleset
from engine.serialize import state_from_dict
from engine.state import _FIELDS, CASTLE, CHANCE, DEAD, TERMINAL, Game, Phase

from .sampler import UniformSampler

SHORT_NAME = "python_feudo"
MIN_PLAYERS, MAX_PLAYERS = 2, 4
DEFAULT_PARAMS: dict[str, Any] = {"players": 2, "turns": 10, "virulent": False, "strategy_only": False,
                                  "map_seed": 0, "backend": "auto"}
BACKENDS = ("auto", "core", "reference")
RESAMPLE_ATTEMPTS = 1000  # rejection sampling cap (a draw is rejected only when R25 is not yet enforced)

_GAME_TYPE = pyspiel.GameType(
    short_name=SHORT_NAME,
    long_name="Feudo (2004), Python",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
    information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.CONSTANT_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=MAX_PLAYERS,
    min_num_players=MIN_PLAYERS,
    provides_information_state_string=True,
    provides_information_state_tensor=True,
    provides_observation_string=True,
    provides_observation_tensor=True,
    parameter_specification=dict(DEFAULT_PARAMS))

_SECRET_KINDS = ("SELECT", "TRADE")  # the only actions other seats do not see (R6, R22)
_TRADER_PHASES = (Phase.REVEAL, Phase.MOVE, Phase.MILADY, Phase.MARCH)  # may reveal Trading Cards (R9)
_REVEAL_PHASES = (Phase.REVEAL, Phase.MOVE, Phase.MILADY)


# ----------------------------------------------------------------------------------------------------------
# Parameters and the engine game behind them
# ----------------------------------------------------------------------------------------------------------
def _param(params: dict, name: str, kind: type) -> Any:
    value = params.get(name, DEFAULT_PARAMS[name])
    if kind is int:
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            raise ValueError(f"{SHORT_NAME}: parameter {name}: expected an integer, got {value!r}")
        return int(value)
    if kind is bool:
        if not isinstance(value, (bool, np.bool_)):
            raise ValueError(f"{SHORT_NAME}: parameter {name}: expected true or false, got {value!r}")
        return bool(value)
    if not isinstance(value, str):
        raise ValueError(f"{SHORT_NAME}: parameter {name}: expected a string, got {value!r}")
    return value


def normalize_params(params: dict | None) -> dict:
    """The validated parameters (defaults filled in); ValueError naming the bad parameter."""
    params = dict(params or {})
    unknown = sorted(set(params) - set(DEFAULT_PARAMS))
    if unknown:
        raise ValueError(f"{SHORT_NAME}: unknown parameter(s) {', '.join(unknown)}; "
                         f"known: {', '.join(DEFAULT_PARAMS)}")
    out = {"players": _param(params, "players", int), "turns": _param(params, "turns", int),
           "virulent": _param(params, "virulent", bool), "strategy_only": _param(params, "strategy_only", bool),
           "map_seed": _param(params, "map_seed", int), "backend": _param(params, "backend", str)}
    if not MIN_PLAYERS <= out["players"] <= MAX_PLAYERS:
        raise ValueError(f"{SHORT_NAME}: parameter players: expected {MIN_PLAYERS}-{MAX_PLAYERS}, "
                         f"got {out['players']}")
    if not 1 <= out["turns"] <= 100:
        raise ValueError(f"{SHORT_NAME}: parameter turns: expected 1-100, got {out['turns']}")
    if out["backend"] not in BACKENDS:
        raise ValueError(f"{SHORT_NAME}: parameter backend: expected one of {', '.join(BACKENDS)}, "
                         f"got {out['backend']!r}")
    return out


_ENGINES: dict[tuple, Any] = {}


def _engine_initial(key: tuple) -> Any:
    """The first engine position of a parameter set (cached; callers clone it)."""
    state = _ENGINES.get(key)
    if state is None:
        players, turns, virulent, strategy_only, map_seed, backend = key
        ruleset = load_ruleset().with_options(turns=turns, virulent_plague=virulent, strategy_only=strategy_only)
        state = _new_engine_game(ruleset, players=players, seed=map_seed, game_map=load_map(None, seed=map_seed),
                                 backend=backend)
        _ENGINES[key] = state
    return state


def _key(params: dict) -> tuple:
    return (params["players"], params["turns"], params["virulent"], params["strategy_only"], params["map_seed"],
            params["backend"])


# ----------------------------------------------------------------------------------------------------------
# The maximum game length, from the rules
# ----------------------------------------------------------------------------------------------------------
def decision_bounds(ruleset: Ruleset, players: int) -> dict[str, int]:
    """Upper bounds on decisions (player actions) and chance nodes, derived from the rules.

    Let ``k`` be the tokens per player, ``S`` the Army Cards selected (R6), ``M`` the most shillings a Trading
    Card can give (its value + the King's Help, R9, R16) and ``N`` the number of turns including the tie-break
    cap (R19: after ``turns`` regular turns, at most ``tiebreak_max_turns`` extra ones). In one turn one player
    makes at most:

    - ``select``: ``S`` Army Card picks and 1 Trading Card (R6): ``S + 1``;
    - ``reveal``: ``S`` reveals, each followed by at most one move decision, and at most one Milady decision
      (the Milady's card is revealed once, R13): ``2S + 1``;
    - ``march``: every march costs at least 1 shilling (a path of length >= 1), then at most one ``pass``
      (R9): ``M + 1``;
    - ``attack``: each declared attack needs at least one ``join`` action, a token joins at most one attack a
      turn and the Milady never joins (R11), so at most ``k - 1`` joins and as many attacks, each launched by
      one ``pass``, plus one final ``pass``: ``3(k - 1) + 1``;
    - ``advance``: each participating token advances at most once, and each won attack (at most one per
      attack) ends with at most one ``pass`` (R14): ``2(k - 1)``.

    Each turn adds one order decision (R5) and each game ``players`` Castle placements (R21). Chance: one
    placer draw per Castle, at most one order-decider draw per turn (R5) and one plague draw per regular turn
    (R18; none in tie-break turns).
    """
    k, s = ruleset.tokens_per_player, ruleset.army_cards_selected
    m = max(v + (ruleset.king_help if v > 0 else 0) for v in ruleset.trading_cards)
    turns = ruleset.turns + ruleset.tiebreak_max_turns
    per_player = {"select": s + 1, "reveal": 2 * s + 1, "march": m + 1, "attack": 3 * (k - 1) + 1,
                  "advance": 2 * (k - 1)}
    per_turn = 1 + players * sum(per_player.values())
    return {**{f"per_player_turn_{name}": v for name, v in per_player.items()},
            "per_player_turn": sum(per_player.values()), "per_turn": per_turn, "turns": turns,
            "max_game_length": players + turns * per_turn,
            "max_chance_nodes": players + turns + ruleset.turns}


# ----------------------------------------------------------------------------------------------------------
# The state's Python-side record: engine position + what every seat has seen
# ----------------------------------------------------------------------------------------------------------
def _fields(s: Any) -> dict:
    """The engine position's fields as a dict (read-only use): one C call for the core."""
    values = getattr(s, "_field_values", None)
    if values is not None:
        return dict(zip(_FIELDS, values()))
    return {name: getattr(s, name) for name in _FIELDS}


class _Track:
    """Everything of a :class:`FeudoState` on the Python side, in one attribute so that OpenSpiel's clone
    (a deepcopy of each attribute) is one engine memcpy and four list copies.

    ``actors``/``actions`` are the history in engine action ints (chance: actor -1); ``reveals[i]`` encodes
    the Trading Cards revealed as a consequence of action ``i`` (see :meth:`FeudoGame.reveal_code`); ``snap``
    is the engine position when the current turn's selection began (history index ``snap_at``), the point
    from which :meth:`FeudoState.resample_from_infostate` replays; ``trev`` the players whose Trading Card
    was revealed this turn (bit mask).
    """

    __slots__ = ("key", "s", "actors", "actions", "reveals", "snap", "snap_at", "trev", "samplers")

    def __init__(self, key: tuple, s: Any):
        self.key = key
        self.s = s
        self.actors: list[int] = []
        self.actions: list[int] = []
        self.reveals: list[int] = []
        self.snap: Any = None
        self.snap_at = -1
        self.trev = 0
        self.samplers: dict = {}  # seat -> UniformSampler of this position (a cache, never copied)

    def __deepcopy__(self, memo: dict) -> "_Track":
        other = _Track.__new__(_Track)
        other.key, other.s = self.key, self.s.clone()
        other.actors, other.actions, other.reveals = list(self.actors), list(self.actions), list(self.reveals)
        other.snap, other.snap_at, other.trev = self.snap, self.snap_at, self.trev  # snap is never mutated
        other.samplers = {}
        return other

    def __reduce__(self):
        snap = None if self.snap is None else self.snap.to_dict()
        return (_restore_track, (self.key, self.s.to_dict(), self.actors, self.actions, self.reveals, snap,
                                 self.snap_at, self.trev))


def _engine_from_dict(key: tuple, d: dict) -> Any:
    """An engine position of the parameter set ``key`` from its ``to_dict()`` (validated field by field)."""
    template = _engine_initial(key)
    ref = state_from_dict(template.game, d)
    return template.from_reference(ref) if hasattr(template, "from_reference") else ref


def _restore_track(key, s, actors, actions, reveals, snap, snap_at, trev) -> _Track:
    if not isinstance(key, tuple) or len(key) != 6:
        raise ValueError(f"{SHORT_NAME}: serialized state: bad parameter key {key!r}")
    track = _Track(key, _engine_from_dict(key, s))
    for name, seq in (("actors", actors), ("actions", actions), ("reveals", reveals)):
        if not isinstance(seq, list) or not all(isinstance(x, int) for x in seq):
            raise ValueError(f"{SHORT_NAME}: serialized state: {name}: expected a list of integers")
    if not len(actors) == len(actions) == len(reveals):
        raise ValueError(f"{SHORT_NAME}: serialized state: actors, actions and reveals differ in length")
    track.actors, track.actions, track.reveals = list(actors), list(actions), list(reveals)
    track.snap = None if snap is None else _engine_from_dict(key, snap)
    track.snap_at, track.trev = int(snap_at), int(trev)
    return track


# ----------------------------------------------------------------------------------------------------------
# Game
# ----------------------------------------------------------------------------------------------------------
class FeudoGame(pyspiel.Game):
    """``python_feudo``: see the module docstring."""

    def __init__(self, params: dict | None = None):
        p = normalize_params(params)
        self.params = p
        self.key = _key(p)
        initial = _engine_initial(self.key)
        self.engine_game: Game = initial.game
        rs, L = self.engine_game.ruleset, self.engine_game.layout
        self.layout = L
        self.bounds = decision_bounds(rs, p["players"])
        n = p["players"]
        self.num_chance_outcomes = n + len(rs.plague_cards)
        info = pyspiel.GameInfo(
            num_distinct_actions=L.CHANCE_PLAYER,
            max_chance_outcomes=self.num_chance_outcomes,
            num_players=n,
            min_utility=0.0,
            max_utility=1.0,
            utility_sum=1.0,
            max_game_length=self.bounds["max_game_length"])
        super().__init__(_GAME_TYPE, info, dict(p))
        self._trade_base = len(rs.trading_cards) + 1
        self.secret_lo, self.secret_hi = L.SELECT, L.REVEAL  # the secret selection's actions (R6)
        self._chance_lo, self._plague_lo = L.CHANCE_PLAYER, L.PLAGUE
        self._names = self._action_names()

    # -- OpenSpiel API -------------------------------------------------------------------------------------
    def new_initial_state(self, *args) -> "FeudoState":
        if args:
            raise ValueError(f"{SHORT_NAME}: new_initial_state takes no arguments (use deserialize_state)")
        return FeudoState(self)

    def max_chance_nodes_in_history(self) -> int:
        return self.bounds["max_chance_nodes"]

    def make_py_observer(self, iig_obs_type=None, params=None) -> "FeudoObserver":
        return FeudoObserver(self, iig_obs_type or pyspiel.IIGObservationType(perfect_recall=False), params)

    # -- action numbering ----------------------------------------------------------------------------------
    def to_engine(self, player: int, action: int) -> int:
        """Engine action int of an OpenSpiel action of ``player`` (chance outcomes are renumbered)."""
        if player == CHANCE:
            n = self.params["players"]
            return self._chance_lo + action if action < n else self._plague_lo + action - n
        return action

    def from_engine(self, action: int) -> int:
        """OpenSpiel action id of an engine action int."""
        if action >= self._plague_lo:
            return self.params["players"] + action - self._plague_lo
        if action >= self._chance_lo:
            return action - self._chance_lo
        return action

    def is_secret(self, action: int) -> bool:
        """Whether an engine action is a secret selection (R6): seen as ``?`` by the other seats."""
        return self.secret_lo <= action < self.secret_hi

    def reveal_code(self, revealed: list[tuple[int, int]]) -> int:
        """One int for the (player, Trading Card) pairs revealed by one action: sum of (card+1)*B**player."""
        return sum((c + 1) * self._trade_base ** q for q, c in revealed)

    def _action_names(self) -> dict[str, list[str]]:
        g = self.engine_game
        terr = list(g.map.labels)  # places as named on the board ("Wood C2"), as the engine's texts name them
        return {"army": [a.name for a in g.ruleset.army], "terr": terr,
                "site": [f"castle at {g.map.site_labels[s.id]}" for s in g.map.castle_sites],
                "player": [g.player_name(p) for p in range(g.num_players)],
                "plague": [c.name for c in g.ruleset.plague_cards],
                "trade": [str(v) for v in g.ruleset.trading_cards]}

    def engine_action_text(self, action: int, token: int, active: list[bool]) -> str:
        """Exactly the engine's ``action_to_string`` text (``token``: the revealed token, for MOVE; ``active``:
        the players of the turn, for ORDER), without building a reference state."""
        L, nm = self.layout, self._names
        kind, i = L.decode(action)
        if kind == "PASS":
            return "pass"
        if kind == "PLACE":
            return nm["site"][i]
        if kind == "ORDER":
            perms = permutations_of(tuple(p for p in range(len(active)) if active[p]))
            return ("order " + ",".join(nm["player"][p] for p in perms[i])) if i < len(perms) else f"order #{i}"
        if kind in ("SELECT", "REVEAL", "JOIN", "ADVANCE"):
            return f"{kind.lower()} {nm['army'][i]}"
        if kind == "TRADE":
            return f"select trading card {nm['trade'][i]}"
        if kind == "MOVE":
            name = nm["army"][token] if 0 <= token < len(nm["army"]) else "token"
            return f"move {name} to {nm['terr'][i]}"
        if kind == "CHARM":
            return f"charm {nm['player'][i]}"
        if kind == "INFECT":
            return "infect"
        if kind == "MARCH":
            t, x = divmod(i, len(nm["terr"]))
            return f"march {nm['army'][t]} to {nm['terr'][x]}"
        if kind == "ATTACK":
            return f"attack {nm['terr'][i]}"
        if kind == "CHANCE_PLAYER":
            return f"chance: {nm['player'][i]}"
        return f"plague: {nm['plague'][i]}"


# ----------------------------------------------------------------------------------------------------------
# State
# ----------------------------------------------------------------------------------------------------------
class FeudoState(pyspiel.State):
    """A position of ``python_feudo``: an engine position plus the history every seat has seen."""

    def __init__(self, game: FeudoGame):
        super().__init__(game)
        self._f = _Track(game.key, _engine_initial(game.key).clone())

    # -- the engine position -------------------------------------------------------------------------------
    def engine_state(self):
        """A copy of the engine position (:class:`engine.state.State` or ``CoreState``): what our bots and
        tools take. Hidden cards are in it, as in any full state: give a seat only ``observation(seat)``."""
        return self._f.s.clone()

    def engine_history(self) -> list[int]:
        """The history in engine action ints (chance outcomes not renumbered)."""
        return list(self._f.actions)

    # -- OpenSpiel API -------------------------------------------------------------------------------------
    def current_player(self) -> int:
        p = self._f.s.current_player()
        if p == TERMINAL:
            return pyspiel.PlayerId.TERMINAL
        if p == CHANCE:
            return pyspiel.PlayerId.CHANCE
        return p

    def is_terminal(self) -> bool:
        return self._f.s.is_terminal()

    def _legal_actions(self, player: int) -> list[int]:
        return self._f.s.legal_actions()

    def chance_outcomes(self) -> list[tuple[int, float]]:
        game = self.get_game()
        return [(game.from_engine(a), p) for a, p in self._f.s.chance_outcomes()]

    def _apply_action(self, action: int) -> None:
        game = self.get_game()
        f = self._f
        actor = f.s.current_player()
        _step(game, f, actor, game.to_engine(actor, int(action)))

    def _action_to_string(self, player: int, action: int) -> str:
        game = self.get_game()
        a = game.to_engine(player, int(action))
        s = self._f.s
        try:
            return game.engine_action_text(a, s.token, s.active)
        except ValueError as e:
            return f"<{e}>"

    def returns(self) -> list[float]:
        return self._f.s.returns()

    def rewards(self) -> list[float]:
        """R19 rewards arrive at the end only: the returns at the terminal state, 0 before."""
        s = self._f.s
        return s.returns() if s.is_terminal() else [0.0] * self.get_game().params["players"]

    def __str__(self) -> str:
        s = self._f.s
        ph = Phase(s.phase).name
        return f"turn {s.turn} phase {ph} player {s.current_player()} vp {s.vp}\n{s.canonical()}"

    # -- information ---------------------------------------------------------------------------------------
    def resample_from_infostate(self, player_id: int, probability_sampler: Callable[[], float]) -> "FeudoState":
        """A state drawn from the worlds consistent with ``player_id``'s information state (same information
        state string and tensor, same current player and legal actions), from
        :class:`feudo_ai.sampler.UniformSampler` on the seat's observation; reproducible: the draw is seeded
        by one call of ``probability_sampler`` (a callable giving a float in [0, 1), e.g.
        ``pyspiel.UniformProbabilitySampler`` or an ISMCTS bot's ``random_number``)."""
        game = self.get_game()
        n = game.params["players"]
        if isinstance(player_id, bool) or not isinstance(player_id, numbers.Integral) or not 0 <= player_id < n:
            raise ValueError(f"player_id: expected a seat in [0, {n}), got {player_id!r}")
        seat = int(player_id)
        u = float(probability_sampler())
        if not 0.0 <= u <= 1.0:
            raise ValueError(f"probability_sampler: expected a value in [0, 1], got {u}")
        rng = random.Random(int(u * (1 << 53)))
        f = self._f
        d = _fields(f.s)
        if f.snap is None or not _hidden_from(d, seat):
            return self.clone()  # nothing the seat does not know: the world is this one
        sampler = f.samplers.get(seat)
        if sampler is None:
            sampler = f.samplers[seat] = UniformSampler(game.engine_game, observation(d, seat, game.engine_game))
        for _ in range(RESAMPLE_ATTEMPTS):
            world = sampler.sample_fields(rng)
            track = _replay_turn(game, f, world, seat)
            if track is not None:
                return _state_with(game, track, self.move_number())
        raise RuntimeError(f"{SHORT_NAME}: no world consistent with seat {seat}'s information in "
                           f"{RESAMPLE_ATTEMPTS} draws")


def _step(game: FeudoGame, f: _Track, actor: int, action: int) -> None:
    """Apply one engine action to the track: the position, the history, Trading Card reveals, the snapshot."""
    s = f.s
    before = s.phase
    cursor = s.cursor
    try:
        s.apply_action(action)
    except IllegalActionError as e:
        raise ValueError(f"{SHORT_NAME}: {e}") from None
    f.actors.append(actor)
    f.actions.append(action)
    if f.samplers:
        f.samplers = {}  # built from the previous position
    code = 0
    after = s.phase
    # Trading Cards are revealed only once the reveal rounds are over, and while one player marches nobody
    # else's is (R7, R9): only then are the fields read.
    if (before in _TRADER_PHASES and after not in _REVEAL_PHASES
            and not (before == Phase.MARCH and after == Phase.MARCH and s.cursor == cursor)):
        d = _fields(s)
        fresh = [(q, d["sel_trade"][q]) for q, done in enumerate(d["trade_revealed"])
                 if done and not f.trev >> q & 1]
        if fresh:
            code = game.reveal_code(fresh)
            for q, _ in fresh:
                f.trev |= 1 << q
    f.reveals.append(code)
    if after == Phase.SELECT and before != Phase.SELECT:
        f.snap, f.snap_at, f.trev = s.clone(), len(f.actions), 0  # a new turn's selection begins


def _hidden_from(d: dict, seat: int) -> bool:
    """Whether some other player holds a selected card that ``seat`` has not seen (R22)."""
    for q in range(len(d["vp"])):
        if q == seat:
            continue
        if sum(d["sel_army"][q]) > sum(d["revealed"][q]):
            return True
        if d["sel_done"][q] and not d["trade_revealed"][q]:
            return True
    return False


def observation(d: dict, seat: int, game: Game, private: str = "single", deep: bool = True) -> dict:
    """What ``seat`` may know (R22), from the fields of a position; the content of the engine's
    :meth:`engine.state.State.observation` (``private``: ``"single"`` the seat's own selection shown,
    ``"none"`` nobody's, ``"all"`` everybody's; ``deep=False``: the result may share lists with ``d``)."""
    n, k = game.num_players, game.num_tokens
    if deep:
        out = {name: copy.deepcopy(d[name]) for name in _FIELDS}  # shares no list with a live position
    else:  # read-only use: only the two rows replaced below are copied
        out = {name: d[name] for name in _FIELDS}
        out["sel_army"], out["sel_trade"] = list(d["sel_army"]), list(d["sel_trade"])
    out["vp_log"] = []
    if private != "all":
        for q in range(n):
            if q == seat and private == "single":
                continue
            out["sel_army"][q] = [bool(d["revealed"][q][t]) for t in range(k)]
            if not d["trade_revealed"][q]:
                out["sel_trade"][q] = -1
    out["selected_count"] = [sum(d["sel_army"][q]) for q in range(n)]
    out["seat"] = seat
    cp = _current_player(d, game)
    out["current_player"] = cp
    return out


def _current_player(d: dict, game: Game) -> int:
    ph = d["phase"]
    if ph == Phase.TERMINAL:
        return TERMINAL
    if ph in (Phase.CHANCE_PLACER, Phase.CHANCE_DECIDER, Phase.CHANCE_PLAGUE):
        return CHANCE
    if ph in (Phase.PLACE_CASTLE, Phase.SELECT):
        return d["cursor"]
    if ph == Phase.CHOOSE_ORDER:
        return d["decider"]
    if ph == Phase.ADVANCE:
        return d["won"][d["round"]][0]
    return d["order"][d["cursor"]]


def _replay_turn(game: FeudoGame, f: _Track, world: dict, seat: int) -> _Track | None:
    """The current turn replayed from its start with the other players' secret selections of ``world``;
    None when the replay would not show ``seat`` exactly the same sequence (then the world is rejected)."""
    L = game.layout
    track = _Track(f.key, f.snap.clone())
    track.actors, track.actions, track.reveals = f.actors[:f.snap_at], f.actions[:f.snap_at], f.reveals[:f.snap_at]
    track.snap, track.snap_at, track.trev = f.snap, f.snap_at, 0
    # The other players' secret actions of this turn, in order: ascending Army Card picks, then the card.
    picks: dict[int, list[int]] = {}
    for q in range(game.params["players"]):
        if q != seat:
            picks[q] = [L.SELECT + t for t, on in enumerate(world["sel_army"][q]) if on]
            if world["sel_trade"][q] >= 0:
                picks[q].append(L.TRADE + world["sel_trade"][q])
    used = {q: 0 for q in picks}
    for i in range(f.snap_at, len(f.actions)):
        actor, action = f.actors[i], f.actions[i]
        if actor != track.s.current_player():
            return None
        if actor in picks and game.secret_lo <= action < game.secret_hi:
            if used[actor] >= len(picks[actor]):
                return None
            action = picks[actor][used[actor]]
            used[actor] += 1
        try:
            _step(game, track, actor, action)
        except ValueError:
            return None
        if track.reveals[-1] != f.reveals[i]:
            return None
    # Who acts next is public too (a skipped decision shows: R25 in the engine makes it never depend on a
    # hidden card, and this check keeps resampling exact while it might).
    if track.s.current_player() != f.s.current_player():
        return None
    if f.s.current_player() == seat and track.s.legal_actions() != f.s.legal_actions():
        return None
    return track


def _state_with(game: FeudoGame, track: _Track, move_number: int) -> FeudoState:
    """A pyspiel state whose C++ history is ``track``'s (OpenSpiel keeps the history on the C++ side; its
    deserializer is the one way to set it), with ``track`` as its Python side."""
    hist = ",".join(f"{q}:{game.from_engine(a)}" for q, a in zip(track.actors, track.actions))
    state = game.deserialize_state(f"history={hist}\nmove_number={move_number}\n__dict__={_EMPTY_DICT}")
    state._f = track
    return state


_EMPTY_DICT = base64.b64encode(pickle.dumps({})).decode("ascii")


# ----------------------------------------------------------------------------------------------------------
# Observer: strings and tensors
# ----------------------------------------------------------------------------------------------------------
class FeudoObserver:
    """OpenSpiel's PyObserver for ``python_feudo``: ``tensor`` (flat float32) and ``dict`` (named views),
    ``set_from(state, player)`` and ``string_from(state, player)``.

    ``perfect_recall=False``: the current position as the seat sees it. ``perfect_recall=True``: that, plus
    the whole history as the seat saw it (other players' secret selections unseen), one row per possible action
    (``max_game_length + max_chance_nodes`` rows): [actor + 2 (0: no action yet, 1: chance), engine action + 1
    (0: a secret selection not seen), Trading Card reveal code]. ``private_info``: the seat's own selection
    (default), nobody's, or everybody's.

    Strings: with perfect recall ``"seat P | "`` then one token per action, ``actor:action`` (``c`` for chance,
    engine action ints, ``?`` for a selection the seat did not see), ``+code`` appended when the action
    revealed Trading Cards (:meth:`FeudoGame.reveal_code`); without, the seat's observation as JSON.
    """

    def __init__(self, game: FeudoGame, iig_obs_type, params):
        if params:
            raise ValueError(f"{SHORT_NAME}: observation parameters are not supported, got {params!r}")
        if not iig_obs_type.public_info:
            raise ValueError(f"{SHORT_NAME}: observers without public information are not supported")
        self.game = game
        self.perfect_recall = bool(iig_obs_type.perfect_recall)
        pi = iig_obs_type.private_info
        self.private = {pyspiel.PrivateInfoType.SINGLE_PLAYER: "single", pyspiel.PrivateInfoType.NONE: "none",
                        pyspiel.PrivateInfoType.ALL_PLAYERS: "all"}[pi]
        g = game.engine_game
        n, k, T = g.num_players, g.num_tokens, g.num_territories
        C, K = len(g.ruleset.trading_cards), len(g.ruleset.plague_cards)
        pieces = [("seat", (n,)), ("current_player", (n + 2,)), ("phase", (len(Phase),)), ("clock", (2,)),
                  ("active", (n,)), ("order", (n, n)), ("castle", (n, len(g.map.castle_sites))), ("decider", (n,)),
                  ("vp", (n,)), ("loc", (n, k, T + 2)), ("stricken", (n, k)), ("entered", (n, k)),
                  ("resting", (n, k)), ("army_held", (n, k)), ("trade_held", (n, C)), ("sel_army", (n, k)),
                  ("selected_count", (n,)), ("sel_trade", (n, C)), ("sel_done", (n,)), ("revealed", (n, k)),
                  ("trade_revealed", (n,)), ("owner", (T, n)), ("plague_village", (T,)), ("plague_drawn", (K,)),
                  ("plague_card", (K,)), ("king", (1,)), ("charmed", (n,)), ("merc_moved", (n,)),
                  ("march_over", (n, k)), ("attacked", (n, k)), ("won", (n, T)), ("advance_target", (T,)),
                  ("token", (k,)), ("shillings", (1,)), ("target", (T,)), ("joiners", (k,)), ("advanced", (k,))]
        if self.perfect_recall:
            self.rows = game.bounds["max_game_length"] + game.bounds["max_chance_nodes"]
            pieces.append(("history", (self.rows, 3)))
        size = sum(int(np.prod(shape)) for _, shape in pieces)
        self.tensor = np.zeros(size, np.float32)
        self.dict: dict[str, np.ndarray] = {}
        i = 0
        for name, shape in pieces:
            m = int(np.prod(shape))
            self.dict[name] = self.tensor[i:i + m].reshape(shape)
            i += m

    def set_from(self, state: FeudoState, player: int) -> None:
        g = self.game.engine_game
        n, k, T = g.num_players, g.num_tokens, g.num_territories
        s = state._f.s
        d = observation(_fields(s), player, g, self.private, deep=False)
        D = self.dict
        self.tensor.fill(0.0)
        D["seat"][player] = 1
        cp = d["current_player"]
        D["current_player"][cp if cp >= 0 else (n if cp == CHANCE else n + 1)] = 1
        D["phase"][d["phase"]] = 1
        D["clock"][:] = (d["turn"] / max(1, g.ruleset.turns), d["tiebreak"] / max(1, g.ruleset.tiebreak_max_turns))
        D["active"][:] = d["active"]
        for i, q in enumerate(d["order"]):
            D["order"][i, q] = 1
        for q, site in enumerate(d["castle"]):
            if site >= 0:
                D["castle"][q, site] = 1
        if d["decider"] >= 0:
            D["decider"][d["decider"]] = 1
        D["vp"][:] = np.asarray(d["vp"], np.float32) / 20.0
        loc = np.asarray(d["loc"])
        where = np.where(loc >= 0, loc, np.where(loc == CASTLE, T, T + 1))
        D["loc"][np.arange(n)[:, None], np.arange(k)[None, :], where] = 1
        for name in ("stricken", "entered", "army_held", "sel_army", "revealed", "march_over", "attacked"):
            D[name][:] = d[name]
        D["resting"][:] = np.asarray(d["rest_until"]) >= d["turn"]
        D["trade_held"][:] = d["trade_held"]
        D["selected_count"][:] = np.asarray(d["selected_count"], np.float32) / max(1, g.ruleset.army_cards_selected)
        for q, c in enumerate(d["sel_trade"]):
            if c >= 0:
                D["sel_trade"][q, c] = 1
        D["sel_done"][:] = d["sel_done"]
        D["trade_revealed"][:] = d["trade_revealed"]
        for x, q in enumerate(d["owner"]):
            if q >= 0:
                D["owner"][x, q] = 1
        if d["plague_village"] >= 0:
            D["plague_village"][d["plague_village"]] = 1
        D["plague_drawn"][:] = [c / max(1, pc.count) for c, pc in zip(d["plague_drawn"], g.ruleset.plague_cards)]
        if d["plague_card"] >= 0:
            D["plague_card"][d["plague_card"]] = 1
        D["king"][0] = d["king"]
        D["charmed"][:] = d["charmed"]
        D["merc_moved"][:] = d["merc_moved"]
        for q, x, _, _ in d["won"]:
            D["won"][q, x] = 1
        if d["phase"] == Phase.ADVANCE and 0 <= d["round"] < len(d["won"]):
            D["advance_target"][d["won"][d["round"]][1]] = 1
        if d["token"] >= 0:
            D["token"][d["token"]] = 1
        D["shillings"][0] = d["shillings"] / 10.0
        if d["target"] >= 0:
            D["target"][d["target"]] = 1
        for t in d["joiners"]:
            D["joiners"][t] = 1
        for t in d["advanced"]:
            D["advanced"][t] = 1
        if self.perfect_recall:
            view = self._view(state, player)
            if view:
                D["history"][:len(view)] = view

    def _view(self, state: FeudoState, player: int) -> list[tuple[int, int, int]]:
        f = state._f
        lo, hi = self.game.secret_lo, self.game.secret_hi
        see_all, see_own = self.private == "all", self.private == "single"
        return [(q + 2, a + 1 if (see_all or (see_own and q == player) or not lo <= a < hi) else 0, r)
                for q, a, r in zip(f.actors, f.actions, f.reveals)]

    def string_from(self, state: FeudoState, player: int) -> str:
        g = self.game.engine_game
        if self.perfect_recall:
            view = self._view(state, player)
            steps = " ".join(f"{'c' if q == 1 else q - 2}:{a - 1 if a else '?'}" + (f"+{r}" if r else "")
                             for q, a, r in view)
            return f"seat {player} | {steps}"
        d = observation(_fields(state._f.s), player, g, self.private, deep=False)
        return json.dumps(d, sort_keys=True, separators=(",", ":"))


if SHORT_NAME not in pyspiel.registered_names():  # importing the module twice (e.g. reloading) is harmless
    pyspiel.register_game(_GAME_TYPE, FeudoGame)
