"""The Matches gRPC service end to end, served by the Advisor's server and driven through the Python client.

- a match between one external seat (the client) and three bots runs to the end through the server;
- security: every call needs the seat's token; every message a seat receives over whole matches is scanned for
  the other seats' hidden selections, and every observation it gets is exactly what its own events rebuild
  (engine.history, R22/R25);
- persistence: the server runs as a real process with ``--db``; it is killed with SIGKILL mid-match and started
  again: the match resumes at the same action count, nothing acknowledged is lost, and the bots continue.
"""

from __future__ import annotations

import itertools
import random
import re
import signal
import subprocess
import sys
import threading
import time

import grpc
import pytest
from service_helpers import ROOT

from engine.history import Entry, SeatReplay
from feudo.v1 import matches_pb2 as mpb
from feudo_ai.matches.client import MatchesClient, MatchesError
from feudo_ai.wire.convert import observation_from_dict


@pytest.fixture(scope="module")
def client(server):
    with MatchesClient(server.address) as c:
        yield c


def entry_of_event(ev: mpb.MatchEvent) -> Entry:
    e = ev.entry
    return Entry(e.player if e.HasField("player") else -1, None if e.WhichOneof("what") == "hidden_pick" else e.action,
                 tuple((t.player, t.card) for t in e.trading_cards_revealed), e.pick)


