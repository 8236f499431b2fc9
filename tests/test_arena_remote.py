"""The arena's remote entrant: its spec (an address holds a ':'), games through a real Advisor (in-process
server on a loopback port), and its errors before and during a tournament."""

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


# -- against a real Advisor (in this process, on a loopback port) -----------------------------------------------
@pytest.fixture(scope="module")
def advisor():
    from feudo_ai.wire.server import FeudoServer, ServerSettings

    server = FeudoServer(ServerSettings(address="127.0.0.1:0")).start()
    yield server
    server.stop()


def test_remote_entrant_plays_through_the_advisor(advisor, tmp_path):
    """Every decision is the Advisor's advice; iteration budgets make the remote games repeatable, in this process
    or from worker processes (fresh interpreters: gRPC and fork do not mix)."""
    import json
    import random

    from engine import GameRecord, load_map, new_fast_game
    from feudo_ai import SearchOptions, advise
    from feudo_ai.settings import MAX_PLAYOUT_TURNS
    from feudo_ai.arena import strip_timing

    spec = f"remote:address={advisor.address}:iterations=30"
    config = TournamentConfig(bots=(spec, "random"), players=2, games=2, seed=5)
    one = run_tournament(config, out=tmp_path / "one", jobs=1)
    two = run_tournament(config, out=tmp_path / "two", jobs=2)
    assert one.summary["games_played"] == 2 and strip_timing(one.results) == strip_timing(two.results)
    line = json.loads((tmp_path / "one" / "games.jsonl").read_text().splitlines()[0])
    record = GameRecord.load(tmp_path / "one" / line["record"])
    assert record.replay().returns() == line["returns"]
    # independent check: replaying the game, the remote seat's first searched decision is what advise() gives
    # for that position with the bot's first search seed
    seat = line["seats"].index(0)
    state = new_fast_game(players=2, seed=line["deal_seed"], game_map=load_map(None, seed=line["deal_seed"]))
    for action in record.actions:
        if not state.is_chance_node() and state.current_player() == seat and len(state.legal_actions()) > 1:
            search_seed = random.Random(line["bot_seeds"][seat]).getrandbits(31)
            # the Advisor's MO-ISMCTS plays the product's greedy playouts: in 2 players to the end of the game, with
            # the tree's action prior
            opts = SearchOptions(iterations=30, seed=search_seed, playout_greedy=1.0, playout_turns=MAX_PLAYOUT_TURNS,
                                 prior_weight=4.0, prior_temperature=0.25)
            expected = advise(state, seat, opts).best
            assert action == expected
            break
        state.apply_action(action)
    else:
        raise AssertionError("the remote seat made no searched decision")


def test_unreachable_advisor_is_refused_before_any_game(tmp_path):
    import socket

    with socket.socket() as s:  # a loopback port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    config = TournamentConfig(bots=("random", f"remote:address=127.0.0.1:{port}:seconds=0.1"), players=2, games=2)
    with pytest.raises(ArenaError, match=rf"entrant 'remote:address=127.0.0.1:{port}:seconds=0.1': Advisor at "
                                         rf"127.0.0.1:{port} unreachable"):
        run_tournament(config, out=tmp_path / "x", jobs=1)
    assert not (tmp_path / "x").exists()


def test_advisor_gone_mid_tournament_stops_it_with_finished_games_kept(tmp_path):
    from feudo_ai.wire.server import FeudoServer, ServerSettings

    server = FeudoServer(ServerSettings(address="127.0.0.1:0")).start()
    config = TournamentConfig(bots=(f"remote:address={server.address}:iterations=30", "random"), players=2,
                              games=4, seed=3)

    def stop_after_first(result, running):
        server.stop()

    with pytest.raises(ArenaError, match=r"game 1 .* failed: RuntimeError: remote bot at .*UNAVAILABLE.*"
                                         r"1 finished games kept"):
        run_tournament(config, out=tmp_path / "gone", jobs=1, on_result=stop_after_first)
    assert len((tmp_path / "gone" / "games.jsonl").read_text().splitlines()) == 1
