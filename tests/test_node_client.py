"""The contract tested from outside Python: clients/node plays hosted matches with code generated from the protos.

A real server process on a free loopback port; ``npm ci`` in clients/node (its ``prepare`` script generates the
client's code from proto/feudo/v1 with buf and protoc-gen-es; kept in node_modules while package-lock.json is
unchanged, the code regenerated every run); then ``node play.js`` for a 2-player match (the history form, every
SubmitAction sent twice) and a 4-player one (the observation form). Node and npm are required, never skipped: CI's
``.ci/run`` installs them when absent.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import time

import pytest
from service_helpers import ROOT, free_port

NODE_DIR = ROOT / "clients" / "node"
STAMP = NODE_DIR / "node_modules" / ".feudo-package-lock.sha256"   # the lockfile node_modules was installed from


def _run(command: list[str], timeout: float) -> subprocess.CompletedProcess:
    return subprocess.run(command, cwd=str(NODE_DIR), capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "npm_config_fund": "false", "npm_config_audit": "false",
                               "npm_config_update_notifier": "false"})


@pytest.fixture(scope="module")
def node_client():
    """clients/node installed and its code generated from today's protos; the path of `node`."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.fail("the Node.js client test needs `node` and `npm` on PATH (Node 18.14+): .ci/run installs them "
                    "(apt-get install -y nodejs npm); by hand, install Node.js and npm, then run this test again")
    lock = hashlib.sha256((NODE_DIR / "package-lock.json").read_bytes()).hexdigest()
    if not STAMP.exists() or STAMP.read_text() != lock:
        out = _run([npm, "ci"], timeout=600)     # its `prepare` script runs `buf generate`
        assert out.returncode == 0, f"npm ci failed:\n{out.stdout}\n{out.stderr}"
        STAMP.write_text(lock)
    else:
        out = _run([npm, "run", "generate"], timeout=120)   # the protos may have changed since
        assert out.returncode == 0, f"npm run generate failed:\n{out.stdout}\n{out.stderr}"
    assert (NODE_DIR / "gen" / "feudo" / "v1" / "matches_pb.js").exists()
    return node


@pytest.fixture(scope="module")
def server_log(tmp_path_factory):
    return tmp_path_factory.mktemp("node-client") / "server.log"


@pytest.fixture(scope="module")
def address(server_log):
    """`python server.py` on a free loopback port, its log (one line a call) in a file, once it serves."""
    from feudo_ai.client import AdvisorClient

    port = free_port()
    with open(server_log, "w") as log:
        proc = subprocess.Popen([sys.executable, str(ROOT / "server.py"), "--address", f"127.0.0.1:{port}"],
                                stdout=log, stderr=subprocess.STDOUT, cwd=str(ROOT))
    try:
        with AdvisorClient(f"127.0.0.1:{port}") as client:
            deadline = time.monotonic() + 30
            while True:
                assert proc.poll() is None, f"server exited {proc.returncode}: {server_log.read_text()}"
                assert time.monotonic() < deadline, f"server did not serve in 30 s: {server_log.read_text()}"
                try:
                    if client.health(timeout=1.0) == "SERVING":
                        break
                except Exception:  # noqa: BLE001 - not listening yet
                    time.sleep(0.1)
        yield f"127.0.0.1:{port}"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:  # pragma: no cover - a server that does not drain
            proc.kill()
            proc.wait()


@pytest.mark.parametrize("players, seat, bots, form, extra", [
    (2, 1, "medium", "history", ["--double-submit"]),
    (4, 2, "medium,easy,easy", "observation", []),
], ids=["2-players-history-form", "4-players-observation-form"])
def test_node_client_plays_a_hosted_match_advised_at_every_decision(node_client, address, server_log, players, seat,
                                                                    bots, form, extra):
    command = [node_client, "play.js", "--address", address, "--players", str(players), "--seat", str(seat),
               "--bots", bots, "--form", form, "--seed", "3", "--iterations", "100", "--timeout", "90", *extra]
    out = _run(command, timeout=120)
    log_tail = "\n".join(server_log.read_text().splitlines()[-20:])
    assert out.returncode == 0, (f"node play.js exited {out.returncode}:\n{out.stdout}\n{out.stderr}\n"
                                 f"the server's log, last lines:\n{log_tail}")
    summary = json.loads(out.stdout.strip().splitlines()[-1])
    assert summary["ok"] and summary["error"] is None and summary["errors"] == []
    assert summary["finished"] and summary["winners"] and len(summary["vp"]) == players
    assert summary["decisions"] > 20                      # Castle, orders, selections, reveals... over 10 turns
    assert summary["suggests"] == summary["legal_checks"] == summary["advised_legal"] == summary["decisions"]
    assert summary["submits"] == summary["decisions"] and summary["advised_illegal"] == 0
    assert summary["retries"] == (summary["decisions"] if "--double-submit" in extra else 0)
    assert {"PLACE", "SELECT", "TRADE", "REVEAL"} <= set(summary["by_range"])
    assert summary["actions"] == summary["events"] - 1 > summary["decisions"]   # every entry watched, then the end


# ------------------------------------------------------------------------------------------ the protos' style
def test_the_new_packages_pass_bufs_standard_lint(node_client, tmp_path):
    """tabletop.v1 and fief2.v1 follow Buf's STANDARD rules, checked with the `buf` that clients/node installs from
    its lockfile (feudo.v1, frozen, is left out: its service names predate them)."""
    root = NODE_DIR.parent.parent
    for package in ("tabletop", "fief2"):
        shutil.copytree(root / "proto" / package, tmp_path / package)
    (tmp_path / "buf.yaml").write_text("version: v2\nlint:\n  use:\n    - STANDARD\n")
    buf = NODE_DIR / "node_modules" / ".bin" / "buf"
    result = subprocess.run([str(buf), "lint"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert {p.name for p in (tmp_path / "fief2" / "v1").glob("*.proto")} == {"game.proto", "advisor.proto",
                                                                              "matches.proto"}
