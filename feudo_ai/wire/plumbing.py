"""The gRPC plumbing both services (``feudo.v1.Advisor``, ``feudo.v1.Matches``) are served with.

- :class:`CallInterceptor`: wraps every call of the services it is given. It starts the call's clock as the call
  arrives, gives the servicer the call's :class:`CallLog` (:func:`current_call`), answers request bytes that are not
  the message, and an enum field holding a number its enum does not define (anywhere in the request),
  ``INVALID_ARGUMENT``, turns :class:`Abort` and the service's domain errors into their status codes (anything
  else: ``INTERNAL`` without details, logged with its traceback), and writes one structured log line per call (and
  its metrics): ``CANCELLED`` or ``DEADLINE_EXCEEDED`` when the call ended before its answer was sent;
- client input echoed into a status message or a log line is bounded (:func:`feudo_ai.bounded.quoted`, re-exported
  here): every status message is at most :data:`~feudo_ai.bounded.MESSAGE_CAP` characters, every text field of a
  call's log line at most :data:`~feudo_ai.bounded.LOG_FIELD_CAP`, and :class:`BoundedLines` cuts any log line
  beyond :data:`~feudo_ai.bounded.LOG_LINE_CAP`;
- :class:`TokenInterceptor`: the API token, checked on every call but health checks;
- :class:`Metrics`: the Prometheus metrics (optional).

Servicers therefore hold only their methods: they raise :class:`Abort` or a domain error, never call
``context.abort`` themselves, and read their call's clock and log line from :func:`current_call`.
"""

from __future__ import annotations

import contextvars
import functools
import hmac
import json
import logging
import time
from typing import Any, Callable, Iterator, Mapping

import grpc
from grpc_health.v1 import health_pb2

from feudo_ai.bounded import LOG_FIELD_CAP, LOG_LINE_CAP, MESSAGE_CAP, bounded, quoted

__all__ = ["Abort", "BoundedLines", "CallInterceptor", "CallLog", "Metrics", "TokenInterceptor", "current_call",
           "quoted"]

# The logger of the call lines: the name they had before the wire room, which operators' filters may use.
log = logging.getLogger("feudo.service")
HEALTH_SERVICE = health_pb2.DESCRIPTOR.services_by_name["Health"].full_name

# A service's domain errors: the status an exception is answered with, None for an unexpected one (INTERNAL).
StatusOf = Callable[[Exception], "grpc.StatusCode | None"]


class Abort(Exception):
    """A call ends with this status and message (raised inside a servicer's method, answered by
    :class:`CallInterceptor`)."""

    def __init__(self, code: grpc.StatusCode, message: str):
        super().__init__(message)
        self.code = code
        self.message = message


class CallLog:
    """The one structured log line of a call (and its metrics), and the call's clock: :attr:`started` is the
    call's arrival at the server, the moment its time budget is counted from."""

    def __init__(self, method: str, context: grpc.ServicerContext, metrics: Any, arrival: float | None = None):
        self.started = time.monotonic() if arrival is None else arrival
        self.context = context
        self.fields: dict[str, Any] = {"method": method, "peer": context.peer()}
        self.metrics = metrics
        self.code = grpc.StatusCode.OK

    def set(self, **kv: Any) -> None:
        """Fields of the log line; a text (often client input: an id, a seat spec) is kept to
        :data:`~feudo_ai.bounded.LOG_FIELD_CAP` characters."""
        self.fields.update({k: _bounded_field(v) for k, v in kv.items()})

    def finish(self) -> None:
        latency = time.monotonic() - self.started
        if self.code == grpc.StatusCode.OK and not _active(self.context):
            # the call ended before its answer went out: the client cancelled (or went away), or its deadline passed
            remaining = self.context.time_remaining()
            self.code = (grpc.StatusCode.DEADLINE_EXCEEDED if remaining is not None and remaining <= 0
                         else grpc.StatusCode.CANCELLED)
        self.fields.update(status=self.code.name, latency_ms=round(latency * 1000, 1))
        log.info(json.dumps(self.fields, separators=(",", ":"), default=str))
        if self.metrics is not None:
            self.metrics.observe(self.fields["method"], self.code.name, latency, self.fields.get("iterations"),
                                 self.fields.get("search_seconds"))


