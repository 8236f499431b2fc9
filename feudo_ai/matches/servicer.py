"""The ``feudo.v1.Matches`` gRPC servicer over :class:`feudo_ai.matches.service.MatchService`.

Each exception of :mod:`feudo_ai.matches.errors` becomes its status code with its message (which names the field);
anything unexpected is logged and answered ``INTERNAL`` without details. One structured log line per call, as the
Advisor does. A WatchMatch stream holds a server worker thread while it is open, so open streams are capped
(``RESOURCE_EXHAUSTED`` beyond) to leave workers for the other calls.
"""

from __future__ import annotations

import logging
import threading
from typing import Any, Callable, Iterator

import grpc

from feudo.v1 import game_pb2 as gpb
from feudo.v1 import matches_pb2 as mpb

from ..service.advisor import BadRequest, CallLog, safe_deserializer
from ..service.convert import observation_from_dict, setup_from_game
from .errors import InvalidArgument, MatchError, ResourceExhausted
from .service import MatchService
from .spec import EXTERNAL, MatchSetup

log = logging.getLogger("feudo.matches")

SERVICE_NAME = mpb.DESCRIPTOR.services_by_name["Matches"].full_name  # "feudo.v1.Matches"


# ------------------------------------------------------------------------------------------------ conversions
def setup_from_request(req: mpb.CreateMatchRequest) -> MatchSetup:
    """A validated :class:`MatchSetup` from a CreateMatchRequest (InvalidArgument naming the field)."""
    g = req.setup
    if g.WhichOneof("ruleset") == "ruleset_json":
        raise InvalidArgument("setup.ruleset_json: a match plays a packaged ruleset; give setup.options")
    if g.WhichOneof("map") == "map_json":
        raise InvalidArgument("setup.map_json: a match plays the packaged map; give setup.board_order or map_seed")
    seats = []
    for i, s in enumerate(req.seats):
        which = s.WhichOneof("player")
        if which == "external" and s.external:
            seats.append(EXTERNAL)
        elif which == "bot" and s.bot.strip() and s.bot.strip() != EXTERNAL:
            seats.append(s.bot)
        else:
            raise InvalidArgument(f"seats[{i}]: expected external: true or a bot spec")
    d: dict[str, Any] = {"players": g.players, "seats": seats, "seed": req.seed}
    if g.WhichOneof("ruleset") == "options":
        o = g.options
        if o.HasField("turns"):
            d["turns"] = o.turns
        d["virulent_plague"] = o.virulent_plague
        d["strategy_only"] = o.strategy_only
    if g.WhichOneof("map") == "board_order":
        d["board_order"] = list(g.board_order.boards)
    else:
        d["board_seed"] = g.map_seed  # unset: seed 0, as GameSetup documents
    if req.castle_sites:
        d["castles"] = list(req.castle_sites)
    try:
        return MatchSetup.from_dict(d)
    except InvalidArgument as e:  # name the request's fields
        msg = str(e)
        for ours, theirs in (("players", "setup.players"), ("turns", "setup.options.turns"),
                             ("board_order", "setup.board_order.boards"), ("board_seed", "setup.map_seed"),
                             ("castles", "castle_sites")):
            if msg.startswith(ours):
                msg = theirs + msg[len(ours):]
                break
        raise InvalidArgument(msg) from None


def request_from_setup(setup: MatchSetup) -> mpb.CreateMatchRequest:
    req = mpb.CreateMatchRequest(seed=setup.seed)
    req.setup.players = setup.players
    req.setup.options.virulent_plague = setup.virulent_plague
    req.setup.options.strategy_only = setup.strategy_only
    if setup.turns is not None:
        req.setup.options.turns = setup.turns
    if setup.board_order is not None:
        req.setup.board_order.boards.extend(setup.board_order)
    else:
        req.setup.map_seed = setup.seed if setup.board_seed is None else setup.board_seed
    for s in setup.seats:
        req.seats.append(mpb.SeatSpec(external=True) if s == EXTERNAL else mpb.SeatSpec(bot=s))
    if setup.castles is not None:
        req.castle_sites.extend(setup.castles)
    return req


