"""The one settings vocabulary of the search, its named profiles, and the one function that resolves them.

Settings come in four groups, each a frozen dataclass, and every setting has one name from the bot spec and the
proto to C (:data:`FIELDS` maps each name to its group):

- :class:`Limits`: *when to stop* and what a search may use (iterations, seconds, deadline, threads, the node
  pool, the workers' OS priority), as python-chess's ``Limit`` holds only when to stop;
- :class:`SearchParams`: the algorithm and its parameters (MO-ISMCTS or PIMC, C or Python, exploration, worlds,
  the playouts' length, the seed);
- :class:`GameSettings`: the game's evaluation and playout policy (Feudo's: greedy playout moves, the softmax
  temperature and margin of the hand-made evaluation, the opponent model of the determinization), handed to the
  game adapter; the search never reads them;
- :class:`Experimental`: measured dead ends kept for the strength work (the action prior from one-ply scores, the
  learned evaluation); no product profile sets them.

:class:`SearchOptions` holds one of each, validated together on construction against the constraints declared
once in :data:`CONSTRAINTS` (``ValueError`` naming the first bad setting). It is built from settings by name
(``SearchOptions(iterations=2000, c=0.4)``) and read by name (``options.c``) or by group
(``options.search.c``).

Named profiles are data (``feudo_ai/data/profiles.json``): ``default``, ``product`` (by player count), the frozen
baselines ``ismcts-v1``, ``ismcts-v2`` (the product of commit 675d4c0) and ``pimc``, the Python references, and the difficulty levels ``easy``..``max`` (bot
specs). :func:`resolve` is the one function that turns a profile, a game's player count and a caller's overrides
into :class:`SearchOptions`; every user calls it: the bots (and so the arena and the OpenSpiel bot), the Advisor
service, ``feudo advise`` and the hints.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, fields
from enum import Enum
from functools import lru_cache
from importlib import resources
from typing import Any, Mapping

__all__ = [
    "Algorithm", "Backend", "Playout", "Sampler", "Evaluation", "Engine",
    "Limits", "SearchParams", "GameSettings", "Experimental", "SearchOptions", "FIELDS", "CONSTRAINTS",
    "DEFAULT_ITERATIONS", "MAX_ITERATIONS", "MAX_SECONDS", "MAX_THREADS", "MAX_NICE", "MAX_C", "MAX_TEMPERATURE",
    "MAX_PRIOR_WEIGHT", "MAX_PLAYOUT_TURNS", "NODE_BYTES", "node_bytes", "MAX_SEARCH_BYTES", "MAX_NODES",
    "MAX_PY_NODES",
    "MAX_WORLDS", "PROFILES", "LEVELS", "profile_names", "profile_base", "resolve",
]


class _Choice(str, Enum):
    """A closed set of choices whose members are their own names as strings (``Algorithm.PIMC == "pimc"``,
    printed and stored as ``pimc``)."""

    __str__ = str.__str__
    __format__ = str.__format__

    @classmethod
    def parse(cls, name: str, value: Any) -> "_Choice":
        try:
            return cls(value)
        except ValueError:
            raise ValueError(f"{name}: expected one of {', '.join(m.value for m in cls)}, got {value!r}") from None


class Algorithm(_Choice):
    ISMCTS = "ismcts"  # multiple-observer information-set MCTS
    PIMC = "pimc"  # determinized UCT: the classic baseline


class Backend(_Choice):
    C = "c"  # the C search over the compiled core, GIL released (feudo_ai.search.c_backend)
    PYTHON = "python"  # the readable reference (feudo_ai.search.python_backend), about 50x slower


class Playout(_Choice):
    TRUNCATED = "truncated"  # playout actions to the end of the turn (+ playout_turns), then the evaluation
    EVAL = "eval"  # evaluate the leaf at once
    RANDOM = "random"  # random actions to the end of the game (R19 returns)
    MIXED = "mixed"  # the Python reference's own default only


class Sampler(_Choice):
    UNIFORM = "uniform"  # hidden selections drawn uniformly among those consistent with the seat's observation
    WEIGHTED = "weighted"  # drawn with an opponent model's prior (feudo_ai.sampler.WeightedSampler)


class Evaluation(_Choice):
    """The named evaluations; the setting ``evaluation`` also takes a model file's path (:class:`_EvaluationRule`)."""

    HANDMADE = "handmade"  # the softmax of feudo_ai.evaluate.position_score
    LEARNED = "learned"  # experimental: the shipped model of feudo_ai.experimental.value (C only)


