"""The learned evaluation: features of the public position and a conditional-logit model over the seats.

The search's truncated playouts end in a position that is not over; the evaluation turns it into a reward per
seat in [0, 1]. The hand-made one (:mod:`feudo_ai.evaluate`, a softmax of ``position_score``) weighs its terms by
hand; this one learns the weights from self-play games (``feudo train``, :mod:`feudo_ai.train`).

Model (a conditional logit, i.e. a softmax over the seats): every seat ``p`` still in play gets a utility
``u_p = w[n] . f(state, p)``, a dot product of the position's features from ``p``'s view (:data:`FEATURE_NAMES`)
with the weights of the player count ``n``; the rewards are ``softmax(u)`` over the seats in play (the tied
leaders in a tie-break, R19), 0 for the others. It is fitted to the R19 returns of the games (1 for a sole win,
1/k shared), so the rewards are the model's win probabilities and always sum to 1.

Honesty (R22): every feature is a public fact (VP, token locations and health, City owners, the plague village,
the turn); none reads a selection, so the evaluation is the same in every world a determinization could draw.

This module is the readable reference (numpy); the search computes the same features and rewards in C
(:mod:`feudo_ai._value`), and the tests check that both agree on random positions. The weights ship as a
versioned JSON file (:data:`DEFAULT_MODEL_PATH`), validated on load (:func:`load_model`).
"""

from __future__ import annotations

import functools
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from engine.board import Kind
from engine.state import CASTLE, DEAD

from feudo_ai.evaluate import _danger_set, position_score

__all__ = ["FORMAT", "FEATURE_NAMES", "NUM_FEATURES", "PLAYER_COUNTS", "DEFAULT_MODEL_PATH", "ValueModel",
           "features", "load_model", "model_from_dict", "default_model", "c_model"]

FORMAT = "feudo-value/1"  # the weights file's format (bumped when the features or the model change)
PLAYER_COUNTS = (2, 3, 4)  # one weight vector per player count
DEFAULT_MODEL_PATH = Path(__file__).resolve().parent.parent / "data" / "value_v1.json"

# One line per feature, from the evaluating seat p's view; "prog" is the game's progress, the share of the regular
# turns already over: (turn - 1) / turns clipped to [0, 1], 1 in a tie-break (R19). The order is the C order.
FEATURE_NAMES: tuple[str, ...] = (
    "vp",                   # p's VP (R15)
    "vp_x_prog",            # VP x prog: VP weigh more as the end nears
    "lead",                 # p's VP less the best VP of the other seats
    "lead_x_prog",          # lead x prog
    "lead_x_prog2",         # lead x prog^2: a lead in the last turns is nearly a win
    "leader",               # 1 if no other seat has more VP
    "leader_x_prog",        # leader x prog
    "positional",           # position_score less VP: the hand-made evaluation's positional terms
    "positional_x_prog",    # positional x prog
    "alive",                # living tokens (Milady included)
    "on_map",               # living tokens on the map
    "force",                # sum of the numbers of the living tokens other than Milady (R11, R17)
    "stricken",             # living plague-stricken tokens (R18)
    "in_danger",            # numbers of the tokens the plague can hit next (not in a City or the Convent, R18)
    "cities",               # Cities owned
    "city_value",           # VP the owned Cities would cost if lost: distance from p's Castle (R15)
    "city_value_at_risk",   # the same for the owned Cities an enemy's adjacent force out-forces (R11)
    "city_attack_ready",    # VP of the other Cities p's adjacent force (with a City taker) out-forces (R11, R15)
    "threatened",           # numbers of p's tokens an enemy's adjacent force out-forces (R11)
    "never_entered",        # red numbers of p's tokens never entered, before the King (R16; 0 after)
    "baron_alive",          # 1 if p's Baron lives
    "desperate",            # 1 if p's Baron is desperate (R17)
    "king_help",            # 1 if the King has come and p has the fewest VP (R16: +2 shillings)
    "in_cities",            # living tokens of p in Cities (safe from the plague, R18)
)
NUM_FEATURES = len(FEATURE_NAMES)


def _progress(state) -> float:
    g = state.game
    if state.tiebreak:
        return 1.0
    turns = g.ruleset.turns
    return min(1.0, max(0.0, (state.turn - 1) / max(1, turns)))


