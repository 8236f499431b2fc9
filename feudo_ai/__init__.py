"""Feudo AI: bots, search, arena, services and the command line on top of the :mod:`engine` rules engine.

The public API: :func:`advise` asks for advice (settings in: :class:`SearchOptions`, resolved from named profiles
by :func:`resolve`; :class:`Advice` out); see :mod:`feudo_ai.search` and :mod:`feudo_ai.settings`.
"""

from .search import (Advice, Alternative, CardBelief, ObservedPosition, PlannedAction, PreparedPosition, SearchStats,
                     advise, prepare)
from .settings import Limits, SearchOptions, resolve

__version__ = "0.1.0"

__all__ = ["advise", "prepare", "resolve", "Advice", "Alternative", "CardBelief", "ObservedPosition", "PlannedAction",
           "PreparedPosition", "SearchOptions", "SearchStats", "Limits", "__version__"]
