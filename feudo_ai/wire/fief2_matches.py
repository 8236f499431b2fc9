"""The ``fief2.v1.MatchesService`` servicer over :class:`~feudo_ai.matches.fief2_service.Fief2MatchService` (hosted Fief 2
matches, kept in the server's match store beside Feudo's).

Registered with the generated ``add_MatchesServicer_to_server`` and served through the same
:class:`~feudo_ai.wire.plumbing.CallInterceptor` as ``feudo.v1.Matches``: each error of
:mod:`feudo_ai.matches.errors` is answered with its code and its message naming the field. WatchMatch streams
count against the same cap as Feudo's (one semaphore: each stream holds a server worker thread).
"""

from __future__ import annotations

import threading
from typing import Iterator

import grpc

from fief2.v1 import matches_pb2 as mpb
from fief2.v1 import matches_pb2_grpc as mpb_grpc
from tabletop.v1 import tabletop_pb2 as tpb

from ..matches.errors import MatchError
from ..matches.fief2_service import Fief2MatchService
from .fief2_convert import observation_to_proto, setup_of, setup_to_proto
from .matches import watch_stream
from .plumbing import current_call

SERVICE_NAME = mpb.DESCRIPTOR.services_by_name["MatchesService"].full_name  # "fief2.v1.MatchesService"


def status_of(error: Exception) -> grpc.StatusCode | None:
    return getattr(grpc.StatusCode, error.code) if isinstance(error, MatchError) else None


class Fief2MatchesServicer(mpb_grpc.MatchesServiceServicer):
    """The ``fief2.v1.MatchesService`` methods. ``watch_slots``: the server's semaphore of open watch streams (shared with
    ``feudo.v1.Matches``)."""

    def __init__(self, service: Fief2MatchService, watch_slots: threading.BoundedSemaphore | None = None,
                 max_watch_streams: int = 8):
        self.service = service
        self._watch_slots = watch_slots or threading.BoundedSemaphore(max_watch_streams)
        self.max_watch_streams = max_watch_streams

    def CreateMatch(self, req: mpb.CreateMatchRequest, context: grpc.ServicerContext) -> mpb.CreateMatchResponse:
        setup = setup_of(req.setup)
        seats = []
        for i, s in enumerate(req.seats):
            which = s.WhichOneof("player")
            if which is None or (which == "external" and not s.external):
                raise_invalid(f"seats[{i}]: expected external: true or a bot spec")
            seats.append(None if which == "external" else s.bot)
        r = self.service.create_match(setup, seats, req.seed if req.HasField("seed") else None, list(req.opening))
        current_call().set(match=r["match_id"])
        return mpb.CreateMatchResponse(match_id=r["match_id"], tokens=[tpb.SeatToken(seat=p, token=t)
                                                                       for p, t in sorted(r["tokens"].items())])

    def GetObservation(self, req: mpb.GetObservationRequest,
                       context: grpc.ServicerContext) -> mpb.GetObservationResponse:
        current_call().set(match=req.match_id, seat=req.seat)
        o = self.service.get_observation(req.match_id, req.seat, req.token)
        return mpb.GetObservationResponse(observation=observation_to_proto(o["observation"]),
                                          action_count=o["action_count"], finished=o["finished"],
                                          legal_actions=[tpb.Action(id=a, text=t) for a, t in o["legal_actions"]],
                                          setup=setup_to_proto(o["setup"]))

    def SubmitAction(self, req: mpb.SubmitActionRequest, context: grpc.ServicerContext) -> mpb.SubmitActionResponse:
        current_call().set(match=req.match_id, seat=req.seat, action=req.action, expected=req.expected_action_count)
        r = self.service.submit_action(req.match_id, req.seat, req.token, req.action, req.expected_action_count)
        return mpb.SubmitActionResponse(action_count=r["action_count"], retry=r["retry"])

    def WatchMatch(self, req: mpb.WatchMatchRequest, context: grpc.ServicerContext) -> Iterator[mpb.WatchMatchResponse]:
        return watch_stream(self.service, req, context, self._watch_slots, self.max_watch_streams, event_to_proto)

    def ListMatches(self, req: mpb.ListMatchesRequest, context: grpc.ServicerContext) -> mpb.ListMatchesResponse:
        out = mpb.ListMatchesResponse()
        for s in self.service.list_matches():
            m = out.matches.add(match_id=s["match_id"], players=s["players"], seats=s["seats"],
                                action_count=s["action_count"], finished=s["finished"], winners=s["winners"],
                                points=s["points"], created=s["created"])
            if s["to_act"] is not None:
                m.to_act = s["to_act"]
        return out

    def GetRecord(self, req: mpb.GetRecordRequest, context: grpc.ServicerContext) -> mpb.GetRecordResponse:
        current_call().set(match=req.match_id)
        r = self.service.get_record(req.match_id)
        return mpb.GetRecordResponse(record=tpb.GameRecord(format=r["format"], json=r["json"]), seats=r["seats"])


def event_to_proto(ev: dict) -> mpb.WatchMatchResponse:
    """One event of :meth:`Fief2MatchService.watch` as its message (the phase counted from 1 on the wire)."""
    if "end" in ev:
        e = ev["end"]
        return mpb.WatchMatchResponse(end=mpb.MatchEnd(winners=e["winners"], power=e["power"], turns=e["turns"]))
    out = mpb.WatchMatchResponse(index=ev["index"], text=ev["text"], turn=ev["turn"], phase=ev["phase"] + 1)
    if ev["actor"] is not None:
        out.actor = ev["actor"]
    if ev["action"] is not None:
        out.action = ev["action"]
    return out


def raise_invalid(message: str) -> None:
    from ..matches.errors import InvalidArgument

    raise InvalidArgument(message)
