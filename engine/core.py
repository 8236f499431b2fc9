"""Choosing the state implementation: the Cython core when it is built, else the reference.

``new_game(..., backend="auto")`` returns an :class:`engine._core.CoreState` (same API as
:class:`engine.state.State`, same action ints, same positions) when the extension ``engine._core`` imports,
and otherwise warns once and returns the reference :class:`engine.state.State`. ``backend="core"`` insists on
the core (ImportError if it is not built); ``backend="reference"`` always gives the reference.
"""

from __future__ import annotations

import warnings

from .board import GameMap
from .errors import StateError
from .ruleset import Ruleset
from .state import State
from .state import new_game as _reference_new_game

try:
    from . import _core
except ImportError as _e:  # the extension is not built: python setup.py build_ext --inplace / pip install .
    _core = None
    _IMPORT_ERROR: ImportError | None = _e
else:
    _IMPORT_ERROR = None
    CoreState = _core.CoreState  # only defined when built: `from engine.core import CoreState` fails otherwise

BACKENDS = ("auto", "core", "reference")
_warned = False


def core_available() -> bool:
    """Whether the compiled core (``engine._core``) is importable."""
    return _core is not None


def to_core(state: State):
    """A core state equal to a reference state (ImportError if the core is not built)."""
    if _core is None:
        raise ImportError(f"engine._core is not built ({_IMPORT_ERROR}); run `pip install .` "
                          f"or `python setup.py build_ext --inplace`")
    return _core.CoreState.from_reference(state)


def new_game(ruleset: Ruleset | None = None, players: int = 4, seed: int = 0, game_map: GameMap | None = None,
             castles: list[int] | None = None, backend: str = "auto"):
    """:func:`engine.state.new_game` with a choice of implementation (see the module docstring)."""
    global _warned
    if backend not in BACKENDS:
        raise ValueError(f"backend: expected one of {', '.join(BACKENDS)}, got {backend!r}")
    state = _reference_new_game(ruleset, players=players, seed=seed, game_map=game_map, castles=castles)
    if backend == "reference":
        return state
    if _core is None:
        if backend == "core":
            return to_core(state)  # raises ImportError with the build command
        if not _warned:
            _warned = True
            warnings.warn(f"engine._core is not built ({_IMPORT_ERROR}); using the slower reference engine",
                          RuntimeWarning, stacklevel=2)
        return state
    try:
        return _core.CoreState.from_reference(state)
    except StateError as e:  # a game beyond the core's fixed sizes (e.g. more than 128 territories)
        if backend == "core":
            raise
        warnings.warn(f"{e}; using the reference engine", RuntimeWarning, stacklevel=2)
        return state
