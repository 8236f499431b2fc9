"""The games the search's Python side knows, each behind a :class:`~.base.GameAdapter`: Feudo
(:mod:`.feudo`) and Fief 2 (:mod:`.fief2`). :func:`adapter_for` picks a position's."""

from __future__ import annotations

from typing import Any

from .base import GameAdapter
from .feudo import FEUDO
from .fief2 import FIEF2

__all__ = ["GameAdapter", "ADAPTERS", "adapter_for"]

ADAPTERS: tuple[GameAdapter, ...] = (FIEF2, FEUDO)  # asked in order; Feudo, the default, owns the rest


def adapter_for(position: Any) -> GameAdapter:
    """The adapter of the game ``position`` (a state, an observation or a prepared position) belongs to."""
    return next(a for a in ADAPTERS if a.owns(position))
