"""Every example in README.md and docs/*.md runs as written.

What runs (the rules are also stated in docs/README.md, "Examples are tested"):

- every ```python block, as a script of its own (``python -c``) in an empty directory;
- every ```console block: its ``$ `` lines, one bash script (``set -euo pipefail``), where ``feudo`` is this
  checkout's ``python -m feudo_ai`` and ``python`` is the tests' interpreter; the output lines shown are not
  compared (they depend on the machine), the commands must exit 0. Standard input is empty, so an interactive
  command (``feudo play``, ``feudo companion``) leaves at its first question, with status 1 ("the person
  quit"), which passes; a bad flag (status 2) or a traceback fails.

Examples that talk to a server use the address ``127.0.0.1:50051`` (where ``feudo serve`` listens by default):
the test starts one in-process server (Advisor and Matches) on a free port and puts its address there instead.

A block may be left out only with a visible marker on the line right above its fence:
``<!-- example: not run: REASON -->`` (e.g. it runs until stopped, or for an hour), or
``<!-- example: needs TOOL[, TOOL] -->`` (external programs: skipped where they are not installed).
Plain ``` blocks (install commands, configuration files) are not examples; ```sh, ```bash and ```py fences are
refused, so that no command block escapes the test by its language name.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
PLACEHOLDER = "127.0.0.1:50051"
TIMEOUT = 60  # seconds for one block: an example that hangs fails
FENCE = re.compile(r"^```([A-Za-z0-9_+-]*)[ \t]*$")
MARKER = re.compile(r"^<!-- example: (.*?) -->\s*$")
RUN_LANGS = ("python", "console")
INTERACTIVE = re.compile(r"^feudo (play|companion)\b(?![^#]*\|)")  # not piped into something
REFUSED_LANGS = ("sh", "bash", "shell", "shell-session", "py", "python3", "pycon", "zsh")


def _blocks(path: Path) -> list[tuple[int, str, str, str | None]]:
    """(line of the opening fence, language, body, marker) of each fenced block of a Markdown file."""
    lines = path.read_text().splitlines()
    blocks, i = [], 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        lang, start = m.group(1), i
        marker = MARKER.match(lines[i - 1]) if i > 0 else None
        j = i + 1
        while j < len(lines) and not lines[j].startswith("```"):
            j += 1
        blocks.append((start + 1, lang, "\n".join(lines[i + 1:j]) + "\n", marker.group(1) if marker else None))
        i = j + 1
    return blocks


def _examples() -> list:
    params = []
    for path in DOCUMENTS:
        for line, lang, body, marker in _blocks(path):
            if lang in RUN_LANGS:
                params.append(pytest.param(path, line, lang, body, marker,
                                           id=f"{path.relative_to(ROOT)}:{line}"))
    return params


def _console_script(body: str) -> str:
    """The ``$ `` commands of a console block (a line ending in ``\\``, or inside an open ``"``, continues)."""
    commands, current = [], None
    for line in body.splitlines():
        if current is not None:
            current.append(line)
        elif line.startswith("$ "):
            current = [line[2:]]
        else:
            continue
        text = "\n".join(current)
        if not line.rstrip().endswith("\\") and text.count('"') % 2 == 0:  # not continued, no open "string"
            commands.append(text)
            current = None
    if current is not None:
        commands.append("\n".join(current))
    assert commands, "a console block without any `$ ` command"
    # an interactive command reads an empty standard input: it leaves at its first question with status 1 (the
    # person quit), which is its success here; a bad flag (2) or a crash still fails
    commands = [f"{{ {c}\n}} || test $? -eq 1" if INTERACTIVE.match(c) else c for c in commands]
    prelude = ('set -euo pipefail\n'
               'feudo() { "$FEUDO_PYTHON" -m feudo_ai "$@"; }\n'
               'python() { "$FEUDO_PYTHON" "$@"; }\n'
               'python3() { "$FEUDO_PYTHON" "$@"; }\n')
    return prelude + "\n".join(commands) + "\n"


@pytest.fixture(scope="module")
def server_address():
    from service_helpers import running_server

    with running_server() as server:
        yield server.address


def run_example(path: Path, line: int, lang: str, body: str, cwd: Path, address: str | None = None
                ) -> subprocess.CompletedProcess:
    if address is not None:
        body = body.replace(PLACEHOLDER, address)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
           "FEUDO_PYTHON": sys.executable, "PYTHONUNBUFFERED": "1"}
    if lang == "python":
        cmd = [sys.executable, "-c", body]
    else:
        cmd = ["bash", "-c", _console_script(body)]
    try:
        return subprocess.run(cmd, cwd=cwd, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              timeout=TIMEOUT)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"{path.name}:{line}: the example did not finish in {TIMEOUT} s\n{e.stdout}\n{e.stderr}")


