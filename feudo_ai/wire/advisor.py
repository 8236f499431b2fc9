"""The Advisor servicer (``feudo.v1.Advisor``): DescribeGame, Suggest, Analyze, LegalActions over :func:`feudo_ai.advise`;
RenderPosition (:mod:`.render`). A subclass of the generated ``AdvisorServicer``, registered with
``add_AdvisorServicer_to_server`` and served through :class:`~feudo_ai.wire.plumbing.CallInterceptor` (the call's
clock and log line, error mapping: :func:`status_of`).

Stateless: every call carries its position, so replicas are interchangeable (the history cache,
:mod:`.history_cache`, keeps replays of recent histories: it changes the cost of an answer, never the answer; the
match form reads a hosted match's seat view from the server's :class:`~feudo_ai.matches.MatchService`).
Behaviour under pressure:

- every limit of a request is checked against the server's caps (:class:`ServiceConfig`): a bad value (zero, NaN,
  negative) is ``INVALID_ARGUMENT``, one beyond a cap ``RESOURCE_EXHAUSTED``; so is a search beyond the cap on
  concurrent searches or on the C search threads they run (``max_search_threads``, 8 per core): no queue grows
  without bound, the caller retries or asks another replica;
- ``limits.seconds`` is the time of the answer from the call's arrival (stamped by the interceptor in gRPC's
  event loop), reading the position included (the search's options are made once it is read, with a floor of
  ``MIN_SEARCH_SHARE`` of the budget): the search
  ends a reserve before it, the 95th percentile of the recent calls' time from the search's end to the call's
  end (see :meth:`AdvisorServicer.reserve`), so time spent queued and answering comes out of the search;
- the call's gRPC deadline is one more limit: the search ends ``deadline_margin`` before it (or a quarter of the
  time left, whichever is less) so the answer arrives in time;
- the search threads run ``search_nice`` steps nicer (Linux) than the threads answering calls, whose Python holds
  the GIL: under load the cores serve that first and the searches take the rest;
- a seat with no decision in the position (another seat is to act) is ``FAILED_PRECONDITION`` naming the seat to
  act; LegalActions answers it with no actions and the player to act;
- a cancelled call (client cancel, deadline, disconnect) sets the search's :class:`~feudo_ai.cancel.CancelEvent`
  from gRPC's termination callback, which sets the C search's flag at once (no polling thread): the search stops
  within milliseconds;
- each search runs on its call's worker thread with the GIL released by the C search, so the other calls (health,
  DescribeGame, other searches) go on; the node pool of each search worker is sized to its budget and capped
  (``max_nodes``), so memory per search is bounded;
- a malformed request (bytes that are not the message) is ``INVALID_ARGUMENT``; any unexpected error is logged
  and answered ``INTERNAL`` without details, and the server keeps serving.

Analyze runs the search in slices of ``interval_seconds`` and streams after each slice the merged result of the
slices so far: root statistics summed (visits; win probabilities weighted by visits), exactly as the C search
merges its root-parallel threads, so the final message is the answer of a root-parallel search whose workers ran
one after the other. Exactly one message has ``final`` set, and it is the last.
"""

from __future__ import annotations

import collections
import math
import os
import threading
import time
from dataclasses import dataclass, field, replace
from typing import Any, Iterator, Mapping

import grpc

from engine import FeudoError, Phase
from feudo.v1 import advisor_pb2 as apb
from feudo.v1 import advisor_pb2_grpc as apb_grpc
from feudo.v1 import game_pb2 as gpb

from feudo_ai.settings import DEFAULT_ITERATIONS, Evaluation, SearchOptions, node_bytes, resolve
from feudo_ai.search import Advice, Alternative, NotToAct, ObservedPosition, SearchStats, advise, decision_root
from feudo_ai.search.admission import SearchSlots
from feudo_ai.search.cancel import CancelEvent
from . import convert
from .convert import PositionError
from .history_cache import HistoryCache
from .plumbing import Abort, CallLog, current_call
from ..matches.errors import MatchError
from ..people.narrate import describe_action

