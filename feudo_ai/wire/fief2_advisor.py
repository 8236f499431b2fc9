"""The ``fief2.v1.AdvisorService`` servicer: Fief 2's description, a seat's legal actions, a picture of its view, advice.

Registered with the generated ``add_AdvisorServicer_to_server`` on the same server as ``feudo.v1`` and served
through the same :class:`~feudo_ai.wire.plumbing.CallInterceptor` (API token, the call's clock and log line, enum
and message checks, error mapping) over gRPC and HTTP (Connect). A position is a whole ``fief2-state/1`` state or a
seat of a hosted match (:func:`~.fief2_convert.state_of`); every answer reads only what the seat may know (F46):
its legal actions on its turn (F47), the picture of :func:`~.fief2_convert.seat_view`, and ``Suggest``'s search,
which starts from the seat's observation (:func:`feudo_ai.advise` through Fief 2's game adapter,
:mod:`feudo_ai.search.games.fief2`: the other hands are dealt from the cards the seat cannot see).

``Suggest`` runs the MO-ISMCTS (profile ``fief2-product``) under the request's ``limits`` with the caps,
admission (one :class:`~feudo_ai.search.admission.SearchSlots` shared with Feudo's calls and every match's bots),
time reserve and cancellation of Feudo's Suggest. Where no search can run it says so, ``FAILED_PRECONDITION``,
never a made-up suggestion: a build without the compiled Fief 2 table (``no search for Fief 2 in this build``).
"""

from __future__ import annotations

import math
import time
from typing import Any

import grpc

from fief2.v1 import advisor_pb2 as apb
from fief2.v1 import advisor_pb2_grpc as apb_grpc
from tabletop.v1 import tabletop_pb2 as tpb

from ..matches.errors import MatchError
from .advisor import MIN_SEARCH_SHARE, AdvisorServicer, ServiceConfig
from .fief2_convert import check_seat, description, legal_actions, seat_view, setup_of, state_of, to_act
from .plumbing import Abort, current_call

SERVICE_NAME = apb.DESCRIPTOR.services_by_name["AdvisorService"].full_name  # "fief2.v1.AdvisorService"
NO_SEARCH = "no search for Fief 2 in this build"
PROFILE = "fief2-product"  # feudo_ai/data/profiles.json: 1,000 iterations when the request gives no limit


def status_of(error: Exception) -> grpc.StatusCode | None:
    """The status of a domain error of a Fief 2 call (the match form's and the setup's errors name their codes)."""
    return getattr(grpc.StatusCode, error.code) if isinstance(error, MatchError) else None


def search_available() -> str | None:
    """None if this build can search Fief 2, else why not."""
    try:
        from feudo_ai.search.games.fief2 import require

        require()
    except ImportError as e:
        return f"{NO_SEARCH} ({e})"
    return None