def _bounded_field(value: Any) -> Any:
    if isinstance(value, str):
        return bounded(value, LOG_FIELD_CAP)
    if isinstance(value, (bytes, bytearray)):
        return quoted(value, LOG_FIELD_CAP)
    return value


def _active(context: grpc.ServicerContext) -> bool:
    try:
        return context.is_active()
    except Exception:  # noqa: BLE001 - a test's stand-in context: taken as active
        return True


class BoundedLines(logging.Filter):
    """A handler filter that cuts any log record's message beyond ``cap`` characters (the last resort behind the
    bounded fields: no line a client can make arbitrarily long). ``feudo serve`` puts it on its log handlers."""

    def __init__(self, cap: int = LOG_LINE_CAP):
        super().__init__()
        self.cap = cap

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if len(message) > self.cap:
            record.msg, record.args = bounded(message, self.cap), None
        return True


_CALL: contextvars.ContextVar[CallLog] = contextvars.ContextVar("feudo_call")


def current_call() -> CallLog:
    """The :class:`CallLog` of the call being served: set by :class:`CallInterceptor` around the servicer's
    method (each call runs in a context of its own, so calls never see each other's)."""
    return _CALL.get()


class _BadRequest:
    """What the deserializer gives for bytes that are not the request message (answered INVALID_ARGUMENT)."""

    def __init__(self, message_name: str, error: str):
        self.message_name = message_name
        self.error = error


def _lenient(deserialize: Callable[[bytes], Any] | None, method: str) -> Callable[[bytes], Any] | None:
    """``deserialize`` that returns a :class:`_BadRequest` instead of raising: gRPC would answer a raising
    deserializer with its generic ``INTERNAL``, which says nothing of the caller's mistake."""
    if deserialize is None:
        return None
    message = getattr(getattr(getattr(deserialize, "__self__", None), "DESCRIPTOR", None), "full_name", method)

    def parse(data: bytes) -> Any:
        try:
            return deserialize(data)
        except Exception as e:  # noqa: BLE001 - any decoding failure is the caller's bad input
            return _BadRequest(message, type(e).__name__)
    return parse


class CallInterceptor(grpc.ServerInterceptor):
    """Serves each call of ``services`` (full service name -> how that service's domain errors map to status codes)
    through the plumbing above; other services (health, reflection) pass untouched.

    gRPC asks the interceptors for a call's handler in its event loop thread as the call arrives, before a worker
    thread takes it: that moment starts the call's clock (its time budget and its logged latency), so time spent
    waiting for a worker or for the GIL counts against the budget instead of coming on top of it. The arrival is
    bound into the handler returned, so it reaches the worker with the call."""

    def __init__(self, services: Mapping[str, StatusOf], metrics: Any = None):
        self._services = dict(services)
        self._metrics = metrics

    def intercept_service(self, continuation: Callable[[Any], Any], details: grpc.HandlerCallDetails) -> Any:
        arrival = time.monotonic()
        handler = continuation(details)
        service, _, method = details.method.lstrip("/").rpartition("/")
        status_of = self._services.get(service)
        if handler is None or status_of is None or handler.request_streaming:  # no client streams in feudo.v1
            return handler
        deserialize = _lenient(handler.request_deserializer, method)
        if handler.response_streaming:
            behaviour = functools.partial(_serve_stream, handler.unary_stream, method, arrival, status_of,
                                          self._metrics)
            return grpc.unary_stream_rpc_method_handler(behaviour, request_deserializer=deserialize,
                                                        response_serializer=handler.response_serializer)
        behaviour = functools.partial(_serve_unary, handler.unary_unary, method, arrival, status_of, self._metrics)
        return grpc.unary_unary_rpc_method_handler(behaviour, request_deserializer=deserialize,
                                                   response_serializer=handler.response_serializer)