SERVICE_NAME = apb.DESCRIPTOR.services_by_name["Advisor"].full_name  # "feudo.v1.Advisor"
# one node of the C search's pool at the most players a search takes (Fief 2's 6 families: 80 bytes; 64 up to 4)
NODE_BYTES = node_bytes(6)
NODES_PER_ITERATION = 6  # the trees grow by about 4 nodes an iteration (fast_search); a margin on top
MIN_SECONDS = 0.001  # the smallest time budget a call (or a match's bot) may ask: below it no search is worth starting
MAX_RESERVE = 0.75  # at most this share of `limits.seconds` is reserved for the answer's overhead (under load)
# Time-bounded searches share the cores: 16 searches of 200 ms on 2 cores each get 1/8 of a core, a few thousand
# iterations (benchmarks/service_load.py: mean_iterations), and every further one makes all answers worse; so the
# server admits at most this many C search threads per core and answers RESOURCE_EXHAUSTED beyond (the caller
# retries or asks another replica) rather than queueing them.
SEARCH_THREADS_PER_CORE = 8
RESERVE_QUANTILE = 0.95  # the reserve: this quantile of the recent answers' time after their search's end
RESERVE_SAMPLES = 256  # recent answers the reserve is learned from
RESERVE_DEFAULT = 0.03  # seconds reserved until RESERVE_MIN_SAMPLES answers are measured
RESERVE_MIN_SAMPLES = 16
# A bound on one C worker's iterations a second, used only to size a timed search's node pool so it never fills:
# above the plain playouts' rate, and the greedy ones the service plays with are several times slower
# (`python benchmarks/fast_search_speed.py --playouts --json`; docs/search.md, "Greedy playouts made cheap"), so the
# pool is larger than their trees need, never smaller.
ITERATIONS_PER_SECOND = 150_000
# The search's floor: when queueing and reading the position have eaten the budget, the search still gets this
# share of `limits.seconds` (the call's gRPC deadline still wins): an answer late by a tenth of its budget rather
# than one that did not search (SearchStats.no_search_reason BUDGET_SPENT). With the history cache reading is a
# few milliseconds, so the floor is rarely needed.
MIN_SEARCH_SHARE = 0.1


@dataclass(frozen=True)
class ServiceConfig:
    """Server-side caps and defaults (``feudo serve --help`` lists the flags that set them)."""

    max_iterations: int = 2_000_000  # per call
    max_seconds: float = 60.0  # per call; also the time cap of a search asked by iterations only
    max_threads: int = 2  # per search
    max_concurrent_searches: int = 16  # Suggest + Analyze running at once; beyond: RESOURCE_EXHAUSTED
    # C search threads running at once over all searches (a search of `threads` takes that many); beyond:
    # RESOURCE_EXHAUSTED. Default: SEARCH_THREADS_PER_CORE per core
    max_search_threads: int = field(default_factory=lambda: SEARCH_THREADS_PER_CORE * (os.cpu_count() or 1))
    max_message_bytes: int = 1 << 20  # requests and responses
    max_nodes: int = 500_000  # node pool of one search worker (64-80 bytes a node: 32-40 MB); see pool_bytes_max
    deadline_margin: float = 0.05  # seconds kept between the end of the search and the call's deadline
    # the search threads run this much nicer than the threads that answer calls (SearchOptions.nice): under load
    # the cores serve the calls' Python first (parsing, checking, the answer), which holds the GIL, and the
    # searches take the rest; 0: same priority
    search_nice: int = 10
    default_interval: float = 0.5  # Analyze updates when the request gives none
    min_interval: float = 0.05
    # replays of recent histories kept (feudo_ai/wire/history_cache.py: ~25 KB each, LRU); 0: no cache
    history_cache_entries: int = 512
    # the evaluation of the Advisor's MO-ISMCTS (and of the hints): handmade, learned or a model file's path
    # (feudo serve --evaluation); a file named here is also one a hosted match's bot spec may name
    evaluation: str = "handmade"

    @property
    def pool_bytes_max(self) -> int:
        """The most memory the node pools of all searches can take at once (every search at the caps)."""
        return self.max_concurrent_searches * self.max_threads * self.max_nodes * NODE_BYTES

    def __post_init__(self) -> None:
        for name in ("max_iterations", "max_threads", "max_concurrent_searches", "max_search_threads",
                     "max_message_bytes", "max_nodes"):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise ValueError(f"{name}: expected a positive integer, got {v!r}")
        for name in ("max_seconds", "deadline_margin", "default_interval", "min_interval"):
            v = getattr(self, name)
            if not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
                raise ValueError(f"{name}: expected a non-negative number, got {v!r}")
        if not isinstance(self.history_cache_entries, int) or isinstance(self.history_cache_entries, bool) or \
                self.history_cache_entries < 0:
            raise ValueError(f"history_cache_entries: expected a non-negative integer, got "
                             f"{self.history_cache_entries!r}")
        if self.max_nodes < 16:
            raise ValueError("max_nodes: expected at least 16")
        if not isinstance(self.search_nice, int) or isinstance(self.search_nice, bool) or \
                not 0 <= self.search_nice <= 19:
            raise ValueError(f"search_nice: expected an integer in [0, 19], got {self.search_nice!r}")
        SearchOptions(evaluation=self.evaluation)  # a file: exists, fits the size bound, parses (naming evaluation)

    @property
    def evaluation_files(self) -> tuple[str, ...]:
        """The model file of :attr:`evaluation`, if it names one (what hosted matches' bots may name too)."""
        return () if self.evaluation in {m.value for m in Evaluation} else (self.evaluation,)


