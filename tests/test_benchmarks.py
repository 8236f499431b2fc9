"""The benchmark scripts run and print what their docstrings promise (a smoke test: tiny runs, no speed or
strength target is asserted here; the targets live in the benchmarks' own output)."""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import subprocess
import sys

import numpy as np

from helpers import benchmark_module

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
    # each side's search options as played in the pairing's game (the bot's resolved defaults): none for bots
    # that do not search; the product's ismcts in 2 players: greedy playouts to the end, the sharp evaluation, the action prior
    greedy, ismcts = summary["pairings"]
    assert greedy["a_options"] is None and greedy["b_options"] is None and ismcts["b_options"] is None
    assert {k: ismcts["a_options"][k] for k in ("iterations", "playout_greedy", "playout_turns", "margin_weight",
                                                "prior_weight")} \
        == {"iterations": 2000, "playout_greedy": 1.0, "playout_turns": 200, "margin_weight": 0.0, "prior_weight": 4.0}
    # the arena's figures for A: two games of one deal (no clustered error from one deal), places and VP
    for p in summary["pairings"]:
        assert p["se_deal_clustered"] is None and p["se_binomial"] >= 0.0
        assert sum(p["a_places"]) == 2 and len(p["a_places"]) == 2
        assert isinstance(p["a_vp_mean"], float) and isinstance(p["b_vp_mean"], float)  # VP can go below 0


def test_strength_benchmark_rejects_bad_arguments() -> None:
    for args in (["--games", "0"], ["--only", "no such pairing"], ["--suite", "nope"], ["--jobs", "0"]):
        out = _run("benchmarks/strength.py", *args)
        assert out.returncode == 2 and "Traceback" not in out.stderr, (args, out.stderr)
        assert args[0] in out.stderr


def _strength_run(path, seed: int, pairings: list[dict]) -> str:
    summary = {"benchmark": "strength", "suite": "strength-targets", "quick": False, "seed": seed, "jobs": 2,
               "games": sum(p["games"] for p in pairings), "pairings": pairings, "seconds": 1.0}
    path.write_text(json.dumps(summary))
    return str(path)


def _pairing(name: str, games: int, score: float, a: str = "ismcts:seconds=0.1") -> dict:
    return {"name": name, "a": a, "b": "pimc:seconds=0.1", "players": 2, "games": games, "score_a": score,
            "win_rate_a": score / games, "wilson95": [0.0, 1.0], "target": ">= 0.68"}


def test_strength_pool_sums_games_and_recomputes_the_interval(tmp_path) -> None:
    figures = {"se_deal_clustered": 0.1, "a_vp_mean": 20.0, "b_vp_mean": 10.0, "a_places": [3, 1]}
    first = _strength_run(tmp_path / "a.json", 7100, [dict(_pairing("x vs y", 4, 3.0), **figures),
                                                       _pairing("only here", 2, 1.5)])
    second = _strength_run(tmp_path / "b.json", 7200, [dict(_pairing("x vs y", 6, 5.0), se_deal_clustered=0.05,
                                                            a_vp_mean=15.0, b_vp_mean=12.5, a_places=[5, 1])])
    out = _run("benchmarks/strength.py", "--pool", first, second, "--json")
    assert out.returncode == 0, out.stderr
    pooled = {p["name"]: p for p in json.loads(out.stdout)["pairings"]}
    both = pooled["x vs y"]
    # 8 of 10: the textbook Wilson 95% interval of 0.8 over 10 is [0.490, 0.943]
    assert (both["games"], both["score_a"], both["seeds"]) == (10, 8.0, [7100, 7200])
    assert both["win_rate_a"] == 0.8
    assert [round(x, 3) for x in both["wilson95"]] == [0.490, 0.943]
    # independent runs: the variances add, sqrt((4 * 0.1)^2 + (6 * 0.05)^2) / 10 = 0.5 / 10; VP weighted by games
    assert both["se_deal_clustered"] == 0.05
    assert (both["a_vp_mean"], both["b_vp_mean"], both["a_places"]) == (17.0, 11.5, [8, 2])
    assert (pooled["only here"]["games"], pooled["only here"]["seeds"]) == (2, [7100])
    assert pooled["only here"]["se_deal_clustered"] is None and pooled["only here"]["a_places"] is None
    out = _run("benchmarks/strength.py", "--pool", first, second)
    assert "x vs y: 0.800 over 10 games [0.490, 0.943], SE by deal 0.0500, seeds 7100, 7200" in out.stdout
    out = _run("benchmarks/strength.py", "--pool", first, second, "--only", "only", "--json")
    assert out.returncode == 0, out.stderr
    assert [p["name"] for p in json.loads(out.stdout)["pairings"]] == ["only here"]


