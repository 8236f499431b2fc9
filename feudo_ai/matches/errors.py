"""Errors of the match service, one class per gRPC status code it maps to (plain Python first).

The gRPC servicer (``feudo_ai/wire/matches.py``) turns each into its status code; Python callers of
:class:`feudo_ai.matches.service.MatchService` catch them directly. Messages name the field and what was
expected, never a secret.
"""

from __future__ import annotations


class MatchError(Exception):
    """Base class: every error a match call raises on purpose."""

    code = "UNKNOWN"


class InvalidArgument(MatchError, ValueError):
    """A malformed request: a bad setup field, an action not legal now (nothing is changed)."""

    code = "INVALID_ARGUMENT"


class FailedPrecondition(MatchError):
    """A well-formed request the match is not in the state for: out of turn, a stale action count, a match
    that is over."""

    code = "FAILED_PRECONDITION"


class NotFound(MatchError, KeyError):
    """No match with that id."""

    code = "NOT_FOUND"

    def __str__(self) -> str:  # KeyError quotes its message; this one reads as a sentence
        return str(self.args[0]) if self.args else ""


class Unauthenticated(MatchError):
    """A seat call without a seat token."""

    code = "UNAUTHENTICATED"


class PermissionDenied(MatchError):
    """A seat call with a token that is not that seat's (or for a seat played by a bot)."""

    code = "PERMISSION_DENIED"


class ResourceExhausted(MatchError):
    """A server limit is reached (matches held, watch streams open): retry later or elsewhere."""

    code = "RESOURCE_EXHAUSTED"