def drive(client, match_id, seat, token, rng, until=None, timeout=120.0):
    """Play ``seat`` with random legal actions through the client until the match ends (or ``until(obs)`` holds
    for an observation, returned before acting on it), waiting for the bots through a watch stream."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        obs = client.observation(match_id, seat, token)
        if obs.finished or (until is not None and until(obs)):
            return obs
        if obs.legal_actions:
            a = rng.choice(obs.legal_actions).id
            ans = client.submit(match_id, seat, token, a, obs.action_count)
            assert ans.action_count == obs.action_count + 1 and not ans.retry
        else:
            for _ in client.watch(match_id, seat, token, obs.action_count):  # until the next event
                break
    pytest.fail("the match did not end in time")


def test_one_external_seat_and_three_bots_play_to_the_end(server, client):
    match_id, tokens = client.create_match(players=4, seats=["greedy", "external", "ismcts:iterations=300", "random"],
                                           seed=21, turns=3)
    assert list(tokens) == [1]
    rng = random.Random(1)
    final = drive(client, match_id, 1, tokens[1], rng)
    assert final.finished and not final.HasField("to_act") and final.observation.winners
    summary = next(m for m in client.list_matches() if m.match_id == match_id)
    assert summary.finished and list(summary.seats) == ["greedy", "external", "ismcts:iterations=300", "random"]
    record = client.record(match_id)
    assert len(record.actions) == final.action_count and list(record.winners) == list(final.observation.winners)
    assert [s.WhichOneof("player") for s in record.match.seats] == ["bot", "external", "bot", "bot"]
    # the record replays to the same end in the engine
    from feudo_ai.wire.convert import setup_from_request

    state = setup_from_request(record.match).start_state("reference")
    for a in record.actions:
        state.apply_action(a)
    assert state.is_terminal() and state.winners == list(record.winners) and state.vp == list(record.vp)
    events = list(client.watch(match_id, 1, tokens[1], 0))
    assert events[-1].WhichOneof("event") == "end" and len(events) == len(record.actions) + 1


def _code(excinfo) -> grpc.StatusCode:
    return excinfo.value.code


def test_status_codes(client):
    match_id, tokens = client.create_match(players=3, seats=["external", "external", "random"], seed=5)
    t0, t1 = tokens[0], tokens[1]
    with pytest.raises(MatchesError) as e:
        client.observation(match_id, 0, "")
    assert _code(e) == grpc.StatusCode.UNAUTHENTICATED
    for seat, token in ((0, t1), (1, t0), (2, t0), (0, t0 + "x")):
        with pytest.raises(MatchesError) as e:
            client.observation(match_id, seat, token)
        assert _code(e) == grpc.StatusCode.PERMISSION_DENIED
    with pytest.raises(MatchesError) as e:
        list(client.watch(match_id, 1, t0))
    assert _code(e) == grpc.StatusCode.PERMISSION_DENIED
    with pytest.raises(MatchesError) as e:
        client.observation("nope", 0, t0)
    assert _code(e) == grpc.StatusCode.NOT_FOUND
    with pytest.raises(MatchesError) as e:
        client.record(match_id)
    assert _code(e) == grpc.StatusCode.FAILED_PRECONDITION
    obs = {s: client.observation(match_id, s, tokens[s]) for s in (0, 1)}
    actor = next(s for s in (0, 1) if obs[s].legal_actions)
    other = 1 - actor
    n = obs[actor].action_count
    legal = [a.id for a in obs[actor].legal_actions]
    with pytest.raises(MatchesError) as e:
        client.submit(match_id, actor, tokens[actor], max(legal) + 100000, n)
    assert _code(e) == grpc.StatusCode.INVALID_ARGUMENT and "not legal" in e.value.details
    with pytest.raises(MatchesError) as e:
        client.submit(match_id, other, tokens[other], legal[0], n)
    assert _code(e) == grpc.StatusCode.FAILED_PRECONDITION and "out of turn" in e.value.details
    first = client.submit(match_id, actor, tokens[actor], legal[0], n)
    again = client.submit(match_id, actor, tokens[actor], legal[0], n)
    assert (first.action_count, first.retry, again.action_count, again.retry) == (n + 1, False, n + 1, True)
    with pytest.raises(MatchesError) as e:
        client.create_match(players=5, seats=["external"] * 5)
    assert _code(e) == grpc.StatusCode.INVALID_ARGUMENT and e.value.details.startswith("setup.players")
    with pytest.raises(MatchesError) as e:
        client.create_match(players=2, seats=["external", "nosuchbot"])
    assert _code(e) == grpc.StatusCode.INVALID_ARGUMENT and e.value.details.startswith("seats[1]")
    with pytest.raises(MatchesError) as e:
        client.create_match(players=2, seats=["external", "random"], castles=[0, 1])
    assert _code(e) == grpc.StatusCode.INVALID_ARGUMENT and "castle" in e.value.details


def test_r22_whole_match_scan_of_every_message_two_external_seats(server, client):
    """Seats 0 and 2 external, 1 and 3 bots, 2 turns. At each answer the test reads the real position (in-process
    server) and checks that the answer holds none of the other seats' unrevealed picks; each observation must
    also equal the one rebuilt from the seat's own watched events alone."""
    match_id, tokens = client.create_match(players=4, seats=["external", "greedy", "external", "random"], seed=33,
                                           turns=2)
    m = server.matches._matches[match_id]
    game = m.state.game
    L = game.layout
    received = {0: [], 2: []}
    scanned = {"observations": 0, "hidden": 0, "events": 0}
    rng = random.Random(4)
    done = False
    while not done:
        progressed = False
        for seat in (0, 2):
            while True:  # the real hidden picks at the moment of the answer: read before and after the call
                with m.lock:
                    count = m.action_count
                    hidden = {q: ({t for t in range(game.num_tokens)
                                   if m.state.sel_army[q][t] and not m.state.revealed[q][t]},
                                  m.state.sel_trade[q] if m.state.sel_trade[q] >= 0 and not m.state.trade_revealed[q]
                                  else None) for q in range(4) if q != seat}
                    own = ([t for t in range(game.num_tokens) if m.state.sel_army[seat][t]], m.state.sel_trade[seat])
                    revealed = [list(map(bool, m.state.revealed[q])) for q in range(4)]
                obs = client.observation(match_id, seat, tokens[seat])
                if obs.action_count == count:
                    break  # nothing moved in between (else a bot acted: ask again)
            received[seat].append(obs)
            scanned["observations"] += 1
            o = obs.observation
            for q, (cards, trade) in hidden.items():
                pv = o.players[q]
                scanned["hidden"] += bool(cards) or trade is not None
                assert [tv.card_revealed for tv in pv.tokens] == revealed[q]
                assert not any(pv.tokens[t].card_revealed for t in cards)
                if trade is not None:
                    assert not pv.HasField("revealed_trading_card")
            assert sorted(o.own_selection.army_cards) == own[0]
            if obs.finished:
                done = True
                break
            if obs.legal_actions:
                client.submit(match_id, seat, tokens[seat], rng.choice(obs.legal_actions).id, obs.action_count)
                progressed = True
        if not progressed and not done:
            server.matches.wait(match_id, 10, until=lambda mm, c=obs.action_count: mm.action_count > c or mm.finished)
    for seat in (0, 2):
        events = list(client.watch(match_id, seat, tokens[seat], 0))
        replay = SeatReplay(m.start, seat)
        rebuilt = {0: observation_from_dict(game, replay.state.observation(seat))}
        for ev in events[:-1]:
            scanned["events"] += 1
            if ev.entry.pick and ev.entry.player != seat:
                assert ev.entry.WhichOneof("what") == "hidden_pick" and "select" not in ev.text
            elif ev.entry.pick:
                assert ev.entry.WhichOneof("what") == "action" and L.SELECT <= ev.entry.action < L.REVEAL
            replay.push(entry_of_event(ev))
            rebuilt[ev.action_count] = observation_from_dict(game, replay.state.observation(seat))
        for obs in received[seat]:
            assert obs.observation == rebuilt[obs.action_count], (seat, obs.action_count)
    assert scanned["observations"] > 50 and scanned["hidden"] > 20 and scanned["events"] > 150


