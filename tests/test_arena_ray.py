"""feudo arena --backend ray on a local Ray instance: the same games and the same summary as the local backend.

Needs the ``ray`` extra (``pip install -e '.[test,ray]'``, as CI installs it); without Ray the module is skipped.
"""

from __future__ import annotations

import json

import pytest

from feudo_ai.arena import ArenaError, TournamentConfig, run_tournament, strip_timing
from feudo_ai.cli import main

ray = pytest.importorskip("ray", reason="the ray extra is not installed (pip install -e '.[test,ray]')")


@pytest.fixture(scope="module")
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def test_ray_backend_gives_the_local_backend_results(local_ray, tmp_path):
    config = TournamentConfig(bots=("random", "ismcts:iterations=30", "pimc:iterations=30:worlds=2"), players=2,
                              games=2, seed=11)
    on_ray = run_tournament(config, out=tmp_path / "ray", backend="ray")
    assert on_ray.summary["timing"]["backend"] == "ray" and on_ray.summary["timing"]["workers"] == 2
    workers = {r["timing"]["worker"] for r in on_ray.results}
    local = run_tournament(config, out=tmp_path / "local", jobs=2)
    assert strip_timing(on_ray.summary) == strip_timing(local.summary)
    assert strip_timing(on_ray.results) == strip_timing(local.results)
    for name in ("ray", "local"):  # the stored records too, game by game
        assert sorted(p.name for p in (tmp_path / name / "records").iterdir()) == [
            f"game-{i:05d}.json" for i in range(6)]
    for i in range(6):
        a = json.loads((tmp_path / "ray" / "records" / f"game-{i:05d}.json").read_text())
        b = json.loads((tmp_path / "local" / "records" / f"game-{i:05d}.json").read_text())
        assert a == b
    assert all(isinstance(w, int) for w in workers)


def test_cli_ray_backend_in_a_four_player_gauntlet(local_ray, tmp_path, capsys):
    args = ["arena", "--bots", "ismcts:iterations=30,random", "--players", "4", "--format", "gauntlet",
            "--games", "4", "--seed", "2", "--json"]
    assert main([*args, "--backend", "ray", "--out", str(tmp_path / "r")]) == 0
    on_ray = json.loads(capsys.readouterr().out)
    assert main([*args, "--jobs", "2", "--out", str(tmp_path / "l")]) == 0
    local = json.loads(capsys.readouterr().out)
    assert on_ray["pairings"][0]["name"] == "ismcts:iterations=30 vs 3 random" and on_ray["games_played"] == 4
    assert strip_timing(on_ray) == strip_timing(local)


def test_unreachable_ray_cluster_is_refused_before_any_game(tmp_path):
    config = TournamentConfig(bots=("random", "greedy"), players=2, games=2, seed=1)
    with pytest.raises(ArenaError, match="--address 127.0.0.1:1: cannot reach Ray"):
        run_tournament(config, out=tmp_path / "x", backend="ray", address="127.0.0.1:1")
    with pytest.raises(ArenaError, match="--address nohost: expected host:port"):
        run_tournament(config, out=tmp_path / "x", backend="ray", address="nohost")
    assert not (tmp_path / "x").exists()
