"""The ``feudo.v1.Matches`` servicer over the gRPC-free :class:`feudo_ai.matches.service.MatchService`.

A subclass of the generated ``MatchesServicer``, registered with ``add_MatchesServicer_to_server`` and served
through :class:`~feudo_ai.wire.plumbing.CallInterceptor`: each exception of :mod:`feudo_ai.matches.errors` is
answered with its status code and its message (which names the field, :func:`status_of`); anything unexpected is
logged and answered ``INTERNAL`` without details; one structured log line per call, as the Advisor's. A WatchMatch
stream holds a server worker thread while it is open, so open streams are capped (``RESOURCE_EXHAUSTED`` beyond)
to leave workers for the other calls.
"""

from __future__ import annotations

import threading
from typing import Any, Callable, Iterator

import grpc

from feudo.v1 import game_pb2 as gpb
from feudo.v1 import matches_pb2 as mpb
from feudo.v1 import matches_pb2_grpc as mpb_grpc

from ..matches.errors import InvalidArgument, MatchError, ResourceExhausted
from ..matches.service import MatchService
from ..matches.spec import MatchSetup
from .convert import (event_to_proto, info_to_proto, observation_from_dict, request_from_setup, setup_from_game,
                      setup_from_request)
from .plumbing import current_call

SERVICE_NAME = mpb.DESCRIPTOR.services_by_name["Matches"].full_name  # "feudo.v1.Matches"


def status_of(error: Exception) -> grpc.StatusCode | None:
    """The status a domain error of a Matches call is answered with (each :class:`MatchError` names its code);
    None: unexpected (``INTERNAL``)."""
    return getattr(grpc.StatusCode, error.code) if isinstance(error, MatchError) else None


def watch_stream(service: Any, req: Any, context: grpc.ServicerContext, watch_slots: threading.BoundedSemaphore,
                 max_watch_streams: int, to_proto: Callable[[dict], Any]) -> Iterator[Any]:
    """A WatchMatch stream (``feudo.v1`` or ``fief2.v1``: the same request fields) over a match service's
    ``watch``: the request checked by ``watch`` before a stream slot is taken, the watch cancelled as soon as the
    call ends, each event turned into its message by ``to_proto``, and the slot given back when the stream ends
    (``RESOURCE_EXHAUSTED`` when all ``max_watch_streams`` slots are taken)."""
    seat = req.seat if req.HasField("seat") else None
    current_call().set(match=req.match_id, seat=seat, from_count=req.from_action_count)
    cancel = threading.Event()
    if not context.add_callback(cancel.set):
        cancel.set()
    events = service.watch(req.match_id, seat, req.token, req.from_action_count, cancel=cancel)
    if not watch_slots.acquire(blocking=False):
        raise ResourceExhausted(f"the server already streams {max_watch_streams} watches; retry later")
    return _released(events, watch_slots, to_proto)


def _released(events: Iterator[dict], watch_slots: threading.BoundedSemaphore,
              to_proto: Callable[[dict], Any]) -> Iterator[Any]:
    try:
        for ev in events:
            yield to_proto(ev)
    finally:
        watch_slots.release()


