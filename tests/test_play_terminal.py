"""The terminal game and the companion as a new player meets them: places named as on the board (column letters,
row numbers), Castles on the board, help per phase, a part of a choice naming it (``baron``), the hint's ranking
said, undo, save and resume, quit with status 0, no ANSI codes when piped (scripted input, in process where it can
be, a real subprocess for the command line)."""

from __future__ import annotations

import io
import json
import random
import subprocess
import sys
from types import SimpleNamespace

import pytest

from engine import Phase, new_game, sample_chance
from engine.board import cell_name
from engine.render import _ASCII, board_segments, render_text, segments_text
from feudo_ai.bots import make_bot
from feudo_ai.people.companion import CompanionSession
from feudo_ai.people.guide import match_choice, phase_help
from feudo_ai.people.play import HumanSession, LocalTable, hint_lines, resume_local
from feudo_ai.settings import resolve

from helpers import BLUE, KN1, INF1, MER1, ZERO, act, make, put, set_turn
from test_rules_r23_r25 import _at_reveal


def _to(state, stop, seed=1):
    rng = random.Random(seed)
    while not stop(state):
        state.apply_action(sample_chance(state, rng) if state.is_chance_node() else rng.choice(state.legal_actions()))
    return state


def _cell(board: str, label_cell: str) -> str:
    """The text of the board's cell at a coordinate like "C2" (column letters, row number)."""
    lines = board.splitlines()
    col = ord(label_cell[0]) - ord("A")
    row = int(label_cell[1:])
    head = lines[0]
    starts = [i for i, ch in enumerate(head) if ch.isalpha()]
    line = lines[row]
    end = starts[col + 1] if col + 1 < len(starts) else len(line)
    return line[starts[col]:end].strip()


# ------------------------------------------------------------------------------------------------ the board
def test_board_has_coordinates_and_castles_and_every_label_names_its_cell():
    state = _to(new_game(players=3, seed=2), lambda s: s.phase == Phase.SELECT)
    board = segments_text(board_segments(state))
    lines = board.splitlines()
    assert lines[0].split() == [cell_name(0, c)[0] for c in range(10)]  # column letters A..J
    assert [ln.split()[0] for ln in lines[1:]] == [str(r) for r in range(1, 11)]  # row numbers 1..10
    m = state.game.map
    for p in range(3):  # each Castle on its site's own cell, with its owner's initial
        site_cell = m.site_labels[state.castle[p]].split()[-1]
        assert f"#{state.game.player_name(p)[0]}" in _cell(board, site_cell)
    for t, label in zip(m.territories, m.labels):  # a place named in a choice is the cell shown at that coordinate
        if len(t.cells) == 1:
            coord = label.split()[1]
            assert _cell(board, coord).startswith(_ASCII[t.kind]), (label, _cell(board, coord))
    assert "W" not in "".join(_ASCII.values())  # wood is not White's initial any more


def test_action_texts_name_places_by_label_and_old_texts_still_parse():
    state = _to(new_game(players=2, seed=1), lambda s: s.phase == Phase.PLACE_CASTLE)
    texts = [state.action_to_string(a) for a in state.legal_actions()]
    assert len(set(texts)) == len(texts) and "castle at Hill A1" in texts
    assert state.string_to_action("castle at D0-0 (site 0)") == state.string_to_action("castle at Hill A1")
    text = render_text(state)
    assert "Legend:" in text and "column letter and row number" in text


# ------------------------------------------------------------------------------------------------ help, choices
def test_help_explains_each_phase_and_why_an_option_is_missing():
    state = _to(new_game(players=2, seed=1), lambda s: s.phase == Phase.PLACE_CASTLE)
    assert any("R21" in line for line in phase_help(state, state.current_player()))
    state = _to(state, lambda s: s.phase == Phase.SELECT)
    p = state.current_player()
    state.apply_action(state.string_to_action("select Knight 1"))
    text = "\n".join(phase_help(state, p))
    assert "ascending order" in text and "Not offered any more" in text and "Baron" in text
    s = make(2)
    set_turn(s, 2)
    put(s, BLUE, MER1, "C2-2")
    _at_reveal(s, BLUE, (MER1, KN1, INF1), ZERO)
    act(s, "reveal Mercenary 1")
    text = "\n".join(phase_help(s, BLUE))
    assert "Only pass is possible" in text and "Mercenary moves only when your Trading Card pays" in text


def test_a_part_of_a_choice_names_it_when_only_one_matches():
    choices = [(1, "select Baron"), (2, "select First Knight"), (3, "select Knight 1"), (4, "select Knight 2")]
    assert match_choice("baron", choices) == (1, [])
    assert match_choice("Knight 1", choices) == (3, [])
    action, several = match_choice("knight", choices)
    assert action is None and len(several) == 3
    assert match_choice("c2", [(7, "move Knight 1 to Wood C2"), (8, "move Knight 1 to Hill C3")]) == (7, [])