def test_strength_pool_refuses_what_cannot_be_pooled(tmp_path) -> None:
    base = _strength_run(tmp_path / "a.json", 7100, [_pairing("x vs y", 4, 3.0)])
    same_seed = _strength_run(tmp_path / "b.json", 7100, [_pairing("x vs y", 4, 2.0)])
    other_bot = _strength_run(tmp_path / "c.json", 7300, [_pairing("x vs y", 4, 2.0, a="ismcts:seconds=1")])
    too_many = _strength_run(tmp_path / "d.json", 7400, [_pairing("x vs y", 4, 5.0)])
    played = {"margin_weight": 0.5, "playout_turns": 1}
    with_options = _strength_run(tmp_path / "g.json", 7500, [dict(_pairing("x vs y", 4, 2.0), a_options=played)])
    other_options = _strength_run(tmp_path / "h.json", 7600,
                                  [dict(_pairing("x vs y", 4, 2.0), a_options=dict(played, margin_weight=0.0))])
    bad_options = _strength_run(tmp_path / "i.json", 7700, [dict(_pairing("x vs y", 4, 2.0), b_options=[1])])
    (tmp_path / "e.json").write_text("{not json")
    (tmp_path / "f.json").write_text(json.dumps({"benchmark": "speed"}))
    cases = [([base, same_seed], "seed 7100 twice"), ([base, other_bot], "pairings[0].a"),
             ([too_many], "score_a"), ([str(tmp_path / "e.json")], "not JSON"),
             ([str(tmp_path / "f.json")], "benchmark"), ([str(tmp_path / "missing.json")], "missing.json"),
             ([base, "--only", "nothing like it"], "no pairing to pool"), ([base, "--games", "4"], "--games"),
             ([base, with_options], "a_options: 'x vs y' was played without recorded search options"),
             ([with_options, other_options], "margin_weight 0.5 there, 0.0 here"),
             ([bad_options], "b_options: expected an object or null")]
    for files, expected in cases:
        out = _run("benchmarks/strength.py", "--pool", *files)
        assert out.returncode == 2 and "Traceback" not in out.stderr, (files, out.stderr)
        assert "--pool" in out.stderr and expected in out.stderr, (files, out.stderr)


