"""Limits that hold for every path, checked against real server processes (``server.py`` on a free loopback port):
client input echoed bounded in errors and logs, ids checked, bot seats under the server's caps, out-of-range enums
and absurd budgets refused, cancelled calls logged as such, the retention of matches (with ``--db`` across a
restart), and SIGTERM within ``--grace`` while bots think. And the admission the Advisor and the bots share."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import grpc
import pytest
from engine import Phase
from service_helpers import ROOT, free_port, positions_by_phase

from feudo.v1 import advisor_pb2 as apb
from feudo.v1 import advisor_pb2_grpc as apb_grpc
from feudo.v1 import matches_pb2 as mpb
from feudo.v1 import matches_pb2_grpc as mpb_grpc
from feudo_ai.client import AdvisorClient
from feudo_ai.matches.client import MatchesClient, MatchesError
from feudo_ai.search.admission import SearchSlots
from feudo_ai.search.cancel import CancelEvent
from feudo_ai.wire.convert import position_from

pytestmark = pytest.mark.timing  # real processes, timed by wall clock


class Server:
    """``python server.py --address 127.0.0.1:PORT ARGS``, its log (stderr) in a file, once it serves."""

    def __init__(self, log: Path, *args: str):
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.log = log
        self._err = open(log, "a")
        self.proc = subprocess.Popen([sys.executable, str(ROOT / "server.py"), "--address", self.address, *args],
                                     stdout=subprocess.DEVNULL, stderr=self._err, text=True, cwd=str(ROOT))
        deadline = time.monotonic() + 30
        with AdvisorClient(self.address) as c:
            while True:
                assert self.proc.poll() is None, log.read_text()
                try:
                    if c.health(timeout=1.0) == "SERVING":
                        break
                except Exception:  # noqa: BLE001 - not listening yet
                    pass
                assert time.monotonic() < deadline, "server did not start in 30 s"
                time.sleep(0.1)

    def lines(self) -> list[str]:
        return self.log.read_text().splitlines()

    def calls(self) -> list[dict]:
        return [json.loads(x.split(" feudo.service ", 1)[1]) for x in self.lines() if " feudo.service {" in x]

    def stop(self, timeout: float = 30) -> float:
        """SIGTERM; the seconds until the process exited (exit status 0 asserted)."""
        t0 = time.monotonic()
        self.proc.send_signal(signal.SIGTERM)
        assert self.proc.wait(timeout) == 0
        self._err.close()
        return time.monotonic() - t0

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
        self._err.close()


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    s = Server(tmp_path_factory.mktemp("limits") / "server.log", "--max-seconds", "5", "--max-threads", "2")
    yield s
    s.kill()


def _rpc_code(fn) -> tuple[grpc.StatusCode, str]:
    try:
        fn()
    except grpc.RpcError as e:
        return e.code(), e.details() or ""
    except MatchesError as e:
        return e.code, e.details
    return grpc.StatusCode.OK, ""


def _wait_for(predicate, timeout: float = 10.0, what: str = "") -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


# ------------------------------------------------------------------------------------------- A: bounded input
def test_long_ids_get_bounded_errors_and_log_lines_with_the_right_codes(server):
    options = [("grpc.max_send_message_length", 4 << 20)]
    with grpc.insecure_channel(server.address, options=options) as channel:
        stub = mpb_grpc.MatchesStub(channel)
        for n in (20_000, 500_000):
            code, details = _rpc_code(lambda: stub.GetObservation(
                mpb.GetObservationRequest(match_id="x" * n, seat=0, token="t"), timeout=10))
            assert code == grpc.StatusCode.INVALID_ARGUMENT, (code, details[:200])
            assert details.startswith("match_id: ") and f"({n} characters)" in details and len(details) < 300
            code, details = _rpc_code(lambda: stub.GetRecord(mpb.GetRecordRequest(match_id="x" * n), timeout=10))
            assert code == grpc.StatusCode.INVALID_ARGUMENT and len(details) < 300
        for bad in ("a b", "é" * 3, "../etc"):
            assert _rpc_code(lambda: stub.GetRecord(mpb.GetRecordRequest(match_id=bad), timeout=10))[0] == \
                grpc.StatusCode.INVALID_ARGUMENT
        code, details = _rpc_code(lambda: stub.GetObservation(
            mpb.GetObservationRequest(match_id="0123456789abcdef", seat=0, token="t"), timeout=10))
        assert code == grpc.StatusCode.NOT_FOUND and "'0123456789abcdef'" in details
        # a bot spec of 100,000 characters: refused naming the seat, echoed bounded
        req = mpb.CreateMatchRequest(seed=1)
        req.setup.players = 2
        req.seats.extend([mpb.SeatSpec(external=True), mpb.SeatSpec(bot="g" * 100_000)])
        code, details = _rpc_code(lambda: stub.CreateMatch(req, timeout=10))
        assert code == grpc.StatusCode.INVALID_ARGUMENT and details.startswith("seats[1]: ") and len(details) < 300
    lines = server.lines()
    assert max(map(len, lines)) < 2000, max(map(len, lines))
    logged = [c for c in server.calls() if c["method"] == "GetObservation" and c["status"] == "INVALID_ARGUMENT"]
    assert len(logged) >= 2 and all(len(c["match"]) <= 256 for c in logged)


# ------------------------------------------------------------------------------------------- B: bot caps
@pytest.mark.parametrize("spec,code,named", [
    ("ismcts:seconds=30:threads=8:max_nodes=1000000", grpc.StatusCode.RESOURCE_EXHAUSTED, "threads=8"),
    ("ismcts:seconds=30", grpc.StatusCode.RESOURCE_EXHAUSTED, "seconds=30"),
    ("ismcts:iterations=3000000", grpc.StatusCode.RESOURCE_EXHAUSTED, "iterations=3e+06"),
    ("ismcts:iterations=100:max_nodes=1000000", grpc.StatusCode.RESOURCE_EXHAUSTED, "max_nodes=1e+06"),
    ("pimc:threads=4", grpc.StatusCode.RESOURCE_EXHAUSTED, "threads=4"),
    ("ismcts:seconds=0.0001", grpc.StatusCode.INVALID_ARGUMENT, "seconds"),
])
def test_a_bot_seat_beyond_the_caps_is_refused_naming_seat_and_setting(server, spec, code, named):
    with MatchesClient(server.address) as c:
        got, details = _rpc_code(lambda: c.create_match(players=2, seats=["external", spec], seed=1))
    assert got == code and details.startswith("seats[1]: ") and named in details, details


def test_a_bot_seat_within_the_caps_is_accepted(server):
    with MatchesClient(server.address) as c:
        match_id, tokens = c.create_match(players=2, seats=["external", "ismcts:seconds=0.05:threads=2"], seed=1)
        assert set(tokens) == {0}


# ------------------------------------------------------------------------------------------- smaller ones
def test_out_of_range_enums_and_absurd_budgets_are_invalid_argument(server):
    state = positions_by_phase(2)[Phase.MOVE]
    seat = state.current_player()
    with grpc.insecure_channel(server.address) as channel:
        stub = apb_grpc.AdvisorStub(channel)
        position = position_from(state, seat)
        for limits, field in ((apb.Limits(algorithm=99, iterations=10), "limits.algorithm: 99"),
                              (apb.Limits(seconds=5e-324), "limits.seconds"),
                              (apb.Limits(seconds=0.0009), "limits.seconds")):
            code, details = _rpc_code(lambda: stub.Suggest(
                apb.SuggestRequest(position=position, seat=seat, limits=limits), timeout=10))
            assert code == grpc.StatusCode.INVALID_ARGUMENT and details.startswith(field), details
        # an enum inside the position is refused the same way, with its path
        position.observation.phase = 77
        code, details = _rpc_code(lambda: stub.LegalActions(
            apb.LegalActionsRequest(position=position, seat=seat), timeout=10))
        assert code == grpc.StatusCode.INVALID_ARGUMENT and "position.observation.phase: 77" in details, details


def test_a_cancelled_call_is_logged_cancelled(server):
    state = positions_by_phase(2)[Phase.MOVE]
    seat = state.current_player()
    with grpc.insecure_channel(server.address) as channel:
        stub = apb_grpc.AdvisorStub(channel)
        future = stub.Suggest.future(apb.SuggestRequest(position=position_from(state, seat), seat=seat,
                                                        limits=apb.Limits(seconds=3.0, seed=12345)), timeout=20)
        time.sleep(0.6)
        future.cancel()
    _wait_for(lambda: any(c["method"] == "Suggest" and c.get("budget", {}).get("seconds", 0) > 2
                          for c in server.calls()), 10, "the cancelled call's log line")
    line = next(c for c in server.calls() if c["method"] == "Suggest" and c.get("budget", {}).get("seconds", 0) > 2)
    assert line["status"] == "CANCELLED" and line["latency_ms"] < 2500, line


# ------------------------------------------------------------------------------------------- C: retention
def _create_when_room(c: MatchesClient, timeout: float = 20, **kw) -> tuple[str, dict]:
    deadline = time.monotonic() + timeout
    while True:
        try:
            return c.create_match(**kw)
        except MatchesError as e:
            assert e.code == grpc.StatusCode.RESOURCE_EXHAUSTED and time.monotonic() < deadline, e
            time.sleep(0.1)


def _finished_record(c: MatchesClient, match_id: str, timeout: float = 30):
    deadline = time.monotonic() + timeout
    while True:
        try:
            return c.record(match_id)
        except MatchesError as e:
            assert e.code == grpc.StatusCode.FAILED_PRECONDITION and time.monotonic() < deadline, e
            time.sleep(0.1)


def test_retention_retires_finished_and_idle_matches_and_a_restart_keeps_the_cap_free(tmp_path):
    db = str(tmp_path / "matches.sqlite3")
    flags = ("--db", db, "--max-matches", "2", "--finished-retention-seconds", "0.2", "--match-idle-seconds", "0.5")
    s = Server(tmp_path / "a.log", *flags)
    try:
        with MatchesClient(s.address) as c:
            # five bot matches of one turn through a cap of 2: each finishes, is retired, and frees its place
            finished = []
            for seed in range(5):
                mid, _ = _create_when_room(c, players=2, seats=["random", "greedy"], seed=seed, turns=1)
                finished.append(mid)
            records = {mid: _finished_record(c, mid) for mid in finished}
            # two external matches hold the cap; a third is refused until they are idle (then retired)
            idle = [c.create_match(players=2, seats=["external", "external"], seed=10 + i) for i in range(2)]
            with pytest.raises(MatchesError) as e:
                c.create_match(players=2, seats=["external", "external"], seed=12)
            assert e.value.code == grpc.StatusCode.RESOURCE_EXHAUSTED and "--max-matches" in e.value.details
            _wait_for(lambda: sum(1 for x in s.lines() if "retired from memory" in x and "(idle)" in x) >= 2, 10,
                      "the idle matches retired")
            third, _ = c.create_match(players=2, seats=["external", "external"], seed=12)
            _wait_for(lambda: sum(1 for x in s.lines() if "retired from memory" in x and "(finished)" in x) >= 5,
                      10, "the finished matches retired")
            # retired matches stay readable: records (from the database), observations (loaded back), the list
            for mid in finished:
                r = c.record(mid)
                assert list(r.actions) == list(records[mid].actions) and len(r.actions) > 0
            (mid, tokens) = idle[0]
            obs = c.observation(mid, 0, tokens[0])
            assert not obs.finished and obs.action_count >= 1
            listed = {m.match_id for m in c.list_matches()}
            assert set(finished) | {idle[0][0], idle[1][0], third} <= listed
            _wait_for(lambda: sum(1 for x in s.lines() if "retired from memory" in x and "(idle)" in x) >= 4, 10,
                      "every idle match retired")
        s.stop()
        # the restart loads no retired match: the cap is free (idle matches never retired now, so it holds)
        s = Server(tmp_path / "b.log", "--db", db, "--max-matches", "2", "--match-idle-seconds", "0")
        with MatchesClient(s.address) as c:
            for seed in (20, 21):
                c.create_match(players=2, seats=["external", "external"], seed=seed)
            with pytest.raises(MatchesError) as e:
                c.create_match(players=2, seats=["external", "external"], seed=22)
            assert e.value.code == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert list(c.record(finished[0]).actions) == list(records[finished[0]].actions)
            assert c.observation(mid, 0, tokens[0]).action_count == obs.action_count  # an idle one, loaded back
        assert not any(" loaded at action" in x for x in s.lines()[:5] if "finished" in x)
        s.stop()
    finally:
        s.kill()


# ------------------------------------------------------------------------------------------- D: SIGTERM
def test_sigterm_while_bots_think_exits_within_grace(tmp_path):
    grace = 2.0
    s = Server(tmp_path / "d.log", "--grace", str(grace), "--max-seconds", "30")
    try:
        with MatchesClient(s.address) as c:
            for seed in range(3):  # six bots, each searching 20 s a decision
                c.create_match(players=2, seats=["ismcts:seconds=20", "ismcts:seconds=20"], seed=seed,
                               castles=None)
        time.sleep(1.5)  # the bots are thinking
        took = s.stop(timeout=30)
        print(f"SIGTERM to exit: {took:.2f} s (grace {grace:g} s)")
        assert took < grace + 1.0, took
        assert "Traceback" not in s.log.read_text()
    finally:
        s.kill()


# ------------------------------------------------------------------------------------------- the admission
def test_slots_admit_calls_or_refuse_and_bots_wait_their_turn_first_come_first_served():
    slots = SearchSlots(4, 8, max_threads_per_search=2)
    assert slots.background_searches_cap == 2 and slots.background_threads_cap == 4
    assert slots.try_acquire(2) is None and slots.try_acquire(2) is None  # two calls
    assert slots.acquire(2) is True  # a bot: there is room
    assert slots.try_acquire(2) is None  # a third call: now 4 searches, 8 threads (full)
    box: dict = {}
    t = threading.Thread(target=lambda: box.setdefault("b2", slots.acquire(2)))
    t.start()
    _wait_for(lambda: slots.waiting == 1, 5, "the bot waiting")
    assert slots.try_acquire(1) is not None  # full: a call is refused, never queued
    slots.release(2)  # a call ends: the waiting bot's room is reserved, no call takes it
    assert slots.try_acquire(2) is not None
    t.join(5)
    assert box["b2"] is True and slots.background == 2 and slots.searches == 4
    # at the background share a bot waits without a reservation: the calls keep their half
    cancel = CancelEvent()
    t = threading.Thread(target=lambda: box.setdefault("b3", slots.acquire(1, cancel)))
    t.start()
    _wait_for(lambda: slots.waiting == 1, 5, "the third bot waiting")
    slots.release(2)  # a call ends
    assert slots.try_acquire(1) is None  # another call gets the room
    cancel.set()  # a cancel ends the bot's wait at once, nothing held
    t.join(5)
    assert box["b3"] is False and slots.waiting == 0 and slots.background == 2 and slots.searches == 4
    for threads, background in ((2, True), (2, True), (2, False), (1, False)):
        slots.release(threads, background)
    assert (slots.searches, slots.threads, slots.background, slots.background_threads) == (0, 0, 0, 0)