def test_spectator_watch_and_reconnect(client):
    match_id, _ = client.create_match(players=2, seats=["random", "random"], seed=8, turns=1)
    events = list(client.watch(match_id))
    assert events[-1].WhichOneof("event") == "end"
    picks = [e for e in events if e.WhichOneof("event") == "entry" and e.entry.pick]
    assert picks and all(e.entry.WhichOneof("what") == "hidden_pick" for e in picks)
    assert list(client.watch(match_id, from_action_count=7)) == events[7:]


# -- a real server process, killed with SIGKILL ----------------------------------------------------------------
def start_server(db: str) -> tuple[subprocess.Popen, str]:
    """``server.py --db`` as a real process on a free port; its log goes to a file beside the database."""
    with open(db + ".log", "a") as log:
        proc = subprocess.Popen([sys.executable, str(ROOT / "server.py"), "--address", "127.0.0.1:0", "--db", db,
                                 "--log-level", "WARNING"], cwd=str(ROOT), stdout=subprocess.PIPE, stderr=log,
                                text=True)
    line = proc.stdout.readline()
    match = re.search(r"listening on (\S+)", line)
    if not match:
        proc.kill()
        with open(db + ".log") as log:
            pytest.fail(f"server did not start: {line!r} {log.read()[-2000:]}")
    return proc, match.group(1)


def test_persistence_kill_9_mid_match_and_restart(tmp_path):
    db = str(tmp_path / "matches.sqlite3")
    proc, address = start_server(db)
    try:
        with MatchesClient(address) as c:
            match_id, tokens = c.create_match(players=4, seats=["external", "ismcts:seconds=0.3", "greedy", "random"],
                                              seed=17, turns=2)
            rng = random.Random(2)
            seen: list = []  # every event acknowledged to a watcher before the kill

            def watcher():
                try:
                    for ev in c.watch(match_id, 0, tokens[0]):
                        seen.append(ev)
                except MatchesError:
                    pass  # the server is killed under the stream

            t = threading.Thread(target=watcher, daemon=True)
            t.start()
            # 1) killed while it is the external seat's turn: the count is exactly the one last seen
            obs = drive(c, match_id, 0, tokens[0], rng, until=lambda o: o.action_count >= 40 and o.legal_actions)
            assert not obs.finished
            count_at_kill = obs.action_count
            observation_at_kill = obs.observation
            proc.send_signal(signal.SIGKILL)
            proc.wait(10)
            t.join(5)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert seen and seen[-1].action_count <= count_at_kill

    proc, address = start_server(db)
    try:
        with MatchesClient(address) as c:
            obs = c.observation(match_id, 0, tokens[0])
            assert obs.action_count == count_at_kill and obs.observation == observation_at_kill
            events = list(itertools.islice(c.watch(match_id, 0, tokens[0]), count_at_kill))
            assert [e.SerializeToString() for e in events[:len(seen)]] == [e.SerializeToString() for e in seen]
            # 2) act, then kill while a bot is thinking (ismcts:seconds=0.3); the bots continue after the restart
            c.submit(match_id, 0, tokens[0], obs.legal_actions[0].id, obs.action_count)
            time.sleep(0.15)
            before = next(m for m in c.list_matches() if m.match_id == match_id).action_count
            proc.send_signal(signal.SIGKILL)
            proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
    proc, address = start_server(db)
    try:
        with MatchesClient(address) as c:
            after = next(m for m in c.list_matches() if m.match_id == match_id).action_count
            assert after >= before >= count_at_kill + 1  # nothing acknowledged is lost
            final = drive(c, match_id, 0, tokens[0], random.Random(9))
            assert final.finished
            record = c.record(match_id)
            whole = list(c.watch(match_id, 0, tokens[0]))
            assert len(record.actions) == final.action_count == len(whole) - 1
            assert [e.SerializeToString() for e in whole[:count_at_kill]] == [e.SerializeToString() for e in events]
            proc.send_signal(signal.SIGTERM)  # a graceful stop exits 0
            assert proc.wait(20) == 0
    finally:
        if proc.poll() is None:
            proc.kill()

