"""The same ``feudo.v1`` services over HTTP for browsers and plain HTTP clients: the Connect protocol.

``feudo serve`` runs, next to the gRPC server, an HTTP server (default ``127.0.0.1:8080``) that speaks the Connect
protocol (https://connectrpc.com/docs/protocol) through the ``connectrpc`` package's WSGI application, and serves
the web table (:mod:`feudo_ai.web`) at ``/``. It is not a second API: every Connect call goes to the very
servicer objects the gRPC server registered, through the very interceptors gRPC runs them with:

- the endpoints are made from the services' descriptors (``feudo.v1`` protos), one per method, with the
  ``google.protobuf`` message classes the servicers take (:class:`ProtoCodec`, :class:`JsonCodec`: binary and
  protobuf JSON, so ``curl -H 'Content-Type: application/json' -d '{...}' .../feudo.v1.Advisor/Suggest`` works);
- each call asks the gRPC interceptor chain (:class:`~.plumbing.TokenInterceptor`, then
  :class:`~.plumbing.CallInterceptor`) for the method's handler, exactly as gRPC does as a call arrives (so the
  call's clock, its log line and metrics, the API token, the error mapping are the gRPC server's own), and runs the
  handler with an :class:`HttpCallContext`: the part of ``grpc.ServicerContext`` the servicers use, over the HTTP
  request: ``abort`` raises the Connect error of the same code, ``time_remaining`` is the Connect timeout
  (``connect-timeout-ms``), ``add_callback`` runs when the call ends or its deadline passes (which is how a search
  or a watch is cancelled), ``invocation_metadata`` are the request headers;
- a browser's server stream cannot tell a WSGI server it went away until something is written to it, so an HTTP
  WatchMatch or Analyze stream lasts at most :data:`MAX_STREAM_SECONDS` (or its own timeout if shorter): it then
  ends with ``deadline_exceeded`` and the client resumes it (WatchMatch from the action count it has seen).

The caps (searches, threads, watch streams, message size) are the servicers' and so shared by both protocols. The
HTTP server adds its own on connections (``ServerSettings.max_http_connections`` at once, each a thread: beyond, a
503 with the Connect error ``unavailable``) and closes a connection silent for :data:`IDLE_SECONDS`.
"""

from __future__ import annotations

import functools
import logging
import mimetypes
import socket
import socketserver
import threading
import time
from importlib import resources
from typing import Any, Callable, Iterable, Iterator
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

import grpc
from connectrpc.code import Code
from connectrpc.errors import ConnectError
from connectrpc.method import IdempotencyLevel, MethodInfo, StreamType
from connectrpc.server import ConnectWSGIApplication, EndpointSync
from google.protobuf import json_format
from google.protobuf.message import DecodeError

log = logging.getLogger("feudo.service")
MAX_STREAM_SECONDS = 30.0  # an HTTP server stream ends after this (deadline_exceeded); the client resumes it
IDLE_SECONDS = 30.0  # a connection that sends or reads nothing for this long is closed
REFUSE_AFTER_SECONDS = 0.05  # a connection beyond the cap waits this long for a slot before its 503
# methods a browser may call with GET (Connect's side-effect-free unary calls)
SERVICE_PREFIXES = ("/feudo.v1.", "/fief2.v1.")  # paths of the Connect services (the rest: the web table's files)
NO_SIDE_EFFECTS = {"DescribeGame", "LegalActions", "RenderPosition", "GetObservation", "ListMatches", "GetRecord",
                   "ReplayRecord"}


class ProtoCodec:
    """Connect's ``proto`` codec for ``google.protobuf`` messages (the servicers' own classes)."""

    def name(self) -> str:
        return "proto"

    def encode(self, message: Any) -> bytes:
        return message.SerializeToString()

    def decode(self, data: bytes | bytearray, message_class: type) -> Any:
        try:
            return message_class.FromString(bytes(data))
        except DecodeError as e:
            raise ConnectError(Code.INVALID_ARGUMENT,
                               f"request: not a valid {message_class.DESCRIPTOR.full_name} message ({e})") from None


class JsonCodec:
    """Connect's ``json`` codec: protobuf JSON (lowerCamelCase names; 64-bit integers as strings)."""

    def name(self) -> str:
        return "json"

    def encode(self, message: Any) -> bytes:
        return json_format.MessageToJson(message, indent=None).encode()

    def decode(self, data: bytes | bytearray, message_class: type) -> Any:
        message = message_class()
        try:
            json_format.Parse(bytes(data).decode("utf-8") or "{}", message, ignore_unknown_fields=True)
        except (json_format.ParseError, UnicodeDecodeError) as e:
            raise ConnectError(Code.INVALID_ARGUMENT,
                               f"request: not a valid {message_class.DESCRIPTOR.full_name} JSON message ({e})") from None
        return message


