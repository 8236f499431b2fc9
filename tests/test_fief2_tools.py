"""Fief 2 in the product's tools: the game registry (feudo_ai/games.py), the Fief 2 bots
(feudo_ai/bots/fief2_bots.py), ``feudo selfplay|arena|play|replay --game fief2``."""

from __future__ import annotations

import io
import json

import pytest

from feudo_ai.bots.fief2_bots import Fief2GreedyBot, evaluate
from feudo_ai.cli import main
from feudo_ai.games import GAME_NAMES, get_game
from feudo_ai.people.fief2_play import Fief2Session, public_text

FIEF2 = get_game("fief2")


def play(specs, seed: int, turns: int = 2):
    bots = [FIEF2.make_bot(s, seed * 10 + p) for p, s in enumerate(specs)]
    return FIEF2.play(bots, FIEF2.new_state(len(specs), seed, turn_limit=turns), seed)


# ---------------------------------------------------------------------------------------------------- registry
def test_registry_names_both_games_with_their_bots():
    assert GAME_NAMES == ("feudo", "fief2")
    assert set(FIEF2.bots) == {"random", "greedy", "easy", "medium", "hard", "max", "ismcts", "pimc"}
    assert FIEF2.levels == ("easy", "medium", "hard", "max")
    assert (FIEF2.min_players, FIEF2.max_players, FIEF2.record_format) == (3, 6, "fief2-game/1")
    feudo = get_game(None)
    assert feudo.name == "feudo" and "ismcts" in feudo.bots and (feudo.min_players, feudo.max_players) == (2, 4)
    with pytest.raises(ValueError, match="--game: unknown game 'chess'; known games: feudo, fief2"):
        get_game("chess")


def test_the_search_levels_are_ismcts_at_their_budgets_and_take_its_settings():
    hard, top = FIEF2.make_bot("hard", 1), FIEF2.make_bot("max:seconds=0.5", 2)
    assert (hard.name, top.name) == ("hard", "max:seconds=0.5")  # a bot is named by its spec
    assert hard.options_for(4).iterations == 300 and hard.options_for(4).seconds is None
    assert top.options_for(4).iterations is None and top.options_for(4).seconds == 0.5
    assert FIEF2.make_bot("max", 3).options_for(4).iterations == 1000  # the fief2-product profile's budget
    with pytest.raises(ValueError, match="c:"):
        FIEF2.make_bot("hard:c=-1", 1)


def test_a_feudo_bot_asked_for_fief2_is_named_with_the_flag():
    with pytest.raises(ValueError, match=r"--bots: 'ismcts-v1' is a Feudo bot, not a Fief 2 one; Fief 2 bots"):
        FIEF2.make_bot("ismcts-v1", 1)
    with pytest.raises(ValueError, match="--bots: unknown bot 'nobody'"):
        FIEF2.make_bot("nobody", 1)
    with pytest.raises(ValueError, match="greedy has no parameter depth; known: epsilon"):
        FIEF2.make_bot("greedy:depth=2", 1)
    with pytest.raises(ValueError, match="epsilon"):
        FIEF2.make_bot("easy:epsilon=2", 1)
    with pytest.raises(ValueError, match="--players: Fief 2 is for 3-6 players, got 2"):
        FIEF2.check_players(2)


# -------------------------------------------------------------------------------------------------------- bots
def test_bots_play_legal_games_and_the_same_seed_gives_the_same_game():
    specs = ["greedy", "easy", "random", "medium"]
    rec1, final1 = play(specs, 3)
    rec2, final2 = play(specs, 3)
    assert rec1.actions == rec2.actions and final1.is_terminal()
    assert rec1.replay().to_dict() == final1.to_dict()  # every action was legal (replay checks each one)
    rec3, _ = play(specs, 4)
    assert rec3.actions != rec1.actions


