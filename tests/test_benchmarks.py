"""The benchmark scripts run and print what their docstrings promise (a smoke test: tiny runs, no speed or
strength target is asserted here; the targets live in the benchmarks' own output)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_strength_benchmark_json() -> None:
    out = _run("benchmarks/strength.py", "--quick", "--only", "vs random", "--games", "2", "--jobs", "1",
               "--json")
    assert out.returncode == 0, out.stderr
    summary = json.loads(out.stdout)
    assert summary["suite"] == "targets" and summary["games"] == 4
    names = [p["name"] for p in summary["pairings"]]
    assert names == ["greedy vs random (2p)", "ismcts vs random (2p, 2000 it)"]
    for p in summary["pairings"]:
        assert p["games"] == 2 and 0.0 <= p["win_rate_a"] <= 1.0
        lo, hi = p["wilson95"]
        assert 0.0 <= lo <= p["win_rate_a"] <= hi <= 1.0
        assert p["target"]


def test_strength_benchmark_rejects_bad_arguments() -> None:
    for args in (["--games", "0"], ["--only", "no such pairing"], ["--suite", "nope"], ["--jobs", "0"]):
        out = _run("benchmarks/strength.py", *args)
        assert out.returncode == 2 and "Traceback" not in out.stderr, (args, out.stderr)
        assert args[0] in out.stderr