class HttpCallContext:
    """The ``grpc.ServicerContext`` a servicer and the gRPC interceptors see for an HTTP call."""

    def __init__(self, method: str, peer: str, headers: Iterable[tuple[str, str]], timeout: float | None):
        self._method = method
        self._peer = peer
        self._metadata = tuple((k.lower(), v) for k, v in headers)
        self._deadline = None if timeout is None else time.monotonic() + max(timeout, 0.0)
        self._callbacks: list[Callable[[], None]] = []
        self._lock = threading.Lock()
        self._ended = False
        self.expired = False
        self._timer: threading.Timer | None = None
        if timeout is not None:
            self._timer = threading.Timer(max(timeout, 0.0), self._expire)
            self._timer.daemon = True
            self._timer.start()

    # the grpc.ServicerContext methods the services use
    def peer(self) -> str:
        return self._peer

    def invocation_metadata(self) -> tuple[tuple[str, str], ...]:
        return self._metadata

    def time_remaining(self) -> float | None:
        return None if self._deadline is None else max(self._deadline - time.monotonic(), 0.0)

    def is_active(self) -> bool:
        return not self._ended

    def add_callback(self, callback: Callable[[], None]) -> bool:
        with self._lock:
            if self._ended:
                return False
            self._callbacks.append(callback)
            return True

    def abort(self, code: grpc.StatusCode, details: str) -> None:
        raise ConnectError(Code[code.name] if code.name != "CANCELLED" else Code.CANCELED, details)

    def set_code(self, code: Any) -> None:  # pragma: no cover - the services abort instead
        pass

    def set_details(self, details: str) -> None:  # pragma: no cover
        pass

    # the call's end
    def _expire(self) -> None:
        self.expired = True
        self.end()

    def end(self) -> None:
        """The call is over (answered, failed or past its deadline): run the callbacks once."""
        with self._lock:
            if self._ended:
                return
            self._ended = True
            callbacks, self._callbacks = self._callbacks, []
        if self._timer is not None:
            self._timer.cancel()
        for cb in callbacks:
            try:
                cb()
            except Exception:  # noqa: BLE001 - as gRPC: a callback's failure does not fail the call
                log.exception("call end callback failed")


class _Details(grpc.HandlerCallDetails):
    def __init__(self, method: str, metadata: tuple[tuple[str, str], ...]):
        self.method = method
        self.invocation_metadata = metadata


class _Collect:
    """Stands for a ``grpc.Server`` to the generated ``add_*Servicer_to_server``: keeps the method handlers."""

    def __init__(self) -> None:
        self.handlers: dict[str, Any] = {}

    def add_registered_method_handlers(self, service: str, handlers: dict[str, Any]) -> None:
        for name, h in handlers.items():
            self.handlers[f"/{service}/{name}"] = h

    def add_generic_rpc_handlers(self, generic: Iterable[Any]) -> None:
        for g in generic:
            service = g.service_name()
            for name, h in getattr(g, "_method_handlers", {}).items():
                self.handlers.setdefault(f"/{service}/{name}", h)


def grpc_handlers(registrations: Iterable[tuple[Callable[[Any, Any], None], Any]]) -> dict[str, Any]:
    """``{"/feudo.v1.Advisor/Suggest": grpc.RpcMethodHandler, ...}`` of servicers, as the generated
    ``add_*Servicer_to_server`` functions register them with a gRPC server."""
    c = _Collect()
    for add, servicer in registrations:
        add(servicer, c)
    return c.handlers


