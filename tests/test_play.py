"""`feudo play` driven through its standard input over whole games (a real subprocess, as a person would)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from engine import GameRecord


def _play(args: list[str], script: str, timeout: float = 240) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "feudo_ai", "play", *args], input=script, text=True,
                          capture_output=True, timeout=timeout)


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> tuple[subprocess.CompletedProcess, Path]:
    save = tmp_path_factory.mktemp("play") / "game.json"
    script = "\n".join(["help", "99", "no such move", "hint", "log", "board", f"save {save}"] + ["1"] * 3000) + "\n"
    run = _play(["--players", "2", "--seat", "0", "--bots", "greedy", "--seed", "3", "--hint-seconds", "0.05",
                 "--turns", "3"], script)
    return run, save


def test_a_scripted_game_finishes(finished):
    run, _ = finished
    assert run.returncode == 0, run.stderr[-2000:]
    assert "Game over:" in run.stdout
    assert "Traceback" not in run.stdout + run.stderr


def test_bad_input_is_refused_with_the_choices(finished):
    out = finished[0].stdout
    assert "no choice 99: pick 1-" in out
    assert "not a choice: 'no such move' is not a legal action" in out


def test_hint_gives_the_advice(finished):
    out = finished[0].stdout
    assert "thinking..." in out and "Advice for your moves until new information arrives (Blue): castle at" in out and "iterations" in out


def test_r22_the_bots_secret_picks_are_never_shown(finished):
    out = finished[0].stdout
    assert re.search(r"White: selects (a card|\d cards) \(hidden\)", out)  # consecutive picks: one line
    assert "White: select " not in out  # a bot's pick is never printed by name before it is revealed


def test_fights_are_spelled_out(finished):
    out = finished[0].stdout
    lines = [line for line in out.splitlines() if " attack " in line and " against " in line]
    assert lines, "no fight narrated"
    assert all(("wins" in line or "repelled" in line) for line in lines)


def test_save_writes_a_record_replay_accepts(finished):
    _, save = finished
    record = GameRecord.load(save)
    assert record.players == 2 and record.actions
    record.replay()


def test_quit_and_end_of_input_leave_cleanly():
    run = _play(["--players", "2", "--bots", "random", "--seed", "1"], "quit\n", timeout=60)
    assert run.returncode == 0 and "game left" in run.stdout and "feudo play --resume FILE" in run.stdout
    run = _play(["--players", "2", "--bots", "random", "--seed", "1"], "", timeout=60)
    assert run.returncode == 1 and "input ended" in run.stdout


def test_bad_flags_are_named():
    run = _play(["--players", "2", "--seat", "2"], "", timeout=60)
    assert run.returncode == 2 and "--seat" in run.stderr
    run = _play(["--players", "3", "--bots", "greedy,random,random"], "", timeout=60)
    assert run.returncode == 2 and "--bots" in run.stderr