def test_strength_pool_leaves_out_options_recorded_at_the_value_of_the_code_without_them(tmp_path) -> None:
    """A setting since removed (docs/search-history.md, "Settings that did not pay, removed") or added later,
    recorded off, played as the code without it: such a run pools with one that does not record it; recorded on,
    it is refused."""
    played = {"margin_weight": 0.5, "playout_turns": 200, "early_stop": False, "final_margin_weight": 0.0}
    before = {"margin_weight": 0.5, "playout_turns": 200, "prior_widening": False, "playout_strategy": False}
    files = [_strength_run(tmp_path / f"{i}.json", 7100 + i, [dict(_pairing("x vs y", 4, 3.0), a_options=options)])
             for i, options in enumerate((before, played, dict(played, playout_strategy=True),
                                          dict(before, margin_weight=0.0)))]
    out = _run("benchmarks/strength.py", "--pool", files[0], files[1], "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["pairings"][0]["games"] == 8
    for pair, expected in (((files[1], files[2]), "playout_strategy None there, True here"),
                           ((files[0], files[3]), "margin_weight 0.5 there, 0.0 here")):
        out = _run("benchmarks/strength.py", "--pool", *pair)
        assert out.returncode == 2 and "Traceback" not in out.stderr and expected in out.stderr, out.stderr


def _arena_records(out, players: int, games: int) -> str:
    done = _run("-m", "feudo_ai", "arena", "--bots", "greedy,greedy:epsilon=0.5", "--players", str(players),
                "--format", "gauntlet", "--games", str(games), "--seed", "2", "--jobs", "1", "--out", str(out),
                "--no-progress", "--json")
    assert done.returncode == 0, done.stderr
    return str(out)


def test_evaluation_calibration_scores_the_c_evaluation_as_a_forecast(tmp_path) -> None:
    calibration = benchmark_module("evaluation_calibration")
    records = calibration.records_of([_arena_records(tmp_path / "a", 3, 3)])
    result = calibration.calibrate(records, grid=(0.5, 1e5))
    assert result["games"] == 3 and result["players"] == 3 and result["shipped_temperature"] == 1.0
    assert result["by_turn"]["1"]["positions"] == 3  # one start of turn 1 a game
    assert result["overall"]["positions"] == sum(s["positions"] for s in result["by_turn"].values())
    assert {int(t) for t in result["by_turn"]} <= set(range(1, 11))
    # at a huge temperature every seat gets 1/3 whatever the scores: the NLL of knowing nothing, at every turn
    for summary in [result["overall"], *result["by_turn"].values()]:
        assert math.isclose(summary["nll_by_temperature"]["100000"], math.log(3), abs_tol=1e-3)
        assert summary["nll_best"] == min(summary["nll_by_temperature"].values())
        assert summary["nll_shipped"] == summary["nll_by_temperature"]["1"]


def test_evaluation_calibration_cli(tmp_path) -> None:
    two = _arena_records(tmp_path / "two", 2, 2)
    out = _run("benchmarks/evaluation_calibration.py", "--json", two)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["games"] == 2 and result["players"] == 2
    assert math.isclose(result["nll_uniform"], math.log(2), abs_tol=1e-4)
    three = _arena_records(tmp_path / "three", 3, 3)
    bad = tmp_path / "bad"
    (bad / "records").mkdir(parents=True)
    (bad / "records" / "game-00000.json").write_text('{"format": "feudo-game/1"}', encoding="utf-8")
    (bad / "games.jsonl").write_text('{"index": 0, "record": "records/game-00000.json"}\n', encoding="utf-8")
    orphan = tmp_path / "orphan"
    (orphan / "records").mkdir(parents=True)
    (orphan / "games.jsonl").write_text('{"index": 0}\n', encoding="utf-8")
    # a run killed while writing its last line: that game is not finished and not read, the file is left as it is
    torn = tmp_path / "torn"
    shutil.copytree(two, torn)
    whole = (torn / "games.jsonl").read_text(encoding="utf-8")
    (torn / "games.jsonl").write_text(whole + '{"index": 2, "tab', encoding="utf-8")
    out = _run("benchmarks/evaluation_calibration.py", "--json", str(torn))
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["games"] == 2
    assert (torn / "games.jsonl").read_text(encoding="utf-8") == whole + '{"index": 2, "tab'
    middle = tmp_path / "middle"  # a torn line with whole lines after it is a broken file, not a killed run
    shutil.copytree(two, middle)
    (middle / "games.jsonl").write_text('{"index": 2, "tab\n' + whole, encoding="utf-8")
    for args, message in (([str(tmp_path)], "no games.jsonl"), ([two, three], "one number of players"),
                          ([str(bad)], "game-00000.json"), ([str(orphan)], "games.jsonl:1"),
                          ([str(middle)], "games.jsonl line 1: not JSON")):
        out = _run("benchmarks/evaluation_calibration.py", *args)
        assert out.returncode == 2 and "Traceback" not in out.stderr, (args, out.stderr)
        assert message in out.stderr, (args, out.stderr)


def test_policy_prior_study_finds_a_policy_the_features_determine() -> None:
    """Synthetic decisions whose search choice is the action of the largest first feature, and hand-made scores
    that are noise: the conditional logit over the features must find the choice, the hand-made softmax not."""
    policy_prior = benchmark_module("policy_prior")
    rng = np.random.default_rng(3)
    records = []
    for game in range(10):
        for _ in range(30):
            k = int(rng.integers(2, 9))
            X = rng.normal(size=(k, 24))
            visits = np.ones(k)
            visits[X[:, 0].argmax()] = 50.0
            records.append({"game": game, "X": X, "hand": rng.normal(size=k), "visits": visits})
    result = policy_prior.study(records, hidden=4)
    pred = result["predictors"]
    assert result["decisions"] == {"training": 180, "validation": 60, "test": 60}  # games 2-4, 7-9; 1, 6; 0, 5
    assert pred["linear (choice)"]["top1"] >= 0.95 and pred["linear (visits)"]["top1"] >= 0.95
    assert pred["handmade T=1"]["top1"] < 0.6
    # a softmax keeps the order of the scores: the hand-made prior's best action is the same at every temperature
    assert len({pred[f"handmade T={t:g}"]["top1"] for t in policy_prior.TEMPERATURES}) == 1
    # uniform over k actions: cross-entropy log k to the choice, whatever the choice
    test = [r for r in records if r["game"] % 5 == 0]
    assert math.isclose(pred["uniform"]["cross_entropy_choice"], np.mean([math.log(len(r["visits"])) for r in test]),
                        abs_tol=1e-3)


def test_policy_prior_cli() -> None:
    out = _run("benchmarks/policy_prior.py", "--games", "3", "--iterations", "30", "--jobs", "1", "--json")
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["benchmark"] == "policy_prior" and result["provenance"]["options"]["args"]["iterations"] == 30
    assert sum(result["decisions"].values()) > 0
    assert set(result["predictors"]) >= {"uniform", "handmade T=0.25", "linear (visits)", "linear (choice)"}
    for args, field in ((["--games", "2"], "--games"), (["--iterations", "0"], "--iterations")):
        out = _run("benchmarks/policy_prior.py", *args)
        assert out.returncode == 2 and "Traceback" not in out.stderr and field in out.stderr, out.stderr


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()


def _played_options(spec: str, players: int) -> dict | None:
    """strength.played_options, in this process: what a new strength run records for ``spec``."""
    return benchmark_module("strength").played_options(spec, players)


def test_record_options_fills_a_run_recorded_before_options_then_checks_it(tmp_path) -> None:
    run = _strength_run(tmp_path / "a.json", 7100,
                        [_pairing("x vs y", 4, 3.0), dict(_pairing("g vs r", 2, 1.0, a="greedy"), b="random")])
    # --only: just the pairings named, the others left without options
    out = _run("benchmarks/record_options.py", "--commit", "HEAD", "--only", "g vs", run)
    assert out.returncode == 0 and "1 pairing(s) recorded, 0 checked" in out.stdout, out.stderr
    assert "a_options" not in json.loads((tmp_path / "a.json").read_text())["pairings"][0]
    out = _run("benchmarks/record_options.py", "--commit", "HEAD", run)
    assert out.returncode == 0 and "1 pairing(s) recorded, 1 checked" in out.stdout, out.stderr
    x, g = json.loads((tmp_path / "a.json").read_text())["pairings"]
    assert x["options_from"] == g["options_from"] == _git("rev-parse", "HEAD")
    # the product's ismcts in 2 players: greedy playouts to the end, the sharp evaluation, the action prior; pimc
    # pinned to the baseline's plain playouts; bots that do not search have none
    assert {k: x["a_options"][k] for k in ("seconds", "playout_greedy", "playout_turns", "margin_weight",
                                           "prior_weight")} \
        == {"seconds": 0.1, "playout_greedy": 1.0, "playout_turns": 200, "margin_weight": 0.0, "prior_weight": 4.0}
    assert {k: x["b_options"][k] for k in ("algorithm", "playout_greedy", "playout_turns")} \
        == {"algorithm": "pimc", "playout_greedy": 0.0, "playout_turns": 0}
    assert g["a_options"] is None and g["b_options"] is None
    # two implementations agree: the commit's tree in a subprocess and strength.py's recording in this process
    assert x["a_options"] == _played_options("ismcts:seconds=0.1", 2)
    assert x["b_options"] == _played_options("pimc:seconds=0.1", 2)
    # again: the record is checked, the file left as it is
    before = (tmp_path / "a.json").read_bytes()
    out = _run("benchmarks/record_options.py", "--commit", "HEAD", run)
    assert out.returncode == 0 and "0 pairing(s) recorded, 2 checked" in out.stdout, out.stderr
    assert (tmp_path / "a.json").read_bytes() == before
    # a record that differs from what the commit resolves is an error naming the pairing and the field
    data = json.loads(before)
    data["pairings"][0]["a_options"]["margin_weight"] = 0.5
    (tmp_path / "a.json").write_text(json.dumps(data))
    out = _run("benchmarks/record_options.py", "--commit", "HEAD", run)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert "pairings[0].a_options" in out.stderr and "margin_weight" in out.stderr, out.stderr


def _commit_with_a_changed_pyx(tmp_path) -> str:
    """A commit object (no branch points to it; the work tree is untouched) whose tree is HEAD's with one .pyx
    changed: this checkout's compiled extensions are not its own. Made here, so any clone, shallow or not, has it."""
    pyx = _git("ls-files", "*.pyx").splitlines()[0]
    blob = subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=ROOT, input=_git("show", f"HEAD:{pyx}")
                          + "\n# changed\n", capture_output=True, text=True, check=True).stdout.strip()
    env = {**os.environ, "GIT_INDEX_FILE": str(tmp_path / "index")}
    for args in (["read-tree", "HEAD"], ["update-index", "--cacheinfo", f"100644,{blob},{pyx}"]):
        subprocess.run(["git", *args], cwd=ROOT, env=env, check=True, capture_output=True)
    tree = subprocess.run(["git", "write-tree"], cwd=ROOT, env=env, check=True, capture_output=True,
                          text=True).stdout.strip()
    return subprocess.run(["git", "-c", "user.name=test", "-c", "user.email=test@example.invalid", "commit-tree",
                           tree, "-p", "HEAD", "-m", "a .pyx changed"], cwd=ROOT, check=True, capture_output=True,
                          text=True).stdout.strip()