class ConnectGateway(ConnectWSGIApplication):
    """The Connect protocol over the gRPC method handlers of the ``feudo.v1`` services (see the module)."""

    path = ""

    def __init__(self, services: Iterable[Any], handlers: dict[str, Any], interceptors: list[grpc.ServerInterceptor],
                 max_message_bytes: int, max_stream_seconds: float = MAX_STREAM_SECONDS):
        self._handlers = handlers
        self._interceptors = interceptors
        self._max_stream_seconds = max_stream_seconds
        endpoints: dict[str, Any] = {}
        for service in services:
            for m in service.methods:
                path = f"/{service.full_name}/{m.name}"
                streaming = m.server_streaming
                info = MethodInfo(name=m.name, service_name=service.full_name,
                                  input=m.input_type._concrete_class, output=m.output_type._concrete_class,
                                  idempotency_level=(IdempotencyLevel.NO_SIDE_EFFECTS if m.name in NO_SIDE_EFFECTS
                                                     else IdempotencyLevel.UNKNOWN),
                                  stream_type=StreamType.SERVER_STREAM if streaming else StreamType.UNARY)
                if streaming:
                    endpoints[path] = EndpointSync.server_stream(method=info, function=self._stream_caller(path))
                else:
                    endpoints[path] = EndpointSync.unary(method=info, function=self._unary_caller(path))
        super().__init__(endpoints=endpoints, read_max_bytes=max_message_bytes, codecs=[ProtoCodec(), JsonCodec()])

    def _handler(self, path: str, ctx: Any, streaming: bool) -> tuple[Any, HttpCallContext]:
        """The method's handler through the interceptor chain (as gRPC asks it as a call arrives), and the call's
        context."""
        headers = tuple((k, v) for k, v in ctx.request_headers.items())
        details = _Details(path, tuple((k.lower(), v) for k, v in headers))

        def chain(i: int) -> Callable[[Any], Any]:
            if i == len(self._interceptors):
                return lambda d: self._handlers.get(d.method)
            return lambda d: self._interceptors[i].intercept_service(chain(i + 1), d)

        handler = chain(0)(details)
        timeout_ms = ctx.timeout_ms
        timeout = None if timeout_ms is None else timeout_ms / 1000.0
        if streaming:
            timeout = self._max_stream_seconds if timeout is None else min(timeout, self._max_stream_seconds)
        peer = f"http:{ctx.client_address}" if ctx.client_address else "http"
        return handler, HttpCallContext(path, peer, headers, timeout)

    def _unary_caller(self, path: str) -> Callable[[Any, Any], Any]:
        def call(request: Any, ctx: Any) -> Any:
            handler, context = self._handler(path, ctx, streaming=False)
            try:
                response = handler.unary_unary(request, context)
            finally:
                context.end()
            if context.expired:
                raise ConnectError(Code.DEADLINE_EXCEEDED, "the call's deadline passed")
            return response
        return call

    def _stream_caller(self, path: str) -> Callable[[Any, Any], Iterator[Any]]:
        def call(request: Any, ctx: Any) -> Iterator[Any]:
            handler, context = self._handler(path, ctx, streaming=True)
            items = handler.unary_stream(request, context)
            try:
                for item in items:
                    yield item
                    if context.expired:
                        break
            finally:
                if hasattr(items, "close"):
                    items.close()
                context.end()
            if context.expired:
                raise ConnectError(Code.DEADLINE_EXCEEDED, "the stream's time is up (at most "
                                   f"{self._max_stream_seconds:g} s over HTTP); resume it")
        return call


# ------------------------------------------------------------------------------------------- the HTTP server
def static_file(path: str) -> tuple[bytes, str] | None:
    """The web app's file at URL ``path`` (``/`` is ``index.html``), and its content type; None if there is none."""
    name = "index.html" if path in ("", "/") else path.lstrip("/")
    if not name or ".." in name.split("/") or name.startswith("."):
        return None
    try:
        f = resources.files("feudo_ai.web").joinpath("static", *name.split("/"))
        if not f.is_file():
            return None
        data = f.read_bytes()
    except (OSError, ValueError):
        return None
    kind = mimetypes.guess_type(name)[0] or "application/octet-stream"
    if name.endswith(".js"):
        kind = "text/javascript"
    if kind.startswith("text/") or kind.endswith("javascript"):
        kind += "; charset=utf-8"
    return data, kind


def web_app(gateway: ConnectGateway) -> Callable[..., Iterable[bytes]]:
    """The WSGI app: the Connect services under ``/feudo.v1.*/`` and ``/fief2.v1.*/``, the web table's files elsewhere."""

    def app(environ: dict, start_response: Callable) -> Iterable[bytes]:
        path = environ.get("PATH_INFO") or "/"
        if path.startswith(SERVICE_PREFIXES):
            return gateway(environ, start_response)
        if environ.get("REQUEST_METHOD") not in ("GET", "HEAD"):
            start_response("405 Method Not Allowed", [("Allow", "GET, HEAD")])
            return [b""]
        found = static_file(path)
        if found is None:
            start_response("404 Not Found", [("Content-Type", "text/plain; charset=utf-8")])
            return [b"not found\n"]
        data, kind = found
        start_response("200 OK", [("Content-Type", kind), ("Content-Length", str(len(data))),
                                  ("Cache-Control", "no-cache"), ("X-Content-Type-Options", "nosniff"),
                                  ("Content-Security-Policy", "default-src 'self'; style-src 'self' 'unsafe-inline'; "
                                                             "img-src 'self' data:")])
        return [data]
    return app


class _LogStream:
    """The ``wsgi.errors`` of a request: what wsgiref would print to stderr (a transport error's traceback, such
    as a client that stopped reading a stream) goes to the log at debug level instead."""

    def write(self, text: str) -> None:
        if text.strip():
            log.debug("http: %s", text.rstrip())

    def flush(self) -> None:
        pass