def test_levels_are_greedy_with_and_without_mistakes():
    easy, medium = FIEF2.make_bot("easy", 1), FIEF2.make_bot("medium", 1)
    assert isinstance(easy, Fief2GreedyBot) and easy.epsilon == 0.6 and easy.name == "easy"
    assert isinstance(medium, Fief2GreedyBot) and medium.epsilon == 0.0 and medium.name == "medium"


def test_evaluation_reads_no_hand():
    rec, _ = play(["random"] * 3, 5, turns=1)
    st = rec.replay()
    st2 = st.clone()
    st2.hands = [list(reversed(h)) for h in st2.hands]
    st2.hands[1], st2.hands[2] = st2.hands[2], st2.hands[1]
    assert evaluate(st, 0) == evaluate(st2, 0)


def test_greedy_beats_random_on_a_small_sample():
    """Seat-rotated, 4 players, 8-turn games: greedy's fair share is 1 of the 4 games; it must win at least 3
    (benchmarks/fief2_strength.py measures it on 100 full games: 1.0, Wilson 95% [0.963, 1.0])."""
    score = 0.0
    for seat in range(4):
        specs = ["random"] * 4
        specs[seat] = "greedy"
        _, final = play(specs, 100 + seat, turns=8)
        score += final.returns()[seat]
    assert score >= 3


# --------------------------------------------------------------------------------------------------------- CLI
def test_selfplay_game_fief2_json(capsys, tmp_path):
    save = tmp_path / "g.json"
    code = main(["selfplay", "--game", "fief2", "--players", "3", "--bots", "greedy,random,easy", "--turns", "2",
                 "--json", "--save", str(save)])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["game"] == "fief2" and out["games"] == 1 and out["errors"] == 0
    assert out["turns_max"] == 2 and len(out["power_mean"]) == 3 and sum(out["wins_by_seat"]) == 1
    assert json.loads(save.read_text())["format"] == "fief2-game/1"
    assert main(["replay", str(save)]) == 0
    assert "actions replayed; winners: family" in capsys.readouterr().out


def test_selfplay_one_game_prints_the_game(capsys):
    assert main(["selfplay", "--game", "fief2", "--players", "3", "--turns", "1"]) == 0
    out = capsys.readouterr().out
    assert "=== Setup ===" in out and "=== Turn 1 ===" in out and "Winner" in out and "family 0:" in out


@pytest.mark.parametrize("argv, message", [
    (["--bots", "ismcts-py"], "--bots: 'ismcts-py' is a Feudo bot, not a Fief 2 one"),
    (["--players", "2"], "--players: Fief 2 is for 3-6 players, got 2"),
    (["--virulent"], "--virulent: a Feudo option, not for --game fief2"),
    (["--map", "default"], "--map: a Feudo option, not for --game fief2"),
    (["--backend", "reference"], "--backend: the compiled core is Feudo's"),
    (["--bots", "greedy,random"], "--bots: expected 1 or 4 names, got 2"),
])
def test_selfplay_errors_name_the_flag(capsys, argv, message):
    assert main(["selfplay", "--game", "fief2", "--turns", "1", *argv]) == 2
    assert message in capsys.readouterr().err


def test_arena_ranks_the_fief2_bots(capsys, tmp_path):
    code = main(["arena", "--game", "fief2", "--bots", "greedy,random", "--players", "3", "--games", "3",
                 "--turns", "2", "--jobs", "1", "--json", "--no-progress", "--out", str(tmp_path / "a")])
    summary = json.loads(capsys.readouterr().out)
    assert code == 0 and summary["config"]["game"] == "fief2" and summary["games_played"] == 6
    assert {row["bot"] for row in summary["ratings"]["ladder"]} == {"greedy", "random"}
    assert all(sum(p["entrants"][i]["score"] for i in range(2)) == 3 for p in summary["pairings"])
    record = json.loads(next((tmp_path / "a" / "records").iterdir()).read_text())
    assert record["format"] == "fief2-game/1"
    # resumable like any tournament
    assert main(["arena", "--resume", str(tmp_path / "a"), "--json", "--no-progress", "--jobs", "1"]) == 0