def entry_to_proto(ev: dict) -> gpb.HistoryEntry:
    e = gpb.HistoryEntry(pick=ev["pick"],
                         trading_cards_revealed=[gpb.TradingCardReveal(player=q, card=c) for q, c in ev["trades"]])
    if ev["player"] >= 0:
        e.player = ev["player"]
    if ev["action"] is None:
        e.hidden_pick.SetInParent()
    else:
        e.action = ev["action"]
    return e


def event_to_proto(ev: dict) -> mpb.MatchEvent:
    if ev["kind"] == "end":
        return mpb.MatchEvent(action_count=ev["action_count"], end=mpb.MatchEnd(winners=ev["winners"], vp=ev["vp"]),
                              text="the match is over")
    return mpb.MatchEvent(action_count=ev["action_count"], entry=entry_to_proto(ev), text=ev["text"])


# ------------------------------------------------------------------------------------------------ servicer
class MatchesServicer:
    """The ``feudo.v1.Matches`` methods; register with :meth:`add_to_server`."""

    def __init__(self, service: MatchService, metrics: Any = None, max_watch_streams: int = 8):
        self.service = service
        self.metrics = metrics
        self._watch_slots = threading.BoundedSemaphore(max_watch_streams)
        self.max_watch_streams = max_watch_streams

    def add_to_server(self, server: grpc.Server) -> None:
        def unary(name: str, fn: Callable, req: Any, resp: Any) -> Any:
            return grpc.unary_unary_rpc_method_handler(self._unary(name, fn), request_deserializer=safe_deserializer(req),
                                                       response_serializer=resp.SerializeToString)

        methods = {
            "CreateMatch": unary("CreateMatch", self._create, mpb.CreateMatchRequest, mpb.CreateMatchResponse),
            "GetObservation": unary("GetObservation", self._observe, mpb.GetObservationRequest,
                                    mpb.GetObservationResponse),
            "SubmitAction": unary("SubmitAction", self._submit, mpb.SubmitActionRequest, mpb.SubmitActionResponse),
            "ListMatches": unary("ListMatches", self._list, mpb.ListMatchesRequest, mpb.ListMatchesResponse),
            "GetRecord": unary("GetRecord", self._record, mpb.GetRecordRequest, mpb.GetRecordResponse),
            "WatchMatch": grpc.unary_stream_rpc_method_handler(
                self._stream("WatchMatch", self._watch), request_deserializer=safe_deserializer(mpb.WatchMatchRequest),
                response_serializer=mpb.MatchEvent.SerializeToString),
        }
        server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(SERVICE_NAME, methods),))

    # -- plumbing ------------------------------------------------------------------------------------------
    def _unary(self, method: str, fn: Callable) -> Callable[[Any, grpc.ServicerContext], Any]:
        def handler(request: Any, context: grpc.ServicerContext) -> Any:
            call = CallLog(method, context, self.metrics)
            try:
                return self._guard(call, context, lambda: fn(self._request(request), context, call))
            finally:
                call.finish()
        return handler

    def _stream(self, method: str, fn: Callable) -> Callable[[Any, grpc.ServicerContext], Any]:
        def handler(request: Any, context: grpc.ServicerContext) -> Iterator[Any]:
            call = CallLog(method, context, self.metrics)
            gen = None
            try:
                gen = self._guard(call, context, lambda: fn(self._request(request), context, call))
                while True:
                    item = self._guard(call, context, lambda: next(gen, None))
                    if item is None:
                        return
                    yield item
            finally:
                if gen is not None:
                    gen.close()
                call.finish()
        return handler

    @staticmethod
    def _request(request: Any) -> Any:
        if isinstance(request, BadRequest):
            raise InvalidArgument(f"request: not a valid {request.message_name} message ({request.error})")
        return request

    @staticmethod
    def _guard(call: CallLog, context: grpc.ServicerContext, thunk: Callable[[], Any]) -> Any:
        try:
            return thunk()
        except MatchError as e:
            call.code = getattr(grpc.StatusCode, e.code)
            call.set(error=str(e))
            context.abort(call.code, str(e))
        except Exception as e:  # noqa: BLE001 - nothing a client sends may take the server down
            if isinstance(e, grpc.RpcError) or type(e).__name__ == "_AbortError":
                raise
            call.code = grpc.StatusCode.INTERNAL
            call.set(error=f"{type(e).__name__}: {e}")
            log.exception("internal error in %s", call.fields["method"])
            context.abort(grpc.StatusCode.INTERNAL, "internal error (logged by the server)")

    # -- methods -------------------------------------------------------------------------------------------
    def _create(self, req: mpb.CreateMatchRequest, context: Any, call: CallLog) -> mpb.CreateMatchResponse:
        r = self.service.create_match(setup_from_request(req))
        call.set(match=r["match_id"])
        return mpb.CreateMatchResponse(match_id=r["match_id"],
                                       tokens=[mpb.SeatToken(seat=p, token=t) for p, t in sorted(r["tokens"].items())])

    def _observe(self, req: mpb.GetObservationRequest, context: Any, call: CallLog) -> mpb.GetObservationResponse:
        call.set(match=req.match_id, seat=req.seat)
        o = self.service.get_observation(req.match_id, req.seat, req.token)
        game = self.service.game_of(req.match_id)
        resp = mpb.GetObservationResponse(action_count=o["action_count"], finished=o["finished"],
                                          observation=observation_from_dict(game, o["observation"]),
                                          legal_actions=[gpb.Action(id=a["action"], text=a["text"])
                                                         for a in o["legal_actions"]])
        if o["current_player"] >= 0:
            resp.to_act = o["current_player"]
        resp.setup.CopyFrom(setup_from_game(game))  # the game only: never the match seed (it draws chance)
        resp.castle_sites.extend(self.service.castles_of(req.match_id))
        return resp

    def _submit(self, req: mpb.SubmitActionRequest, context: Any, call: CallLog) -> mpb.SubmitActionResponse:
        call.set(match=req.match_id, seat=req.seat, action=req.action, expected=req.expected_action_count)
        r = self.service.submit_action(req.match_id, req.seat, req.token, req.action, req.expected_action_count)
        return mpb.SubmitActionResponse(action_count=r["action_count"], retry=r["retry"])

    def _watch(self, req: mpb.WatchMatchRequest, context: grpc.ServicerContext, call: CallLog) -> Iterator[Any]:
        seat = req.seat if req.HasField("seat") else None
        call.set(match=req.match_id, seat=seat, from_count=req.from_action_count)
        cancel = threading.Event()
        if not context.add_callback(cancel.set):
            cancel.set()
        events = self.service.watch(req.match_id, seat, req.token, req.from_action_count, cancel=cancel)
        if not self._watch_slots.acquire(blocking=False):
            raise ResourceExhausted(f"the server already streams {self.max_watch_streams} watches; retry later")
        return self._watch_events(events)

    def _watch_events(self, events: Iterator[dict]) -> Iterator[mpb.MatchEvent]:
        try:
            for ev in events:
                yield event_to_proto(ev)
        finally:
            self._watch_slots.release()

    def _list(self, req: mpb.ListMatchesRequest, context: Any, call: CallLog) -> mpb.ListMatchesResponse:
        out = mpb.ListMatchesResponse()
        for s in self.service.list_matches():
            m = out.matches.add(match_id=s["match_id"], players=s["players"], seats=s["seats"],
                                action_count=s["action_count"], turn=s["turn"], finished=s["finished"], vp=s["vp"],
                                winners=s["winners"], created=s["created"])
            if s["current_player"] >= 0:
                m.to_act = s["current_player"]
        return out

    def _record(self, req: mpb.GetRecordRequest, context: Any, call: CallLog) -> mpb.GetRecordResponse:
        call.set(match=req.match_id)
        r = self.service.get_record(req.match_id)
        return mpb.GetRecordResponse(match=request_from_setup(MatchSetup.from_dict(r["setup"])), actions=r["actions"],
                                     winners=r["winners"], vp=r["vp"])