class _Handler(WSGIRequestHandler):
    # a connection silent for this long (the request line, headers or body not arriving, or a stream's reader not
    # reading) is closed, so a slow client cannot hold one of the server's connections forever
    timeout = IDLE_SECONDS

    def log_message(self, format: str, *args: Any) -> None:  # the calls log their own line (CallInterceptor)
        log.debug("http %s", format % args)

    def get_stderr(self) -> Any:
        return _LogStream()


def _refuse(sock: socket.socket) -> None:
    """Answer a connection beyond the cap without a thread: 503 with a Connect error body (code ``unavailable``,
    which Connect clients retry), then close. What the client already sent is read first (briefly), so that the
    close does not reset the connection before the answer is read."""
    body = (b'{"code":"unavailable","message":"the server is serving its maximum number of HTTP connections; '
            b'retry shortly"}')
    head = (b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nRetry-After: 1\r\n"
            b"Connection: close\r\nContent-Length: " + str(len(body)).encode() + b"\r\n\r\n")
    try:
        sock.settimeout(0.05)
        try:
            sock.recv(65536)
        except OSError:
            pass
        sock.sendall(head + body)
        sock.shutdown(socket.SHUT_WR)
    except OSError:
        pass


class _ThreadingServer(socketserver.ThreadingMixIn, WSGIServer):
    """One thread a connection, at most ``max_connections`` at once (each holds a thread; a browser's server
    stream holds its connection for up to :data:`MAX_STREAM_SECONDS`); one beyond is answered 503 by the accepting
    thread and closed."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, server_address: tuple[str, int], handler_class: Any, max_connections: int):
        self.max_connections = max_connections
        self._slots = threading.BoundedSemaphore(max_connections)  # one a connection being served
        super().__init__(server_address, handler_class)

    def process_request(self, request: Any, client_address: Any) -> None:
        # a finished connection's thread gives its slot back a moment after its client has the answer: wait that
        # moment (bounded, so a flood beyond the cap slows the accepting thread by at most this a connection)
        if not self._slots.acquire(timeout=REFUSE_AFTER_SECONDS):
            log.warning("http: refused a connection from %s: %d connections open (the cap)",
                        client_address[0] if client_address else "?", self.max_connections)
            _refuse(request)
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._slots.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._slots.release()

    def handle_error(self, request: Any, client_address: Any) -> None:
        # a connection that timed out or went away: nothing to print (the default prints a traceback to stderr)
        log.debug("http: connection from %s ended with an error", client_address, exc_info=True)


class HttpServer:
    """The WSGI app served on ``address`` (``host:port``; port 0: any free port) by threads, at most
    ``max_connections`` connections at once."""

    def __init__(self, address: str, app: Callable[..., Iterable[bytes]], max_connections: int):
        host, _, port = address.rpartition(":")
        self._server = make_server(host.strip("[]") or "127.0.0.1", int(port), app,
                                   server_class=functools.partial(_ThreadingServer, max_connections=max_connections),
                                   handler_class=_Handler)
        self.port = self._server.server_address[1]
        self.address = f"{host}:{self.port}"
        self._thread = threading.Thread(target=self._server.serve_forever, name="http", daemon=True)

    def start(self) -> "HttpServer":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()


def http_server(address: str, server: Any, interceptors: list[grpc.ServerInterceptor]) -> HttpServer:
    """The HTTP side of a :class:`~.server.FeudoServer`: its Advisor and Matches servicers, through its
    interceptors, in Connect; and the web table."""
    from feudo.v1 import advisor_pb2 as apb
    from feudo.v1 import advisor_pb2_grpc as apb_grpc
    from feudo.v1 import matches_pb2 as mpb
    from feudo.v1 import matches_pb2_grpc as mpb_grpc
    from fief2.v1 import advisor_pb2 as f2apb
    from fief2.v1 import advisor_pb2_grpc as f2apb_grpc
    from fief2.v1 import matches_pb2 as f2mpb
    from fief2.v1 import matches_pb2_grpc as f2mpb_grpc

    handlers = grpc_handlers([(apb_grpc.add_AdvisorServicer_to_server, server.servicer),
                              (mpb_grpc.add_MatchesServicer_to_server, server.matches_servicer),
                              (f2apb_grpc.add_AdvisorServiceServicer_to_server, server.fief2_servicer),
                              (f2mpb_grpc.add_MatchesServiceServicer_to_server, server.fief2_matches_servicer)])
    services = [apb.DESCRIPTOR.services_by_name["Advisor"], mpb.DESCRIPTOR.services_by_name["Matches"],
                f2apb.DESCRIPTOR.services_by_name["AdvisorService"], f2mpb.DESCRIPTOR.services_by_name["MatchesService"]]
    gateway = ConnectGateway(services, handlers, interceptors, server.settings.config.max_message_bytes)
    return HttpServer(address, web_app(gateway), server.settings.max_http_connections)
