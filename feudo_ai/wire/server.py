"""The gRPC server: the Advisor (``feudo.v1.Advisor``) and the hosted matches (``feudo.v1.Matches``) served as
peers, with Fief 2's (``fief2.v1.AdvisorService``, ``fief2.v1.MatchesService``: hosted Fief 2 matches, in the same store) beside them,
health, reflection, optional TLS, API token and Prometheus metrics.

    from feudo_ai.wire.server import FeudoServer, ServerSettings
    server = FeudoServer(ServerSettings(address="127.0.0.1:0")).start()   # server.port: the port bound
    ...
    server.drain(grace=10)                                                # health NOT_SERVING, finish, stop

Matches of both games are kept in SQLite at ``settings.db`` (without it, in memory: they end with the process) and
resumed with their bots when the server starts again, or in PostgreSQL (``settings.db`` a ``postgresql://`` URL) shared by
several replicas (:class:`~feudo_ai.matches.service.MatchService`, "Replicas"); finished and idle matches are retired from memory (``max_matches``,
``match_idle_seconds``, ``finished_retention_seconds``: :class:`~feudo_ai.matches.service.MatchService`). The
matches' bots search under the Advisor's caps and through the same admission (one
:class:`~feudo_ai.search.admission.SearchSlots`), at the same nice. The API token is checked on every call of both services and of
reflection (metadata ``authorization: Bearer <token>``, ``UNAUTHENTICATED`` otherwise); health checks stay open
so that load balancers can probe. The command line (flags, logging, signals) is :mod:`.cli`.
"""

from __future__ import annotations

import errno
import socket
import threading
import time
from concurrent import futures
from dataclasses import dataclass, field
from typing import Any

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from feudo.v1 import advisor_pb2_grpc as apb_grpc
from feudo.v1 import matches_pb2_grpc as mpb_grpc
from fief2.v1 import advisor_pb2_grpc as f2apb_grpc
from fief2.v1 import matches_pb2_grpc as f2mpb_grpc

from ..matches import service as match_service
from ..matches.limits import BotLimits
from ..matches.fief2_service import Fief2MatchService
from ..matches.service import MatchService
from . import advisor, fief2_advisor, fief2_matches, matches
from .advisor import AdvisorServicer, ServiceConfig, new_slots
from .fief2_advisor import Fief2AdvisorServicer
from .fief2_matches import Fief2MatchesServicer
from .matches import MatchesServicer
from .plumbing import HEALTH_SERVICE, CallInterceptor, Metrics, TokenInterceptor

DEFAULT_ADDRESS = "127.0.0.1:50051"


@dataclass(frozen=True)
class ServerSettings:
    """Where and how the server listens (the caps of searches are in :class:`ServiceConfig`)."""

    address: str = DEFAULT_ADDRESS
    config: ServiceConfig = field(default_factory=ServiceConfig)
    tls_cert: bytes | None = None  # PEM certificate chain; with tls_key: TLS
    tls_key: bytes | None = None
    token: str | None = None  # API token; None: no authentication
    metrics_port: int | None = None  # Prometheus /metrics on this port (needs prometheus-client)
    metrics_address: str = "127.0.0.1"
    extra_workers: int = 8  # worker threads beyond the search cap, for cheap calls (health, DescribeGame, ...)
    db: str | None = None  # SQLite file or postgresql:// URL of the matches; None: in memory
    db_pool: int = 10  # PostgreSQL: connections in the pool
    bot_lease_seconds: float = match_service.LEASE_SECONDS  # PostgreSQL: a dead replica's bots move after this
    max_watch_streams: int = 16  # WatchMatch streams open at once (each holds a worker thread)
    http: str | None = None  # host:port of the same services over HTTP (Connect) and the web table; None: none
    max_http_connections: int = 64  # HTTP connections served at once (a thread each); beyond: 503 unavailable
    grpc: bool = True  # False: no gRPC listener (HTTP only)
    max_matches: int = match_service.MAX_MATCHES  # live (unfinished) matches in memory; beyond: RESOURCE_EXHAUSTED
    match_idle_seconds: float | None = match_service.IDLE_SECONDS  # an idle match is retired after this; None: never
    finished_retention_seconds: float | None = match_service.FINISHED_SECONDS  # a finished one after this


class ListenError(OSError):
    """The server cannot listen on its address (in use, not allowed, not an address of this host)."""


