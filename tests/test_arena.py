"""feudo arena: fair schedules, R19 scoring, Wilson intervals, ratings, the output directory, interruption and
resume, parallel backends giving the same games, and clear errors before any game.

Tournaments here use bots with iteration budgets (deterministic) and a few games, so the whole file runs in
well under a minute (the Ray comparison lives in test_arena_ray.py).
"""

from __future__ import annotations

import json
import math
import statistics
from collections import Counter

import pytest

from engine import GameRecord
from feudo_ai.arena import ArenaError, ResultStore, TournamentConfig, build_schedule, run_tournament, \
    strip_timing, summarize, wilson
from feudo_ai.arena.results import places, ratings, standard_errors
from feudo_ai.cli import main

FAST = ("random", "ismcts:iterations=30", "pimc:iterations=30:worlds=2")


# -- schedule ---------------------------------------------------------------------------------------------------
def _coverage(schedule):
    """(table, entrant, seat) -> deals played there."""
    cov: dict = {}
    for g in schedule.games:
        for seat, e in enumerate(g.seats):
            cov.setdefault((g.table, e, seat), set()).add(g.deal)
    return cov


@pytest.mark.parametrize("players,n,fmt,tables", [(2, 3, "round-robin", 3), (3, 3, "round-robin", 1),
                                                  (3, 4, "round-robin", 4), (4, 2, "round-robin", 2),
                                                  (4, 3, "gauntlet", 2), (2, 4, "gauntlet", 3)])