def test_record_options_refuses_what_it_cannot_record(tmp_path) -> None:
    run = _strength_run(tmp_path / "a.json", 7100, [_pairing("x vs y", 4, 3.0)])
    before = (tmp_path / "a.json").read_bytes()
    (tmp_path / "f.json").write_text(json.dumps({"benchmark": "speed"}))
    cases = [(["--commit", "no-such-commit", run], "not a commit"),
             (["--commit", _commit_with_a_changed_pyx(tmp_path), run], "extensions' sources differ"),
             (["--commit", "HEAD", str(tmp_path / "missing.json")], "missing.json"),
             (["--commit", "HEAD", str(tmp_path / "f.json")], "benchmark"),
             # the good file is not written when another one fails
             (["--commit", "HEAD", run, str(tmp_path / "f.json")], "f.json"),
             (["--commit", "HEAD", "--only", "nothing like it", run], "no pairing whose name"),
             ([run], "--commit")]
    for args, expected in cases:
        out = _run("benchmarks/record_options.py", *args)
        assert out.returncode == 2 and "Traceback" not in out.stderr, (args, out.stderr)
        assert expected in out.stderr, (args, out.stderr)
    assert (tmp_path / "a.json").read_bytes() == before


RESULTS = os.path.join(ROOT, "benchmarks", "results")
# every benchmark that writes or prints JSON records where it comes from (benchmarks/provenance.py)
JSON_BENCHMARKS = ("strength.py", "fast_search_speed.py", "search_speed.py", "core_speed.py", "core_diff.py",
                   "service_load.py", "vs_openspiel.py", "evaluation_calibration.py", "history_latency.py",
                   "matches_replicas.py", "fief2_strength.py", "policy_prior.py")