def test_arena_errors_and_feudo_configs_unchanged(capsys):
    from feudo_ai.arena.schedule import TournamentConfig

    assert "game" not in TournamentConfig(bots=("greedy", "random")).to_dict()  # Feudo fingerprints as before
    assert main(["arena", "--game", "fief2", "--bots", "ismcts-v1,random", "--turns", "1", "--jobs", "1"]) == 2
    assert "--bots: entrant 'ismcts-v1': 'ismcts-v1' is a Feudo bot" in capsys.readouterr().err
    assert main(["arena", "--game", "fief2", "--bots", "greedy,random", "--players", "7"]) == 2
    assert "--players: Fief 2 is for 3-6 players, got 7" in capsys.readouterr().err
    assert main(["arena", "--game", "fief2", "--bots", "greedy,random", "--virulent"]) == 2
    assert "--virulent: a Feudo option, not for --game fief2" in capsys.readouterr().err


# -------------------------------------------------------------------------------------------------------- play
def scripted(lines):
    it = iter(lines)

    def inp(prompt: str) -> str:
        try:
            return next(it)
        except StopIteration:
            return "1"

    return inp


def test_play_a_whole_game_from_scripted_input():
    out = io.StringIO()
    bots = [None, FIEF2.make_bot("medium", 1), FIEF2.make_bot("random", 2)]
    session = Fief2Session(FIEF2.new_state(3, 7, turn_limit=1), 0, bots, 7,
                           inp=scripted(["help", "board", "hand", "nonsense", "99"]), out=out)
    assert session.run() == 0
    text = out.getvalue()
    assert "Commands:" in text and "Not a choice: 'nonsense'" in text and "Not a choice: '99'" in text
    assert "Game over after turn 1" in text and "Your hand (family 0)" in text
    assert "    1. person L01 Aymeric" in text


def test_play_quit_and_choice_by_text():
    out = io.StringIO()
    bots = [None, FIEF2.make_bot("random", 1), FIEF2.make_bot("random", 2)]
    session = Fief2Session(FIEF2.new_state(3, 7, turn_limit=1), 0, bots, 7,
                           inp=scripted(["person L03 Clement", "quit"]), out=out)
    assert session.run() == 1
    assert "You left the game." in out.getvalue()
    assert session.state.action_to_string(session.actions[0]) == "person L03 Clement"


def test_play_cli_with_stdin(monkeypatch, capsys):
    monkeypatch.setattr("sys.stdin", io.StringIO("help\n1\n1\nquit\n"))
    assert main(["play", "--game", "fief2", "--players", "3", "--bots", "random", "--turns", "1"]) == 1
    out = capsys.readouterr().out
    assert "you are family 0" in out and "You left the game." in out
    assert main(["play", "--game", "fief2", "--server", "localhost:1"]) == 2
    assert "--server: a Feudo option, not for --game fief2" in capsys.readouterr().err


def test_others_hidden_cards_are_not_named():
    rec, final = play(["random"] * 3, 9, turns=1)
    from fief2.state import State

    s = State(final.game)
    s._settle()
    for a in rec.actions:
        kind, _ = s.game.layout.decode(a)
        line = public_text(s, a, 0)
        actor = s.current_player()
        if kind == "deal":
            assert line is None
        if kind in ("discard", "give", "hand_over") and actor != 0:
            assert "B" not in line.split(":", 1)[1]  # no card id
        s.apply_action(a)


def test_strength_benchmark_prints_json_with_provenance():
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    done = subprocess.run([sys.executable, "benchmarks/fief2_strength.py", "--games", "4", "--turns", "2",
                           "--jobs", "1", "--json"], cwd=root, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    r = out["result"]
    assert r["pairing"] == "greedy vs 3 random" and r["games"] == 4 and r["fair_share"] == 0.25
    assert 0 <= r["a_wilson95"][0] <= r["a_win_rate"] <= r["a_wilson95"][1] <= 1
    assert set(out["provenance"]) >= {"commit", "dirty", "command", "options"}