def _begin(method: str, arrival: float, metrics: Any,
           context: grpc.ServicerContext) -> tuple[CallLog, contextvars.Context]:
    call = CallLog(method, context, metrics, arrival)
    call.set(queued_ms=round((time.monotonic() - arrival) * 1000, 1))  # waiting for a worker (and the GIL)
    # a context of the call's own: a worker thread serves many calls one after the other, and a stream's steps
    # may run with other code between them, so the call is never set in (or reset from) the thread's context
    ctx = contextvars.copy_context()
    ctx.run(_CALL.set, call)
    return call, ctx


def _checked(request: Any) -> Any:
    if isinstance(request, _BadRequest):
        raise Abort(grpc.StatusCode.INVALID_ARGUMENT,
                    f"request: not a valid {request.message_name} message ({request.error})")
    bad = _bad_enum(request)
    if bad is not None:
        raise Abort(grpc.StatusCode.INVALID_ARGUMENT, bad)
    return request


@functools.lru_cache(maxsize=None)
def _enums_below(descriptor: Any) -> bool:
    """Whether a message of this type can hold an enum field (itself or any message inside it)."""
    seen, todo = set(), [descriptor]
    while todo:
        d = todo.pop()
        if d.full_name in seen:
            continue
        seen.add(d.full_name)
        for f in d.fields:
            if f.enum_type is not None:
                return True
            if f.message_type is not None:
                todo.append(f.message_type)
    return False


def _bad_enum(message: Any, path: str = "") -> str | None:
    """The first enum field of ``message`` (anywhere inside it) holding a number its enum does not define, as
    ``path: N is not a value of ENUM``; None if there is none. Proto3 enums are open: such numbers parse, and would
    otherwise be read as whatever the servicer does with an unknown value (e.g. the default algorithm)."""
    if not _enums_below(message.DESCRIPTOR):
        return None
    for f, value in message.ListFields():
        name = path + f.name
        if f.enum_type is not None:
            values = enumerate(value) if f.is_repeated else [(None, value)]
            for i, v in values:
                if v not in f.enum_type.values_by_number:
                    where = name if i is None else f"{name}[{i}]"
                    known = ", ".join(f"{x.number} ({x.name})" for x in f.enum_type.values)
                    return f"{where}: {v} is not a value of {f.enum_type.full_name} (one of {known})"
        elif f.message_type is not None and _enums_below(f.message_type):
            if f.message_type.GetOptions().map_entry:
                items = [(f"{name}[{quoted(k)}]", v) for k, v in value.items()
                         if not isinstance(v, (int, str, bytes, float, bool))]
            elif f.is_repeated:
                items = [(f"{name}[{i}]", v) for i, v in enumerate(value)]
            else:
                items = [(name, value)]
            for where, sub in items:
                bad = _bad_enum(sub, where + ".")
                if bad is not None:
                    return bad
    return None


def _serve_unary(behaviour: Callable[..., Any], method: str, arrival: float, status_of: StatusOf, metrics: Any,
                 request: Any, context: grpc.ServicerContext) -> Any:
    call, ctx = _begin(method, arrival, metrics, context)
    try:
        return _guard(call, context, status_of, lambda: ctx.run(behaviour, _checked(request), context))
    finally:
        call.finish()


_END = object()


def _serve_stream(behaviour: Callable[..., Iterator[Any]], method: str, arrival: float, status_of: StatusOf,
                  metrics: Any, request: Any, context: grpc.ServicerContext) -> Iterator[Any]:
    call, ctx = _begin(method, arrival, metrics, context)
    items = None
    try:
        items = _guard(call, context, status_of, lambda: iter(ctx.run(behaviour, _checked(request), context)))
        while True:
            item = _guard(call, context, status_of, lambda: ctx.run(next, items, _END))
            if item is _END:
                return
            yield item
    finally:
        if items is not None and hasattr(items, "close"):
            ctx.run(items.close)  # a cancelled stream releases what it holds (a search, a watch slot) now
        call.finish()