def check_address(address: str) -> None:
    """Fail now, with the system's reason, if ``address`` (``host:port``) cannot be listened on.

    gRPC's own failure to bind says only "Failed to bind" (its reason goes to its C log, a screenful with the
    traceback), so the address is tried first with a plain socket set up as gRPC sets up its listeners
    (SO_REUSEADDR, no SO_REUSEPORT: see the server's options). Port 0 and what is not ``host:port`` (e.g.
    ``unix:PATH``) are left to gRPC. Like gRPC, the address fails only if none of the addresses the host resolves
    to can be bound.

    :raises ListenError: ``cannot listen on ADDRESS: REASON``."""
    host, _, port = address.rpartition(":")
    if not port.isdigit() or int(port) == 0:
        return
    try:
        infos = socket.getaddrinfo(host.strip("[]") or None, int(port), type=socket.SOCK_STREAM,
                                   flags=socket.AI_PASSIVE)
    except OSError:
        return  # gRPC resolves it its own way; its error, if any, is reported then
    reason = None
    for family, kind, proto, _, sockaddr in infos:
        try:
            with socket.socket(family, kind, proto) as s:
                s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                s.bind(sockaddr)
                return
        except OSError as e:
            reason = reason or e
    if reason is not None:
        text = "address already in use" if reason.errno == errno.EADDRINUSE else (reason.strerror or str(reason))
        raise ListenError(f"cannot listen on {address}: {text}")


