"""The web table's replay in a real browser (Debian's Chromium driven by Playwright, against a real `feudo serve`):
a bots-only match started from the lobby and replayed from its Replay link (stepped by buttons and arrow keys, to
the end, where the VP shown are GetRecord's, read over gRPC), each seat's view and the public view read from the
network (R22: no answer for a seat's view carries another seat's pick); a record of `feudo selfplay --save`
uploaded and stepped through (its final VP checked against the engine's replay of the file); broken files refused
with an error naming the field or the action, leaving the open record as it was."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys

import grpc
import pytest
from service_helpers import ROOT
from test_web_browser import CHROMIUM, playwright  # it skips (or fails, in CI) without the browser

from engine.record import GameRecord
from feudo.v1 import matches_pb2 as mpb
from feudo.v1 import matches_pb2_grpc as mpb_grpc



@pytest.fixture(scope="module")
def server():
    proc = subprocess.Popen([sys.executable, "-m", "feudo_ai", "serve", "--address", "127.0.0.1:0", "--http",
                             "127.0.0.1:0", "--log-level", "WARNING"], cwd=str(ROOT), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    grpc_address = re.search(r"listening on (\S+)", proc.stdout.readline())
    http = re.search(r"(http://\S+)/", proc.stdout.readline())
    if not (grpc_address and http):
        proc.kill()
        pytest.fail(proc.stderr.read()[-2000:])
    channel = grpc.insecure_channel(grpc_address.group(1))
    yield http.group(1), mpb_grpc.MatchesStub(channel)
    channel.close()
    proc.send_signal(signal.SIGTERM)
    proc.wait(15)


@pytest.fixture(scope="module")
def browser():
    with playwright.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
        yield b
        b.close()


def replay_answers(page) -> list[tuple[dict, dict]]:
    """(request, answer) of every ReplayRecord call the page makes."""
    seen: list[tuple[dict, dict]] = []

    def keep(response):
        if response.url.endswith("/feudo.v1.Matches/ReplayRecord") and response.ok:
            seen.append((json.loads(response.request.post_data or "{}"), response.json()))
    page.on("response", keep)
    return seen


def at(page, shown: str) -> None:
    """Wait for the replay to show `shown` ("count/viewer")."""
    try:
        page.wait_for_function("s => document.body.dataset.replay === s", arg=shown, timeout=15000)
    except playwright.Error:
        raise AssertionError(f"the replay shows {page.evaluate('document.body.dataset.replay')!r}, not {shown!r}; "
                             f"status: {page.text_content('#status')!r}") from None


def vp_shown(page) -> list[int]:
    return [int(x) for x in page.eval_on_selector_all("#replay-players .vp", "els => els.map(e => e.dataset.vp)")]


def test_a_finished_match_replayed_step_by_step_with_each_seats_view_private(server, browser):
    http, stub = server
    page = browser.new_page()
    answers = replay_answers(page)
    page.goto(f"{http}/")
    page.wait_for_selector("#create")
    page.fill("#turns", "1")
    page.fill("#seed", "5")
    for i in (0, 1):
        page.select_option(f"#seat{i}", "spec")
        page.fill(f"#spec{i}", "random")
    page.click("#create")
    page.wait_for_url(re.compile(r"#watch/"))
    match_id = page.url.split("#watch/")[1]
    # the service read directly (gRPC), the page's independent check: the match to its end, then its record
    assert list(stub.WatchMatch(mpb.WatchMatchRequest(match_id=match_id), timeout=60))[-1].HasField("end")
    record = stub.GetRecord(mpb.GetRecordRequest(match_id=match_id))
    total = len(record.actions)

    page.goto(f"{http}/#")
    page.click(f"a.replay-link[data-match='{match_id}']")
    at(page, "0/public")
    assert page.text_content("#replay-event") == "the start of the game"
    page.click("#replay-next")
    at(page, "1/public")
    page.keyboard.press("ArrowRight")
    at(page, "2/public")
    page.keyboard.press("ArrowLeft")
    at(page, "1/public")
    page.click("#replay-last")
    at(page, f"{total}/public")
    assert vp_shown(page) == list(record.vp)
    assert "The game is over" in page.text_content("#replay-end")
    page.click("#replay-prev")
    at(page, f"{total - 1}/public")
    page.keyboard.press("Home")
    at(page, "0/public")
    page.fill("#replay-count", "3")
    page.press("#replay-count", "Enter")
    at(page, "3/public")

    # each seat's view, stepped through the first turn's picks, then the public view again
    count = 3
    for viewer in ("0", "1", ""):
        name = viewer or "public"
        page.select_option("#replay-seat", viewer)  # the same action count, seen by another viewer
        at(page, f"{count}/{name}")
        page.keyboard.press("Home")
        at(page, f"0/{name}")
        for k in range(1, min(total, 30) + 1):
            page.keyboard.press("ArrowRight")
            at(page, f"{k}/{name}")
        page.keyboard.press("End")
        at(page, f"{total}/{name}")
        assert vp_shown(page) == list(record.vp)
        count = total

    hidden = {0: 0, 1: 0, None: 0}
    for request, answer in answers:
        seat = request.get("seat")
        entry = (answer.get("event") or {}).get("entry") or {}
        if seat is None:
            assert "ownSelection" not in answer["observation"] and "seat" not in answer["observation"]
        else:
            assert answer["observation"].get("seat", 0) == seat
        if entry.get("pick") and entry.get("player", 0) != seat:  # another seat's pick (R22): hidden, unnamed
            hidden[seat] += 1
            assert "hiddenPick" in entry and "action" not in entry, answer
            assert answer["event"]["text"].endswith("secret Strategy pick"), answer
    assert min(hidden.values()) >= 4, hidden  # the other seat's four picks of turn 1 went by in every view
    page.close()


def test_an_uploaded_selfplay_record_is_stepped_through_and_a_broken_file_changes_nothing(server, browser, tmp_path):
    http, _ = server
    path = tmp_path / "selfplay.json"
    subprocess.run([sys.executable, "-m", "feudo_ai", "selfplay", "--players", "3", "--bots", "random", "--seed",
                    "3", "--turns", "2", "--save", str(path)], cwd=str(ROOT), check=True, capture_output=True)
    recorded = GameRecord.load(path)
    final = recorded.replay()  # the engine's replay of the file: the independent check of the VP shown
    page = browser.new_page()
    page.goto(f"{http}/")
    page.wait_for_selector("#record-file")
    page.set_input_files("#record-file", str(path))
    at(page, "0/public")
    assert page.url.endswith("#replay-file")
    assert page.get_attribute("#replay-slider", "max") == str(len(recorded.actions))
    for k in (1, 2, 3):
        page.click("#replay-next")
        at(page, f"{k}/public")
    page.select_option("#replay-seat", "2")
    at(page, "3/2")
    page.keyboard.press("End")
    at(page, f"{len(recorded.actions)}/2")
    assert vp_shown(page) == list(final.vp)

    # broken files: an error naming the field or the action, and nothing changes (the lobby stays, and the
    # record open before is still the one #replay-file shows)
    page.goto(f"{http}/#")
    page.wait_for_selector("#record-file")
    doc = json.loads(path.read_text())
    broken = {
        "notjson.json": ("{ not json", "notjson.json: record_json: invalid JSON"),
        "format.json": (json.dumps(dict(doc, format="feudo-state/1")), 'format.json: record_json: format: expected'),
        "impossible.json": (json.dumps(dict(doc, actions=doc["actions"][:7] + [99999])),
                            "impossible.json: record_json: actions[7]: action 99999"),
    }
    for name, (text, message) in broken.items():
        (tmp_path / name).write_text(text)
        page.set_input_files("#record-file", str(tmp_path / name))
        page.wait_for_function("m => document.querySelector('#record-error').textContent.startsWith(m)", arg=message,
                               timeout=15000)
        assert not page.url.endswith("#replay-file") and page.query_selector("#replay") is None
    page.goto(f"{http}/#replay-file")
    at(page, "0/public")
    assert "selfplay.json" in page.text_content("#replay h2")
    page.close()
