"""Running the Advisor: the gRPC server with health, reflection, optional TLS, API token and Prometheus metrics.

The same server hosts matches (``feudo.v1.Matches``, :mod:`feudo_ai.matches`): kept in SQLite at ``--db PATH``
(without it, in memory: they end with the process), resumed with their bots when the server starts again.

    from feudo_ai.service.server import AdvisorServer, ServerSettings
    server = AdvisorServer(ServerSettings(address="127.0.0.1:0")).start()   # server.port: the port bound
    ...
    server.drain(grace=10)                                                 # health NOT_SERVING, finish, stop

:func:`main` is ``feudo serve`` and the top-level ``server.py``: flags, logging, signals. SIGTERM/SIGINT drain
the server: health flips to NOT_SERVING, after ``--drain-delay`` seconds new calls are refused, calls in flight
finish (up to ``--grace`` seconds), then the process exits 0.

The API token (``--token-file`` or the ``FEUDO_ADVISOR_TOKEN`` environment variable; never a flag, so it stays out
of ``ps``) is checked on every call of the Advisor and of reflection (metadata ``authorization: Bearer <token>``,
``UNAUTHENTICATED`` otherwise); health checks stay open so that load balancers can probe.
"""

from __future__ import annotations

import argparse
import hmac
import logging
import os
import signal
import sys
import threading
import time
from concurrent import futures
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from .advisor import SERVICE_NAME, AdvisorServicer, ServiceConfig

log = logging.getLogger("feudo.service")
DEFAULT_ADDRESS = "127.0.0.1:50051"
HEALTH_SERVICE = health_pb2.DESCRIPTOR.services_by_name["Health"].full_name


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
    db: str | None = None  # SQLite file of the matches; None: in memory
    max_watch_streams: int = 16  # WatchMatch streams open at once (each holds a worker thread)


MMAP_THRESHOLD = 128 * 1024  # bytes: larger blocks (the search's node pools) get their own mapping


def fix_mmap_threshold(threshold: int = MMAP_THRESHOLD) -> bool:
    """Keep glibc from holding on to the memory of finished searches (Linux/glibc; elsewhere a no-op).

    glibc serves a large malloc (each search worker's node pool: up to tens of MB) with its own mmap, but after
    the first such block is freed it raises its threshold to that block's size, so later pools of that size come
    from the per-thread arenas, and what a finished search touched there stays resident. Under load the server's
    RSS then grew with every new high-water mark of a thread's arena (measured: +20 % and still rising after
    3,000 requests). With the threshold fixed (``mallopt(M_MMAP_THRESHOLD)``, which also turns the dynamic
    adjustment off) every pool is unmapped when its search ends, and the RSS stays flat (measured: within 2 %
    over the same load). Left alone if the operator set ``MALLOC_MMAP_THRESHOLD_``. Returns whether it was set.
    """
    if not sys.platform.startswith("linux") or "MALLOC_MMAP_THRESHOLD_" in os.environ:
        return False
    import ctypes

    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    m_mmap_threshold = -3  # <malloc.h>
    return bool(mallopt(ctypes.c_int(m_mmap_threshold), ctypes.c_int(threshold)))


class _TokenInterceptor(grpc.ServerInterceptor):
    """``UNAUTHENTICATED`` unless the call carries ``authorization: Bearer <token>`` (health checks excepted)."""

    def __init__(self, token: str):
        self._expected = f"Bearer {token}".encode()

        def deny(request: Any, context: grpc.ServicerContext) -> None:
            context.abort(grpc.StatusCode.UNAUTHENTICATED, "missing or wrong API token (metadata authorization: "
                                                           "Bearer <token>)")

        self._deny_unary = grpc.unary_unary_rpc_method_handler(deny)
        self._deny_stream = grpc.unary_stream_rpc_method_handler(deny)

    def intercept_service(self, continuation: Callable[[Any], Any], details: Any) -> Any:
        if details.method.startswith(f"/{HEALTH_SERVICE}/"):
            return continuation(details)
        given = next((v for k, v in details.invocation_metadata if k == "authorization"), "")
        given_b = given.encode() if isinstance(given, str) else bytes(given)
        if hmac.compare_digest(given_b, self._expected):
            return continuation(details)
        log.info('{"method":"%s","status":"UNAUTHENTICATED"}', details.method)
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