def features(state, seat: int | None = None) -> np.ndarray:
    """The features of ``state`` (a reference :class:`engine.State` or an :class:`engine.core.CoreState`): an
    array ``(num_players, NUM_FEATURES)``, row p from seat p's view; with ``seat``, that row only. Public facts
    only (R22)."""
    g = state.game
    rs = g.ruleset
    n = state.num_players
    k = g.num_tokens
    milady = g.milady
    central = g.map.central_hill
    kind = g.kind
    dist = g.map.distance
    number = [[state.number(p, t) for t in range(k)] for p in range(n)]
    force_at = [[0] * g.num_territories for _ in range(n)]
    for p in range(n):
        for t, x in enumerate(state.loc[p]):
            if x >= 0 and t != milady:
                force_at[p][x] += number[p][t]

    def enemy_max(p: int, x: int) -> int:
        """The largest adjacent force of one enemy against territory x (the Central Hill does not attack)."""
        best = 0
        for q in range(n):
            if q == p:
                continue
            f = sum(force_at[q][y] for y in g.neighbors[x] if y != central)
            best = max(best, f)
        return best

    danger = _danger_set(state) if rs.has_plague and not state.tiebreak else frozenset()
    prog = _progress(state)
    vp = list(state.vp)
    out = np.zeros((n, NUM_FEATURES), dtype=np.float64)
    for p in range(n):
        loc = state.loc[p]
        others = max(vp[q] for q in range(n) if q != p)
        lead = vp[p] - others
        leader = 1.0 if lead >= 0 else 0.0
        positional = position_score(state, p) - vp[p]
        alive = on_map = force = stricken = in_danger = never = in_cities = threatened = 0
        for t, x in enumerate(loc):
            if x == DEAD:
                continue
            alive += 1
            num = number[p][t]
            if t != milady:
                force += num
            if state.stricken[p][t]:
                stricken += 1
            if x == CASTLE:
                if not state.entered[p][t] and not state.king:
                    never += state.red_number(p, t)
                continue
            on_map += 1
            kx = kind[x]
            if kx == Kind.CITY:
                in_cities += 1
            if x in danger and kx != Kind.CITY and kx != Kind.CENTRAL_HILL:
                in_danger += num
            if x != central and t != milady:
                bonus = (rs.defence_wood if kx == Kind.WOOD else rs.defence_village if kx == Kind.VILLAGE
                         else rs.defence_city if kx == Kind.CITY else 0)
                if enemy_max(p, x) > force_at[p][x] + bonus:
                    threatened += num
        cities = city_value = at_risk = ready = 0
        castle = state.castle_territory(p)
        for c in g.map.cities:
            if state.owner[c] == p:
                cities += 1
                if castle >= 0:
                    value = dist[castle][c]
                    city_value += value
                    if enemy_max(p, c) > rs.defence_city + force_at[p][c]:
                        at_risk += value
                continue
            if castle < 0:
                continue
            force_adj = 0
            taker = False
            for t, x in enumerate(loc):
                if x < 0 or t == milady or x == central or dist[x][c] != 1:
                    continue
                force_adj += number[p][t]
                taker = taker or bool(g.takes_cities[t])
            defence = rs.defence_city + sum(force_at[q][c] for q in range(n) if q != p)
            if taker and force_adj > defence:
                ready += dist[castle][c]
        fewest = vp[p] == min(vp)
        row = (vp[p], vp[p] * prog, lead, lead * prog, lead * prog * prog, leader, leader * prog,
               positional, positional * prog, alive, on_map, force, stricken, in_danger, cities, city_value,
               at_risk, ready, threatened, never, 1.0 if loc[g.baron] != DEAD else 0.0,
               1.0 if state.desperate(p) else 0.0, 1.0 if state.king and fewest else 0.0, in_cities)
        out[p] = row
    return out if seat is None else out[seat]


def in_play(state) -> np.ndarray:
    """Which seats can still win: every seat, or the tied leaders playing a tie-break (R19)."""
    n = state.num_players
    if not state.tiebreak:
        return np.ones(n, dtype=bool)
    return np.array([bool(state.active[p]) for p in range(n)], dtype=bool)