def new_slots(config: ServiceConfig, metrics: Any = None) -> SearchSlots:
    """The admission of searches under ``config``'s caps (:class:`~feudo_ai.search.admission.SearchSlots`)."""
    return SearchSlots(config.max_concurrent_searches, config.max_search_threads,
                       max_threads_per_search=config.max_threads,
                       on_change=None if metrics is None else metrics.in_flight)


def service_options(algorithm: str, players: int, limits: Mapping[str, Any],
                    evaluation: str = "handmade") -> SearchOptions:
    """The Advisor's search settings for a game of ``players`` under the request's ``limits`` (settings by name):
    the ``product`` profile for the MO-ISMCTS, the ``default`` one for ``pimc`` (the baseline keeps the plain
    playouts and the sharp evaluation), resolved by :func:`feudo_ai.settings.resolve`; ``evaluation`` (the
    operator's ``feudo serve --evaluation``, never a request's) is the MO-ISMCTS's. Local ``feudo advise`` uses
    the same, so its answers match the service's."""
    extra = {"evaluation": evaluation} if algorithm == "ismcts" and evaluation != Evaluation.HANDMADE else {}
    return resolve("product" if algorithm == "ismcts" else "default", players,
                   {**limits, "algorithm": algorithm, **extra})


def status_of(error: Exception) -> grpc.StatusCode | None:
    """The status a domain error of an Advisor call is answered with; None: unexpected (``INTERNAL``)."""
    if isinstance(error, NotToAct):  # a fine position, asked by a seat that has no decision in it
        return grpc.StatusCode.FAILED_PRECONDITION
    if isinstance(error, MatchError):  # the match form: unknown match, missing or wrong seat token, as Matches
        return getattr(grpc.StatusCode, error.code)
    if isinstance(error, convert.NoMatches):  # the match form on a server without matches
        return grpc.StatusCode.FAILED_PRECONDITION
    if isinstance(error, (PositionError, FeudoError, ValueError)):  # the request's position or setup is bad
        return grpc.StatusCode.INVALID_ARGUMENT
    return None


