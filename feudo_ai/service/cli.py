"""``feudo serve`` and ``feudo advise``: the Advisor from the command line (registered by :mod:`feudo_ai.cli`).

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
import sys
from typing import Any


def add_commands(sub: Any) -> None:
    """Register ``serve`` and ``advise`` on the ``feudo`` parser's subparsers."""
    from .server import add_arguments

    p = sub.add_parser("serve", help="run the Advisor gRPC service (default 127.0.0.1:50051)",
                       description="Run the Advisor gRPC service (feudo.v1.Advisor) with health and reflection. "
                                   "SIGTERM/SIGINT drain it and exit 0.")
    add_arguments(p)
    p.set_defaults(func=cmd_serve)

    p = sub.add_parser("advise", help="advice for a seat in a position (in-process, or from an Advisor)",
                       description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
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
    p.add_argument("--token-file", default=None, help="with --server: file holding the API token")
    p.add_argument("--tls-ca", default=None, help="with --server: PEM file of the CA or server certificate: TLS")
    p.set_defaults(func=cmd_advise)


def cmd_serve(args: argparse.Namespace) -> int:
    from .server import serve

    return serve(args)


def _read_position(args: argparse.Namespace) -> Any:
    """A ``feudo.v1.Position`` or an engine state, from the POSITION argument."""
    from engine import GameRecord
    from engine.record import RECORD_FORMAT
    from feudo.v1 import game_pb2 as gpb
    from google.protobuf import json_format

    if args.position == "-":
        text = sys.stdin.read()
    else:
        with open(args.position, encoding="utf-8") as f:
            text = f.read()
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

        token = None
        if args.token_file:
            with open(args.token_file, encoding="utf-8") as f:
                token = f.read().strip()
        ca = None
        if args.tls_ca:
            with open(args.tls_ca, "rb") as f:
                ca = f.read()
        with AdvisorClient(args.server, token=token, root_certificates=ca) as client:
            try:
                advice = client.suggest(position, args.seat, seconds=args.seconds, iterations=args.iterations,
                                        threads=args.threads, seed=args.seed, algorithm=args.algorithm)
            except AdvisorError as e:
                raise ValueError(f"{args.server}: {e}") from None
    else:
        message = position if isinstance(position, gpb.Position) else position_from(position, args.seat)
        observed = observed_position(message, args.seat)
        check_decision(observed)  # a seat not to act is told who is (NotToAct), not that the position is bad
        iterations = args.iterations
        algorithm = args.algorithm or "ismcts"
        options = service_options(algorithm, observed.game.num_players, dict(
            iterations=iterations, seconds=args.seconds, threads=args.threads or 1, seed=args.seed))
        advice = advise(observed, args.seat, options)
    if args.json:
        print(json.dumps(advice.to_dict(), indent=2))
    else:
        print(advice)
    return 0
