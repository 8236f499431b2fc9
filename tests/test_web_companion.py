"""The web companion in a real browser: headless Chromium (Debian's) driven by Playwright against a real `feudo serve`
process. A 2-player game at a "real table" entered by clicks (the opening chance, the Castles, the order, the
selections, the plague card, a reveal and a move), advice asked and compared with Advisor.Suggest called directly for
the same history and seed, a reload that finds the same game, an undo, and a broken file refused with an error naming
its field while the game stays as it was. A screenshot for docs/web.md when FEUDO_WEB_SCREENSHOTS names a folder."""

from __future__ import annotations

import json
import os
import re

import pytest

from service_helpers import post_json
from test_web_browser import CHROMIUM, SHOTS, browser, playwright, server  # noqa: F401 - the same server and browser

assert CHROMIUM


def _call(base: str, method: str, body: dict) -> dict:
    """An Advisor method over Connect JSON, as any HTTP client calls it (an independent check of the page)."""
    status, answer = post_json(f"{base}/feudo.v1.Advisor/{method}", body, timeout=60)
    assert status == 200, answer
    return answer


def _kept(page) -> dict:
    return json.loads(page.evaluate("localStorage.getItem('feudo.companion')"))


def _enter_one(page) -> str:
    """Enter one possible event by clicking, as a person would: a board target when there is one, else the first
    listed event; a follow-up question (which token, which Trading Card) answered with its first choice. Returns
    what was clicked."""
    before = page.evaluate("document.body.dataset.companionEntries")
    for sel in ("#companion-trade button", "#companion-pick button", "svg.board g.legal", "#companion-choices button"):
        target = page.query_selector(sel)
        if target is not None:
            try:
                text = target.get_attribute("aria-label") or target.inner_text()
                target.click(timeout=5000)
            except playwright.Error:  # redrawn under the pointer (the answer to the previous click came): look again
                return ""
            break
    else:
        raise AssertionError(page.inner_text("#view"))
    page.wait_for_function("b => document.body.dataset.companionEntries !== b || document.querySelector("
                           "'#companion-pick, #companion-trade')", arg=before, timeout=20000)
    return text