@pytest.mark.parametrize("path, line, lang, body, marker", _examples())
def test_example_runs(path, line, lang, body, marker, tmp_path, request) -> None:
    if marker is not None:
        if marker.startswith("not run:") and marker[len("not run:"):].strip():
            pytest.skip(f"{path.name}:{line}: {marker}")
        elif marker.startswith("needs "):
            missing = [t.strip() for t in marker[len("needs "):].split(",") if not shutil.which(t.strip())]
            if missing:
                pytest.skip(f"{path.name}:{line}: needs {', '.join(missing)}")
        else:
            pytest.fail(f"{path.name}:{line}: unknown example marker {marker!r} "
                        "(expected 'not run: REASON' or 'needs TOOL, ...')")
    address = request.getfixturevalue("server_address") if PLACEHOLDER in body else None
    result = run_example(path, line, lang, body, tmp_path, address)
    assert result.returncode == 0 and "Traceback" not in result.stderr, (
        f"{path.name}:{line}: the example failed (exit {result.returncode})\n"
        f"--- stdout\n{result.stdout[-3000:]}\n--- stderr\n{result.stderr[-3000:]}")


def test_no_command_block_escapes_the_test() -> None:
    """Code blocks are ```python or ```console (run above) or plain ``` (not examples): no other language."""
    bad = [f"{p.relative_to(ROOT)}:{line} ```{lang}" for p in DOCUMENTS for line, lang, _, _ in _blocks(p)
           if lang in REFUSED_LANGS]
    assert not bad, f"use ```console (commands) or ```python, which the examples test runs: {bad}"


def test_examples_are_found() -> None:
    """The collection itself works: README, docs/search.md and docs/service.md hold their examples."""
    wanted = {"README.md": ("feudo play", "feudo companion", "feudo arena", "--game fief2"),  # serve: its own test
              "docs/search.md": ("feudo_ai.advise(",),
              "docs/service.md": ("AdvisorClient(", "MatchesClient(", "from fief2.v1 import")}
    for name, needles in wanted.items():
        joined = "\n".join(b for _, lang, b, _ in _blocks(ROOT / name) if lang in RUN_LANGS)
        for needle in needles:
            assert needle in joined, f"{name} lost its example of {needle}"


def test_readme_advice_example_prints_a_whole_selection(tmp_path) -> None:
    """The advice example (docs/search.md, linked from README) asks for seat 3's secret selection and prints it
    (four picks) with a belief."""
    [(line, body)] = [(ln, b) for ln, lang, b, _ in _blocks(ROOT / "docs" / "search.md")
                      if lang == "python" and "feudo_ai.advise(" in b]
    result = run_example(ROOT / "docs" / "search.md", line, "python", body, tmp_path)
    assert result.returncode == 0, result.stderr
    assert "seat 3 selection:" in result.stdout


# ------------------------------------------------------------------------------------------ the main command
def readme_command(marker: str) -> str:
    """The command on the line after ``<!-- MARKER -->`` and its fence, as .ci/run reads the test command."""
    lines = (ROOT / "README.md").read_text().splitlines()
    i = lines.index(f"<!-- {marker} -->")
    assert lines[i + 1] == "```", f"README.md: a plain ``` fence right after <!-- {marker} -->"
    return lines[i + 2]


def _port_free(port: int) -> bool:
    import socket

    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _start_serve(argv: list[str], env: dict | None = None):
    """``feudo serve`` (this checkout's) as a process, and the two lines it prints once it serves: its gRPC and
    HTTP addresses; fails with its output if they do not come within 60 s."""
    import queue
    import threading

    proc = subprocess.Popen([sys.executable, "-m", "feudo_ai", *argv], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1", **(env or {})})
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=lambda: [lines.put(x) for x in proc.stdout], daemon=True).start()
    seen: list[str] = []
    try:
        while not any("http://" in x for x in seen):
            seen.append(lines.get(timeout=60))
    except Exception:
        proc.kill()
        pytest.fail(f"feudo {' '.join(argv)} printed no URL in 60 s:\n{''.join(seen)}\n{proc.stderr.read()}")
    return proc, seen, lines


