"""The learned evaluation: features of the public position and a conditional-logit model over the seats.

The search's truncated playouts end in a position that is not over; the evaluation turns it into a reward per
seat in [0, 1]. The hand-made one (:mod:`feudo_ai.evaluate`, a softmax of ``position_score``) weighs its terms by
hand; this one learns the weights from self-play games (``feudo train``, :mod:`feudo_ai.train`).

Model (a softmax over the seats): every seat ``p`` still in play gets a utility ``u_p = g_n(f(state, p))`` of the
position's features from ``p``'s view (:data:`FEATURE_NAMES`), one function ``g_n`` per player count ``n``
shared by the seats; the rewards are ``softmax(u)`` over the seats in play (the tied leaders in a tie-break,
R19), 0 for the others. It is fitted to the R19 returns of the games (1 for a sole win, 1/k shared), so the
rewards are the model's win probabilities and always sum to 1. Two kinds of ``g_n``:

- ``linear`` (a conditional logit): ``w[n] . f``; format ``feudo-value/1`` (:data:`FORMAT_V1`);
- ``mlp``: one hidden layer of ``tanh`` units over the standardised features, ``w2 . tanh(W1 z + b1) + b2`` with
  ``z = (f - mean) / scale``; format ``feudo-value/2`` (:data:`FORMAT`), which the loader reads along with /1.

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

__all__ = ["FORMAT", "FORMAT_V1", "KINDS", "MAX_HIDDEN", "MAX_FILE_BYTES", "FEATURE_NAMES", "NUM_FEATURES",
           "PLAYER_COUNTS", "DEFAULT_MODEL_PATH", "MLPLayer", "ValueModel", "features", "load_model",
           "model_from_dict", "default_model", "c_model", "model_file", "check_trained_for", "c_model_file"]

FORMAT = "feudo-value/2"  # the weights file's format (bumped when the features or the model change)
FORMAT_V1 = "feudo-value/1"  # the linear model's earlier format, still read (and written for a linear model)
KINDS = ("linear", "mlp")
MAX_HIDDEN = 64  # hidden units of an "mlp" model per player count (feudo_ai/_value.pxd MAX_HIDDEN)
MAX_FILE_BYTES = 2 * 1024 * 1024  # a model file larger than this is refused before it is read
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
class MLPLayer:
    """The ``mlp`` model of one player count: ``utility(f) = w2 . tanh(w1 @ ((f - mean) / scale) + b1) + b2``.
    Shapes: ``mean``, ``scale`` (NUM_FEATURES,), scale > 0; ``w1`` (H, NUM_FEATURES); ``b1``, ``w2`` (H,);
    ``b2`` a number; 1 <= H <= MAX_HIDDEN."""

    mean: np.ndarray
    scale: np.ndarray
    w1: np.ndarray
    b1: np.ndarray
    w2: np.ndarray
    b2: float

    def utilities(self, X: np.ndarray) -> np.ndarray:
        """The utility of every row of ``X`` (..., NUM_FEATURES)."""
        Z = (X - self.mean) / self.scale
        return np.tanh(Z @ self.w1.T + self.b1) @ self.w2 + self.b2

    def to_dict(self) -> dict:
        return {"hidden": int(len(self.b1)), "mean": [float(x) for x in self.mean],
                "scale": [float(x) for x in self.scale], "w1": [[float(x) for x in row] for row in self.w1],
                "b1": [float(x) for x in self.b1], "w2": [float(x) for x in self.w2], "b2": float(self.b2)}


@dataclass(frozen=True)
class ValueModel:
    """A learned evaluation: ``weights`` (one vector of :data:`NUM_FEATURES` per player count) for the linear
    kind, or ``mlp`` (one :class:`MLPLayer` per player count) for the MLP; and the facts of its training
    (``meta``: seed, games, positions, losses...)."""

    weights: Mapping[int, np.ndarray] | None = None
    meta: Mapping[str, Any] = field(default_factory=dict)
    mlp: Mapping[int, MLPLayer] | None = None

    @property
    def kind(self) -> str:
        return "mlp" if self.mlp is not None else "linear"

    def utilities(self, state) -> np.ndarray:
        n = state.num_players
        if self.mlp is not None:
            return self.mlp[n].utilities(features(state))
        return features(state) @ self.weights[n]

    def rewards(self, state, temperature: float = 1.0) -> np.ndarray:
        """The reward vector of a non-terminal position (R19 returns at a terminal one): the softmax of the
        utilities / ``temperature`` (1: the fitted win probabilities; the search's ``temperature`` option)."""
        if state.is_terminal():
            return np.array(state.returns(), dtype=np.float64)
        return softmax_rewards(self.utilities(state) / temperature, in_play(state))

    def to_dict(self) -> dict:
        """The file's content: a linear model in format /1 (as before the MLP), an MLP in format /2."""
        rest = {k: v for k, v in self.meta.items() if k not in ("format", "kind", "features", "weights", "layers",
                                                               "activation")}
        if self.mlp is not None:
            return {"format": FORMAT, "kind": "mlp", "features": list(FEATURE_NAMES), "activation": "tanh",
                    "layers": {str(n): self.mlp[n].to_dict() for n in PLAYER_COUNTS}, **rest}
        return {"format": FORMAT_V1, "features": list(FEATURE_NAMES),
                "weights": {str(n): [float(x) for x in self.weights[n]] for n in PLAYER_COUNTS}, **rest}


def _fail(source: str, name: str, msg: str) -> ValueError:
    return ValueError(f"{source}: {name}: {msg}")


def _numbers(source: str, name: str, row: Any, length: int, labels: bool = False) -> np.ndarray:
    """A list of ``length`` finite numbers (not booleans), or a ValueError naming ``name`` (and the index)."""
    if not isinstance(row, list) or len(row) != length:
        raise _fail(source, name, f"expected a list of {length} numbers, got "
                                  f"{len(row) if isinstance(row, list) else type(row).__name__}")
    for i, x in enumerate(row):
        if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x):
            where = f"{name}[{i}] ({FEATURE_NAMES[i]})" if labels else f"{name}[{i}]"
            raise _fail(source, where, f"expected a finite number, got {x!r}")
    return np.array(row, dtype=np.float64)