class AdvisorServicer(apb_grpc.AdvisorServicer):
    """The ``feudo.v1.Advisor`` methods (register with ``advisor_pb2_grpc.add_AdvisorServicer_to_server``; serve
    with :class:`~feudo_ai.wire.plumbing.CallInterceptor`, which gives each method its :func:`current_call`)."""

    def __init__(self, config: ServiceConfig | None = None, metrics: Any = None, slots: SearchSlots | None = None,
                 matches: Any = None):
        self.config = cfg = config or ServiceConfig()
        self.metrics = metrics
        # the hosted matches' service when the server hosts both (FeudoServer): the match form of a position
        # reads the seat's view from it; None: that form is FAILED_PRECONDITION
        self.matches = matches
        # replays of recent histories (the history form): see feudo_ai/wire/history_cache.py
        self.history_cache = HistoryCache(self.config.history_cache_entries)
        self._lock = threading.Lock()
        # the admission of searches under the caps, shared with the hosted matches' bots (FeudoServer gives both
        # the same one): a call is admitted at once or refused, a bot waits for its turn
        self.slots = slots or new_slots(cfg, metrics)
        # seconds from a search's planned end to its call's end (the search's labelling, the answer's building
        # and sending, waiting for the GIL and the cores under load): the recent samples, whose RESERVE_QUANTILE
        # is reserved out of `limits.seconds` (see _options)
        self._post_times: collections.deque[float] = collections.deque(maxlen=RESERVE_SAMPLES)

    # ------------------------------------------------------------------------------------------ helpers
    def _limits(self, limits: apb.Limits) -> tuple[int | None, float | None, int]:
        """A request's (iterations, seconds, threads), checked against the server's caps (:raises Abort:)."""
        cfg = self.config
        iterations = seconds = None
        if limits.HasField("iterations"):
            if limits.iterations < 1:
                raise Abort(grpc.StatusCode.INVALID_ARGUMENT, "limits.iterations: expected at least 1")
            if limits.iterations > cfg.max_iterations:
                raise Abort(grpc.StatusCode.RESOURCE_EXHAUSTED,
                            f"limits.iterations: {limits.iterations} is beyond this server's cap {cfg.max_iterations}")
            iterations = int(limits.iterations)
        if limits.HasField("seconds"):
            if not math.isfinite(limits.seconds) or limits.seconds < MIN_SECONDS:
                raise Abort(grpc.StatusCode.INVALID_ARGUMENT,
                            f"limits.seconds: expected a finite number of at least {MIN_SECONDS:g} (1 ms), got "
                            f"{limits.seconds:g}")
            if limits.seconds > cfg.max_seconds:
                raise Abort(grpc.StatusCode.RESOURCE_EXHAUSTED,
                            f"limits.seconds: {limits.seconds:g} is beyond this server's cap {cfg.max_seconds:g}")
            seconds = float(limits.seconds)
        threads = 1
        if limits.HasField("threads"):
            if limits.threads < 1:
                raise Abort(grpc.StatusCode.INVALID_ARGUMENT, "limits.threads: expected at least 1")
            if limits.threads > cfg.max_threads:
                raise Abort(grpc.StatusCode.RESOURCE_EXHAUSTED,
                            f"limits.threads: {limits.threads} is beyond this server's cap {cfg.max_threads}")
            threads = int(limits.threads)
        if iterations is not None and iterations < threads:
            raise Abort(grpc.StatusCode.INVALID_ARGUMENT,
                        f"limits.iterations: expected at least one per thread ({threads}), got {iterations}")
        if iterations is None and seconds is None:
            iterations = max(DEFAULT_ITERATIONS, threads)
        return iterations, seconds, threads

    def _options(self, limits: apb.Limits, context: grpc.ServicerContext, call: CallLog,
                 players: int) -> SearchOptions:
        """SearchOptions of a request's limits under the server's caps and the call's deadline, made when the
        position has been read and the search is about to start: the time already spent counts against
        ``limits.seconds``."""
        cfg = self.config
        iterations, seconds, threads = self._limits(limits)
        now = time.monotonic()
        deadline = reserve = None
        if seconds is not None:
            # the answer, not only the search, should take `seconds` from the call's arrival: the search ends the
            # expected post-processing (the reserve) before that, and time spent queued or reading the position
            # counts against it; whatever that left, the search gets its floor (MIN_SEARCH_SHARE)
            reserve = self.reserve(seconds)
            deadline = max(call.started + seconds - reserve, now + max(MIN_SEARCH_SHARE * seconds, 1e-3))
            seconds = deadline - now
        # every search is time-bounded: a search asked by iterations alone still stops at the server's time cap
        seconds = min(seconds if seconds is not None else cfg.max_seconds, cfg.max_seconds)
        remaining = context.time_remaining()
        if remaining is not None and math.isfinite(remaining) and remaining < 1e6:  # no deadline: a huge value
            by_call = now + max(remaining - min(cfg.deadline_margin, remaining / 4), 0.001)
            deadline = by_call if deadline is None else min(deadline, by_call)
        algorithm = "pimc" if limits.algorithm == apb.ALGORITHM_PIMC else "ismcts"
        # memory: each worker's node pool sized to what it can do within the limits, never beyond the cap
        per_worker = (iterations // threads) if iterations is not None else 10**12
        time_left = seconds if deadline is None else min(seconds, deadline - time.monotonic())
        per_worker = min(per_worker, int(time_left * ITERATIONS_PER_SECOND) + 1)
        max_nodes = max(4096, min(cfg.max_nodes, per_worker * NODES_PER_ITERATION))
        call.set(budget={"iterations": iterations, "seconds": round(seconds, 3), "threads": threads,
                         "reserve_s": None if reserve is None else round(reserve, 3),
                         "deadline_s": None if deadline is None else round(deadline - time.monotonic(), 3)})
        return service_options(algorithm, players, dict(
            iterations=iterations, seconds=seconds, deadline=deadline, threads=threads, seed=int(limits.seed),
            max_nodes=max_nodes, nice=cfg.search_nice), evaluation=cfg.evaluation)

    def _position(self, position: gpb.Position, seat: int, call: CallLog, check: bool = False,
                  info: dict | None = None) -> tuple[ObservedPosition, str | None]:
        """The seat's view of the request's position, its structure checked, and the field path the loader's
        errors are named with: the engine's loader checks it once, in convert.load_view / check_decision
        (``check``: here). A history goes through the server's cache, a match's seat through its service
        (``info`` then gets the seat's replay, ``replay``)."""
        call.set(seat=seat, form=position.WhichOneof("form"))
        info = {} if info is None else info
        observed = convert.observed_position(position, seat, check=check, history_cache=self.history_cache,
                                             matches=self.matches, info=info)
        if info:
            call.set(history_cached=info["cached"], history_replayed=info["replayed"])
        call.set(phase=Phase(int(observed.observation["phase"])).name, turn=observed.observation["turn"])
        return observed, convert.loader_path(position)

    @property
    def in_flight(self) -> int:
        """Searches running on the server (the calls' and the matches' bots')."""
        return self.slots.searches

    @property
    def threads_in_flight(self) -> int:
        return self.slots.threads

    def _slot(self, threads: int) -> None:
        """Admit a search of ``threads`` C threads, or :raises Abort: RESOURCE_EXHAUSTED (never a queue)."""
        refused = self.slots.try_acquire(threads)
        if refused is not None:
            raise Abort(grpc.StatusCode.RESOURCE_EXHAUSTED, refused)

    def _release(self, threads: int) -> None:
        self.slots.release(threads)

    @staticmethod
    def _cancel_event(context: grpc.ServicerContext) -> CancelEvent:
        # a CancelEvent reaches the C search's flag without a polling thread (one per search would take the GIL
        # every few milliseconds and slow every other call down)
        cancel = CancelEvent()
        if not context.add_callback(cancel.set):  # the call has already ended
            cancel.set()
        return cancel

    def warm_up(self) -> None:
        """One tiny search, so that the first client does not pay for the search's lazy set-up (~0.25 s)."""
        import random

        from engine import new_game, sample_chance

        state, rng = new_game(players=2, seed=0), random.Random(0)
        while state.is_chance_node():
            state.apply_action(sample_chance(state, rng))
        advise(state, state.current_player(), SearchOptions(iterations=16))

    # ------------------------------------------------------------------------------------------ methods
    def DescribeGame(self, request: apb.DescribeGameRequest, context: grpc.ServicerContext) -> apb.DescribeGameResponse:
        game = convert.game_from_setup(request.setup, "setup")
        return apb.DescribeGameResponse(game=convert.describe_game(game, request.setup))

    def Suggest(self, request: apb.SuggestRequest, context: grpc.ServicerContext) -> apb.SuggestResponse:
        call = current_call()
        begun = time.monotonic()
        self._limits(request.limits)  # a bad limit is refused before the position is read
        observed, path = self._position(request.position, request.seat, call)
        prepared = convert.check_decision(observed, path)
        read = time.monotonic()
        # the search's time is what reading left of the budget (the clock started at the call's arrival)
        options = self._options(request.limits, context, call, observed.game.num_players)
        cancel = self._cancel_event(context)
        self._slot(options.threads)
        try:
            advice = advise(prepared, request.seat, options, cancel=cancel)
        finally:
            self._release(options.threads)
        response = apb.SuggestResponse(advice=convert.advice_to_proto(advice, prepared.root))
        self._timings(response.advice.stats, call, begun, read, advice.stats.elapsed, prepared, cancel)
        self._learn_post_time(context, options, advice)
        self._log_advice(call, advice)
        return response

    def Analyze(self, request: apb.AnalyzeRequest, context: grpc.ServicerContext) -> Iterator[apb.AnalyzeResponse]:
        call = current_call()
        begun = time.monotonic()
        self._limits(request.limits)
        interval = request.interval_seconds
        if not math.isfinite(interval) or interval < 0:
            raise Abort(grpc.StatusCode.INVALID_ARGUMENT,
                        f"interval_seconds: expected a non-negative finite number, got {interval}")
        interval = max(interval or self.config.default_interval, self.config.min_interval)
        observed, path = self._position(request.position, request.seat, call)
        prepared = convert.check_decision(observed, path)
        read = time.monotonic()
        options = self._options(request.limits, context, call, observed.game.num_players)
        self._slot(options.threads)
        released = False
        try:
            cancel = self._cancel_event(context)
            started = time.monotonic()
            end = started + (options.seconds or self.config.max_seconds)
            if options.deadline is not None:
                end = min(end, options.deadline)
            merged = _Merge(seed=options.seed)
            update = 0
            while True:
                left_it = None if options.iterations is None else options.iterations - merged.iterations
                now = time.monotonic()
                slice_opts = options.replace(iterations=left_it if left_it is None else max(left_it, options.threads),
                                     seconds=max(min(interval, end - now), 0.001), deadline=None,
                                     seed=_slice_seed(options.seed, update))
                merged.add(advise(prepared, request.seat, slice_opts, cancel=cancel))
                final = (cancel.is_set() or time.monotonic() >= end - 1e-3
                         or (options.iterations is not None and merged.iterations >= options.iterations)
                         or merged.forced)
                advice = merged.advice(time.monotonic() - started,
                                       "cancelled" if cancel.is_set() else None)
                message = apb.AnalyzeResponse(advice=convert.advice_to_proto(advice, prepared.root), final=final,
                                               update=update)
                self._timings(message.advice.stats, call, begun, read, advice.stats.elapsed, prepared, cancel)
                if final:
                    self._release(options.threads)
                    released = True
                    self._log_advice(call, advice)
                    call.set(updates=update + 1)
                    yield message
                    return
                yield message
                update += 1
        finally:
            if not released:
                self._release(options.threads)

    def LegalActions(self, request: apb.LegalActionsRequest, context: grpc.ServicerContext) -> apb.LegalActionsResponse:
        call = current_call()
        if request.include_next_entries and request.position.WhichOneof("form") != "history":
            raise Abort(grpc.StatusCode.INVALID_ARGUMENT, "include_next_entries: needs a position in the history "
                        f"form, got {request.position.WhichOneof('form') or 'none'}")
        info: dict = {}
        observed, path = self._position(request.position, request.seat, call, info=info)
        try:
            view = convert.load_view(observed, path)
        except NotToAct as e:  # a waiting seat's view the loader cannot build: who is to act, no actions
            out = _legal_response(request.seat, e.actor, observed.observation["phase"])
            _table_fields(out, request, observed, info)
            return out
        out = _legal_response(request.seat, view.current_player(), view.phase)
        _table_fields(out, request, observed, info)
        try:
            root = decision_root(view, request.seat)
        except NotToAct:
            return out  # the seat has nothing to decide here
        out.seat_to_act = True
        out.phase = convert.phase_to_proto(root.phase)
        ref = root.to_reference() if hasattr(root, "to_reference") else root  # a compiled root: converted once
        out.actions.extend(convert.action_to_proto(ref, a) for a in root.legal_actions())
        return out

    def RenderPosition(self, request: apb.RenderPositionRequest,
                       context: grpc.ServicerContext) -> apb.RenderPositionResponse:
        from .render import render_position  # the picture's code lives in its own module

        call = current_call()
        # any seat's view, also while another seat is to act (convert.load_view accepts a waiting seat's view)
        observed, _ = self._position(request.position, request.seat, call, check=True)
        try:
            return render_position(request, observed)
        except ImportError as e:  # PNG asked of a server without cairosvg
            raise Abort(grpc.StatusCode.FAILED_PRECONDITION, f"png: this server cannot make PNG pictures ({e})")

    def reserve(self, seconds: float) -> float:
        """Seconds reserved out of a budget of ``seconds`` for what follows the search: the RESERVE_QUANTILE of
        the recent answers' post-search times (RESERVE_DEFAULT before enough are measured), at most
        MAX_RESERVE of the budget."""
        with self._lock:
            samples = sorted(self._post_times)
        if len(samples) < RESERVE_MIN_SAMPLES:
            expected = RESERVE_DEFAULT
        else:
            expected = samples[min(int(RESERVE_QUANTILE * len(samples)), len(samples) - 1)]
        return min(expected, MAX_RESERVE * seconds)

    def _learn_post_time(self, context: grpc.ServicerContext, options: SearchOptions, advice: Advice) -> None:
        """Measure, when the call has ended (its status sent), the time since its search's planned end: one sample
        of the post-processing the reserve covers. Only searches that ran to their time limit say it."""
        if advice.stats.stopped_by != "time" or options.deadline is None:
            return
        planned_end = options.deadline

        def ended() -> None:
            sample = min(max(time.monotonic() - planned_end, 0.0), 5.0)
            with self._lock:
                self._post_times.append(sample)

        context.add_callback(ended)

    @staticmethod
    def _timings(stats: apb.SearchStats, call: CallLog, begun: float, read: float, search: float,
                 prepared: Any, cancel: CancelEvent) -> None:
        """Fill the answer's clock (elapsed from the call's arrival, and its parts) and whether it searched."""
        stats.queued_seconds = max(begun - call.started, 0.0)
        stats.position_seconds = max(read - begun, 0.0)
        stats.search_seconds = search
        stats.elapsed_seconds = time.monotonic() - call.started
        stats.searched = stats.iterations > 0
        if stats.searched:
            stats.no_search_reason = apb.NO_SEARCH_REASON_UNSPECIFIED
        elif len(prepared.root.legal_actions()) == 1:
            stats.no_search_reason = apb.NO_SEARCH_REASON_FORCED
        elif cancel.is_set() or stats.stopped_by == "cancelled":
            stats.no_search_reason = apb.NO_SEARCH_REASON_CANCELLED
        else:
            stats.no_search_reason = apb.NO_SEARCH_REASON_BUDGET_SPENT
        if not stats.searched:
            call.set(no_search=apb.NoSearchReason.Name(stats.no_search_reason))
        call.set(elapsed_s=round(stats.elapsed_seconds, 4), position_s=round(stats.position_seconds, 4))

    @staticmethod
    def _log_advice(call: CallLog, advice: Advice) -> None:
        s = advice.stats
        call.set(decision=advice.decision, best=advice.best_text, iterations=s.iterations,
                 search_seconds=round(s.elapsed, 4), stopped_by=s.stopped_by)


def _legal_response(seat: int, current_player: int, phase: int) -> apb.LegalActionsResponse:
    """A LegalActions answer's description of the position: the phase and who is to act (three ways)."""
    to_act, actor = convert.actor_fields(current_player)
    out = apb.LegalActionsResponse(current_player=current_player, phase=convert.phase_to_proto(phase), actor=actor,
                                   seat=seat)
    if to_act is not None:
        out.to_act = to_act
    return out


def _table_fields(out: apb.LegalActionsResponse, request: apb.LegalActionsRequest, observed: ObservedPosition,
                  info: dict) -> None:
    """A LegalActions answer's optional parts: the seat's observation, and what may come next in its log whoever
    acts (:func:`engine.table.next_entries`: a companion at a real table)."""
    if request.include_observation:
        out.observation.CopyFrom(convert.observation_from_dict(observed.game, observed.observation))
    if not request.include_next_entries:
        return
    from engine.table import next_entries

    replay = info["replay"]
    state, seat, g = replay.state, replay.seat, replay.state.game
    for e in next_entries(replay):
        item = out.next_entries.add(entry=convert.history_from_entries([e]).entries[0])
        if e.action is None:
            item.text = f"{g.player_name(e.player)}: selects a card (hidden)"
            continue
        item.action.CopyFrom(convert.action_to_proto(state, e.action))
        item.text = describe_action(state, e.action, seat)
        if e.trades:
            item.text += "; Trading Cards turned over: " + ", ".join(
                f"{g.player_name(q)} {g.ruleset.trading_cards[c]} shillings" for q, c in e.trades)


def _slice_seed(seed: int, i: int) -> int:
    return (int(seed) * 6_364_136_223_846_793_005 + 1_442_695_040_888_963_407 * (i + 1)) & 0xFFFFFFFFFFFFFFFF


class _Merge:
    """Analyze's slices merged like root-parallel workers: visits summed, win probabilities weighted by visits,
    beliefs weighted by iterations; the plan is that of the slice that visited the merged best action most."""

    def __init__(self, seed: int):
        self.seed = seed
        self.slices: list[Advice] = []
        self.iterations = 0

    def add(self, advice: Advice) -> None:
        self.slices.append(advice)
        self.iterations += advice.stats.iterations

    @property
    def forced(self) -> bool:
        """Nothing to search (a single legal action): more slices would not change the answer."""
        return self.slices[-1].stats.stopped_by is None and self.slices[-1].stats.iterations == 0

    def advice(self, elapsed: float, stopped: str | None) -> Advice:
        first, last = self.slices[0], self.slices[-1]
        visits: dict[int, list] = {}
        for adv in self.slices:
            for a in adv.alternatives:
                v = visits.setdefault(a.action, [a.text, 0, 0.0])
                v[1] += a.visits
                v[2] += a.visits * a.win_probability
        alternatives = tuple(sorted((Alternative(a, t, n, w / n if n else 0.0) for a, (t, n, w) in visits.items()),
                                    key=lambda x: (-x.visits, x.action)))
        if alternatives:
            best = alternatives[0].action
            source = max(self.slices, key=lambda adv: next((a.visits for a in adv.alternatives if a.action == best), -1))
        else:
            source = last
        weights = [max(adv.stats.iterations, 1) for adv in self.slices]
        total = sum(weights)
        beliefs: dict[tuple[int, str], list] = {}
        for adv, w in zip(self.slices, weights):
            for b in adv.beliefs:
                e = beliefs.setdefault((b.player, b.card), [b, 0.0])
                e[1] += w * b.probability / total
        merged_beliefs = tuple(replace(b, probability=p) for b, p in beliefs.values())
        stats = [adv.stats for adv in self.slices]
        iterations = sum(s.iterations for s in stats)
        stopped_by = stopped or last.stats.stopped_by
        summary = SearchStats(
            algorithm=first.stats.algorithm, backend=first.stats.backend, iterations=iterations,
            nodes=sum(s.nodes for s in stats), threads=first.stats.threads, elapsed=elapsed,
            iterations_per_s=iterations / elapsed if elapsed > 0 else None, stopped_by=stopped_by,
            limited=stopped_by in ("time", "cancelled"), pool_full=any(s.pool_full for s in stats),
            max_depth=max(s.max_depth for s in stats), worlds_sampled=sum(s.worlds_sampled for s in stats),
            seed=self.seed, searches=sum(s.searches for s in stats))
        return replace(source, alternatives=alternatives or source.alternatives, beliefs=merged_beliefs,
                       stats=summary)
