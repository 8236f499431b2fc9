"""The arena's remote entrant: its spec (an address holds a ':'), and its errors before any game."""

from __future__ import annotations

import pytest

from feudo_ai.arena import ArenaError, TournamentConfig, run_tournament
from feudo_ai.arena.remote import is_remote, parse_remote_spec


def test_remote_spec_takes_host_port_then_limits():
    assert parse_remote_spec("remote:address=127.0.0.1:50051:seconds=0.5") == {"address": "127.0.0.1:50051",
                                                                               "seconds": 0.5}
    assert parse_remote_spec("remote:address=advisor:7000:iterations=2000:algorithm=pimc:threads=2") == {
        "address": "advisor:7000", "iterations": 2000, "algorithm": "pimc", "threads": 2}
    assert is_remote("remote:address=a:1") and not is_remote("ismcts:seconds=1") and not is_remote("remoteX")


@pytest.mark.parametrize("spec,needle", [
    ("remote", "address: expected host:port"),
    ("remote:seconds=1", "address: expected host:port"),
    ("remote:address=hostonly", "address: expected host:port"),
    ("remote:address=h:1:depth=3", "unknown remote parameter 'depth'"),
    ("remote:address=h:1:seconds=0", "seconds: expected a positive number"),
    ("remote:address=h:1:iterations=1.5", "iterations: expected a positive integer"),
    ("remote:address=h:1:algorithm=alphabeta", "algorithm: expected ismcts or pimc"),
    ("remote:seconds=1:2", "expected key=value"),
])
def test_bad_remote_specs_are_refused(spec, needle):
    with pytest.raises(ValueError, match=needle):
        parse_remote_spec(spec)


def test_bad_remote_entrant_fails_before_any_game(tmp_path):
    config = TournamentConfig(bots=("random", "remote:address=h:1:seconds=-2"), players=2, games=2)
    with pytest.raises(ArenaError, match=r"entrant 'remote:address=h:1:seconds=-2': seconds"):
        run_tournament(config, out=tmp_path / "x", jobs=1)
    assert not (tmp_path / "x").exists()