def _mlp_layer(source: str, n: int, d: Any) -> MLPLayer:
    name = f"layers.{n}"
    if not isinstance(d, dict):
        raise _fail(source, name, f"expected an object, got {type(d).__name__}")
    h = d.get("hidden")
    if isinstance(h, bool) or not isinstance(h, int) or not 1 <= h <= MAX_HIDDEN:
        raise _fail(source, f"{name}.hidden", f"expected an integer in [1, {MAX_HIDDEN}], got {h!r}")
    for key in ("mean", "scale", "w1", "b1", "w2", "b2"):
        if key not in d:
            raise _fail(source, f"{name}.{key}", "missing")
    mean = _numbers(source, f"{name}.mean", d["mean"], NUM_FEATURES, labels=True)
    scale = _numbers(source, f"{name}.scale", d["scale"], NUM_FEATURES, labels=True)
    bad = [i for i, x in enumerate(scale) if not x > 0]
    if bad:
        raise _fail(source, f"{name}.scale[{bad[0]}] ({FEATURE_NAMES[bad[0]]})",
                    f"expected a positive number, got {scale[bad[0]]!r}")
    w1 = d["w1"]
    if not isinstance(w1, list) or len(w1) != h:
        raise _fail(source, f"{name}.w1", f"expected {h} rows (hidden), got "
                                          f"{len(w1) if isinstance(w1, list) else type(w1).__name__}")
    W1 = np.stack([_numbers(source, f"{name}.w1[{i}]", r, NUM_FEATURES) for i, r in enumerate(w1)])
    b1 = _numbers(source, f"{name}.b1", d["b1"], h)
    w2 = _numbers(source, f"{name}.w2", d["w2"], h)
    b2 = d["b2"]
    if isinstance(b2, bool) or not isinstance(b2, (int, float)) or not math.isfinite(b2):
        raise _fail(source, f"{name}.b2", f"expected a finite number, got {b2!r}")
    return MLPLayer(mean, scale, W1, b1, w2, float(b2))


