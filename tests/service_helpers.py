"""Helpers of the service tests: in-process servers on free loopback ports, positions by phase, and a unary Connect
call over HTTP with JSON."""

from __future__ import annotations

import contextlib
import json
import random
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from functools import lru_cache
from pathlib import Path
from typing import Iterator

from engine import Phase, new_game, sample_chance

from feudo_ai.client import AdvisorClient
from feudo_ai.wire.advisor import ServiceConfig
from feudo_ai.wire.server import FeudoServer, ServerSettings

ROOT = Path(__file__).resolve().parent.parent

# the decisions of a player (chance and the end left out)
DECISION_PHASES = (Phase.PLACE_CASTLE, Phase.CHOOSE_ORDER, Phase.SELECT, Phase.REVEAL, Phase.MOVE, Phase.MILADY,
                   Phase.MARCH, Phase.ATTACK, Phase.ATTACK_JOIN, Phase.ADVANCE)


@contextlib.contextmanager
def running_server(**settings) -> Iterator[FeudoServer]:
    config = settings.pop("config", None) or ServiceConfig()
    server = FeudoServer(ServerSettings(address="127.0.0.1:0", config=config, **settings)).start()
    try:
        yield server
    finally:
        server.stop()


@lru_cache(maxsize=None)
def _by_phase(players: int) -> dict:
    """The first decision state of each phase over seeded random games (reference engine)."""
    found: dict = {}
    for seed in range(1, 5):  # enough for every phase but sometimes MILADY (rare); kept short for speed
        rng = random.Random(seed)
        state = new_game(players=players, seed=seed)
        while not state.is_terminal() and len(found) < len(DECISION_PHASES):
            if state.is_chance_node():
                state.apply_action(sample_chance(state, rng))
                continue
            ph = Phase(state.phase)
            if ph not in found and len(state.legal_actions()) > 1:
                found[ph] = state.clone()
            state.apply_action(rng.choice(state.legal_actions()))
        if len(found) == len(DECISION_PHASES):
            break
    return found


def positions_by_phase(players: int) -> dict:
    return {ph: s.clone() for ph, s in _by_phase(players).items()}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_process(*args: str, port: int | None = None) -> tuple[subprocess.Popen, int]:
    """``python server.py --address 127.0.0.1:PORT ARGS`` as a subprocess, once it serves (health SERVING)."""
    port = port or free_port()
    proc = subprocess.Popen([sys.executable, str(ROOT / "server.py"), "--address", f"127.0.0.1:{port}", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=str(ROOT))
    client = AdvisorClient(f"127.0.0.1:{port}")
    deadline = time.monotonic() + 30
    try:
        while True:
            if proc.poll() is not None:
                raise AssertionError(f"server exited {proc.returncode}: {proc.stderr.read()}")
            try:
                if client.health(timeout=1.0) == "SERVING":
                    return proc, port
            except Exception:  # noqa: BLE001 - not listening yet
                pass
            if time.monotonic() > deadline:
                proc.kill()
                raise AssertionError("server did not start in 30 s")
            time.sleep(0.1)
    finally:
        client.close()


def post_json(url: str, body: dict | bytes, headers: dict | None = None, timeout: float = 30) -> tuple[int, dict]:
    """A unary Connect call with JSON, as `curl -X POST -H 'Content-Type: application/json' -d ...` makes it: the
    HTTP status and the decoded answer (the error's {code, message} for a status other than 200)."""
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method="POST",
                                 headers={"Content-Type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())
