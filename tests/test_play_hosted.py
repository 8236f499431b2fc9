"""`feudo play --server`: a person plays a hosted match in the terminal, driven through its standard input
against a real server process (``server.py`` on a free port), as a person would.

- a whole game to the end (one external seat, three bots on the server): the board legend, a hint with win
  probabilities from the server's Advisor, and every line the game's own narration gives for the seat (fights,
  plague casualties) in the transcript, in order; no bot's secret pick by name (R22);
- reconnect: quit mid-game, run again with --match/--token: it resumes at the same action count and finishes;
- errors (bad token, unknown match, finished match, no server) are one line, a non-zero exit, no traceback;
- in process: the table's position rebuilt from the seat's events is exactly the server's observation (R22, R25)
  at every decision, and GetObservation gives the game without the match's seed.
"""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
from google.protobuf import json_format
from service_helpers import ROOT, running_server, start_process

from engine.state import Phase
from feudo.v1 import game_pb2 as gpb
from feudo_ai.people.hosted_play import HostedTable
from feudo_ai.matches.client import MatchesClient
from feudo_ai.people.narrate import narrate
from feudo_ai.wire.convert import observation_from_dict, observed_position, setup_from_request

SEATS = ["external", "greedy", "random", "ismcts:iterations=200"]


def _play(args: list[str], script: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "feudo_ai", "play", *args], input=script, text=True,
                          capture_output=True, timeout=timeout, cwd=str(ROOT))


@pytest.fixture(scope="module")
def server():
    proc, port = start_process()
    try:
        yield f"127.0.0.1:{port}"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _seat_narration(address: str, match_id: str, seat: int) -> list[str]:
    """The game's narration as ``seat`` sees it, computed independently of the client: the finished match's
    full record replayed in the engine, each action narrated for the seat."""
    with MatchesClient(address) as c:
        record = c.record(match_id)
    state = setup_from_request(record.match).start_state("reference")
    lines = []
    for a in record.actions:
        before = state.clone()
        state.apply_action(a)
        lines += narrate(before, a, state, viewer=seat)
    assert state.is_terminal()
    return lines


def _in_order(expected: list[str], transcript: list[str]) -> list[str]:
    """The expected lines missing from ``transcript`` when read in order (empty: all there, in order)."""
    it = iter(re.sub(r"^(> )+", "", t) for t in transcript)  # a line printed after the prompt "> " follows it
    return [line for line in expected if not any(t == line for t in it)]


@pytest.fixture(scope="module")
def hosted_game(server):
    script = "\n".join(["hint", "log"] + ["1"] * 4000) + "\n"
    run = _play(["--server", server, "--players", "4", "--seat", "0", "--bots", ",".join(SEATS[1:]), "--seed", "4",
                 "--turns", "3", "--hint-seconds", "0.3"], script)
    m = re.search(r"Created match (\w+) on \S+; you play seat 0\. Your seat token: (\S+)", run.stdout)
    assert m, run.stdout[:2000] + run.stderr[-2000:]
    return run, m.group(1), m.group(2)


def test_a_hosted_game_is_played_to_the_end(hosted_game):
    run, match_id, token = hosted_game
    assert run.returncode == 0, run.stderr[-2000:]
    assert "Traceback" not in run.stdout + run.stderr
    out = run.stdout
    assert "Game over:" in out
    assert f"--match {match_id} --seat 0 --token {token}" in out  # how to reconnect is printed at the start
    assert "Players: Blue = you, White = greedy, Yellow = random, Red = ismcts:iterations=200" in out
    assert "Legend: . Hill  % Wood  ^ Mountain  v Village  C City" in out
    assert "Your hand (Blue): Army Cards" in out and "Your decision (Setup: Castle placement):" in out


def test_the_hint_comes_from_the_servers_advisor_with_win_probabilities(hosted_game):
    out = hosted_game[0].stdout
    hint = out[out.index("thinking..."):]
    assert re.search(r"Advice for your moves until new information arrives \(Blue\): castle at ", hint)
    assert re.search(r"castle at .+ \(\d+ visits, \d+\.\d%\)", hint), hint[:1000]
    assert "(ismcts, remote" in hint  # searched by the server, not in this process


def test_every_narrated_line_is_shown_in_order_fights_and_plague_included(server, hosted_game):
    run, match_id, _ = hosted_game
    expected = _seat_narration(server, match_id, 0)
    consequences = [line for line in expected if line.startswith("  ")]
    fights = [line for line in consequences if " attack " in line and " against " in line]
    casualties = [line for line in consequences if "stricken" in line or "eliminated" in line]
    assert fights or casualties, "this seed has no fight nor plague casualty: pick another one"
    transcript = run.stdout.splitlines()
    # a seat's consecutive hidden picks are one line ("White: selects 3 cards (hidden)"): test_r22_... checks them
    missing = _in_order([line for line in expected if not line.endswith(": selects a card (hidden)")], transcript)
    assert not missing, missing[:5]
    for line in fights:
        assert line.endswith("wins") or "repelled" in line


def test_r22_the_bots_secret_picks_are_never_shown(hosted_game):
    out = hosted_game[0].stdout
    for name in ("White", "Yellow", "Red"):
        assert re.search(f"{name}: selects (a card|\\d cards) \\(hidden\\)", out)  # consecutive picks: one line
        assert f"{name}: select " not in out  # a bot's pick is never printed by name before it is revealed