def test_every_results_file_carries_its_provenance() -> None:
    """Each committed results file says which commit and command it comes from: recorded by the benchmark, or
    backfilled (marked so) with the commit that added the file and the command the docs state."""
    names = sorted(os.listdir(RESULTS))
    assert len(names) >= 90 and all(n.endswith(".json") for n in names)  # none lost (90 before the provenance)
    assert not [n for n in names if re.search(r"issue\d", n)], "a results file named after an issue"
    commits = set()
    for name in names:
        with open(os.path.join(RESULTS, name), encoding="utf-8") as f:
            prov = json.load(f).get("provenance")
        assert isinstance(prov, dict), name
        assert re.fullmatch(r"[0-9a-f]{40}", prov.get("commit") or ""), name
        commits.add(prov["commit"])
        if prov.get("backfilled"):
            assert prov["backfilled"] is True and prov["commit_is"] == "the commit that added the file", name
            assert prov["command"] is None or prov["command"].split()[0] in ("python", "feudo"), name
        else:
            assert isinstance(prov["dirty"], bool) and isinstance(prov["argv"], list), name
            assert prov["command"].startswith("python ") and isinstance(prov["options"], dict), name
    if subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True).returncode == 0:
        done = subprocess.run(["git", "cat-file", "--batch-check"], input="\n".join(sorted(commits)) + "\n",
                              cwd=ROOT, capture_output=True, text=True)
        assert done.returncode == 0 and "missing" not in done.stdout, done.stdout


