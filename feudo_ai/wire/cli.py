"""The command line of the wire room: ``feudo serve`` (and ``server.py``), ``feudo advise``.

``feudo serve`` / ``server.py`` parse the flags, set up logging and signals, and run a
:class:`~feudo_ai.wire.server.FeudoServer`. SIGTERM/SIGINT drain the server: health flips to NOT_SERVING, after
``--drain-delay`` seconds new calls are refused, calls in flight finish (up to ``--grace`` seconds), then the
process exits 0. The API token comes from ``--token-file`` or the ``FEUDO_ADVISOR_TOKEN`` environment variable,
never from a flag, so it stays out of ``ps``. An address the server cannot listen on is one line and exit
status 2.

``feudo advise POSITION --seat N`` reads POSITION (a file, or ``-`` for stdin) as one of:

- a full state, "feudo-state/1" JSON (``State.to_json()``): projected to the seat's observation first;
- a game record, "feudo-game/1" JSON (``feudo selfplay --save``), replayed to its end or its first
  ``--actions N`` actions, then projected;
- a ``feudo.v1.Position`` message in protobuf JSON (``{"setup": {...}, "observation": {...}}``, or the history form).

Without ``--server`` the search runs in this process through the same validation as the server's; with it the
position is sent to that Advisor (a state or record is projected here first, so hidden cards are not sent).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import sys
import threading
from typing import Any, Sequence

from engine import DataFileError
from engine.checker import MAX_JSON_BYTES, read_file_bytes

from ..matches import service as match_service
from ..matches.store import StoreError
from .advisor import ServiceConfig
from .plumbing import BoundedLines
from .server import DEFAULT_ADDRESS, FeudoServer, ListenError, ServerSettings, check_address

DEFAULT_HTTP = "127.0.0.1:8080"

log = logging.getLogger("feudo.service")
ADVISE_HELP = __doc__.split("\n\n", 2)[2] if __doc__ else None  # the paragraphs on feudo advise


def add_commands(sub: Any) -> None:
    """Register ``serve`` and ``advise`` on the ``feudo`` parser's subparsers."""
    p = sub.add_parser("serve", help="run the gRPC services, Advisor and Matches (default 127.0.0.1:50051)",
                       description="Run the gRPC services feudo.v1.Advisor and feudo.v1.Matches with health and "
                                   "reflection. SIGTERM/SIGINT drain them and exit 0.")
    add_arguments(p)
    p.set_defaults(func=cmd_serve, prog="feudo serve")

    p = sub.add_parser("advise", help="advice for a seat in a position (in-process, or from an Advisor)",
                       description=ADVISE_HELP,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("position", help="a feudo-state/1 or feudo-game/1 JSON file, a feudo.v1.Position JSON file, "
                                    "or - for stdin")
    p.add_argument("--seat", type=int, required=True, help="the seat asking (0-based)")
    p.add_argument("--server", default=None, help="ask this Advisor (host:port) instead of searching here")
    p.add_argument("--json", action="store_true", help="print the advice as JSON")
    p.add_argument("--actions", type=int, default=None, help="with a game record: replay only its first N actions")
    p.add_argument("--seconds", type=float, default=None, help="search time limit")
    p.add_argument("--iterations", type=int, default=None, help="search iterations (default 5000 without --seconds)")
    p.add_argument("--threads", type=int, default=None, help="search threads (default 1)")
    p.add_argument("--seed", type=int, default=0, help="search seed (default 0)")
    p.add_argument("--algorithm", choices=("ismcts", "pimc"), default=None, help="search algorithm (default ismcts)")
    p.add_argument("--evaluation", default="handmade", metavar="handmade|learned|FILE",
                   help="the MO-ISMCTS's evaluation: handmade (default), learned (the shipped model) or a model "
                        "file (feudo train's output); local searches only")
    p.add_argument("--token-file", default=None, help="with --server: file holding the API token")
    p.add_argument("--tls-ca", default=None, help="with --server: PEM file of the CA or server certificate: TLS")
    p.set_defaults(func=cmd_advise)


def cmd_serve(args: argparse.Namespace) -> int:
    return serve(args)


def _read_file(path: str, binary: bool = False) -> Any:
    """The contents of a file named on the command line (at most the engine's JSON size limit); a file that cannot
    be read is said as every command says it (``PATH: file not found``), not as Python's ``[Errno 2]``."""
    data = read_file_bytes(path)
    if len(data) > MAX_JSON_BYTES:
        raise DataFileError(f"{path}: larger than {MAX_JSON_BYTES:,} bytes")
    if binary:
        return data
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise DataFileError(f"{path}: not UTF-8 text") from None


def _read_position(args: argparse.Namespace) -> Any:
    """A ``feudo.v1.Position`` or an engine state, from the POSITION argument."""
    from engine import GameRecord
    from engine.record import RECORD_FORMAT
    from feudo.v1 import game_pb2 as gpb
    from google.protobuf import json_format

    if args.position == "-":
        text = sys.stdin.read()
    else:
        text = _read_file(args.position)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise ValueError(f"{args.position}: not JSON (line {e.lineno}: {e.msg})") from None
    fmt = data.get("format") if isinstance(data, dict) else None
    if fmt == "feudo-state/1":
        from engine.serialize import state_from_json

        return state_from_json(data)
    if fmt == RECORD_FORMAT:
        record = GameRecord.from_dict(data, source=args.position)
        if args.actions is not None:
            if not 0 <= args.actions <= len(record.actions):
                raise ValueError(f"--actions: expected 0..{len(record.actions)}, got {args.actions}")
            record.actions = record.actions[:args.actions]
        return record.replay()
    try:
        return json_format.Parse(text, gpb.Position())
    except json_format.ParseError as e:
        raise ValueError(f"{args.position}: neither a feudo-state/1, a feudo-game/1 nor a feudo.v1.Position "
                         f"({e})") from None


def cmd_advise(args: argparse.Namespace) -> int:
    from feudo.v1 import game_pb2 as gpb

    from feudo_ai.search import advise
    from .advisor import service_options
    from .convert import check_decision, observed_position, position_from

    position = _read_position(args)
    if args.server:
        from feudo_ai.client import AdvisorClient, AdvisorError

        if args.evaluation != "handmade":
            raise ValueError("--evaluation: the server's operator chooses its evaluation (feudo serve --evaluation); "
                             "use it without --server")
        token = None
        if args.token_file:
            token = _read_file(args.token_file).strip()
        ca = _read_file(args.tls_ca, binary=True) if args.tls_ca else None
        with AdvisorClient(args.server, token=token, root_certificates=ca) as client:
            try:
                advice = client.suggest(position, args.seat, seconds=args.seconds, iterations=args.iterations,
                                        threads=args.threads, seed=args.seed, algorithm=args.algorithm)
            except AdvisorError as e:
                raise ValueError(f"{args.server}: {e}") from None
    else:
        message = position if isinstance(position, gpb.Position) else position_from(position, args.seat)
        observed = observed_position(message, args.seat)
        # a seat not to act is told who is (NotToAct), not that the position is bad; the position is prepared once
        prepared = check_decision(observed)
        iterations = args.iterations
        algorithm = args.algorithm or "ismcts"
        options = service_options(algorithm, observed.game.num_players, dict(
            iterations=iterations, seconds=args.seconds, threads=args.threads or 1, seed=args.seed),
            evaluation=args.evaluation)
        advice = advise(prepared, args.seat, options)
    if args.json:
        print(json.dumps(advice.to_dict(), indent=2))
    else:
        print(advice)
    return 0


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
                   help=f"searches at once, the Advisor's and the matches' bots'; a call beyond: RESOURCE_EXHAUSTED, a "
                        f"bot waits its turn (bots hold at most half) (default {d.max_concurrent_searches})")
    p.add_argument("--max-search-threads", type=int, default=d.max_search_threads,
                   help=f"C search threads at once over all searches (a search of N threads takes N); beyond: "
                        f"RESOURCE_EXHAUSTED (default {d.max_search_threads}: 8 per core)")
    p.add_argument("--search-nice", type=int, default=d.search_nice,
                   help=f"search threads run this much nicer (Linux) than the threads answering calls, so that "
                        f"answers are not starved by searches; the matches' bots too (0-19, default "
                        f"{d.search_nice})")
    p.add_argument("--max-threads", type=int, default=d.max_threads, help=f"threads per search; a bot seat beyond is refused (default {d.max_threads})")
    p.add_argument("--max-seconds", type=float, default=d.max_seconds,
                   help=f"seconds per search; a bot seat beyond is refused (default {d.max_seconds:g})")
    p.add_argument("--max-iterations", type=int, default=d.max_iterations,
                   help=f"iterations per search; a bot seat beyond is refused (default {d.max_iterations})")
    p.add_argument("--max-nodes", type=int, default=d.max_nodes,
                   help=f"node pool of a search worker, 64 bytes a node (default {d.max_nodes})")
    p.add_argument("--max-message-bytes", type=int, default=d.max_message_bytes,
                   help=f"largest request or response (default {d.max_message_bytes})")
    p.add_argument("--evaluation", default=d.evaluation, metavar="handmade|learned|FILE",
                   help="the evaluation of the Advisor's MO-ISMCTS and the hints: handmade (default), learned (the "
                        "shipped model) or a model file (feudo train's output, checked at start-up); a hosted "
                        "match's bot spec may name that file (ismcts:evaluation=FILE), and no other")
    p.add_argument("--grace", type=float, default=10.0,
                   help="seconds calls in flight get at shutdown; bot searches are cancelled at once (default 10)")
    p.add_argument("--drain-delay", type=float, default=0.0,
                   help="seconds between health NOT_SERVING and refusing new calls at shutdown (default 0)")
    p.add_argument("--db", default=None, metavar="PATH|URL",
                   help="SQLite file of the hosted matches, Feudo's and Fief 2's (created if missing; matches in "
                        "it resume at start), or a PostgreSQL URL (postgresql://user:password@host/db) shared by "
                        "several replicas; default: in memory, matches end with the process")
    p.add_argument("--db-pool", type=int, default=10,
                   help="with a PostgreSQL --db: connections in the pool (default 10)")
    p.add_argument("--bot-lease-seconds", type=float, default=match_service.LEASE_SECONDS,
                   help=f"with a PostgreSQL --db: a replica's lease on a match's bots lasts this long without renewal "
                        f"(renewed every sixth of it): a replica killed has its bots moved by another within about "
                        f"this (default {match_service.LEASE_SECONDS:g})")
    p.add_argument("--max-watch-streams", type=int, default=16,
                   help="WatchMatch streams open at once; beyond: RESOURCE_EXHAUSTED (default 16)")
    p.add_argument("--http", default=None, metavar="ADDRESS",
                   help=f"host:port of the same services over HTTP for browsers and curl (Connect protocol) and the "
                        f"web table at / (default {DEFAULT_HTTP}; if that is taken and --http was not given, the "
                        f"server goes on without HTTP and says so)")
    p.add_argument("--no-http", action="store_true", help="serve no HTTP (gRPC only)")
    p.add_argument("--max-http-connections", type=int, default=ServerSettings.max_http_connections,
                   help=f"HTTP connections served at once (each holds a thread; a web table's watch stream holds "
                        f"one); beyond: 503, the Connect error 'unavailable' (default "
                        f"{ServerSettings.max_http_connections})")
    p.add_argument("--open", action="store_true",
                   help="open the web table in the browser once it serves (Python's webbrowser: the BROWSER "
                        "environment variable, else the system's default browser)")
    p.add_argument("--no-grpc", action="store_true", help="serve no gRPC (HTTP only)")
    p.add_argument("--max-matches", type=int, default=match_service.MAX_MATCHES,
                   help=f"live (unfinished) hosted matches held at once; beyond: RESOURCE_EXHAUSTED. Finished and "
                        f"retired matches do not count (default {match_service.MAX_MATCHES})")
    p.add_argument("--match-idle-seconds", type=float, default=match_service.IDLE_SECONDS,
                   help=f"a match waiting for an external seat with no action (and no watch stream) for this long "
                        f"is retired from memory; its next call loads it back (0: never; default "
                        f"{match_service.IDLE_SECONDS:g})")
    p.add_argument("--finished-retention-seconds", type=float, default=match_service.FINISHED_SECONDS,
                   help=f"a finished match is retired from memory this long after it ended; it stays readable from "
                        f"the database (GetRecord, GetObservation, ListMatches) (0: at once; default "
                        f"{match_service.FINISHED_SECONDS:g})")
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
    if args.no_http and args.http:
        raise ValueError("--http and --no-http: choose one")
    if args.no_http and args.no_grpc:
        raise ValueError("--no-http and --no-grpc: nothing to serve")
    http = None if args.no_http else args.http
    if http is None and not args.no_http:  # the default: 8080 if free, otherwise none (said at start)
        try:
            check_address(DEFAULT_HTTP)
            http = DEFAULT_HTTP
        except ListenError as e:
            args.http_skipped = str(e)
    if args.db_pool < 1:
        raise ValueError(f"--db-pool: expected a positive integer, got {args.db_pool}")
    if not 0 < args.bot_lease_seconds < float("inf"):
        raise ValueError(f"--bot-lease-seconds: expected a positive number of seconds, got {args.bot_lease_seconds}")
    if args.max_watch_streams < 1:
        raise ValueError(f"--max-watch-streams: expected a positive integer, got {args.max_watch_streams}")
    if args.max_http_connections < 1:
        raise ValueError(f"--max-http-connections: expected a positive integer, got {args.max_http_connections}")
    if args.max_matches < 1:
        raise ValueError(f"--max-matches: expected a positive integer, got {args.max_matches}")
    for flag, v in (("--match-idle-seconds", args.match_idle_seconds),
                    ("--finished-retention-seconds", args.finished_retention_seconds)):
        if not v >= 0 or v == float("inf"):
            raise ValueError(f"{flag}: expected a non-negative number of seconds, got {v}")
    config = ServiceConfig(max_iterations=args.max_iterations, max_seconds=args.max_seconds,
                           max_threads=args.max_threads, max_concurrent_searches=args.max_concurrent,
                           max_search_threads=args.max_search_threads, search_nice=args.search_nice,
                           max_message_bytes=args.max_message_bytes, max_nodes=args.max_nodes,
                           evaluation=args.evaluation)
    return ServerSettings(address=args.address, config=config, tls_cert=_read(args.tls_cert, "--tls-cert"),
                          tls_key=_read(args.tls_key, "--tls-key"), token=token, metrics_port=args.metrics_port,
                          db=args.db, db_pool=args.db_pool, bot_lease_seconds=args.bot_lease_seconds,
                          max_watch_streams=args.max_watch_streams, http=http,
                          max_http_connections=args.max_http_connections, grpc=not args.no_grpc,
                          max_matches=args.max_matches, match_idle_seconds=args.match_idle_seconds or None,
                          finished_retention_seconds=args.finished_retention_seconds)