def test_the_companion_follows_a_table_game_advises_and_keeps_it(server, browser):  # noqa: F811
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(server + "/")
    page.evaluate("localStorage.clear()")
    page.click("#open-companion")
    page.select_option("#companion-players", "2")
    page.select_option("#companion-seat", "0")
    page.fill("#companion-turns", "2")
    page.click("#companion-start")
    page.wait_for_selector("#companion-next")
    # the opening is explained: chance draws who places the first Castle, entered as it happened at the table
    assert "chance" in page.inner_text("#companion-next") and "Coats-of-Arms" in page.inner_text("#companion-explain")
    choices = page.locator("#companion-choices button").all_inner_texts()
    assert choices == ["chance: Blue places the next Castle", "chance: White places the next Castle"]
    page.click("text=chance: White places the next Castle")
    page.wait_for_selector("svg.board g.legal")
    assert "White places a Castle" in page.inner_text("#companion-explain")

    # enter events until a reveal and a move of another player and of the seat have gone by
    clicked: list[str] = []
    for _ in range(60):
        log = page.inner_text("#companion-log")
        if "White: reveal" in log and "Blue: reveal" in log and re.search(r"(Blue|White): move", log):
            break
        clicked.append(_enter_one(page))
    log = page.inner_text("#companion-log")
    assert "White: reveal" in log and "Blue: reveal" in log and re.search(r"(Blue|White): move", log), log
    # White's selection was entered for the person, hidden: its picks are never asked for, never named (R22)
    assert "White: selects a card (hidden) (the only possible event: entered)" in log
    assert not any("White: select" in c and "hidden" not in c for c in clicked)
    # never a "choose 1-1": a single possibility is entered with a line saying what it was
    assert "the only possible event: entered" in log
    assert "1-1" not in page.inner_text("#view")

    # advice: wait for a decision of the seat, ask, and check it against Suggest called directly
    for _ in range(40):
        if page.is_enabled("#companion-advise"):
            break
        _enter_one(page)
    page.click("#companion-advise")
    page.wait_for_selector("#companion-alternatives td", timeout=60000)
    game = _kept(page)
    direct = _call(server, "Suggest", {"position": {"setup": game["setup"], "history": game["history"]},
                                       "seat": game["seat"], "limits": {"iterations": "5000", "seed": "1"}})["advice"]
    assert page.inner_text("#companion-plan") == "Plan: " + ", then ".join(a["text"] for a in direct["plan"])
    rows = [r.split("\t") for r in page.locator("#companion-alternatives tr").all_inner_texts()[1:]]
    assert rows == [[a["action"]["text"], f"{round(a.get('winProbability', 0) * 100)}%", str(a.get("visits", 0))]
                    for a in direct["alternatives"]]
    beliefs = page.locator("#companion-advice .belief").all_inner_texts()
    assert beliefs and all(b.startswith("White probably selected: ") for b in beliefs)
    if SHOTS:
        page.screenshot(path=os.path.join(SHOTS, "web-companion.png"))

    # the game downloaded is the game kept
    with page.expect_download() as download:
        page.click("#companion-download")
    with open(download.value.path(), encoding="utf-8") as f:
        assert json.load(f) == game

    # a reload finds the same game, at the same point
    log_before = page.inner_text("#companion-log")
    page.reload()
    page.wait_for_selector("#companion-next")
    assert _kept(page) == game and page.inner_text("#companion-log") == log_before

    # undo: the person's last entry goes (with the ones entered for them after it); the services agree on the rest
    last_typed = max(i for i, t in enumerate(game["typed"]) if t)
    page.click("#companion-undo")
    page.wait_for_function("n => document.body.dataset.companionEntries === n", arg=str(last_typed), timeout=20000)
    after = _kept(page)
    # it had several possibilities, so the page stops there and offers them again
    assert after["history"]["entries"] == game["history"]["entries"][:last_typed]
    assert after["typed"] == game["typed"][:last_typed] and len(after["log"]) == last_typed
    assert page.locator("#companion-choices button").count() > 1

    # a broken file: an impossible event; a clear error naming the entry, and nothing else changes
    broken = json.loads(json.dumps(after))
    broken["history"]["entries"][3] = {"player": 1, "action": 0}
    page.set_input_files("#companion-upload", files=[{"name": "broken.json", "mimeType": "application/json",
                                                       "buffer": json.dumps(broken).encode()}])
    page.wait_for_function("() => document.querySelector('#companion-error').textContent.length > 0", timeout=20000)
    error = page.inner_text("#companion-error")
    assert error.startswith("broken.json: history") and "entry 3" in error, error
    assert _kept(page) == after
    # and a file that is not a companion game at all names its field
    page.set_input_files("#companion-upload", files=[{"name": "other.json", "mimeType": "application/json",
                                                       "buffer": json.dumps({"format": "x"}).encode()}])
    page.wait_for_function("() => document.querySelector('#companion-error').textContent.includes('format')", timeout=20000)
    assert 'format: expected "feudo-companion-web/1"' in page.inner_text("#companion-error")
    assert _kept(page) == after
    # and a downloaded game uploaded again goes on from where it was
    page.set_input_files("#companion-upload", files=[{"name": "good.json", "mimeType": "application/json",
                                                       "buffer": json.dumps(game).encode()}])
    page.wait_for_function("n => document.body.dataset.companionEntries === n",
                           arg=str(len(game["history"]["entries"])), timeout=20000)
    assert _kept(page) == game and page.inner_text("#companion-error") == ""

    # on to the end of the Army Card rounds: White's Trading Card is turned over, and the page asks which card it
    # was among the values White may hold (R7, R9)
    asked = []
    for _ in range(60):
        if re.search(r"turned over: [^\n]*White \d+ shillings", page.inner_text("#companion-log")):
            break
        if page.query_selector("#companion-trade"):
            asked.append(page.inner_text("#companion-trade"))
        _enter_one(page)
    assert asked and "White's Trading Card. Which one?" in asked[0] and "shillings" in asked[0], asked
    assert not errors, errors
    page.close()