def _advice(game, alternatives, beliefs=()):
    alt = SimpleNamespace
    L = game.layout
    alts = tuple(alt(action=a, text=t, visits=v, win_probability=w) for a, t, v, w in alternatives)
    return SimpleNamespace(seat=0, decision="selection", plan=(alt(action=L.SELECT + 0, text="select Baron"),
                                                               alt(action=L.TRADE + 0, text="select trading card 4")),
                           alternatives=alts, beliefs=tuple(beliefs),
                           stats=SimpleNamespace(iterations=1000, elapsed=0.5, algorithm="ismcts", limited=True,
                                                 stopped_by="time"))


def test_the_hint_says_how_it_ranks():
    """The alternatives are listed by visits, with the reason, and a less visited one with a higher win rate as
    printed is pointed out; a Trading Card pick says its number is shillings; the seats are named (R6: the
    ruleset's first Trading Card is worth 4 shillings)."""
    game = new_game(players=2, seed=1).game
    L = game.layout
    assert game.ruleset.trading_cards[0] == 4
    advice = _advice(game, [(L.SELECT + 0, "select Baron", 1319, 0.804), (L.SELECT + 2, "select First Knight", 1058, 0.883)],
                     [SimpleNamespace(player=1, kind="army", card="Knight 2", probability=0.6),
                      SimpleNamespace(player=1, kind="trading", card="2 shillings", probability=0.5)])
    lines = hint_lines(advice, game)
    assert lines[0] == "Advice for your selection (Blue): select Baron, then select trading card 4 (4 shillings)"
    assert "ranked by visits" in lines[1] and lines[2] == "  1. select Baron (1319 visits, 80.4%)"
    assert any("select First Knight shows a higher win rate (88.3%)" in line and "ranking stays by visits" in line
               for line in lines)
    assert "  White probably selected: Knight 2 60%; Trading Card 2 shillings 50%" in lines
    # equal as printed (56.2% both): no "higher win rate" said
    tied = hint_lines(_advice(game, [(L.TRADE + 1, "select trading card 2", 708, 0.5621),
                                     (L.TRADE + 0, "select trading card 4", 619, 0.5623)]), game)
    assert not any("higher win rate" in line for line in tied)
    assert "  2. select trading card 4 (4 shillings) (619 visits, 56.2%)" in tied


def test_trading_card_choices_say_shillings_and_are_named_by_them():
    """At the Trading Card pick every choice says its shillings, and typing "2 shillings" picks that card."""
    table = _table()
    code, out = _session(["1", "1", "baron", "milady", "infantryman 3", "2 shillings", "quit"], table)
    assert code == 0
    assert "select trading card 4 (4 shillings)" in out and "select trading card 0 (0 shillings)" in out
    s = table.state
    assert game_value(s, 0) == 2


def game_value(state, seat):
    return state.game.ruleset.trading_cards[state.sel_trade[seat]]


# ------------------------------------------------------------------------------------------------ the session
def _session(script: list[str], table: LocalTable, console=None) -> tuple[int, str]:
    out = io.StringIO()
    feed = iter(script)

    def read(prompt: str) -> str:
        try:
            return next(feed)
        except StopIteration:
            raise EOFError from None

    code = HumanSession(table, read=read, console=console, out=out).run()
    return code, out.getvalue()


def _table(seed: int = 5) -> LocalTable:
    state = new_game(players=2, seed=seed)
    bots = [None, make_bot("random", seed * 1000 + 1)]
    return LocalTable(state, 0, bots, seed, resolve("product", 2, {"iterations": 50}),
                      specs=["you", "random"], hint_seconds=0.1)


def test_undo_takes_back_a_pick_and_the_same_decision_gives_the_same_game():
    # seed 5: White places first, Blue second and so decides the order; then Blue's selection, then the plague
    picks = ["castle at Hill A1", "order Blue,White", "baron", "milady", "infantryman 3", "trading card 4"]
    plain = _table()
    code, _ = _session(picks + ["quit"], plain)
    assert code == 0
    undone = _table()
    code, out = _session(["1", "undo", "1", "order blue,white", "baron", "undo", "baron", "knight 2", "undo",
                          "milady", "infantryman 3", "trading card 4", "undo", "quit"], undone)
    assert code == 0
    assert "undone: castle at Hill A1" in out  # nothing hidden came out: the order decision followed at once
    assert "undone: select Baron" in out and "undone: select Knight 2" in out
    assert "cannot undo: chance drew" in out  # the plague card was drawn after the selection
    assert undone.record.actions == plain.record.actions and undone.state.canonical() == plain.state.canonical()