def test_provenance_records_commit_command_and_options() -> None:
    provenance = benchmark_module("provenance")
    prov = provenance.provenance({"seed": 3, "modes": ("a", "b")}, argv=["benchmarks/x.py", "--only", "a b"])
    assert prov["command"] == "python benchmarks/x.py --only 'a b'" and prov["argv"][-1] == "a b"
    assert prov["options"] == {"seed": 3, "modes": ["a", "b"]}
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    if head.returncode == 0:
        assert prov["commit"] == head.stdout.strip() and isinstance(prov["dirty"], bool)
    # a benchmark's JSON carries it: a pool of two committed runs (plays nothing)
    files = [os.path.join("benchmarks", "results", n) for n in ("levels_seed9800_games400.json",
                                                                "strength_targets_seed7400_games16.json")]
    out = _run("benchmarks/strength.py", "--pool", *files, "--only", "medium vs easy", "--json")
    assert out.returncode == 0, out.stderr
    prov = json.loads(out.stdout)["provenance"]
    assert prov["argv"][1:] == ["--pool", *files, "--only", "medium vs easy", "--json"]
    assert prov["options"]["args"]["pool"] == files and prov["options"]["args"]["only"] == ["medium vs easy"]
    for name in JSON_BENCHMARKS:  # with_provenance directly, or print_result, which calls it
        with open(os.path.join(ROOT, "benchmarks", name), encoding="utf-8") as f:
            source = f.read()
        assert "with_provenance(" in source or "print_result(" in source, name


def test_provenance_backfill_checks_instead_of_overwriting(tmp_path) -> None:
    path = tmp_path / "run.json"
    path.write_text(json.dumps({"benchmark": "strength"}))
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    if not head:
        return
    out = _run("benchmarks/provenance.py", "--commit", head, "--command", "python benchmarks/strength.py", str(path))
    assert out.returncode == 0, out.stderr
    prov = json.loads(path.read_text())["provenance"]
    assert prov["backfilled"] is True and prov["commit"] == head and prov["options"] is None
    assert _run("benchmarks/provenance.py", "--commit", head, "--command", "python benchmarks/strength.py",
                str(path)).returncode == 0  # checked
    out = _run("benchmarks/provenance.py", "--commit", head, "--command", "python other.py", str(path))
    assert out.returncode == 2 and str(path) in out.stderr


def test_every_strength_pairing_names_bots_that_can_play_its_player_count() -> None:
    """A pairing of any suite whose bot could not play (a bad spec, a model file missing or trained without the
    pairing's player count) would fail only hours into a run: every one is resolved here, each model file checked
    the way the search checks it before its first decision."""
    from feudo_ai.experimental.value import check_trained_for

    strength = benchmark_module("strength")
    checked_models = 0
    for name, suite in strength.SUITES.items():
        pairs = suite(True, True) if name == "strength-targets" else suite(True)
        assert pairs, name
        for pr in pairs:
            for side in ("a", "b"):
                strength.played_options(pr[side], pr["players"])  # raises on a bad spec
                for field in pr[side].split(":")[1:]:
                    key, _, value = field.partition("=")
                    if key == "evaluation" and value not in ("handmade", "learned"):
                        check_trained_for(os.path.join(ROOT, value), pr["players"])  # raises
                        checked_models += 1
    assert checked_models >= 6  # the learned suite's MLP pairings, 2 and 4 players


def test_early_stop_benchmark_json() -> None:
    """benchmarks/early_stop.py: the searches it compares give the same answers (one thread, an iteration limit),
    and its shares are shares."""
    out = _run("benchmarks/early_stop.py", "--players", "2", "--games", "1", "--iterations", "200", "--seed", "3",
               "--json")
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["decisions"] > 0 and result["answers_changed"] == 0
    assert 0.0 <= result["mean_budget_saved"] <= result["stopped_early"] <= 1.0
    assert result["search_options"]["iterations"] == 200 and result["provenance"]["options"]["args"]["players"] == 2
    bad = _run("benchmarks/early_stop.py", "--iterations", "3")
    assert bad.returncode == 2 and "--iterations" in bad.stderr


def test_playout_ties_cli() -> None:
    out = _run("benchmarks/playout_ties.py", "--games", "1", "--json")
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["benchmark"] == "playout_ties" and result["provenance"]["options"]["args"]["games"] == 1
    by_k = {int(k): n for k, n in result["by_top_ties"].items()}
    assert result["decisions"] == sum(by_k.values()) == sum(p["decisions"] for p in result["by_phase"].values())
    tied_by_phase = sum(p["tied"] for p in result["by_phase"].values())
    assert result["tied"] == sum(n for k, n in by_k.items() if k > 1) == tied_by_phase
    assert 0 < result["tied"] < result["decisions"] and result["mean_tied_actions"] >= 2
    for args, field in ((["--games", "0"], "--games"), (["--players", "5"], "--players"), (["--seed", "-1"], "--seed")):
        out = _run("benchmarks/playout_ties.py", *args)
        assert out.returncode == 2 and "Traceback" not in out.stderr and field in out.stderr, out.stderr
