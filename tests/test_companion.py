"""`feudo companion` driven through its standard input over a whole game played elsewhere (a "real table"):
the person types the seat's view of every event; the companion must end with the real game's result."""

from __future__ import annotations

import subprocess
import sys

import pytest

from engine import load_map, load_ruleset, new_game, play_game
from engine.history import game_log
from engine.state import Phase
from feudo_ai.bots import make_bot

SEAT = 1


def _possible_events(state, p: int) -> int:
    """How many events the companion offers the person at seat SEAT here (it enters a single one itself)."""
    if state.is_chance_node():
        return len(state.chance_outcomes())
    if state.phase == Phase.REVEAL and p != SEAT:  # another seat may reveal any card it holds face down
        return sum(1 for t in range(state.game.num_tokens) if state.army_held[p][t] and not state.revealed[p][t])
    return len(state.legal_actions())


def _table_game(players: int = 3, seed: int = 4, turns: int = 3):
    """A game played 'at the table' by bots, and the lines a person at seat SEAT would type for it."""
    ruleset = load_ruleset().with_options(turns=turns)
    start = new_game(ruleset, players, seed=seed, game_map=load_map(None, seed=seed))
    bots = [make_bot("greedy", seed * 10 + p) for p in range(players)]
    record, final = play_game(bots, start.clone(), seed=seed)
    lines: list[str] = []
    state = start.clone()
    for entry, action in zip(game_log(start, record.actions), record.actions):
        p = state.current_player()
        if not (state.phase == Phase.SELECT and p != SEAT):  # other seats' picks are never typed (hidden)
            if _possible_events(state, p) > 1:  # a single possible event is entered by the companion itself
                lines.append(state.action_to_string(action))
            # the Trading Cards turned over, asked for the other seats as they are turned over (order of play)
            for q, c in sorted(entry.trades, key=lambda qc: state.order.index(qc[0])):
                if q != SEAT:
                    lines.append(str(ruleset.trading_cards[c]))
        state.apply_action(action)
    return lines, final, ruleset


def _run(args: list[str], script: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "feudo_ai", "companion", *args], input=script, text=True,
                          capture_output=True, timeout=300)


@pytest.fixture(scope="module")
def followed():
    lines, final, _ = _table_game()
    # a hint at the first selection, an undo of a typed event (re-typed after), mistyped events
    script = ["nonsense event", "999"] + lines[:12] + ["undo", lines[11], "hint"] + lines[12:]
    run = _run(["--players", "3", "--seat", str(SEAT), "--seed", "4", "--turns", "3", "--hint-seconds", "0.05"],
               "\n".join(script) + "\n")
    return run, final


def test_the_companion_follows_a_whole_game_to_the_real_result(followed):
    run, final = followed
    assert run.returncode == 0, (run.stdout[-3000:], run.stderr[-2000:])
    names = ", ".join(final.game.player_name(w) for w in final.winners)
    assert f"Game over: {names} win" in run.stdout and f"VP {final.vp}" in run.stdout


def test_other_seats_selections_are_never_asked_for(followed):
    out = followed[0].stdout
    assert "selects a card (hidden)" in out
    assert "Traceback" not in out + followed[0].stderr


def test_mistyped_events_are_refused_with_the_choices(followed):
    out = followed[0].stdout
    assert "not a possible event: 'nonsense event'; choose 1-" in out
    assert "not a possible event: '999'" in out


def test_undo_and_hint(followed):
    out = followed[0].stdout
    assert "undone;" in out
    assert "thinking..." in out and ("no hint:" in out or "iterations" in out)


@pytest.mark.parametrize("players,seed,turns", [(4, 9, 5), (2, 11, 10)])
def test_other_games_followed_to_the_end(players, seed, turns):
    lines, final, _ = _table_game(players, seed, turns)
    run = _run(["--players", str(players), "--seat", str(SEAT), "--seed", str(seed), "--turns", str(turns)],
               "\n".join(lines) + "\n")
    assert run.returncode == 0, (run.stdout[-3000:], run.stderr[-2000:])
    assert f"VP {final.vp}" in run.stdout and "refused" not in run.stdout


def test_end_of_input_leaves_cleanly():
    run = _run(["--players", "2", "--seat", "0"], "")
    assert run.returncode == 1 and "input ended" in run.stdout


def test_bad_setup_is_named():
    run = _run(["--players", "2", "--seat", "3"], "")
    assert run.returncode == 2 and "--seat" in run.stderr
    run = _run(["--players", "2", "--seat", "0", "--castles", "1,x"], "")
    assert run.returncode == 2 and "--castles" in run.stderr


def test_castle_sites_are_found_by_the_boards_names():
    """Every Castle site of the default map is found by its label, its cell alone (any case) and its id; a
    territory with one site by its territory label; a joined corner's territory (two sites, R24) is refused
    naming both. The labels are checked against the cells independently (castle_site_cells, cell_name)."""
    from engine.board import castle_site_cells, cell_name, find_castle_site

    m = load_map(None, seed=1)
    corners = 0
    for i, (site, cell) in enumerate(zip(m.castle_sites, castle_site_cells(m))):
        where = cell_name(*cell)
        assert find_castle_site(m, f"Hill {where}") == i == find_castle_site(m, where.lower()) == find_castle_site(
            m, str(i))
        t = m.territories[site.territory]
        sites = [s.id for s in m.castle_sites if s.territory == t.id]
        label = m.labels[t.id]
        if len(sites) == 1:
            assert find_castle_site(m, "  " + label.upper() + " ") == i
        else:
            corners += 1
            assert "/" in label and len(t.cells) == 2
            with pytest.raises(ValueError) as e:
                find_castle_site(m, label)
            assert all(f"Hill {cell_name(*c)}" in str(e.value) for c in t.cells)
    assert corners == 8  # four joined corners of two sites each
    for bad in ("Hill Z9", "Wood C2", str(len(m.castle_sites))):
        with pytest.raises(ValueError):
            find_castle_site(m, bad)


def test_castles_option_takes_the_boards_names_and_names_a_bad_one():
    run = _run(["--players", "2", "--seat", "0", "--castles", "hill a1, J10"], "board\nquit\n")
    assert run.returncode == 0, run.stderr
    assert "Blue: 0 VP, Castle Hill A1;" in run.stdout and "White: 0 VP, Castle Hill J10;" in run.stdout
    same = _run(["--players", "2", "--seat", "0", "--castles", "0,34"], "board\nquit\n")
    assert same.stdout == run.stdout  # the site ids still work
    for castles, words in [("Hill E1/F1,J10", ["Hill E1 and Hill F1", "name one"]),
                           ("A1,Hill Z9", ["White's site", "'Hill Z9' is no Castle site"]),
                           ("A1", ["expected 2 Castle sites"]),
                           ("A1,B1", ["Hill B1", "board of its own"])]:
        bad = _run(["--players", "2", "--seat", "0", "--castles", castles], "quit\n")
        assert bad.returncode == 2 and bad.stderr.startswith("feudo: error: --castles: "), bad.stderr
        assert all(w in bad.stderr for w in words) and "Traceback" not in bad.stderr