class AdvisorServer:
    """The gRPC server of the Advisor, health and reflection."""

    def __init__(self, settings: ServerSettings | None = None):
        self.settings = s = settings or ServerSettings()
        if (s.tls_cert is None) != (s.tls_key is None):
            raise ValueError("TLS: give both the certificate and the key")
        self.metrics = Metrics() if s.metrics_port is not None else None
        cfg = s.config
        workers = cfg.max_concurrent_searches + s.extra_workers + s.max_watch_streams
        interceptors = [_TokenInterceptor(s.token)] if s.token else []
        self.server = grpc.server(
            futures.ThreadPoolExecutor(max_workers=workers, thread_name_prefix="advisor"),
            interceptors=interceptors,
            # calls beyond the workers wait in a bounded queue; beyond it gRPC answers RESOURCE_EXHAUSTED
            maximum_concurrent_rpcs=workers * 2,
            options=[("grpc.max_receive_message_length", cfg.max_message_bytes),
                     ("grpc.max_send_message_length", cfg.max_message_bytes),
                     ("grpc.so_reuseport", 0)])
        self.servicer = AdvisorServicer(cfg, self.metrics)
        self.servicer.add_to_server(self.server)
        # Matches: loaded from the database now (their bots resume at once), served by the same server.
        from ..matches.service import MatchService
        from ..matches.servicer import SERVICE_NAME as MATCHES_SERVICE
        from ..matches.servicer import MatchesServicer

        self.matches = MatchService(s.db or ":memory:")
        self.matches_servicer = MatchesServicer(self.matches, self.metrics, s.max_watch_streams)
        self.matches_servicer.add_to_server(self.server)
        self._service_names = ("", SERVICE_NAME, MATCHES_SERVICE)
        self.health = health.HealthServicer(experimental_non_blocking=True)
        health_pb2_grpc.add_HealthServicer_to_server(self.health, self.server)
        reflection.enable_server_reflection((SERVICE_NAME, MATCHES_SERVICE, HEALTH_SERVICE, reflection.SERVICE_NAME),
                                            self.server)
        if s.tls_cert is not None:
            creds = grpc.ssl_server_credentials([(s.tls_key, s.tls_cert)])
            self.port = self.server.add_secure_port(s.address, creds)
        else:
            self.port = self.server.add_insecure_port(s.address)
        if not self.port:
            raise OSError(f"cannot listen on {s.address}")
        host = s.address.rsplit(":", 1)[0]
        self.address = f"{host}:{self.port}"
        self._metrics_server: Any = None
        self._stopped = threading.Event()

    def start(self, warm_up: bool = True) -> "AdvisorServer":
        if warm_up:
            self.servicer.warm_up()
        self.server.start()
        for name in self._service_names:
            self.health.set(name, health_pb2.HealthCheckResponse.SERVING)
        if self.metrics is not None:
            self._metrics_server = self.metrics.serve(self.settings.metrics_port, self.settings.metrics_address)
        return self

    def drain(self, grace: float = 10.0, delay: float = 0.0) -> None:
        """Graceful stop: health NOT_SERVING (load balancers stop sending), ``delay`` seconds still serving, then new
        calls refused and calls in flight given up to ``grace`` seconds to finish."""
        for name in self._service_names:
            self.health.set(name, health_pb2.HealthCheckResponse.NOT_SERVING)
        if delay > 0:
            time.sleep(delay)
        self.matches.begin_close()  # watch streams end, so they do not hold the stop for the whole grace
        self.server.stop(grace).wait()
        self.matches.close()
        if self._metrics_server is not None:
            server = self._metrics_server[0] if isinstance(self._metrics_server, tuple) else self._metrics_server
            server.shutdown()
        self._stopped.set()

    def stop(self) -> None:
        self.matches.begin_close()
        self.server.stop(None).wait()
        self.matches.close()
        self._stopped.set()

    def wait(self, timeout: float | None = None) -> bool:
        return self._stopped.wait(timeout)