def test_every_entrant_plays_every_deal_from_every_seat(players, n, fmt, tables):
    bots = tuple(f"random:x{i}" for i in range(n))  # distinct specs; never made into bots here
    config = TournamentConfig(bots=bots, players=players, games=5, seed=3, format=fmt)
    s = build_schedule(config)
    assert len(s.tables) == tables
    per_table = -(-5 // players) * players  # rotations: P seatings, 5 games rounded up to whole deals
    assert s.games_per_table == per_table and len(s.games) == tables * per_table
    cov = _coverage(s)
    for t in s.tables:
        for e in set(t.lineup):
            for seat in range(players):
                assert cov[(t.index, e, seat)] == set(range(s.deals)), (t, e, seat)
    # one deal seed per deal, the same at every table; bot seeds depend on deal and seat only
    by_deal = {}
    for g in s.games:
        assert by_deal.setdefault(g.deal, g.deal_seed) == g.deal_seed
        assert g.bot_seeds == tuple(g.deal_seed * 4 + p for p in range(players))
    assert len(set(by_deal.values())) == s.deals
    assert [g.index for g in s.games] == list(range(len(s.games)))


def test_gauntlet_is_the_first_entrant_against_each_field():
    s = build_schedule(TournamentConfig(bots=("a", "b", "c"), players=4, games=4, format="gauntlet"))
    assert [t.lineup for t in s.tables] == [(0, 1, 1, 1), (0, 2, 2, 2)]
    assert [t.label(s.config.bots) for t in s.tables] == ["a vs 3 b", "a vs 3 c"]


def test_permute_seating_plays_every_order():
    s = build_schedule(TournamentConfig(bots=("a", "b", "c"), players=3, games=1, seating="permute"))
    assert len(s.tables[0].seatings) == 6 and len(s.games) == 6
    assert Counter(g.seats for g in s.games) == Counter({p: 1 for p in s.tables[0].seatings})


def test_deals_depend_on_the_seed_only_and_extend_as_a_prefix():
    a = build_schedule(TournamentConfig(bots=("a", "b"), games=4, seed=9))
    b = build_schedule(TournamentConfig(bots=("a", "b", "c"), games=10, seed=9))
    assert [g.deal_seed for g in a.games] == [g.deal_seed for g in b.games if g.table == 0][:4]
    c = build_schedule(TournamentConfig(bots=("a", "b"), games=4, seed=10))
    assert {g.deal_seed for g in a.games}.isdisjoint({g.deal_seed for g in c.games})


# -- scoring ----------------------------------------------------------------------------------------------------
def test_wilson_interval_matches_published_values():
    # Wilson (1927) score interval, z = 1.96; values as tabulated e.g. by Newcombe (1998), Table I
    lo, hi = wilson(8, 10)
    assert lo == pytest.approx(0.4902, abs=1e-4) and hi == pytest.approx(0.9433, abs=1e-4)
    lo, hi = wilson(0, 10)
    assert lo == 0.0 and hi == pytest.approx(0.2775, abs=1e-4)
    assert wilson(0, 0) == (0.0, 1.0)


def _result(index, table, seats, returns, deal=0):
    return {"index": index, "table": table, "deal": deal, "seats": list(seats), "returns": list(returns),
            "winners": [p for p, r in enumerate(returns) if r > 0], "turns": 10, "searched_decisions": [1] * len(seats),
            "timing": {"seconds": 1.0}}


def test_r19_shared_wins_score_one_over_k_and_tables_add_up():
    config = TournamentConfig(bots=("a", "b"), players=4, games=4)
    s = build_schedule(config)  # tables: a vs 3 b, b vs 3 a
    res = [_result(0, 0, (0, 1, 1, 1), (0.5, 0.5, 0, 0)),  # a shares the win with one b seat
           _result(1, 0, (1, 0, 1, 1), (0, 0, 0, 1)),  # a b seat wins
           _result(2, 0, (1, 1, 0, 1), (0, 0, 1 / 3, 1 / 3)) | {"returns": [1 / 3, 0, 1 / 3, 1 / 3]}]
    summary = summarize(s, res)
    table = summary["pairings"][0]
    rows = {r["bot"]: r for r in table["entrants"]}
    assert rows["a"]["score"] == pytest.approx(0.5 + 0 + 1 / 3, abs=1e-3)
    assert rows["b"]["score"] == pytest.approx(0.5 + 1 + 2 / 3, abs=1e-3)
    assert rows["a"]["score"] + rows["b"]["score"] == pytest.approx(table["games"])
    assert rows["a"]["fair_share"] == 0.25 and rows["b"]["fair_share"] == 0.75 and rows["b"]["seats"] == 3
    assert summary["games_played"] == 3 and not summary["complete"]


def test_places_winners_share_first_and_the_others_follow_by_vp():
    assert places({"returns": [0, 1, 0, 0], "vp": [12, 20, 15, 12]}) == [3, 1, 2, 3]
    # a shared win: both winners first, whatever their VP; the seat with more VP but no win comes after them
    assert places({"returns": [0.5, 0, 0.5, 0], "vp": [18, 19, 17, 3]}) == [1, 3, 1, 4]


def test_standard_errors_binomial_and_clustered_by_deal():
    # by hand: 4 games, p = 0.5, binomial sqrt(0.25 / 4) = 0.25; two deals each decided by its deal (S_d = 2, 0;
    # n_d p = 1): sqrt(2 / 1 * (1 + 1)) / 4 = 0.5; two split deals (S_d = 1, 1): no spread between deals, 0
    assert standard_errors([1, 1, 0, 0], [0, 0, 1, 1]) == {"binomial": 0.25, "deal_clustered": 0.5}
    assert standard_errors([1, 0, 1, 0], [0, 0, 1, 1]) == {"binomial": 0.25, "deal_clustered": 0.0}
    # one game a deal: the clustered estimate is the textbook standard error of a mean, s / sqrt(n)
    scores = [1, 0, 0, 0.5, 1, 0, 1, 1 / 3, 0]
    se = standard_errors(scores, list(range(len(scores))))
    assert se["deal_clustered"] == pytest.approx(statistics.stdev(scores) / math.sqrt(len(scores)), abs=1e-4)
    assert standard_errors([1.0], [0]) == {"binomial": 0.0, "deal_clustered": None}
    assert standard_errors([], []) == {"binomial": None, "deal_clustered": None}


def test_summary_rows_carry_vp_places_and_standard_errors():
    config = TournamentConfig(bots=("a", "b"), players=4, games=4)
    s = build_schedule(config)  # tables: a vs 3 b, b vs 3 a
    res = [_result(0, 0, (0, 1, 1, 1), (1, 0, 0, 0), deal=0) | {"vp": [20, 10, 12, 12]},
           _result(1, 0, (1, 0, 1, 1), (0, 0, 1, 0), deal=0) | {"vp": [9, 15, 21, 14]},
           _result(2, 0, (1, 1, 0, 1), (0, 1, 0, 0), deal=1) | {"vp": [8, 22, 5, 11]}]
    rows = {r["bot"]: r for r in summarize(s, res)["pairings"][0]["entrants"]}
    assert rows["a"]["vp_mean"] == pytest.approx((20 + 15 + 5) / 3, abs=1e-3)
    assert rows["a"]["places"] == [1, 1, 0, 1]  # first, second (15 after 21), fourth (5)
    assert rows["b"]["places"] == [2, 3, 2, 2] and sum(rows["b"]["places"]) == 9  # three seats a game
    assert rows["a"]["standard_error"]["binomial"] == pytest.approx(math.sqrt(1 / 3 * 2 / 3 / 3), abs=1e-4)
    # by hand: deal 0 has a's 1 + 0, deal 1 a's 0; p = 1/3: sqrt(2 * ((1 - 2/3)^2 + (0 - 1/3)^2)) / 3
    assert rows["a"]["standard_error"]["deal_clustered"] == pytest.approx(math.sqrt(2 * 2 / 9) / 3, abs=1e-4)
    # games recorded before VP were: no VP figures, the rest as before
    old = summarize(s, [_result(0, 0, (0, 1, 1, 1), (1, 0, 0, 0))])["pairings"][0]["entrants"][0]
    assert old["vp_mean"] is None and old["places"] is None and old["win_rate"] == 1.0


def test_ratings_rank_the_winner_above_and_carry_uncertainty():
    config = TournamentConfig(bots=("a", "b", "c"), players=3, games=3)
    res = [_result(i, 0, (0, 1, 2), (1, 0, 0)) for i in range(6)]
    ladder = ratings(config, res)
    assert [r["bot"] for r in ladder][0] == "a" and [r["rank"] for r in ladder] == [1, 2, 3]
    by = {r["bot"]: r for r in ladder}
    assert by["a"]["mu"] > 25 > by["b"]["mu"] and by["b"]["mu"] == by["c"]["mu"]
    assert all(0 < r["sigma"] < 25 / 3 for r in ladder)  # less uncertain than the prior after 6 games
    assert by["a"]["ordinal"] == pytest.approx(by["a"]["mu"] - 3 * by["a"]["sigma"], abs=2e-3)
    # order matters to openskill: the summary always rates in game-index order
    assert ratings(config, res) == ratings(config, list(res))


# -- whole tournaments ------------------------------------------------------------------------------------------
def _config(**kw) -> TournamentConfig:
    base = dict(bots=FAST, players=2, games=2, seed=5)
    return TournamentConfig(**{**base, **kw})


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """One uninterrupted run (in this process) that the other runs are compared with."""
    out = tmp_path_factory.mktemp("ref")
    return run_tournament(_config(), out=out, jobs=1)


def test_out_directory_holds_results_records_summary_and_chart(reference):
    out = reference.out
    summary = json.loads((out / "summary.json").read_text())
    assert summary == json.loads(json.dumps(reference.summary))
    assert summary["complete"] and summary["games_played"] == 6 == len(reference.results)
    assert [p["name"] for p in summary["pairings"]] == [
        "random vs ismcts:iterations=30", "random vs pimc:iterations=30:worlds=2",
        "ismcts:iterations=30 vs pimc:iterations=30:worlds=2"]
    lines = [json.loads(x) for x in (out / "games.jsonl").read_text().splitlines()]
    assert sorted(r["index"] for r in lines) == list(range(6))
    for line in lines:
        record = GameRecord.load(out / line["record"])  # what feudo replay / feudo render read
        final = record.replay()
        assert final.is_terminal()
        assert final.returns() == line["returns"] and final.winners == line["winners"]
        assert record.seed == line["deal_seed"] and record.bots == line["bots"]
    assert (out / "chart.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert main(["replay", str(out / "records" / "game-00000.json")]) == 0
    ladder = summary["ratings"]["ladder"]
    assert {r["bot"] for r in ladder} == set(FAST)


def test_parallel_processes_play_the_same_games(reference, tmp_path):
    run = run_tournament(_config(), out=tmp_path / "par", jobs=2)
    assert run.summary["timing"]["workers"] == 2
    assert strip_timing(run.summary) == strip_timing(reference.summary)
    assert strip_timing(run.results) == strip_timing(reference.results)


def test_interrupted_run_resumes_to_the_same_result(reference, tmp_path):
    out = tmp_path / "int"
    seen = []

    def stop_after_three(result, running):
        seen.append(result["index"])
        if len(seen) == 3:
            raise KeyboardInterrupt  # what Ctrl-C raises in the main process

    first = run_tournament(_config(), out=out, jobs=2, on_result=stop_after_three)
    assert first.interrupted and first.summary["games_played"] == 3
    assert len((out / "games.jsonl").read_text().splitlines()) == 3
    assert json.loads((out / "summary.json").read_text())["complete"] is False
    # a run killed while writing a line leaves it torn: that game is simply played again
    with open(out / "games.jsonl", "a") as f:
        f.write('{"index": 5, "tab')
    second = run_tournament(resume=out, jobs=2)
    assert not second.interrupted and second.played_now == 3
    lines = [json.loads(x) for x in (out / "games.jsonl").read_text().splitlines()]
    assert sorted(r["index"] for r in lines) == list(range(6))  # none lost, none played twice
    assert set(seen) <= {r["index"] for r in lines}
    assert strip_timing(second.summary) == strip_timing(reference.summary)
    # nothing left: resuming again plays no game
    third = run_tournament(resume=out, jobs=1)
    assert third.played_now == 0 and strip_timing(third.summary) == strip_timing(reference.summary)


def test_finished_lines_reads_without_mending_and_load_results_mends(reference, tmp_path):
    store = ResultStore(tmp_path)
    assert store.finished_lines() == ([], False)  # no games.jsonl: no games
    whole = (reference.out / "games.jsonl").read_text(encoding="utf-8")
    store.games_path.write_text(whole + '{"index": 5, "tab', encoding="utf-8")
    lines, torn = store.finished_lines()
    assert torn and [json.loads(x) for x in whole.splitlines()] == lines
    assert store.games_path.read_text(encoding="utf-8") == whole + '{"index": 5, "tab'  # read only
    results = store.load_results(build_schedule(_config()))
    assert sorted(results) == sorted(r["index"] for r in lines)
    assert store.games_path.read_text(encoding="utf-8") == whole  # the torn line is gone, the rest unchanged
    store.games_path.write_text('[1, 2]\n' + whole, encoding="utf-8")
    with pytest.raises(ArenaError, match="games.jsonl line 1: expected a JSON object"):
        store.finished_lines()
    store.games_path.write_text('{"index": 5, "tab\n' + whole, encoding="utf-8")
    with pytest.raises(ArenaError, match=r"--resume .*games.jsonl line 1: not JSON"):
        store.load_results(build_schedule(_config()))


# -- bad input: clear errors before any game --------------------------------------------------------------------
@pytest.mark.parametrize("kw,field", [
    (dict(bots=("random", "nosuchbot")), "nosuchbot"),
    (dict(bots=("random", "ismcts:iterations=-3")), "iterations"),
    (dict(bots=("random", "ismcts:depth=3")), "depth"),
    (dict(bots=("random", "random")), "listed twice"),
    (dict(bots=("random",)), "at least 2"),
    (dict(players=5), "--players"),
    (dict(games=0), "--games"),
    (dict(format="swiss"), "--format"),
])
def test_bad_tournaments_fail_before_any_game(kw, field, tmp_path):
    with pytest.raises(ArenaError, match=field):
        run_tournament(_config(**kw), out=tmp_path / "x", jobs=1)
    assert not (tmp_path / "x" / "games.jsonl").exists()


def test_resume_refuses_another_tournament_and_out_refuses_to_mix(reference, tmp_path):
    with pytest.raises(ArenaError, match="another tournament.*seed"):
        run_tournament(_config(seed=6), resume=reference.out, jobs=1)
    with pytest.raises(ArenaError, match="already holds a tournament"):
        run_tournament(_config(), out=reference.out, jobs=1)
    with pytest.raises(ArenaError, match="no tournament here"):
        run_tournament(resume=tmp_path, jobs=1)
    # results of another schedule pasted into a directory are refused, not mixed in
    out = tmp_path / "mixed"
    ResultStore(out).create(_config(seed=99))
    (out / "games.jsonl").write_text((reference.out / "games.jsonl").read_text())
    with pytest.raises(ArenaError, match="does not match the schedule"):
        run_tournament(resume=out, jobs=1)


def test_cli_arena_end_to_end_and_errors(tmp_path, capsys):
    out = tmp_path / "cli"
    code = main(["arena", "--bots", "random,ismcts:iterations=30", "--games", "2", "--seed", "5", "--jobs", "1",
                 "--out", str(out), "--json"])
    assert code == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["games_played"] == 2 and summary["pairings"][0]["name"] == "random vs ismcts:iterations=30"
    # the same flags with --resume: accepted, nothing to play; other flags: refused
    assert main(["arena", "--resume", str(out), "--seed", "5", "--json", "--jobs", "1"]) == 0
    capsys.readouterr()
    for argv, needle in ((["--resume", str(out), "--seed", "6"], "another tournament"),
                         (["--bots", "random,bogus"], "unknown bot 'bogus'"),
                         (["--bots", "random,ismcts:iterations=1:threads=0"], "threads"),
                         (["--bots", "random,greedy", "--jobs", "0"], "--jobs"),
                         (["--bots", "random,greedy", "--address", "x:1"], "--address"),
                         (["--players", "2"], "--bots: required")):
        assert main(["arena", *argv]) == 2, argv
        err = capsys.readouterr().err
        assert needle in err and "Traceback" not in err, (argv, err)
    code = main(["arena", "--bots", "random,greedy", "--games", "2", "--out", str(out)])
    assert code == 2 and "already holds a tournament" in capsys.readouterr().err


def test_ctrl_c_on_the_command_line_stops_cleanly_and_resume_finishes(reference, tmp_path):
    """A real SIGINT to `feudo arena` with two worker processes: exit 130, finished games kept, workers gone;
    --resume plays only the rest and ends with the uninterrupted run's results."""
    import os
    import signal
    import subprocess
    import sys
    import time

    out = tmp_path / "sigint"
    argv = [sys.executable, "-m", "feudo_ai", "arena", "--bots", ",".join(FAST), "--games", "2", "--seed", "5",
            "--jobs", "2", "--out", str(out), "--json"]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    games = out / "games.jsonl"
    while time.monotonic() < deadline and not (games.exists() and games.read_text().count("\n") >= 1):
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=60)
    kept = games.read_text().count("\n")
    if kept < 6:  # stopped before the end (on a very fast machine all six may be done)
        assert proc.returncode == 130, stderr
        assert "stopped" in stderr and "--resume" in stderr and "Traceback" not in stderr
        assert json.loads(stdout)["games_played"] == kept
    assert not any(ch.is_alive() for ch in __import__("multiprocessing").active_children())
    resumed = subprocess.run([sys.executable, "-m", "feudo_ai", "arena", "--resume", str(out), "--json"],
                             capture_output=True, text=True, timeout=300, env={**os.environ})
    assert resumed.returncode == 0, resumed.stderr
    assert strip_timing(json.loads(resumed.stdout)) == strip_timing(json.loads(json.dumps(reference.summary)))
    assert sorted(json.loads(x)["index"] for x in games.read_text().splitlines()) == list(range(6))


class _FailingBot:
    """A bot that breaks down in its third game decision (as a remote Advisor that goes away would)."""

    name = "failing"

    def __init__(self, seed: int = 0):
        self.calls = 0

    def __call__(self, state) -> int:
        self.calls += 1
        if self.calls == 3:
            raise RuntimeError("lost the connection")
        return state.legal_actions()[0]


def test_a_game_that_fails_stops_the_tournament_with_its_index_and_keeps_finished_games(tmp_path):
    from feudo_ai import bots

    bots.register("failing", _FailingBot)
    try:
        config = TournamentConfig(bots=("random", "ismcts:iterations=30", "failing"), players=2, games=2, seed=5)
        with pytest.raises(ArenaError, match=r"game 2 \(deal 0, seats random, failing\) failed: RuntimeError: "
                                             r"lost the connection; 2 finished games kept"):
            run_tournament(config, out=tmp_path / "f", jobs=1)
    finally:
        del bots.BOTS["failing"]
    summary = json.loads((tmp_path / "f" / "summary.json").read_text())
    assert summary["games_played"] == 2 and not summary["complete"]
