"""Hosted matches: the server referees games between external seats and bots ("Matches").

One module per job: :mod:`.spec` (a match's setup), :mod:`.tokens` (seat secrets), :mod:`.store` (persistence:
SQLite, or PostgreSQL shared by replicas, :mod:`.store_pg`), :mod:`.match` (one match in memory and each seat's
view of it), :mod:`.runner` (bots moving on the server), :mod:`.service` (the calls, as plain Python raising
:mod:`.errors`) and :mod:`.client` (the Python client of the gRPC service). The gRPC service ``feudo.v1.Matches``
itself is in the wire room (:mod:`feudo_ai.wire.matches`): nothing here imports the wire.
"""

from .errors import (FailedPrecondition, InvalidArgument, MatchError, NotFound, PermissionDenied,
                     ResourceExhausted, Unauthenticated)
from .service import MatchService
from .spec import EXTERNAL, MatchSetup

__all__ = ["EXTERNAL", "FailedPrecondition", "InvalidArgument", "MatchError", "MatchService", "MatchSetup",
           "NotFound", "PermissionDenied", "ResourceExhausted", "Unauthenticated"]