class Engine(_Choice):
    CORE = "core"  # the compiled rules core
    REFERENCE = "reference"  # the readable reference State


DEFAULT_ITERATIONS = 5000  # the budget when no limit is given
MAX_ITERATIONS = 100_000_000
MAX_SECONDS = 3600.0
MAX_THREADS = 64
MAX_NICE = 19  # the largest nice increment (Linux: nice values run from -20 to 19)
MAX_C = 100.0  # UCB exploration constant (rewards are in [0, 1])
MAX_TEMPERATURE = 1e6
MAX_PRIOR_WEIGHT = 100.0  # progressive bias weight of the action prior (rewards are in [0, 1])
MAX_PLAYOUT_TURNS = 200  # the longest game: 100 regular turns + 100 tie-break turns
MAX_WORLDS = 4096
NODE_BYTES = 64  # one node of the C search in games of up to 4 players (feudo_ai._search.node_bytes(), tested)
MAX_SEARCH_BYTES = 1 << 30  # memory of one C search: threads x node pool x NODE_BYTES at most 1 GiB
MAX_NODES = MAX_SEARCH_BYTES // NODE_BYTES  # node pool of one C worker (16,777,216: then one thread only)


def node_bytes(players: int) -> int:
    """Bytes a node of the C search takes in a game of ``players``: :data:`NODE_BYTES`, plus 8 for each player
    beyond the 4 whose reward sums a node holds itself (Fief 2's fifth and sixth families)."""
    return NODE_BYTES + 8 * max(0, players - 4)


MAX_PY_NODES = 1_000_000  # nodes of one Python search over its workers (a node with its dicts is ~1 kB: ~1 GiB)


@dataclass(frozen=True)
class Limits:
    """When a search stops, and what it may use. With no iteration, time or deadline limit the budget is
    :data:`DEFAULT_ITERATIONS`; with several, the first one reached stops it. Same seed and ``iterations`` (no
    time limit): same advice."""

    iterations: int | None = None  # total iterations over all threads; None: no iteration limit
    seconds: float | None = None  # wall time of the search
    deadline: float | None = None  # absolute time.monotonic() by which the search stops (e.g. a gRPC deadline)
    threads: int = 1  # root-parallel workers (C: threads with the GIL released; Python: processes)
    max_nodes: int | None = None  # node pool per worker; None: sized to the budget
    # C: a full pool frees its least-travelled half (feudo_ai._search._recycle) and the trees go on growing;
    # False (the default until the arena shows recycling pays, docs/search-history.md): a full pool stops the
    # trees growing
    recycle: bool = False
    # C MO-ISMCTS: stop once the most visited action of a decision (not a secret selection, whose later picks the
    # same tree plans) leads the runner-up by more visits than the iterations left (for a time limit: estimated from
    # the rate so far), so the answer can no longer change; stats.stopped_by == "decided". Bots bank the time saved
    # for their next searches. False: every search spends its whole budget
    early_stop: bool = False
    # C, Linux: the workers run this much nicer than the caller, on threads of their own, so that a server's
    # threads answering calls are served first (0: the search runs on the calling thread)
    nice: int = 0


@dataclass(frozen=True)
class SearchParams:
    """The search algorithm and its parameters (game-free)."""

    algorithm: Algorithm = Algorithm.ISMCTS
    backend: Backend = Backend.C
    c: float = 0.2  # UCB1 exploration constant
    exp3_gamma: float = 0.15  # EXP3 exploration at simultaneous secret selections
    # the tree's action prior (C only): UCB1 gets + prior_weight * P(a) / (1 + n_a), P the softmax (temperature
    # prior_temperature) of the game's one-ply scores (the game's `prior` hook); 0: no prior
    prior_weight: float = 0.0
    prior_temperature: float = 1.0
    worlds: int = 8  # PIMC: determinizations per worker
    playout: Playout = Playout.TRUNCATED
    playout_turns: int = 0  # truncated playouts: turns played after the root's turn ends
    seed: int = 0  # every random choice of the search flows from it
    engine: Engine = Engine.CORE  # backend="python" only: the rules implementation of its worlds
    # C MO-ISMCTS, bots: a seat's search starts from the subtree of its previous search's own tree below the
    # labels it observed since (feudo_ai.search.reuse); off until measured to pay (docs/search-history.md)
    reuse_tree: bool = False