def _stop_serve(proc, lines) -> str:
    import queue
    import signal

    proc.send_signal(signal.SIGINT)  # Ctrl-C, as a person stops it
    try:
        code = proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    rest = []
    while True:
        try:
            rest.append(lines.get(timeout=1))
        except queue.Empty:
            break
    assert code == 0, f"feudo serve exited {code}: {proc.stderr.read()}"
    return "".join(rest)


def test_readme_main_command_serves_the_web_table() -> None:
    """README's main command sets up and starts ``feudo serve``: its ``feudo serve`` part runs as written (the
    set-up before it is this checkout's environment), prints the web table's URL, which answers the page and a
    Connect call (DescribeGame), and Ctrl-C stops it with status 0. Run exactly as written when its default ports
    (50051, 8080) are free; when this machine uses them already, with ``--address``/``--http`` on free ports
    added (the test says so in its output)."""
    import json
    import shlex
    import urllib.request

    from service_helpers import free_port

    command = readme_command("main-command")
    parts = [p.strip() for p in command.split("&&")]
    assert parts[:3] == ["python3 -m venv .venv", ". .venv/bin/activate", "pip install -e ."], command
    serve = shlex.split(parts[-1])
    assert serve[:2] == ["feudo", "serve"], f"README's main command does not end with feudo serve: {command}"
    argv = serve[1:]
    if not (_port_free(50051) and _port_free(8080)):
        argv += ["--address", f"127.0.0.1:{free_port()}", "--http", f"127.0.0.1:{free_port()}"]
        print(f"ports 50051/8080 are in use here: ran feudo {' '.join(argv)}")
    proc, seen, lines = _start_serve(argv)
    try:
        text = "".join(seen)
        assert "feudo advisor listening on 127.0.0.1:" in text
        url = re.search(r"web table and HTTP \(Connect\) services on (http://127\.0\.0\.1:\d+/)", text).group(1)
        if "--http" not in argv:
            assert url == "http://127.0.0.1:8080/"  # the address the README tells the person to open
        with urllib.request.urlopen(url, timeout=30) as page:
            html = page.read().decode()
        assert page.status == 200 and "<html" in html.lower() and "app.js" in html
        request = urllib.request.Request(url + "feudo.v1.Advisor/DescribeGame", data=json.dumps(
            {"setup": {"players": 2}}).encode(), headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=30) as answer:
            game = json.loads(answer.read())["game"]
        assert len(game["territories"]) > 90 and game["playerNames"] == ["Blue", "White"]
        labels = {t["label"] for t in game["territories"]}
        assert "Wood C2" in labels  # the board's names, as the terminal and README use them
    finally:
        out = _stop_serve(proc, lines)
    assert "feudo advisor stopped" in out


def test_serve_open_opens_the_web_table_in_the_browser(tmp_path) -> None:
    """``feudo serve --open`` hands the web table's URL to the browser (Python's webbrowser, which runs the
    BROWSER command: here a script that writes what it was given)."""
    from service_helpers import free_port

    browser, opened = tmp_path / "browser", tmp_path / "opened.txt"
    browser.write_text(f'#!/bin/sh\nprintf "%s" "$1" > {opened}\n')
    browser.chmod(0o755)
    http = f"127.0.0.1:{free_port()}"
    proc, seen, lines = _start_serve(["serve", "--open", "--address", f"127.0.0.1:{free_port()}", "--http", http],
                                     env={"BROWSER": str(browser)})
    try:
        for _ in range(300):  # the browser is started in a thread once the server serves: wait for its file
            if opened.exists() and opened.read_text() or proc.poll() is not None:
                break
            time.sleep(0.1)
        assert opened.read_text() == f"http://{http}/"
    finally:
        _stop_serve(proc, lines)


def test_fief2_service_example_plays_a_hosted_match_to_its_end(tmp_path, server_address) -> None:
    """docs/service.md's Fief 2 example (fief2.v1 stubs) plays its seat against two greedy bots to the end and reads
    the record."""
    [(line, body)] = [(ln, b) for ln, lang, b, _ in _blocks(ROOT / "docs" / "service.md")
                      if lang == "python" and "from fief2.v1 import" in b]
    result = run_example(ROOT / "docs" / "service.md", line, "python", body, tmp_path, server_address)
    assert result.returncode == 0, result.stderr
    import json

    villages = len(json.loads((ROOT / "fief2" / "data" / "maps" / "default.json").read_text())["villages"])
    assert f"{villages} villages" in result.stdout
    assert "winners:" in result.stdout and "fief2-game/1" in result.stdout
