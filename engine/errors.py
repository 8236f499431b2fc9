"""Exception hierarchy of the Feudo engine.

One base class so callers (CLI, service) can catch every engine problem with a single ``except FeudoError``
while still telling apart bad data files, illegal moves and broken states.
"""

from __future__ import annotations


class FeudoError(Exception):
    """Base class of every error raised on purpose by the engine."""


class DataFileError(FeudoError):
    """A map or ruleset file (or dict) is malformed.

    The message always names the file (or ``<dict>``), the field path (``territories[3].kind``) and what was
    expected, because the people fixing these files are players editing JSON, not programmers reading tracebacks.
    """


class IllegalActionError(FeudoError):
    """An action that the rules do not allow in the current state."""


class StateError(FeudoError):
    """A game state that is inconsistent or cannot be built as requested."""