@dataclass(frozen=True)
class GameSettings:
    """Feudo's evaluation and playout policy, handed to the game adapter (``feudo_ai._feudo_game``)."""

    # the probability that a truncated playout plays a Move, March, Advance or Milady as the greedy player would
    # (the mover's best one-ply position score) rather than uniformly (C only)
    playout_greedy: float = 0.0
    sampler: Sampler = Sampler.UNIFORM  # the determinization's opponent model
    temperature: float = 1.0  # softmax temperature of the hand-made evaluation (at the start of the game)
    # the rewards are (1 - margin_weight) x the sharp softmax + margin_weight x a softmax of the same scores at
    # the constant temperature margin_temperature (VP): a seat a few VP ahead or behind still sees what a VP is
    # worth (docs/search.md, "Four players: the wide margin")
    margin_weight: float = 0.0
    margin_temperature: float = 4.0


@dataclass(frozen=True)
class Experimental:
    """Settings that did not pay when measured (docs/search-history.md) and that the strength work builds on. No
    product profile sets them; their defaults leave the search as the product plays it, bit for bit."""

    # "learned": the shipped model of feudo_ai.experimental.value (C only); or the path of a model file (a str,
    # validated when the options are made: feudo_ai.experimental.value.model_file)
    evaluation: Evaluation | str = Evaluation.HANDMADE
    # with a learned evaluation: its rewards are (1 - handmade_weight) x the model's + handmade_weight x the
    # hand-made evaluation's (the same temperature, with the margin if margin_weight is set); 0: the model alone
    handmade_weight: float = 0.0
    # R19's optional VP-margin term: a finished game's rewards are (1 - final_margin_weight) x its R19 returns +
    # final_margin_weight x a softmax of the final VP at margin_temperature, so a search whose playouts end the game
    # (2 players) still prefers the larger win, or the smaller loss, once every playout ends the same way (C only)
    final_margin_weight: float = 0.0