class Fief2AdvisorServicer(apb_grpc.AdvisorServiceServicer):
    """The ``fief2.v1.AdvisorService`` methods. ``matches``: the server's Fief 2 matches (the match form of a position);
    ``feudo``: the server's ``feudo.v1`` :class:`AdvisorServicer`, whose admission of searches and time reserve
    Fief 2's searches share (None: an admission of their own)."""

    def __init__(self, config: ServiceConfig | None = None, matches: Any = None,
                 feudo: AdvisorServicer | None = None):
        self.config = config or ServiceConfig()
        self.matches = matches
        self.feudo = feudo or AdvisorServicer(self.config)

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
        from fief2 import render_svg, render_text

        view = seat_view(self._state(request), request.seat)  # the seat's view only: no other family's hand
        return apb.RenderPositionResponse(text=render_text(view), svg=render_svg(view, seat=request.seat))

    def Suggest(self, request: apb.SuggestRequest, context: grpc.ServicerContext) -> apb.SuggestResponse:
        from feudo_ai.search import advise
        from feudo_ai.search.games.fief2 import FIEF2

        call = current_call()
        # the same caps and messages as feudo.v1's limits (tabletop.v1.SearchLimits has the same fields)
        iterations, seconds, threads = AdvisorServicer._limits(self, request.limits)  # type: ignore[arg-type]
        if not request.limits.HasField("iterations") and not request.limits.HasField("seconds"):
            iterations = None  # the profile's budget
        st = self._state(request)
        actor = to_act(st)
        if actor != request.seat:
            who = "nobody (the game is over)" if st.is_terminal() else f"seat {actor}"
            raise Abort(grpc.StatusCode.FAILED_PRECONDITION, f"seat {request.seat} is not to act; {who} is")
        missing = search_available()
        if missing is not None:
            raise Abort(grpc.StatusCode.FAILED_PRECONDITION, missing)
        prepared = FIEF2.prepare(st, request.seat)  # the seat's observation only (F46): nothing hidden goes on
        options = self._options(iterations, seconds, threads, int(request.limits.seed), st.num_players, context,
                                call)
        cancel = self.feudo._cancel_event(context)
        self.feudo._slot(options.threads)
        begun = time.monotonic()
        try:
            advice = advise(prepared, request.seat, options, cancel=cancel)
        finally:
            self.feudo._release(options.threads)
        out = apb.SuggestResponse(best=tpb.Action(id=advice.best, text=advice.best_text))
        for a in advice.alternatives:
            out.alternatives.add(action=tpb.Action(id=a.action, text=a.text), visits=a.visits,
                                 value=a.win_probability)
        s = advice.stats
        out.stats.CopyFrom(tpb.SearchStats(algorithm=str(s.algorithm), iterations=s.iterations,
                                           search_seconds=time.monotonic() - begun,
                                           elapsed_seconds=time.monotonic() - call.started,
                                           searched=s.iterations > 0))
        if s.iterations == 0:
            out.stats.no_search_reason = (tpb.NO_SEARCH_REASON_FORCED if len(prepared.root.legal_actions()) == 1
                                          else tpb.NO_SEARCH_REASON_CANCELLED if cancel.is_set()
                                          else tpb.NO_SEARCH_REASON_BUDGET_SPENT)
        self.feudo._learn_post_time(context, options, advice)
        call.set(best=advice.best_text, iterations=s.iterations, search_seconds=round(s.elapsed, 4),
                 stopped_by=s.stopped_by)
        return out

    def _options(self, iterations: int | None, seconds: float | None, threads: int, seed: int, players: int,
                 context: grpc.ServicerContext, call: Any) -> Any:
        """The search's options under the caps and the call's deadline, as Feudo's Suggest makes them: the time
        spent before the search counts against ``seconds`` (the server's reserve for the answer kept back, a floor
        for the search); every search stops by ``--max-seconds``; the node pool within ``--max-nodes``."""
        from feudo_ai.settings import resolve

        cfg = self.config
        now = time.monotonic()
        deadline = None
        if seconds is not None:
            reserve = self.feudo.reserve(seconds)
            deadline = max(call.started + seconds - reserve, now + max(MIN_SEARCH_SHARE * seconds, 1e-3))
            seconds = deadline - now
        seconds = min(seconds if seconds is not None else cfg.max_seconds, cfg.max_seconds)
        remaining = context.time_remaining()
        if remaining is not None and math.isfinite(remaining) and remaining < 1e6:
            by_call = now + max(remaining - min(cfg.deadline_margin, remaining / 4), 0.001)
            deadline = by_call if deadline is None else min(deadline, by_call)
        call.set(budget={"iterations": iterations, "seconds": round(seconds, 3), "threads": threads})
        limits = dict(seconds=seconds, deadline=deadline, threads=threads, seed=seed, max_nodes=cfg.max_nodes,
                      nice=cfg.search_nice)
        if iterations is not None:
            limits["iterations"] = iterations
        return resolve(PROFILE, players, limits)