# ------------------------------------------------------------------------------------------------ main
def add_arguments(p: argparse.ArgumentParser) -> None:
    d = ServiceConfig()
    p.add_argument("--address", default=DEFAULT_ADDRESS, help=f"host:port to listen on (default {DEFAULT_ADDRESS}; "
                                                               f"port 0: any free port)")
    p.add_argument("--tls-cert", default=None, help="PEM certificate chain file (with --tls-key: TLS)")
    p.add_argument("--tls-key", default=None, help="PEM private key file")
    p.add_argument("--token-file", default=None, help="file holding the API token clients must send (metadata "
                                                      "authorization: Bearer <token>); or set FEUDO_ADVISOR_TOKEN")
    p.add_argument("--metrics-port", type=int, default=None, help="serve Prometheus metrics on this port")
    p.add_argument("--max-concurrent", type=int, default=d.max_concurrent_searches,
                   help=f"searches at once; beyond: RESOURCE_EXHAUSTED (default {d.max_concurrent_searches})")
    p.add_argument("--max-search-threads", type=int, default=d.max_search_threads,
                   help=f"C search threads at once over all searches (a search of N threads takes N); beyond: "
                        f"RESOURCE_EXHAUSTED (default {d.max_search_threads}: 8 per core)")
    p.add_argument("--search-nice", type=int, default=d.search_nice,
                   help=f"search threads run this much nicer (Linux) than the threads answering calls, so that "
                        f"answers are not starved by searches (0-19, default {d.search_nice})")
    p.add_argument("--max-threads", type=int, default=d.max_threads, help=f"threads per search (default {d.max_threads})")
    p.add_argument("--max-seconds", type=float, default=d.max_seconds,
                   help=f"seconds per search (default {d.max_seconds:g})")
    p.add_argument("--max-iterations", type=int, default=d.max_iterations,
                   help=f"iterations per search (default {d.max_iterations})")
    p.add_argument("--max-nodes", type=int, default=d.max_nodes,
                   help=f"node pool of a search worker, 64 bytes a node (default {d.max_nodes})")
    p.add_argument("--max-message-bytes", type=int, default=d.max_message_bytes,
                   help=f"largest request or response (default {d.max_message_bytes})")
    p.add_argument("--grace", type=float, default=10.0, help="seconds calls in flight get at shutdown (default 10)")
    p.add_argument("--drain-delay", type=float, default=0.0,
                   help="seconds between health NOT_SERVING and refusing new calls at shutdown (default 0)")
    p.add_argument("--db", default=None, metavar="PATH",
                   help="SQLite file of the hosted matches (created if missing; matches in it resume at start); "
                        "default: in memory, matches end with the process")
    p.add_argument("--max-watch-streams", type=int, default=16,
                   help="WatchMatch streams open at once; beyond: RESOURCE_EXHAUSTED (default 16)")
    p.add_argument("--log-level", default="INFO", help="logging level (default INFO: one line per call)")


def _read(path: str | None, what: str) -> bytes | None:
    if path is None:
        return None
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as e:
        raise ValueError(f"{what}: cannot read {path} ({e.strerror})") from None


def settings_from_args(args: argparse.Namespace) -> ServerSettings:
    token_b = _read(args.token_file, "--token-file")
    token = token_b.decode().strip() if token_b is not None else os.environ.get("FEUDO_ADVISOR_TOKEN") or None
    if token is not None and not token:
        raise ValueError("--token-file: the file is empty")
    if args.max_watch_streams < 1:
        raise ValueError(f"--max-watch-streams: expected a positive integer, got {args.max_watch_streams}")
    config = ServiceConfig(max_iterations=args.max_iterations, max_seconds=args.max_seconds,
                           max_threads=args.max_threads, max_concurrent_searches=args.max_concurrent,
                           max_search_threads=args.max_search_threads, search_nice=args.search_nice,
                           max_message_bytes=args.max_message_bytes, max_nodes=args.max_nodes)
    return ServerSettings(address=args.address, config=config, tls_cert=_read(args.tls_cert, "--tls-cert"),
                          tls_key=_read(args.tls_key, "--tls-key"), token=token, metrics_port=args.metrics_port,
                          db=args.db, max_watch_streams=args.max_watch_streams)


def serve(args: argparse.Namespace) -> int:
    """Start, print where it listens, drain on SIGTERM/SIGINT; exit status 0 after a graceful stop."""
    logging.basicConfig(level=getattr(logging, str(args.log_level).upper(), logging.INFO),
                        format="%(asctime)s %(levelname)s %(name)s %(message)s", stream=sys.stderr)
    fix_mmap_threshold()  # process-wide, so here (the process's entry point) and not in AdvisorServer
    server = AdvisorServer(settings_from_args(args)).start()
    stop = threading.Event()

    def on_signal(signum: int, frame: Any) -> None:
        log.info('{"event":"draining","signal":"%s"}', signal.Signals(signum).name)
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    scheme = "TLS" if server.settings.tls_cert else "plaintext"
    print(f"feudo advisor listening on {server.address} ({scheme}{', token required' if server.settings.token else ''}"
          f"{f', metrics on :{args.metrics_port}' if args.metrics_port is not None else ''}; search node pools at "
          f"most {server.settings.config.pool_bytes_max / 2**20:.0f} MB; "
          f"matches {'in ' + args.db if args.db else 'in memory'})", flush=True)
    while not stop.wait(0.5):
        pass
    server.drain(grace=args.grace, delay=args.drain_delay)
    print("feudo advisor stopped", flush=True)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="server.py", description="Run the Feudo Advisor gRPC service.")
    add_arguments(parser)
    args = parser.parse_args(argv)
    try:
        return serve(args)
    except (ValueError, OSError, RuntimeError) as e:
        print(f"server: error: {e}", file=sys.stderr)
        return 2