_GROUPS = {"limits": Limits, "search": SearchParams, "game": GameSettings, "experimental": Experimental}
# each setting's one name -> its group (declaration order: the order of SearchOptions.to_dict())
FIELDS: dict[str, str] = {f.name: g for g, cls in _GROUPS.items() for f in fields(cls)}
_CHOICES: dict[str, type[_Choice]] = {"algorithm": Algorithm, "backend": Backend, "playout": Playout,
                                       "sampler": Sampler, "engine": Engine}


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_real(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


@dataclass(frozen=True)
class _Flag:
    """A yes/no setting: ``True`` or ``False`` only (a bot spec's ``true``/``false``)."""

    hint: str = ""

    def check(self, name: str, v: Any) -> None:
        if not isinstance(v, bool):
            hint = f" ({self.hint})" if self.hint else ""
            raise ValueError(f"{name}: expected true or false{hint}, got {v!r}")


@dataclass(frozen=True)
class _Range:
    """A number in an interval: ``kind`` "int" or "real", ``lo``/``hi`` closed unless ``open_lo``; ``none``: None
    allowed; ``hint``: what the value means, added to the error."""

    kind: str
    lo: float
    hi: float
    open_lo: bool = False
    none: bool = False
    hint: str = ""

    def check(self, name: str, v: Any) -> None:
        if v is None and self.none:
            return
        ok = (_is_int(v) if self.kind == "int" else _is_real(v)) and \
            (self.lo < v if self.open_lo else self.lo <= v) and v <= self.hi
        if not ok:
            what = "an integer" if self.kind == "int" else "a number"
            lo = f"({self.lo:g}" if self.open_lo else f"[{self.lo:g}"
            hi = f"{self.hi}" if self.kind == "int" else f"{self.hi:g}"
            extra = " or None" if self.none else ""
            hint = f" ({self.hint})" if self.hint else ""
            raise ValueError(f"{name}: expected {what} in {lo}, {hi}]{extra}{hint}, got {v!r}")


@dataclass(frozen=True)
class _EvaluationRule:
    """``evaluation``: one of the named :class:`Evaluation` choices, or the path of a model file (a user's
    ``feudo train`` output), which must exist, be readable, fit the size bound and parse as a model; the file is
    read once per process (feudo_ai.experimental.value.model_file: cached by path, mtime and size)."""

    def parse(self, name: str, v: Any) -> "Evaluation | str":
        if isinstance(v, Evaluation):
            return v
        if isinstance(v, str) and v in {m.value for m in Evaluation}:
            return Evaluation(v)
        if not isinstance(v, str) or not v.strip():
            raise ValueError(f"{name}: expected one of {', '.join(m.value for m in Evaluation)} or a model file's "
                             f"path, got {v!r}")
        return v

    def check(self, name: str, v: Any) -> None:
        v = self.parse(name, v)
        if isinstance(v, Evaluation):
            return
        from feudo_ai.experimental.value import model_file  # only a search given a file loads the model code

        try:
            model_file(v)
        except ValueError as e:
            raise ValueError(f"{name}: expected one of {', '.join(m.value for m in Evaluation)} or a model file's "
                             f"path; {e}") from None


# Every setting's constraint, declared once (cross-setting rules: SearchOptions.validate).
CONSTRAINTS: dict[str, _Range | _Flag | _EvaluationRule] = {
    "iterations": _Range("int", 1, MAX_ITERATIONS, none=True),
    "seconds": _Range("real", 0, MAX_SECONDS, open_lo=True, none=True),
    "threads": _Range("int", 1, MAX_THREADS),
    "max_nodes": _Range("int", 16, MAX_NODES, none=True),
    "nice": _Range("int", 0, MAX_NICE),
    "c": _Range("real", 0, MAX_C),
    "exp3_gamma": _Range("real", 0, 1, open_lo=True),
    "worlds": _Range("int", 1, MAX_WORLDS),
    "playout_turns": _Range("int", 0, MAX_PLAYOUT_TURNS),
    "seed": _Range("int", -(2**63), 2**64 - 1, hint="a 64-bit integer"),
    "playout_greedy": _Range("real", 0, 1, hint="a probability; 0: uniform playout moves"),
    "temperature": _Range("real", 0, MAX_TEMPERATURE, open_lo=True),
    "margin_weight": _Range("real", 0, 1, hint="0: the sharp softmax alone"),
    "margin_temperature": _Range("real", 0, MAX_TEMPERATURE, open_lo=True),
    "handmade_weight": _Range("real", 0, 1, hint="0: the learned evaluation alone"),
    "final_margin_weight": _Range("real", 0, 0.5, hint="0: a finished game's R19 returns alone; up to 0.5 a "
                                  "win always outweighs a loss"),
    "prior_weight": _Range("real", 0, MAX_PRIOR_WEIGHT, hint="0: no prior"),
    "prior_temperature": _Range("real", 0, MAX_TEMPERATURE, open_lo=True),
    "recycle": _Flag("recycle a full node pool; false: a full pool stops the trees growing"),
    "reuse_tree": _Flag("start from the seat's previous tree"),
    "early_stop": _Flag("stop a search once its answer can no longer change"),
    "evaluation": _EvaluationRule(),
}


class SearchOptions:
    """How to search: a :class:`Limits`, a :class:`SearchParams`, a :class:`GameSettings` and an
    :class:`Experimental`, validated together on construction (:raises ValueError: naming the first bad setting).

    Built from settings by name (``SearchOptions(iterations=2000, seed=1)``, or ``limits=``/``search=``/``game=``/
    ``experimental=`` groups), read by name (``options.iterations``) or by group (``options.limits``). Immutable:
    :meth:`replace` gives a changed copy. For the product's settings use :func:`resolve` (``resolve("product",
    players)``); ``SearchOptions()`` is the ``default`` profile (plain playouts, the sharp evaluation).
    """

    __slots__ = ("limits", "search", "game", "experimental")

    def __init__(self, *, limits: Limits | None = None, search: SearchParams | None = None,
                 game: GameSettings | None = None, experimental: Experimental | None = None, **settings: Any):
        bad = sorted(set(settings) - set(FIELDS))
        if bad:
            raise ValueError(f"unknown search option(s) {', '.join(bad)}; known: {', '.join(FIELDS)}")
        given = {"limits": limits, "search": search, "game": game, "experimental": experimental}
        for group, cls in _GROUPS.items():
            base = given[group] if given[group] is not None else cls()
            if not isinstance(base, cls):
                raise ValueError(f"{group}: expected {cls.__name__}, got {type(base).__name__}")
            own = {k: v for k, v in settings.items() if FIELDS[k] == group}
            for k, v in own.items():
                if k in _CHOICES:
                    own[k] = _CHOICES[k].parse(k, v)
                elif k == "evaluation":
                    own[k] = CONSTRAINTS[k].parse(k, v)
            values = {**asdict(base), **own}
            object.__setattr__(self, group, cls(**values))
        self.validate()

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("SearchOptions is immutable: use replace()")

    def __getattr__(self, name: str) -> Any:
        group = FIELDS.get(name)
        if group is None:
            raise AttributeError(f"SearchOptions has no setting {name!r}")
        return getattr(object.__getattribute__(self, group), name)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SearchOptions) and self.to_dict() == other.to_dict()

    def __hash__(self) -> int:
        return hash(tuple(self.to_dict().items()))

    def __repr__(self) -> str:
        return "SearchOptions(" + ", ".join(f"{k}={v!r}" for k, v in self.changes().items()) + ")"

    def changes(self) -> dict:
        """The settings that differ from ``SearchOptions()``'s, by name (e.g. what a profile adds)."""
        return {k: v for k, v in self.to_dict().items() if v != _DEFAULTS[k]}

    def __reduce__(self):  # picklable for the Python backend's worker processes and Ray
        return (_from_dict, (self.to_dict(),))

    def validate(self) -> "SearchOptions":
        """Check every setting (:data:`CONSTRAINTS`) and the rules between settings; :raises ValueError: naming
        the first bad one. Returns ``self``."""
        for name, rule in CONSTRAINTS.items():
            rule.check(name, getattr(self, name))
        for name, choice in _CHOICES.items():
            choice.parse(name, getattr(self, name))
        dl = self.deadline
        if dl is not None and not _is_real(dl):
            raise ValueError(f"deadline: expected a time.monotonic() value or None, got {dl!r}")
        it, threads, backend = self.iterations, self.threads, self.backend
        if it is not None and it < threads:
            raise ValueError(f"iterations: expected at least one per thread ({threads}), got {it}")
        if self.playout == Playout.MIXED and backend != Backend.PYTHON:
            raise ValueError("playout: 'mixed' is only available with backend='python'")
        if self.engine != Engine.CORE and backend != Backend.PYTHON:
            raise ValueError("engine: 'reference' is only available with backend='python' (the C search runs on "
                             "the core)")
        if self.evaluation != Evaluation.HANDMADE and backend != Backend.C:
            raise ValueError(f"evaluation: {str(self.evaluation)!r} is only available with backend='c' (the model "
                             "runs in C)")
        if self.prior_weight and backend != Backend.C:
            raise ValueError("prior_weight: the action prior is only available with backend='c' (it runs in C)")
        if self.handmade_weight and self.evaluation == Evaluation.HANDMADE:
            raise ValueError("handmade_weight: mixes the handmade evaluation into a learned one; use 0 with "
                             "evaluation='handmade'")
        if self.margin_weight and self.evaluation != Evaluation.HANDMADE and not self.handmade_weight:
            raise ValueError("margin_weight: mixes a wide softmax into the handmade evaluation only; use 0 with "
                             f"evaluation={self.evaluation!r} (or mix the handmade one in: handmade_weight)")
        if self.final_margin_weight and backend != Backend.C:
            raise ValueError("final_margin_weight: the final VP margin is only available with backend='c' (it runs "
                             "in C)")
        if self.playout_greedy and backend != Backend.C:
            raise ValueError("playout_greedy: the greedy playout moves are only available with backend='c' (they "
                             "run in C)")
        if self.early_stop and (backend != Backend.C or self.algorithm != Algorithm.ISMCTS):
            raise ValueError("early_stop: stopping once the answer is settled is only available with backend='c' and "
                             "algorithm='ismcts' (it reads the C MO-ISMCTS's root)")
        if self.reuse_tree and (backend != Backend.C or self.algorithm != Algorithm.ISMCTS):
            raise ValueError("reuse_tree: tree reuse is only available with backend='c' and algorithm='ismcts' (the "
                             "seat's own tree of the C MO-ISMCTS)")
        nodes = self.max_nodes
        if nodes is not None and backend == Backend.C and threads * nodes * NODE_BYTES > MAX_SEARCH_BYTES:
            raise ValueError(f"max_nodes: {threads} threads x {nodes:,} nodes x {NODE_BYTES} bytes exceeds the "
                             f"memory limit of a search ({MAX_SEARCH_BYTES / 2**30:g} GiB); at most "
                             f"{MAX_SEARCH_BYTES // NODE_BYTES // threads:,} nodes per thread")
        if nodes is not None and backend == Backend.PYTHON and threads * nodes > MAX_PY_NODES:
            raise ValueError(f"max_nodes: {threads} workers x {nodes:,} nodes exceeds the memory limit of a Python "
                             f"search ({MAX_PY_NODES:,} nodes of ~1 kB)")
        if self.algorithm == Algorithm.PIMC and nodes is not None and nodes < self.worlds + 1:
            raise ValueError(f"max_nodes: expected at least worlds + 1 = {self.worlds + 1} for pimc, got {nodes}")
        return self

    @property
    def budget(self) -> int | None:
        """The iteration limit in force: ``iterations``, or :data:`DEFAULT_ITERATIONS` when no limit is given."""
        if self.iterations is None and self.seconds is None and self.deadline is None:
            return DEFAULT_ITERATIONS
        return self.iterations

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "SearchOptions":
        """Options from settings by name (e.g. a bot spec's parameters); :raises ValueError: on an unknown name."""
        return cls(**dict(d))

    def to_dict(self) -> dict:
        """Every setting by name (choices as their strings), in the order of :data:`FIELDS`."""
        return {k: (v.value if isinstance(v, _Choice) else v) for k, v in
                ((k, getattr(self, k)) for k in FIELDS)}

    def replace(self, **changes: Any) -> "SearchOptions":
        """A copy with some settings changed by name (validated again)."""
        return SearchOptions(**{**self.to_dict(), **changes})


