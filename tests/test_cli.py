"""The `feudo` command line: the README's main job, summaries, backends, bad input, save/replay, render."""

from __future__ import annotations

import json

from feudo_ai.cli import main


def test_selfplay_prints_a_game_turn_by_turn(capsys):
    assert main(["selfplay", "--players", "4", "--seed", "1"]) == 0
    out = capsys.readouterr().out
    assert "=== Setup ===" in out and "=== Turn 1 ===" in out and "=== Turn 10 ===" in out
    assert "[choose_order]" in out and "[select]" in out and "[reveal]" in out
    assert out.rstrip().splitlines()[-1].startswith("Winner")


def test_selfplay_json_summary_is_the_same_on_both_backends(capsys):
    summaries = []
    for backend in ("reference", "core"):
        assert main(["selfplay", "--players", "3", "--games", "6", "--seed", "5", "--json",
                     "--backend", backend]) == 0
        summaries.append(json.loads(capsys.readouterr().out))
    for s in summaries:
        assert s["games"] == 6 and s["errors"] == 0 and s["players"] == 3
        assert abs(sum(s["wins_by_seat"]) - 6) < 1e-9
        assert s["decisions_per_game"] > 100
    drop = ("seconds", "games_per_s")
    assert {k: v for k, v in summaries[0].items() if k not in drop} == \
        {k: v for k, v in summaries[1].items() if k not in drop}


def test_selfplay_optional_rules(capsys):
    assert main(["selfplay", "--players", "2", "--games", "3", "--turns", "15", "--virulent", "--json"]) == 0
    s = json.loads(capsys.readouterr().out)
    assert s["errors"] == 0 and s["turns_mean"] >= 15
    assert main(["selfplay", "--players", "2", "--games", "3", "--strategy-only", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["errors"] == 0


def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys):
    bad = tmp_path / "rules.json"
    bad.write_text('{"format": "feudo-ruleset/1", "name": "x", "players": {"min": 2, "max": 9}}')
    assert main(["selfplay", "--ruleset", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "rules.json" in err and "players.max" in err and "Traceback" not in err
    assert main(["selfplay", "--players", "5"]) == 2
    assert "players" in capsys.readouterr().err
    assert main(["selfplay", "--map", str(tmp_path / "missing.json")]) == 2
    assert "missing.json" in capsys.readouterr().err
    assert main(["selfplay", "--bots", "random,random", "--players", "3"]) == 2
    assert "--bots" in capsys.readouterr().err


def test_save_and_replay(tmp_path, capsys):
    record = tmp_path / "game.json"
    assert main(["selfplay", "--players", "2", "--seed", "9", "--save", str(record)]) == 0
    played = capsys.readouterr().out.rstrip().splitlines()[-1]
    assert main(["replay", str(record)]) == 0
    out = capsys.readouterr().out
    assert "actions replayed" in out
    winners = played.split(":", 1)[1].split("VP")[0].strip()
    assert f"winners: {winners}" in out
    record.write_text(record.read_text().replace('"actions": [', '"actions": [99999, '))
    assert main(["replay", str(record)]) == 2
    assert "actions[0]" in capsys.readouterr().err


def test_a_missing_file_is_said_alike_by_advise_and_replay(tmp_path, capsys):
    missing = tmp_path / "missing.json"
    assert main(["replay", str(missing)]) == 2
    replay_err = capsys.readouterr().err
    assert main(["advise", str(missing), "--seat", "0"]) == 2
    advise_err = capsys.readouterr().err
    assert advise_err == replay_err == f"feudo: bad data file: {missing}: file not found\n"



# ------------------------------------------------------------------ errors name the flag, not a file

def test_turns_zero_is_reported_as_the_flag(capsys):
    assert main(["selfplay", "--players", "2", "--turns", "0"]) == 2
    err = capsys.readouterr().err
    assert "--turns" in err and "bad data file" not in err and "Traceback" not in err


def test_unknown_ruleset_lists_the_packaged_ones(capsys):
    assert main(["selfplay", "--players", "2", "--ruleset", "nosuch"]) == 2
    err = capsys.readouterr().err
    assert "nosuch" in err and "packaged rulesets: basic" in err


def test_bot_parameter_the_bot_lacks_reads_like_the_others(capsys):
    assert main(["selfplay", "--players", "2", "--bots", "greedy:iterations=5"]) == 2
    err = capsys.readouterr().err
    assert "greedy has no parameter iterations; known: sampler" in err
    assert "TypeError" not in err and "unexpected keyword" not in err


def test_save_to_an_unwritable_path_fails_before_playing(tmp_path, capsys):
    target = tmp_path / "no_such_dir" / "g.json"
    assert main(["selfplay", "--players", "2", "--save", str(target)]) == 2
    captured = capsys.readouterr()
    assert "--save" in captured.err and str(target) in captured.err
    assert "=== Turn 1 ===" not in captured.out  # refused before the game was played


def test_save_with_several_games_saves_every_game(tmp_path, capsys):
    from engine import GameRecord

    base = tmp_path / "g.json"
    assert main(["selfplay", "--players", "2", "--games", "3", "--seed", "4", "--save", str(base), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    paths = [tmp_path / f"g-{i}.json" for i in (1, 2, 3)]
    assert all(p.exists() for p in paths) and not base.exists()
    records = [GameRecord.load(p) for p in paths]
    assert [r.seed for r in records] == [4, 5, 6]
    # each file replays to a finished game, and the saved games are the summary's games
    finals = [r.replay() for r in records]
    assert all(f.is_terminal() for f in finals)
    assert sum(len(f.winners) and 1 for f in finals) == summary["games"] == 3