def softmax_rewards(utility: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Softmax of the utilities over the seats in ``mask`` (0 for the others): the reward vector."""
    u = np.where(mask, utility, -np.inf)
    u = u - u[mask].max()
    e = np.where(mask, np.exp(u), 0.0)
    return e / e.sum()


@dataclass(frozen=True)
class ValueModel:
    """Weights of the learned evaluation (one vector of :data:`NUM_FEATURES` per player count) and the facts of
    its training (``meta``: seed, games, positions, losses...)."""

    weights: Mapping[int, np.ndarray]
    meta: Mapping[str, Any] = field(default_factory=dict)

    def utilities(self, state) -> np.ndarray:
        return features(state) @ self.weights[state.num_players]

    def rewards(self, state, temperature: float = 1.0) -> np.ndarray:
        """The reward vector of a non-terminal position (R19 returns at a terminal one): the softmax of the
        utilities / ``temperature`` (1: the fitted win probabilities; the search's ``temperature`` option)."""
        if state.is_terminal():
            return np.array(state.returns(), dtype=np.float64)
        return softmax_rewards(self.utilities(state) / temperature, in_play(state))

    def to_dict(self) -> dict:
        return {"format": FORMAT, "features": list(FEATURE_NAMES),
                "weights": {str(n): [float(x) for x in self.weights[n]] for n in PLAYER_COUNTS},
                **{k: v for k, v in self.meta.items() if k not in ("format", "features", "weights")}}


def _fail(source: str, name: str, msg: str) -> ValueError:
    return ValueError(f"{source}: {name}: {msg}")


def model_from_dict(d: Any, source: str = "value model") -> ValueModel:
    """A :class:`ValueModel` from a parsed weights file; :raises ValueError: naming the bad field (format version,
    feature names, shapes, finite numbers)."""
    if not isinstance(d, dict):
        raise ValueError(f"{source}: expected a JSON object, got {type(d).__name__}")
    if d.get("format") != FORMAT:
        raise _fail(source, "format", f"expected {FORMAT!r}, got {d.get('format')!r}")
    names = d.get("features")
    if names != list(FEATURE_NAMES):
        raise _fail(source, "features", f"expected the {NUM_FEATURES} features of this version "
                                        f"({', '.join(FEATURE_NAMES)}), got {names!r}")
    ws = d.get("weights")
    if not isinstance(ws, dict):
        raise _fail(source, "weights", f"expected an object keyed by player count, got {type(ws).__name__}")
    if sorted(ws) != sorted(str(n) for n in PLAYER_COUNTS):
        raise _fail(source, "weights", f"expected the player counts {', '.join(map(str, PLAYER_COUNTS))}, got "
                                       f"{', '.join(sorted(ws))}")
    weights = {}
    for n in PLAYER_COUNTS:
        row = ws[str(n)]
        if not isinstance(row, list) or len(row) != NUM_FEATURES:
            raise _fail(source, f"weights.{n}", f"expected a list of {NUM_FEATURES} numbers, got "
                                                f"{len(row) if isinstance(row, list) else type(row).__name__}")
        for i, x in enumerate(row):
            if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x):
                raise _fail(source, f"weights.{n}[{i}] ({FEATURE_NAMES[i]})", f"expected a finite number, got {x!r}")
        weights[n] = np.array(row, dtype=np.float64)
    meta = {k: v for k, v in d.items() if k not in ("format", "features", "weights")}
    return ValueModel(weights, meta)


def load_model(path: str | Path | None = None) -> ValueModel:
    """Read and validate a weights file (default: the one shipped, :data:`DEFAULT_MODEL_PATH`)."""
    p = Path(path) if path is not None else DEFAULT_MODEL_PATH
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as e:
        raise ValueError(f"{p}: cannot read the value model ({e.strerror or e})") from None
    try:
        d = json.loads(text)
    except json.JSONDecodeError as e:
        raise ValueError(f"{p}: not JSON ({e.msg}, line {e.lineno})") from None
    return model_from_dict(d, str(p))


@functools.lru_cache(maxsize=1)
def default_model() -> ValueModel:
    """The shipped model, loaded and validated once per process."""
    return load_model()


_DEFAULT_C: Any = None  # the shipped model's C weights, built once per process


def _c_weights(m: ValueModel):
    from feudo_ai import _value

    return _value.ValueWeights(np.stack([m.weights[n] for n in PLAYER_COUNTS]))


def c_model(model: ValueModel | None = None):
    """The weights of ``model`` (default: the shipped one, built once) in the C struct the search reads
    (:class:`feudo_ai._value.ValueWeights`)."""
    global _DEFAULT_C
    if model is not None:
        return _c_weights(model)
    if _DEFAULT_C is None:
        _DEFAULT_C = _c_weights(default_model())
    return _DEFAULT_C