class MatchesServicer(mpb_grpc.MatchesServicer):
    """The ``feudo.v1.Matches`` methods (register with ``matches_pb2_grpc.add_MatchesServicer_to_server``; serve
    with :class:`~feudo_ai.wire.plumbing.CallInterceptor`, which gives each method its :func:`current_call`)."""

    def __init__(self, service: MatchService, max_watch_streams: int = 8):
        self.service = service
        self._watch_slots = threading.BoundedSemaphore(max_watch_streams)
        self.max_watch_streams = max_watch_streams

    def CreateMatch(self, req: mpb.CreateMatchRequest, context: grpc.ServicerContext) -> mpb.CreateMatchResponse:
        r = self.service.create_match(setup_from_request(req))
        current_call().set(match=r["match_id"])
        return mpb.CreateMatchResponse(match_id=r["match_id"],
                                       tokens=[mpb.SeatToken(seat=p, token=t) for p, t in sorted(r["tokens"].items())])

    def GetObservation(self, req: mpb.GetObservationRequest,
                       context: grpc.ServicerContext) -> mpb.GetObservationResponse:
        if req.public_view:  # a spectator's view: no seat, no token (as WatchMatch without a seat)
            current_call().set(match=req.match_id, seat="public")
            if req.seat or req.token:
                raise InvalidArgument(f"{'seat' if req.seat else 'token'}: must be unset with public_view "
                                      f"(a spectator's view is nobody's)")
        else:
            current_call().set(match=req.match_id, seat=req.seat)
        return self._observation(req.match_id, req.seat, req.token, public_view=req.public_view)

    def _observation(self, match_id: str, seat: int, token: str,
                     public_view: bool = False) -> mpb.GetObservationResponse:
        if public_view:
            o = self.service.public_observation(match_id)
        else:
            o = self.service.get_observation(match_id, seat, token)
        game = self.service.game_of(match_id)
        resp = mpb.GetObservationResponse(action_count=o["action_count"], finished=o["finished"],
                                          observation=observation_from_dict(game, o["observation"]),
                                          legal_actions=[info_to_proto(a["action"], a["text"], a["info"])
                                                         for a in o["legal_actions"]])
        if public_view:  # the projection's frame seat holds only public cards: no own selection at all
            resp.observation.ClearField("own_selection")
            resp.observation.ClearField("seat")
        if o["current_player"] >= 0:
            resp.to_act = o["current_player"]
        resp.setup.CopyFrom(setup_from_game(game))  # the game only: never the match seed (it draws chance)
        resp.castle_sites.extend(self.service.castles_of(match_id))
        return resp

    def SubmitAction(self, req: mpb.SubmitActionRequest, context: grpc.ServicerContext) -> mpb.SubmitActionResponse:
        current_call().set(match=req.match_id, seat=req.seat, action=req.action, expected=req.expected_action_count)
        r = self.service.submit_action(req.match_id, req.seat, req.token, req.action, req.expected_action_count)
        # the seat's view after it, so a client needs no GetObservation before its next action (the token was
        # checked by submit_action; chance is drawn at once, bots may still be thinking)
        return mpb.SubmitActionResponse(action_count=r["action_count"], retry=r["retry"],
                                        observation=self._observation(req.match_id, req.seat, req.token))

    def WatchMatch(self, req: mpb.WatchMatchRequest, context: grpc.ServicerContext) -> Iterator[mpb.MatchEvent]:
        return watch_stream(self.service, req, context, self._watch_slots, self.max_watch_streams, event_to_proto)

    def ListMatches(self, req: mpb.ListMatchesRequest, context: grpc.ServicerContext) -> mpb.ListMatchesResponse:
        out = mpb.ListMatchesResponse()
        for s in self.service.list_matches():
            m = out.matches.add(match_id=s["match_id"], players=s["players"], seats=s["seats"],
                                action_count=s["action_count"], turn=s["turn"], finished=s["finished"], vp=s["vp"],
                                winners=s["winners"], created=s["created"])
            if s["current_player"] >= 0:
                m.to_act = s["current_player"]
            # the game only, never the seed; from the summary, so a retired match is not loaded back to be listed
            m.setup.CopyFrom(setup_from_game(self.service.game_of_summary(s)))
        return out

    def GetRecord(self, req: mpb.GetRecordRequest, context: grpc.ServicerContext) -> mpb.GetRecordResponse:
        current_call().set(match=req.match_id)
        r = self.service.get_record(req.match_id)
        return mpb.GetRecordResponse(match=request_from_setup(MatchSetup.from_dict(r["setup"])), actions=r["actions"],
                                     winners=r["winners"], vp=r["vp"])

    def ReplayRecord(self, req: mpb.ReplayRecordRequest,
                     context: grpc.ServicerContext) -> mpb.ReplayRecordResponse:
        which = req.WhichOneof("record")
        seat = int(req.seat) if req.HasField("seat") else None
        current_call().set(match=req.match_id if which == "match_id" else "record",
                           seat="public" if seat is None else seat)
        if which is None:
            raise InvalidArgument("record: expected match_id or record_json")
        r = self.service.replay_record(int(req.action_count), seat,
                                       match_id=req.match_id if which == "match_id" else None,
                                       record_json=req.record_json if which == "record_json" else None)
        game = r["game"]
        resp = mpb.ReplayRecordResponse(action_count=r["action_count"], total_actions=r["total_actions"],
                                        observation=observation_from_dict(game, r["observation"]),
                                        setup=setup_from_game(game), finished=r["finished"])
        if seat is None:  # as GetObservation's public view: the projection's frame seat is nobody's
            resp.observation.ClearField("own_selection")
            resp.observation.ClearField("seat")
        if r["event"] is not None:
            resp.event.CopyFrom(event_to_proto(r["event"]))
        return resp