def test_a_finished_match_cannot_be_joined(server, hosted_game):
    _, match_id, token = hosted_game
    run = _play(["--server", server, "--match", match_id, "--seat", "0", "--token", token], "1\n", timeout=60)
    assert run.returncode != 0 and "Traceback" not in run.stderr
    assert run.stderr.startswith(f"feudo: error: match {match_id} is over (won by ") and run.stderr.count("\n") == 1
    assert "nothing left to play" in run.stderr


def test_reconnect_resumes_at_the_same_action_count(server):
    with MatchesClient(server) as c:
        match_id, tokens = c.create_match(players=3, seats=["greedy", "external", "random"], seed=9, turns=2)
    join = ["--server", server, "--match", match_id, "--seat", "1", "--token", tokens[1], "--hint-seconds", "0.1"]
    first = _play(join, "1\n" * 12 + "quit\n", timeout=120)
    assert first.returncode == 0 and "Traceback" not in first.stderr, first.stderr[-2000:]  # quit: status 0
    left = re.search(r"game left at action (\d+); the match goes on on the server\. To continue: (.+)", first.stdout)
    assert left, first.stdout[-2000:]
    count = int(left.group(1))
    assert left.group(2) == f"feudo play --server {server} --match {match_id} --seat 1 --token {tokens[1]}"
    with MatchesClient(server) as c:  # the server waits for this seat: nothing moved while it was away
        obs = c.observation(match_id, 1, tokens[1])
        assert obs.action_count == count and obs.to_act == 1 and obs.legal_actions
    second = _play(join, "1\n" * 3000, timeout=300)
    assert second.returncode == 0, second.stderr[-2000:]
    assert f"Resuming match {match_id} at action {count}" in second.stdout
    assert "Game over:" in second.stdout and "Traceback" not in second.stdout + second.stderr
    # the actions before the reconnect are not printed again; the ones after are, in order
    expected = _seat_narration(server, match_id, 1)
    assert not _in_order(expected[-20:], second.stdout.splitlines())


def test_bad_token_is_one_clear_line(server):
    with MatchesClient(server) as c:
        match_id, tokens = c.create_match(players=2, seats=["external", "random"], seed=3)
    for token in ("not-the-token", tokens[0] + "x"):
        run = _play(["--server", server, "--match", match_id, "--seat", "0", "--token", token], "1\n", timeout=60)
        assert run.returncode != 0
        assert run.stderr.strip() == "feudo: error: PERMISSION_DENIED: token: not the token of seat 0"
        assert "Traceback" not in run.stdout + run.stderr
    run = _play(["--server", server, "--match", "no-such-match", "--seat", "0", "--token", "x"], "", timeout=60)
    assert run.returncode != 0 and run.stderr.strip() == "feudo: error: NOT_FOUND: match_id: no match 'no-such-match'"


def test_no_server_and_bad_flags_are_one_clear_line(server):
    from service_helpers import free_port

    dead = f"127.0.0.1:{free_port()}"
    run = _play(["--server", dead, "--players", "2", "--bots", "random"], "", timeout=60)
    assert run.returncode != 0 and "Traceback" not in run.stderr
    assert run.stderr.startswith(f"feudo: error: cannot reach a server at {dead}") and run.stderr.count("\n") == 1
    run = _play(["--server", server, "--players", "2", "--bots", "nosuchbot"], "", timeout=60)
    assert run.returncode != 0 and "seats[1]: unknown bot 'nosuchbot'" in run.stderr and "Traceback" not in run.stderr
    run = _play(["--match", "abc"], "", timeout=60)
    assert run.returncode == 2 and "--match/--token" in run.stderr


def test_the_tables_view_is_the_servers_observation_at_every_decision(tmp_path):
    """In process: at every decision of a whole match the position the client rebuilt from its events has exactly
    the seat's observation on the server (R22, R25), and GetObservation carries the game but not the seed."""
    with running_server() as srv:
        with MatchesClient(srv.address) as c:
            match_id, tokens = c.create_match(players=3, seats=["random", "greedy", "external"], seed=12, turns=2,
                                              castles=[0, 9, 34])
            obs = c.observation(match_id, 2, tokens[2])
        assert list(obs.castle_sites) == [0, 9, 34] and obs.setup.players == 3
        assert obs.setup.WhichOneof("map") == "board_order" and obs.setup.options.turns == 2  # no seed in it
        table = HostedTable(srv.address, match_id, 2, tokens[2], hint_seconds=0.1)
        lines: list[str] = []
        try:
            decisions = 0
            while table.wait_turn(lambda ls, actor, show: lines.extend(ls)):
                server_obs = table.obs.observation
                assert observation_from_dict(table.game, table.view.observation(2)) == server_obs
                assert [a for a, _ in table.choices()] == table.view.legal_actions()
                if decisions == 3:
                    assert "visits" in str(table.hint())
                    # `save FILE`: the seat's history as a feudo.v1.Position, which loads to the same view
                    saved = tmp_path / "seat2.json"
                    assert str(saved) in table.save(str(saved))
                    position = json_format.Parse(saved.read_text(), gpb.Position())
                    assert position.WhichOneof("form") == "history"
                    loaded = observed_position(position, 2).observation
                    assert observation_from_dict(table.game, loaded) == server_obs
                table.play(table.choices()[0][0], lambda ls, actor, show: lines.extend(ls))
                decisions += 1
            assert table.view.is_terminal() and table.view.phase == Phase.TERMINAL and decisions > 10
        finally:
            table.close()
        assert any(line.startswith("  Game over:") for line in lines)