class FeudoServer:
    """One gRPC server: the Advisor and Matches services (both through the same :class:`CallInterceptor`),
    health and reflection."""

    def __init__(self, settings: ServerSettings | None = None):
        self.settings = s = settings or ServerSettings()
        if (s.tls_cert is None) != (s.tls_key is None):
            raise ValueError("TLS: give both the certificate and the key")
        self.metrics = Metrics() if s.metrics_port is not None else None
        cfg = s.config
        workers = cfg.max_concurrent_searches + s.extra_workers + s.max_watch_streams
        # the token interceptor comes first, so a call without the token is refused before anything else runs
        interceptors: list[grpc.ServerInterceptor] = [TokenInterceptor(s.token)] if s.token else []
        interceptors.append(CallInterceptor({advisor.SERVICE_NAME: advisor.status_of,
                                             matches.SERVICE_NAME: matches.status_of,
                                             fief2_advisor.SERVICE_NAME: fief2_advisor.status_of,
                                             fief2_matches.SERVICE_NAME: fief2_matches.status_of}, self.metrics))
        self.server = grpc.server(
            futures.ThreadPoolExecutor(max_workers=workers, thread_name_prefix="advisor"),
            interceptors=interceptors,
            # calls beyond the workers wait in a bounded queue; beyond it gRPC answers RESOURCE_EXHAUSTED
            maximum_concurrent_rpcs=workers * 2,
            options=[("grpc.max_receive_message_length", cfg.max_message_bytes),
                     ("grpc.max_send_message_length", cfg.max_message_bytes),
                     ("grpc.so_reuseport", 0)])
        if not s.grpc and not s.http:
            raise ValueError("neither gRPC nor HTTP: nothing to serve")
        if s.max_http_connections < 1:
            raise ValueError(f"max_http_connections: expected a positive integer, got {s.max_http_connections}")
        # the port first: a server that cannot listen fails before the matches load and their bots resume
        self.port = self._listen(s) if s.grpc else None
        self.address = f"{s.address.rsplit(':', 1)[0]}:{self.port}" if s.grpc else None
        if s.http:
            check_address(s.http)
        # one admission of searches for the Advisor's calls and the matches' bots
        self.slots = new_slots(cfg, self.metrics)
        self.servicer = AdvisorServicer(cfg, self.metrics, self.slots)
        apb_grpc.add_AdvisorServicer_to_server(self.servicer, self.server)
        bot_limits = BotLimits(max_seconds=cfg.max_seconds, max_iterations=cfg.max_iterations,
                               max_threads=cfg.max_threads, max_nodes=cfg.max_nodes, nice=cfg.search_nice,
                               evaluation_files=cfg.evaluation_files)
        self.matches = MatchService(s.db or ":memory:", max_matches=s.max_matches, idle_seconds=s.match_idle_seconds,
                                    finished_seconds=s.finished_retention_seconds, bot_limits=bot_limits,
                                    slots=self.slots, db_pool=s.db_pool, lease_seconds=s.bot_lease_seconds)
        self.matches_servicer = MatchesServicer(self.matches, s.max_watch_streams)
        self.servicer.matches = self.matches  # the Advisor reads a hosted match's seat view (Position.match)
        mpb_grpc.add_MatchesServicer_to_server(self.matches_servicer, self.server)
        # Fief 2 (fief2.v1): its own hosted matches in the same store (its rows keyed by the game), under the same
        # caps and retention; watch streams share one cap. The store is Feudo's service's: closed by it, last
        self.fief2_matches = Fief2MatchService(store=self.matches.store, max_matches=s.max_matches,
                                               bot_limits=bot_limits, slots=self.slots,
                                               idle_seconds=s.match_idle_seconds,
                                               finished_seconds=s.finished_retention_seconds,
                                               lease_seconds=s.bot_lease_seconds)
        self.fief2_servicer = Fief2AdvisorServicer(cfg, self.fief2_matches, self.servicer)
        f2apb_grpc.add_AdvisorServiceServicer_to_server(self.fief2_servicer, self.server)
        self.fief2_matches_servicer = Fief2MatchesServicer(self.fief2_matches, self.matches_servicer._watch_slots,
                                                           s.max_watch_streams)
        f2mpb_grpc.add_MatchesServiceServicer_to_server(self.fief2_matches_servicer, self.server)
        self._service_names = ("", advisor.SERVICE_NAME, matches.SERVICE_NAME, fief2_advisor.SERVICE_NAME,
                               fief2_matches.SERVICE_NAME)
        self.health = health.HealthServicer(experimental_non_blocking=True)
        health_pb2_grpc.add_HealthServicer_to_server(self.health, self.server)
        reflection.enable_server_reflection((advisor.SERVICE_NAME, matches.SERVICE_NAME, fief2_advisor.SERVICE_NAME,
                                             fief2_matches.SERVICE_NAME, HEALTH_SERVICE, reflection.SERVICE_NAME),
                                            self.server)
        self._metrics_server: Any = None
        self._stopped = threading.Event()
        self.http = None
        if s.http:
            from .web import http_server  # the same servicers and interceptors over HTTP (Connect), the web table
            self.http = http_server(s.http, self, interceptors)
        self.http_address = self.http.address if self.http is not None else None

    def _listen(self, s: ServerSettings) -> int:
        check_address(s.address)
        try:
            if s.tls_cert is not None:
                creds = grpc.ssl_server_credentials([(s.tls_key, s.tls_cert)])
                port = self.server.add_secure_port(s.address, creds)
            else:
                port = self.server.add_insecure_port(s.address)
        except RuntimeError:  # gRPC's "Failed to bind": the reason is in its log
            port = 0
        if not port:
            raise ListenError(f"cannot listen on {s.address}")
        return port

    def start(self, warm_up: bool = True) -> "FeudoServer":
        if warm_up:
            self.servicer.warm_up()
        if self.settings.grpc:
            self.server.start()
        if self.http is not None:
            self.http.start()
        for name in self._service_names:
            self.health.set(name, health_pb2.HealthCheckResponse.SERVING)
        if self.metrics is not None:
            self._metrics_server = self.metrics.serve(self.settings.metrics_port, self.settings.metrics_address)
        return self

    def drain(self, grace: float = 10.0, delay: float = 0.0) -> None:
        """Graceful stop: health NOT_SERVING (load balancers stop sending), ``delay`` seconds still serving, then new
        calls refused and calls in flight given up to ``grace`` seconds to finish; the matches' bot searches are
        cancelled at once and their threads joined together within what is left of ``grace``."""
        for name in self._service_names:
            self.health.set(name, health_pb2.HealthCheckResponse.NOT_SERVING)
        if delay > 0:
            time.sleep(delay)
        end = time.monotonic() + grace
        # bots stop (their searches cancelled) and watch streams end, so they do not hold the stop for the grace
        self.matches.begin_close()
        if self.http is not None:
            self.http.stop()
        self.fief2_matches.close(timeout=0.5)
        self.server.stop(grace).wait()
        self.matches.close(timeout=max(0.1, end - time.monotonic()))
        if self._metrics_server is not None:
            server = self._metrics_server[0] if isinstance(self._metrics_server, tuple) else self._metrics_server
            server.shutdown()
        self._stopped.set()

    def stop(self) -> None:
        self.matches.begin_close()
        if self.http is not None:
            self.http.stop()
        self.fief2_matches.close(timeout=0.5)
        self.server.stop(None).wait()
        self.matches.close()
        self._stopped.set()

    def wait(self, timeout: float | None = None) -> bool:
        return self._stopped.wait(timeout)