def _from_dict(d: dict) -> SearchOptions:
    return SearchOptions(**d)


_DEFAULTS: dict = {k: (v.value if isinstance(v, _Choice) else v)
                   for cls in _GROUPS.values() for k, v in asdict(cls()).items()}


# ---------------------------------------------------------------------------------------------------------------
# Named profiles (feudo_ai/data/profiles.json) and the one resolution
# ---------------------------------------------------------------------------------------------------------------
@lru_cache(maxsize=None)
def _profiles_file() -> dict:
    data = json.loads(resources.files("feudo_ai").joinpath("data/profiles.json").read_text())
    for name, profile in data["profiles"].items():  # the shipped file is checked once, like any input
        for key in [*profile.get("base", {})] + [k for rules in profile.get("by_players", {}).values()
                                                 for r in rules for k in [*r["set"], *r.get("when", {})]]:
            if key not in FIELDS:
                raise ValueError(f"profiles.json: profile {name!r} names no setting {key!r}")
        SearchOptions(**profile.get("base", {}))
    return data


def _profiles() -> dict:
    return _profiles_file()["profiles"]


PROFILES: tuple[str, ...] = tuple(_profiles())
LEVELS: dict[str, str] = {k: v for k, v in _profiles_file()["levels"].items() if k != "about"}