def _guard(call: CallLog, context: grpc.ServicerContext, status_of: StatusOf, thunk: Callable[[], Any]) -> Any:
    """``thunk()``, its errors answered as the call's status (the call is aborted)."""
    try:
        return thunk()
    except Abort as e:
        code, message = e.code, e.message
    except Exception as e:  # noqa: BLE001 - nothing a client sends may take the server down
        if isinstance(e, grpc.RpcError):
            raise
        code = status_of(e)
        if code is None:
            call.code = grpc.StatusCode.INTERNAL
            call.set(error=f"{type(e).__name__}: {e}")
            log.exception("internal error in %s", call.fields["method"])
            context.abort(grpc.StatusCode.INTERNAL, "internal error (logged by the server)")
        message = str(e)
    message = bounded(message, MESSAGE_CAP)  # a message that echoes client input must still fit the metadata
    call.code = code
    call.set(error=message)
    context.abort(code, message)


class TokenInterceptor(grpc.ServerInterceptor):
    """``UNAUTHENTICATED`` unless the call carries ``authorization: Bearer <token>`` (health checks excepted, so
    that load balancers can probe)."""

    def __init__(self, token: str):
        self._expected = f"Bearer {token}".encode()

        def deny(request: Any, context: grpc.ServicerContext) -> None:
            context.abort(grpc.StatusCode.UNAUTHENTICATED, "missing or wrong API token (metadata authorization: "
                                                           "Bearer <token>)")

        self._deny_unary = grpc.unary_unary_rpc_method_handler(deny)
        self._deny_stream = grpc.unary_stream_rpc_method_handler(deny)

    def intercept_service(self, continuation: Callable[[Any], Any], details: grpc.HandlerCallDetails) -> Any:
        if details.method.startswith(f"/{HEALTH_SERVICE}/"):
            return continuation(details)
        given = next((v for k, v in details.invocation_metadata if k == "authorization"), "")
        given_b = given.encode() if isinstance(given, str) else bytes(given)
        if hmac.compare_digest(given_b, self._expected):
            return continuation(details)
        log.info('{"method":%s,"status":"UNAUTHENTICATED"}', json.dumps(bounded(details.method, LOG_FIELD_CAP)))
        handler = continuation(details)
        if handler is not None and (handler.response_streaming or handler.request_streaming):
            return self._deny_stream
        return self._deny_unary


class Metrics:
    """Prometheus metrics: requests by method and status, latency histogram, searches in flight, iterations/s."""

    def __init__(self) -> None:
        try:
            import prometheus_client as prom
        except ImportError:
            raise ValueError("--metrics-port needs prometheus-client: pip install 'feudo-ai[metrics]'") from None
        self.registry = prom.CollectorRegistry()
        self.requests = prom.Counter("feudo_advisor_requests", "Calls by method and status", ["method", "code"],
                                     registry=self.registry)
        self.latency = prom.Histogram("feudo_advisor_latency_seconds", "Call latency", ["method"],
                                      buckets=(.01, .05, .1, .2, .3, .5, 1, 2, 5, 10, 30, 60), registry=self.registry)
        self.searches = prom.Gauge("feudo_advisor_searches_in_flight", "Searches running", registry=self.registry)
        self.speed = prom.Histogram("feudo_advisor_iterations_per_second", "Search speed of answered calls",
                                    buckets=(1e3, 5e3, 1e4, 2e4, 5e4, 1e5, 2e5, 5e5, 1e6), registry=self.registry)
        self._prom = prom

    def observe(self, method: str, code: str, latency: float, iterations: int | None,
                search_seconds: float | None) -> None:
        self.requests.labels(method, code).inc()
        self.latency.labels(method).observe(latency)
        if iterations and search_seconds:
            self.speed.observe(iterations / search_seconds)

    def in_flight(self, n: int) -> None:
        self.searches.set(n)

    def serve(self, port: int, address: str) -> Any:
        return self._prom.start_http_server(port, addr=address, registry=self.registry)
