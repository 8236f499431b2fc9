"""The Advisor as real processes: graceful shutdown on signals, `feudo serve`, and scale-out over two replicas with
gRPC's own round_robin load balancing."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time

import grpc
import pytest
from engine import Phase
from service_helpers import ROOT, free_port, positions_by_phase, start_process

from feudo_ai.client import AdvisorClient, AdvisorError

# ~35 s: in the default run (signals, drain and scale-out are the service's behaviour), timed by wall clock
pytestmark = pytest.mark.timing


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_signal_drains_health_then_finishes_calls_in_flight_and_exits_0(sig):
    proc, port = start_process("--drain-delay", "1.0", "--grace", "10")
    state = positions_by_phase(2)[Phase.MOVE]
    seat = state.current_player()
    try:
        with AdvisorClient(f"127.0.0.1:{port}") as c:
            assert c.legal_actions(state, seat)  # connected, and the client's caches warm
            box = {}

            def ask():
                try:
                    box["advice"] = c.suggest(state, seat, seconds=2.0)
                except AdvisorError as e:  # pragma: no cover - reported by the assertion below
                    box["error"] = e

            caller = threading.Thread(target=ask)
            caller.start()
            time.sleep(0.5)  # the search is running
            proc.send_signal(sig)
            time.sleep(0.4)
            assert c.health() == "NOT_SERVING"  # load balancers stop sending here
            caller.join(15)
            assert "error" not in box, box.get("error")
            assert box["advice"].best in state.legal_actions() and box["advice"].stats.elapsed >= 1.5
        assert proc.wait(15) == 0
        err = proc.stderr.read()
        assert '"event":"draining"' in err and '"method":"Suggest"' in err and "Traceback" not in err
    finally:
        if proc.poll() is None:
            proc.kill()


def test_feudo_serve_prints_where_it_listens_and_answers():
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "feudo_ai", "serve", "--address", f"127.0.0.1:{port}"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=str(ROOT))
    try:
        line = proc.stdout.readline()
        assert line.startswith(f"feudo advisor listening on 127.0.0.1:{port}")
        with AdvisorClient(f"127.0.0.1:{port}") as c:
            assert c.describe_game(players=2).num_distinct_actions > 0
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(15) == 0
    finally:
        if proc.poll() is None:
            proc.kill()


def test_bad_flags_exit_2_without_traceback(tmp_path):
    out = subprocess.run([sys.executable, str(ROOT / "server.py"), "--address", "127.0.0.1:0", "--tls-cert",
                          str(tmp_path / "missing.pem"), "--tls-key", str(tmp_path / "missing.key")],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and "--tls-cert" in out.stderr and "Traceback" not in out.stderr


def test_a_port_in_use_is_one_line_and_exit_2():
    """Another process listens on the port: `feudo serve` and `server.py` say so in one line (no traceback, no gRPC
    log) and exit 2."""
    port = free_port()
    holder = subprocess.Popen([sys.executable, "-c", "import socket, sys\n"
                               f"s = socket.create_server(('127.0.0.1', {port}))\n"
                               "print('listening', flush=True)\nsys.stdin.read()"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "listening"
        for prog, command in (("feudo serve", [sys.executable, "-m", "feudo_ai", "serve"]),
                              ("server.py", [sys.executable, str(ROOT / "server.py")])):
            out = subprocess.run([*command, "--address", f"127.0.0.1:{port}"], capture_output=True, text=True,
                                 timeout=60, cwd=str(ROOT))
            assert out.returncode == 2, out.stderr
            assert out.stderr.splitlines() == [f"{prog}: cannot listen on 127.0.0.1:{port}: address already in use"]
            assert out.stdout == ""
    finally:
        holder.stdin.close()
        holder.wait(10)


def test_scale_out_two_replicas_behind_one_round_robin_channel():
    """The Advisor is stateless: a client channel balances over two server processes (gRPC round_robin), and
    both answer."""
    procs = [start_process(), start_process()]
    state = positions_by_phase(3)[Phase.REVEAL]
    seat = state.current_player()
    try:
        target = "ipv4:" + ",".join(f"127.0.0.1:{port}" for _, port in procs)
        with AdvisorClient(target, load_balancing="round_robin") as c:
            c.wait_ready(10)
            answers = [c.suggest(state, seat, iterations=200, seed=1) for _ in range(10)]
        assert len({(a.best, a.plan) for a in answers}) == 1  # same seed, same budget: same advice anywhere
        for proc, _ in procs:
            proc.send_signal(signal.SIGTERM)
        served = []
        for proc, _ in procs:
            assert proc.wait(15) == 0
            lines = [json.loads(x.split(" feudo.service ", 1)[1]) for x in proc.stderr.read().splitlines()
                     if " feudo.service {" in x]
            served.append(sum(1 for x in lines if x.get("method") == "Suggest" and x["status"] == "OK"))
        assert sum(served) == 10 and min(served) >= 3, served  # round robin: about half each
    finally:
        for proc, _ in procs:
            if proc.poll() is None:
                proc.kill()


def test_one_replica_down_the_other_answers():
    procs = [start_process(), start_process()]
    state = positions_by_phase(2)[Phase.REVEAL]
    seat = state.current_player()
    try:
        target = "ipv4:" + ",".join(f"127.0.0.1:{port}" for _, port in procs)
        with AdvisorClient(target, load_balancing="round_robin") as c:
            c.wait_ready(10)
            procs[0][0].send_signal(signal.SIGTERM)
            assert procs[0][0].wait(15) == 0
            for _ in range(4):
                try:
                    advice = c.suggest(state, seat, iterations=100)
                except AdvisorError as e:  # the channel may try the stopped one once before it notices
                    assert e.code == grpc.StatusCode.UNAVAILABLE
                    continue
                assert advice.best in state.legal_actions()
            assert c.suggest(state, seat, iterations=100).best in state.legal_actions()
    finally:
        for proc, _ in procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                proc.wait(15)
