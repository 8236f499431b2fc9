"""Hosted matches: the server referees games between external seats and bots ("Matches").

One module per job: :mod:`.spec` (a match's setup), :mod:`.tokens` (seat secrets), :mod:`.store` (persistence:
SQLite, or PostgreSQL shared by replicas, :mod:`.store_pg`), :mod:`.match` (one match in memory and each seat's
view of it), :mod:`.runner` (bots moving on the server), :mod:`.service` (the calls, as plain Python raising
:mod:`.errors`), :mod:`.hosting` (what Feudo's and Fief 2's services share: retention, loading back, listing),
:mod:`.fief2_service` (Fief 2's hosted matches, in the same store) and :mod:`.client` (the Python client of the
gRPC service). The gRPC services ``feudo.v1.Matches`` and ``fief2.v1.MatchesService`` themselves are in the wire
room (:mod:`feudo_ai.wire.matches`, :mod:`feudo_ai.wire.fief2_matches`): nothing here imports the wire.
"""

from .errors import (FailedPrecondition, InvalidArgument, MatchError, NotFound, PermissionDenied,
                     ResourceExhausted, Unauthenticated)
from .service import MatchService
from .spec import EXTERNAL, MatchSetup

__all__ = ["EXTERNAL", "FailedPrecondition", "InvalidArgument", "MatchError", "MatchService", "MatchSetup",
           "NotFound", "PermissionDenied", "ResourceExhausted", "Unauthenticated"]
