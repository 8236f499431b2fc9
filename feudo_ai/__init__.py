"""Feudo AI: bots, search, arena and command line on top of the :mod:`engine` rules engine.

The public API: :func:`advise` asks for advice (:class:`SearchOptions` in, :class:`Advice` out); see
:mod:`feudo_ai.advice`.
"""

from .advice import (Advice, Alternative, CardBelief, ObservedPosition, PlannedAction, SearchOptions, SearchStats,
                     advise)

__version__ = "0.1.0"

__all__ = ["advise", "Advice", "Alternative", "CardBelief", "ObservedPosition", "PlannedAction", "SearchOptions",
           "SearchStats", "__version__"]