def test_quit_exits_0_and_save_then_resume_goes_on(tmp_path):
    path = tmp_path / "g.json"
    table = _table()
    code, out = _session(["1", "1", "baron", f"save {path}", "quit"], table)
    assert code == 0 and f"resume it with: feudo play --resume {path}" in out
    resumed = resume_local(str(path), make_bot)
    assert resumed.record.actions == table.record.actions and resumed.seat == 0
    assert resumed.state.canonical() == table.state.canonical()
    assert resumed.rng.getstate() == table.rng.getstate()  # the same chance draws follow
    code, out = _session(["milady", "infantryman 3", "trading card 4", "quit"], resumed)
    assert code == 0 and "Blue: select Infantryman 3" in out
    doc = json.loads(path.read_text())
    assert doc["format"] == "feudo-game/1" and doc["play"]["bots"] == ["you", "random"]


def test_colour_on_a_terminal_only():
    from rich.console import Console

    buf = io.StringIO()
    _session(["quit"], _table(), console=Console(file=buf, force_terminal=True, color_system="standard"))
    assert "\x1b[" in buf.getvalue()
    buf = io.StringIO()
    _session(["quit"], _table(), console=Console(file=buf, highlight=False))  # not a terminal: plain
    assert "\x1b[" not in buf.getvalue() and "Legend:" in buf.getvalue()


def _cli(args: list[str], script: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "feudo_ai", *args], input=script, text=True, capture_output=True,
                          timeout=120)


def test_command_line_piped_resume_and_no_ansi(tmp_path):
    path = tmp_path / "g.json"
    run = _cli(["play", "--players", "2", "--bots", "random", "--seed", "4"], f"help\nA1\nsave {path}\nquit\n")
    assert run.returncode == 0, run.stderr[-2000:]
    assert "\x1b[" not in run.stdout and "Setup: Castle placement" in run.stdout and "R21" in run.stdout
    assert "    A   B   C" in run.stdout  # the board's column letters
    run = _cli(["play", "--resume", str(path)], "board\nquit\n")
    assert run.returncode == 0 and f"Resuming {path} at action" in run.stdout and "#B" in run.stdout
    run = _cli(["play", "--resume", str(tmp_path / "missing.json")], "")
    assert run.returncode == 2 and "missing.json" in run.stderr


# ------------------------------------------------------------------------------------------------ the companion
def test_companion_explains_chance_enters_forced_events_and_resumes(tmp_path):
    path = tmp_path / "c.json"
    out = io.StringIO()
    feed = iter(["blue", "A1", f"save {path}", "quit"])
    session = CompanionSession(new_game(players=2, seed=1), 0, resolve("product", 2, {"iterations": 50}),
                               read=lambda prompt: next(feed), out=out)
    assert session.run() == 0
    text = out.getvalue()
    assert "who places a Castle first is drawn by chance" in text
    assert "chance: White places the next Castle (the only possible event: entered)" in text
    assert "choose 1-1" not in text and f"go on with: feudo companion --resume {path}" in text
    again = CompanionSession.load(str(path), read=lambda prompt: "quit", out=io.StringIO())
    assert again.replay.state.canonical() == session.replay.state.canonical() and len(again.entries) == 3
    run = _cli(["companion", "--resume", str(path)], "board\nquit\n")
    assert run.returncode == 0 and "#B" in run.stdout and "\x1b[" not in run.stdout


def test_companion_log_hint_and_choices_read_as_the_table_does():
    """The companion's log is the events in words (another seat's pick hidden, R22), its hint names the seats and
    the Trading Cards' shillings, a hint while another seat is to act says who, and the person's own choices
    carry their notes; 35 Castle sites are laid out in columns."""
    out = io.StringIO()
    script = iter(["blue", "A1", "hint", "J10", "order white,blue", "baron", "hint", "milady", "infantryman 3",
                   "2 shillings", "log", "quit"])
    session = CompanionSession(new_game(players=2, seed=1), 0, resolve("product", 2, {"iterations": 60}),
                               read=lambda prompt: next(script), out=out)
    assert session.run() == 0
    text = out.getvalue()
    assert "no hint: no decision of yours is pending (White is to act)" in text
    assert "Advice for your selection (Blue): select " in text and "White probably selected" not in text.split(
        "Advice for your selection")[0]
    assert "select trading card 2 (2 shillings)" in text
    lines = text.splitlines()
    printed = lines[lines.index("left (not saved: `save FILE` keeps the game, `feudo companion --resume FILE` goes "
                                "on with it)") - len(session.entries):-1]
    assert printed == ["chance: Blue places the next Castle", "Blue: castle at Hill A1",
                       "chance: White places the next Castle", "White: castle at Hill J10", "White: order White,Blue",
                       "Blue: select Baron", "Blue: select Milady", "Blue: select Infantryman 3",
                       "Blue: select trading card 2"] + ["White selects a card (hidden)"] * 4
    assert "{'player'" not in text
    assert session.replay.state.sel_trade[0] >= 0 and session.start.game.ruleset.trading_cards[
        session.replay.state.sel_trade[0]] == 2
    castle_rows = [ln for ln in text.splitlines() if "castle at Hill" in ln and ln.count("castle at") > 1]
    assert castle_rows  # several sites a row