def model_from_dict(d: Any, source: str = "value model") -> ValueModel:
    """A :class:`ValueModel` from a parsed weights file; :raises ValueError: naming the bad field (format version,
    kind, feature names, shapes, finite numbers)."""
    if not isinstance(d, dict):
        raise ValueError(f"{source}: expected a JSON object, got {type(d).__name__}")
    fmt = d.get("format")
    if fmt not in (FORMAT_V1, FORMAT):
        raise _fail(source, "format", f"expected {FORMAT!r} or {FORMAT_V1!r}, got {fmt!r}")
    kind = d.get("kind", "linear") if fmt == FORMAT else "linear"
    if kind not in KINDS:
        raise _fail(source, "kind", f"expected one of {', '.join(KINDS)}, got {kind!r}")
    names = d.get("features")
    if names != list(FEATURE_NAMES):
        raise _fail(source, "features", f"expected the {NUM_FEATURES} features of this version "
                                        f"({', '.join(FEATURE_NAMES)}), got {names!r}")
    meta = {k: v for k, v in d.items() if k not in ("format", "kind", "features", "weights", "layers", "activation")}
    counts = sorted(str(n) for n in PLAYER_COUNTS)
    if kind == "mlp":
        if d.get("activation") != "tanh":
            raise _fail(source, "activation", f"expected 'tanh', got {d.get('activation')!r}")
        layers = d.get("layers")
        if not isinstance(layers, dict):
            raise _fail(source, "layers", f"expected an object keyed by player count, got {type(layers).__name__}")
        if sorted(layers) != counts:
            raise _fail(source, "layers", f"expected the player counts {', '.join(counts)}, got "
                                          f"{', '.join(sorted(layers))}")
        return ValueModel(None, meta, {n: _mlp_layer(source, n, layers[str(n)]) for n in PLAYER_COUNTS})
    ws = d.get("weights")
    if not isinstance(ws, dict):
        raise _fail(source, "weights", f"expected an object keyed by player count, got {type(ws).__name__}")
    if sorted(ws) != counts:
        raise _fail(source, "weights", f"expected the player counts {', '.join(map(str, PLAYER_COUNTS))}, got "
                                       f"{', '.join(sorted(ws))}")
    weights = {n: _numbers(source, f"weights.{n}", ws[str(n)], NUM_FEATURES, labels=True) for n in PLAYER_COUNTS}
    return ValueModel(weights, meta)


def load_model(path: str | Path | None = None) -> ValueModel:
    """Read and validate a weights file (default: the one shipped, :data:`DEFAULT_MODEL_PATH`); a file larger
    than :data:`MAX_FILE_BYTES` is refused unread."""
    p = Path(path) if path is not None else DEFAULT_MODEL_PATH
    try:
        with p.open("rb") as fh:
            raw = fh.read(MAX_FILE_BYTES + 1)
    except OSError as e:
        raise ValueError(f"{p}: cannot read the value model ({e.strerror or e})") from None
    if len(raw) > MAX_FILE_BYTES:
        raise ValueError(f"{p}: size: larger than {MAX_FILE_BYTES} bytes; not a value model")
    try:
        d = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise ValueError(f"{p}: not JSON (not UTF-8 text)") from None
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

    if m.mlp is not None:
        return _value.ValueWeights(mlp=[{"mean": L.mean, "scale": L.scale, "w1": L.w1, "b1": L.b1, "w2": L.w2,
                                         "b2": L.b2} for L in (m.mlp[n] for n in PLAYER_COUNTS)])
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


# A user's model file (the setting evaluation=FILE), loaded once per process: keyed by the resolved path, its
# mtime and size, so a file rewritten in place (a new training round) is read again.
_FILES: dict[tuple[str, int, int], tuple[ValueModel, list]] = {}
_FILES_MAX = 16  # distinct files kept; beyond, the oldest entry is dropped


def _file_entry(path: str | Path) -> tuple[ValueModel, list]:
    p = Path(path)
    try:
        st = p.resolve().stat()
    except OSError as e:
        raise ValueError(f"{p}: cannot read the value model ({e.strerror or e})") from None
    key = (str(p.resolve()), st.st_mtime_ns, st.st_size)
    hit = _FILES.get(key)
    if hit is None:
        if st.st_size > MAX_FILE_BYTES:
            raise ValueError(f"{p}: size: {st.st_size} bytes, larger than {MAX_FILE_BYTES}; not a value model")
        hit = (load_model(p), [])
        if len(_FILES) >= _FILES_MAX:
            _FILES.pop(next(iter(_FILES)))
        _FILES[key] = hit
    return hit


def model_file(path: str | Path) -> ValueModel:
    """The validated model of a file, read once per process (again when its mtime or size changes);
    :raises ValueError: unreadable, too large, not JSON or not a model (naming the field)."""
    return _file_entry(path)[0]


def check_trained_for(path: str | Path, players: int) -> None:
    """Refuse a model file trained without ``players``-player games: its rewards there would be uniform, a search
    that could not tell moves apart. :raises ValueError: naming ``evaluation``."""
    if players in model_file(path).meta.get("training", {}).get("untrained_players", []):
        raise ValueError(f"evaluation: the model {path} was trained without {players}-player games; train one with "
                         "them (feudo train --players)")


def c_model_file(path: str | Path):
    """The C weights of :func:`model_file`'s model, built once per file version."""
    model, c = _file_entry(path)
    if not c:
        c.append(_c_weights(model))
    return c[0]