def profile_names() -> tuple[str, ...]:
    return PROFILES


def profile_base(name: str) -> dict:
    """The settings a profile pins in every game (its ``base``, a new dict). :raises ValueError: unknown name."""
    if name not in _profiles():
        raise ValueError(f"profile: expected one of {', '.join(_profiles())}, got {name!r}")
    return dict(_profiles()[name].get("base", {}))


def resolve(profile: str = "default", players: int | None = None,
            overrides: Mapping[str, Any] | None = None) -> SearchOptions:
    """The settings of ``profile`` for a game of ``players``, with the caller's ``overrides`` (settings by name):
    the one way settings are resolved (bot specs, the Advisor, the matches' bots, ``feudo advise``, the hints, the
    arena, the OpenSpiel bot).

    The profile's ``base`` comes first, then ``overrides``, then each ``by_players`` rule of the game's player
    count whose ``when`` holds in the settings so far, setting only what the caller did not. A limit among the
    overrides (iterations, seconds or deadline) replaces the profile's iteration budget.

    :raises ValueError: an unknown profile or setting, a bad value or player count (naming it)."""
    profiles = _profiles()
    if profile not in profiles:
        raise ValueError(f"profile: expected one of {', '.join(profiles)}, got {profile!r}")
    if players is not None and (not _is_int(players) or players < 1):
        raise ValueError(f"players: expected a positive integer, got {players!r}")
    overrides = dict(overrides or {})
    bad = sorted(set(overrides) - set(FIELDS))
    if bad:
        raise ValueError(f"unknown search option(s) {', '.join(bad)}; known: {', '.join(FIELDS)}")
    spec = profiles[profile]
    base = dict(spec.get("base", {}))
    if any(k in overrides for k in ("iterations", "seconds", "deadline")):
        base.pop("iterations", None)
    settings = {**base, **overrides}
    if players is not None:
        for rule in spec.get("by_players", {}).get(str(players), []):
            current = {**_DEFAULTS, **settings}
            if all(current[k] == v for k, v in rule.get("when", {}).items()):
                settings.update({k: v for k, v in rule["set"].items() if k not in overrides})
    return SearchOptions(**settings)
