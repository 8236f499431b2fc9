"""The HTTP server's own limits on connections (feudo_ai/wire/web.py): at most `max_http_connections` served at
once, each a thread; one beyond waits at most REFUSE_AFTER_SECONDS for a slot, then is answered with 503 and the
Connect error `unavailable` (no thread, no traceback), and is served again once a connection ends; a connection that sends nothing is closed after the idle
time; `feudo serve --max-http-connections` refuses a cap below 1 by the flag's name."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import urllib.parse

import pytest
from service_helpers import ROOT
from service_helpers import post_json as post

from feudo_ai.wire import web
from feudo_ai.wire.server import FeudoServer, ServerSettings


def hello_app(environ, start_response):
    start_response("200 OK", [("Content-Type", "application/json"), ("Content-Length", "11")])
    return [b'{"ok":true}']


@pytest.fixture
def serve():
    servers = []

    def start(max_connections: int) -> str:
        server = web.HttpServer("127.0.0.1:0", hello_app, max_connections).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.port}"

    yield start
    for server in servers:
        server.stop()


def hold(url: str) -> socket.socket:
    """A connection that sent half a request: its thread waits for the rest, so it holds one of the slots."""
    where = urllib.parse.urlsplit(url)
    sock = socket.create_connection((where.hostname, where.port))
    sock.sendall(b"POST /x HTTP/1.1\r\nHost: test\r\n")
    return sock


def until(condition, seconds: float = 10.0) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


def test_a_connection_beyond_the_cap_gets_503_unavailable_then_is_served_once_one_ends(serve, caplog):
    url = serve(2)
    # the two held connections come first: a finished call's thread gives its slot back a moment after the client
    # has its answer, so a call made just before could still hold one
    held = [hold(url), hold(url)]
    time.sleep(0.3)  # both accepted and in their threads
    status, body = post(f"{url}/a", {})
    assert status == 503 and body["code"] == "unavailable" and "maximum number of HTTP connections" in body["message"]
    assert caplog.text.count("refused a connection") == 1  # that call's, not a held one's
    held[0].close()  # its thread reads the end of the stream and gives its slot back
    assert until(lambda: post(f"{url}/a", {})[0] == 200)
    held[1].close()


def test_the_slots_come_back_after_many_connections(serve):
    url = serve(3)
    for _ in range(20):  # more connections one after another than the cap: each gives its slot back (a moment
        # after its answer, hence the wait; a slot kept would refuse every call from the fourth on)
        assert until(lambda: post(f"{url}/a", {}) == (200, {"ok": True}))


def test_a_silent_connection_is_closed_after_the_idle_time(serve, monkeypatch):
    monkeypatch.setattr(web._Handler, "timeout", 0.5)
    url = serve(1)
    sock = hold(url)
    sock.settimeout(10)
    started = time.monotonic()
    assert sock.recv(1024) == b""  # the server closed it (no answer to half a request)
    assert time.monotonic() - started < 5
    sock.close()
    assert until(lambda: post(f"{url}/a", {})[0] == 200)  # and its slot is free again


def test_serve_refuses_a_cap_below_one_by_the_flags_name():
    out = subprocess.run([sys.executable, "-m", "feudo_ai", "serve", "--address", "127.0.0.1:0", "--http",
                          "127.0.0.1:0", "--max-http-connections", "0"], cwd=str(ROOT), capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 2 and "--max-http-connections: expected a positive integer" in out.stderr
    assert "Traceback" not in out.stderr


def test_the_server_settings_refuse_a_cap_below_one_before_listening():
    with pytest.raises(ValueError, match="max_http_connections: expected a positive integer, got 0"):
        FeudoServer(ServerSettings(address="127.0.0.1:0", http="127.0.0.1:0", max_http_connections=0))
