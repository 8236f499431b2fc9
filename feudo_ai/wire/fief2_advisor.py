"""The ``fief2.v1.Advisor`` servicer: Fief 2's description, a seat's legal actions, a picture of its view, advice.

Registered with the generated ``add_AdvisorServicer_to_server`` on the same server as ``feudo.v1`` and served
through the same :class:`~feudo_ai.wire.plumbing.CallInterceptor` (API token, the call's clock and log line, enum
and message checks, error mapping) over gRPC and HTTP (Connect). A position is a whole ``fief2-state/1`` state or a
seat of a hosted match (:func:`~.fief2_convert.state_of`); every answer reads only what the seat may know (F46):
its legal actions on its turn (F47), the picture of :func:`~.fief2_convert.seat_view`.

``Suggest`` checks the whole request (position, seat, limits against the server's caps, the seat to act) and then
answers ``FAILED_PRECONDITION`` "no search for Fief 2 in this build": the Fief 2 search is not part of this build,
and no answer is made up in its place.
"""

from __future__ import annotations

from typing import Any

import grpc

from fief2.v1 import advisor_pb2 as apb
from fief2.v1 import advisor_pb2_grpc as apb_grpc

from ..matches.errors import MatchError
from .advisor import AdvisorServicer, ServiceConfig
from .fief2_convert import check_seat, description, legal_actions, seat_view, setup_of, state_of, to_act
from .plumbing import Abort, current_call

SERVICE_NAME = apb.DESCRIPTOR.services_by_name["Advisor"].full_name  # "fief2.v1.Advisor"
NO_SEARCH = "no search for Fief 2 in this build"


def status_of(error: Exception) -> grpc.StatusCode | None:
    """The status of a domain error of a Fief 2 call (the match form's and the setup's errors name their codes)."""
    return getattr(grpc.StatusCode, error.code) if isinstance(error, MatchError) else None


class Fief2AdvisorServicer(apb_grpc.AdvisorServicer):
    """The ``fief2.v1.Advisor`` methods; ``matches``: the server's Fief 2 matches (the match form of a position)."""

    def __init__(self, config: ServiceConfig | None = None, matches: Any = None):
        self.config = config or ServiceConfig()
        self.matches = matches

    def _state(self, request: Any) -> Any:
        call = current_call()
        call.set(seat=request.seat, form=request.position.WhichOneof("form"))
        st = state_of(request.position, request.seat, self.matches)
        check_seat(request.seat, st.num_players)
        return st

    def DescribeGame(self, request: apb.DescribeGameRequest, context: grpc.ServicerContext) -> apb.DescribeGameResponse:
        return apb.DescribeGameResponse(game=description(setup_of(request.setup)))

    def LegalActions(self, request: apb.LegalActionsRequest, context: grpc.ServicerContext) -> apb.LegalActionsResponse:
        st = self._state(request)
        out = apb.LegalActionsResponse(actions=legal_actions(st, request.seat))
        if to_act(st) is not None:
            out.to_act = to_act(st)
        return out

    def RenderPosition(self, request: apb.RenderPositionRequest,
                       context: grpc.ServicerContext) -> apb.RenderPositionResponse:
        from fief2 import render_text

        st = self._state(request)
        return apb.RenderPositionResponse(text=render_text(seat_view(st, request.seat)))

    def Suggest(self, request: apb.SuggestRequest, context: grpc.ServicerContext) -> apb.SuggestResponse:
        # the same caps and messages as feudo.v1's limits (tabletop.v1.SearchLimits has the same fields)
        AdvisorServicer._limits(self, request.limits)  # type: ignore[arg-type]
        st = self._state(request)
        actor = to_act(st)
        if actor != request.seat:
            who = "nobody (the game is over)" if st.is_terminal() else f"seat {actor}"
            raise Abort(grpc.StatusCode.FAILED_PRECONDITION, f"seat {request.seat} is not to act; {who} is")
        raise Abort(grpc.StatusCode.FAILED_PRECONDITION, NO_SEARCH)