def _open_browser(url: str) -> None:
    import webbrowser

    try:
        opened = webbrowser.open(url)
    except webbrowser.Error:
        opened = False
    if not opened:
        print(f"feudo: --open: no browser could be started; open {url} yourself", flush=True)


def serve(args: argparse.Namespace) -> int:
    """Start, print where it listens, drain on SIGTERM/SIGINT; exit status 0 after a graceful stop, 2 (one line on
    stderr) when the server cannot listen."""
    logging.basicConfig(level=getattr(logging, str(args.log_level).upper(), logging.INFO),
                        format="%(asctime)s %(levelname)s %(name)s %(message)s", stream=sys.stderr)
    for handler in logging.getLogger().handlers:  # no log line a client can make arbitrarily long
        handler.addFilter(BoundedLines())
    fix_mmap_threshold()  # process-wide, so here (the process's entry point) and not in FeudoServer
    try:
        server = FeudoServer(settings_from_args(args)).start()
    except (ListenError, StoreError) as e:  # one line, not a traceback: the operator fixes it and starts again
        print(f"{args.prog}: {e}", file=sys.stderr)
        return 2
    stop = threading.Event()

    def on_signal(signum: int, frame: Any) -> None:
        log.info('{"event":"draining","signal":"%s"}', signal.Signals(signum).name)
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    scheme = "TLS" if server.settings.tls_cert else "plaintext"
    where = server.address if server.address else "(no gRPC)"
    print(f"feudo advisor listening on {where} ({scheme}{', token required' if server.settings.token else ''}"
          f"{f', metrics on :{args.metrics_port}' if args.metrics_port is not None else ''}; search node pools at "
          f"most {server.settings.config.pool_bytes_max / 2**20:.0f} MB; "
          f"matches {'in ' + server.matches.store.path if args.db else 'in memory'})", flush=True)
    if server.http_address:
        url = f"http://{server.http_address}/"
        print(f"feudo web table and HTTP (Connect) services on {url}", flush=True)
        if getattr(args, "open", False):
            # in a thread: a browser command may run until the browser is closed, and the server serves meanwhile
            threading.Thread(target=_open_browser, args=(url,), name="open-browser", daemon=True).start()
    elif getattr(args, "http_skipped", None):
        print(f"feudo: no HTTP: {args.http_skipped} (choose one with --http ADDRESS)", flush=True)
    if getattr(args, "open", False) and not server.http_address:
        print("feudo: --open: no web table to open (no HTTP)", flush=True)
    while not stop.wait(0.5):
        pass
    server.drain(grace=args.grace, delay=args.drain_delay)
    print("feudo advisor stopped", flush=True)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="server.py", description="Run the Feudo gRPC services (Advisor, Matches).")
    add_arguments(parser)
    parser.set_defaults(prog="server.py")
    args = parser.parse_args(argv)
    try:
        return serve(args)
    except (ValueError, OSError, RuntimeError) as e:
        print(f"server: error: {e}", file=sys.stderr)
        return 2
