"""The Advisor under load: admission control by C search threads, the time budget counted from the
call's arrival with a learned reserve for what follows the search, cancellation without a polling thread, and the
server's malloc tuning. The load figures themselves are in ``benchmarks/service_load.py``.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time

import grpc
import pytest
from engine import Phase
from service_helpers import positions_by_phase, running_server

from feudo.v1 import advisor_pb2 as apb
from feudo.v1 import advisor_pb2_grpc as apb_grpc
from feudo_ai.search.cancel import CancelEvent, forward_cancel
from feudo_ai.client import AdvisorClient, AdvisorError
from feudo_ai.wire import advisor as adv
from feudo_ai.wire.advisor import MIN_SEARCH_SHARE, AdvisorServicer, ServiceConfig
from feudo_ai.wire.convert import position_from
from feudo_ai.wire.cli import fix_mmap_threshold


# ------------------------------------------------------------------------------------------------ admission
def test_default_search_thread_cap_is_eight_per_core():
    assert ServiceConfig().max_search_threads == 8 * (os.cpu_count() or 1)
    with pytest.raises(ValueError, match="max_search_threads"):
        ServiceConfig(max_search_threads=0)


def test_search_threads_beyond_the_cap_are_resource_exhausted_not_queued():
    """A search of 2 threads fills a cap of 2 search threads: a third thread (another search) is refused at once,
    cheap calls go on, and once the search ends the next one is admitted."""
    cfg = ServiceConfig(max_threads=2, max_concurrent_searches=4, max_search_threads=2)
    state = positions_by_phase(2)[Phase.REVEAL]
    seat = state.current_player()
    with running_server(config=cfg) as srv, AdvisorClient(srv.address) as c:
        stub = apb_grpc.AdvisorStub(c.channel)
        long = stub.Suggest.future(apb.SuggestRequest(position=position_from(state, seat), seat=seat,
                                                      limits=apb.Limits(seconds=1.5, threads=2)))
        t0 = time.monotonic()
        while srv.servicer.threads_in_flight == 0 and time.monotonic() - t0 < 5:
            time.sleep(0.005)
        assert (srv.servicer.in_flight, srv.servicer.threads_in_flight) == (1, 2)
        t = time.monotonic()
        with pytest.raises(AdvisorError) as e:
            c.suggest(state, seat, iterations=100)
        assert e.value.code == grpc.StatusCode.RESOURCE_EXHAUSTED and "search threads" in e.value.details
        assert time.monotonic() - t < 1.0  # refused, not queued behind the running search
        assert c.legal_actions(state, seat)
        assert long.result(timeout=10).advice.best.id in state.legal_actions()
        assert (srv.servicer.in_flight, srv.servicer.threads_in_flight) == (0, 0)
        assert c.suggest(state, seat, iterations=100).best in state.legal_actions()


# ------------------------------------------------------------------------------------------------ time budget
def test_reserve_is_a_high_quantile_of_the_post_search_times_capped_by_the_budget():
    servicer = AdvisorServicer(ServiceConfig())
    assert servicer.reserve(0.2) == adv.RESERVE_DEFAULT  # nothing measured yet
    samples = [i / 1000 for i in range(1, 101)]  # 1..100 ms, shuffled order must not matter
    for x in samples[::2] + samples[1::2]:
        servicer._post_times.append(x)
    expected = sorted(samples)[int(0.95 * len(samples))]  # the 96th smallest: 96 ms
    assert servicer.reserve(1.0) == pytest.approx(expected) == pytest.approx(0.096)
    assert servicer.reserve(0.04) == pytest.approx(0.75 * 0.04)  # never more than MAX_RESERVE of the budget


@pytest.mark.timing
def test_concurrent_answers_come_within_their_budget_counted_from_arrival(caplog):
    """Eight concurrent Suggests of 0.4 s on 2-4 player positions: the answers arrive within their budget counted
    from the call's arrival (the median one with a small margin for the client's side), the calls are logged with
    their time queued, and the server learned post-search times from them."""
    budget = 0.4
    positions = [(s, s.current_player()) for players in (2, 3, 4)
                 for ph, s in positions_by_phase(players).items() if ph in (Phase.SELECT, Phase.MOVE, Phase.MARCH)]
    caplog.set_level(logging.INFO, logger="feudo.service")
    with running_server() as srv:
        stub = apb_grpc.AdvisorStub(grpc.insecure_channel(srv.address))
        latencies: list[float] = []
        lock = threading.Lock()

        def ask(i: int) -> None:
            for k in range(3):
                state, seat = positions[(3 * i + k) % len(positions)]
                t = time.monotonic()
                resp = stub.Suggest(apb.SuggestRequest(position=position_from(state, seat), seat=seat,
                                                       limits=apb.Limits(seconds=budget, seed=k)), timeout=5)
                with lock:
                    latencies.append(time.monotonic() - t)
                assert resp.advice.best.id in state.legal_actions()

        threads = [threading.Thread(target=ask, args=(i,)) for i in range(8)]
        for th in threads:
            th.start()
        for th in threads:
            th.join(30)
        assert len(latencies) == 24
        # typically within the budget (the first calls use the default reserve, and a loaded 2-core machine
        # delays a few: the spread is the benchmark's to measure)
        assert sorted(latencies)[len(latencies) // 2] < budget + 0.05, sorted(latencies)
        assert max(latencies) < 2 * budget, sorted(latencies)
        assert len(srv.servicer._post_times) > 0
    lines = [json.loads(r.getMessage()) for r in caplog.records
             if r.name == "feudo.service" and r.getMessage().startswith('{"method":"Suggest"')]
    assert lines and all(line["queued_ms"] >= 0 and line["status"] == "OK" for line in lines)


@pytest.mark.timing
def test_time_queued_for_a_worker_counts_against_the_budget(caplog):
    """Both workers of a two-worker server are searching for 1 s, so a third call of 0.5 s waits in gRPC's queue.
    Its clock starts at its arrival (stamped by the call interceptor in gRPC's event loop, before a worker takes
    it), so its budget has run out when it gets a worker: it answers at once with a minimal search instead of
    searching 0.5 s after the wait."""
    cfg = ServiceConfig(max_concurrent_searches=2)
    state = positions_by_phase(2)[Phase.REVEAL]
    seat = state.current_player()

    def request(seconds: float) -> apb.SuggestRequest:
        return apb.SuggestRequest(position=position_from(state, seat), seat=seat, limits=apb.Limits(seconds=seconds))

    caplog.set_level(logging.INFO, logger="feudo.service")
    with running_server(config=cfg, extra_workers=0, max_watch_streams=0) as srv:  # 2 + 0 + 0 worker threads
        stub = apb_grpc.AdvisorStub(grpc.insecure_channel(srv.address))
        blockers = [stub.Suggest.future(request(1.0), timeout=10) for _ in range(2)]
        t0 = time.monotonic()
        while srv.servicer.in_flight < 2 and time.monotonic() - t0 < 5:
            time.sleep(0.005)
        assert srv.servicer.in_flight == 2  # every worker is busy
        queued = stub.Suggest(request(0.5), timeout=10)
        assert queued.advice.best.id in state.legal_actions()
        assert all(b.result().advice.best.id in state.legal_actions() for b in blockers)
    lines = [json.loads(r.getMessage()) for r in caplog.records
             if r.name == "feudo.service" and r.getMessage().startswith('{"method":"Suggest"')]
    line = max(lines, key=lambda li: li["queued_ms"])
    assert line["queued_ms"] > 500, lines  # it waited for a worker past its whole budget...
    # ...so it searched a moment: the search's floor, a tenth of the budget (advisor.MIN_SEARCH_SHARE)
    assert line["budget"]["seconds"] <= MIN_SEARCH_SHARE * 0.5 + 0.005, line
    assert line["latency_ms"] - line["queued_ms"] < 250, line  # and answered soon after it got a worker


# ------------------------------------------------------------------------------------------------ cancel
def test_cancel_event_calls_listeners_once_and_at_once_when_already_set():
    ev = CancelEvent()
    calls: list[str] = []
    ev.add_listener(lambda: calls.append("a"))
    remove_b = ev.add_listener(lambda: calls.append("b"))
    remove_b()
    assert calls == [] and not ev.is_set()
    ev.set()
    assert calls == ["a"] and ev.is_set() and ev.wait(0)
    ev.set()
    assert calls == ["a"]  # once
    ev.add_listener(lambda: calls.append("late"))
    assert calls == ["a", "late"]


def test_forward_cancel_of_a_cancel_event_needs_no_thread():
    ev = CancelEvent()
    flagged: list[bool] = []
    before = set(threading.enumerate())  # (threads of earlier tests may still be ending: compare sets)
    with forward_cancel(ev, lambda: flagged.append(True)):
        assert not set(threading.enumerate()) - before
        ev.set()
        assert flagged == [True]
    plain = threading.Event()
    with forward_cancel(plain, lambda: flagged.append(True)):
        assert len(set(threading.enumerate()) - before) == 1  # a plain Event is polled by a watcher thread
    assert not set(threading.enumerate()) - before


# ------------------------------------------------------------------------------------------------ memory
def test_mmap_threshold_is_fixed_on_glibc_unless_the_operator_set_it(monkeypatch):
    import platform

    if platform.libc_ver()[0] != "glibc":
        assert fix_mmap_threshold() is False
        return
    assert fix_mmap_threshold() is True
    monkeypatch.setenv("MALLOC_MMAP_THRESHOLD_", "65536")
    assert fix_mmap_threshold() is False


# ------------------------------------------------------------------------------------------------ priority
def _thread_nices() -> dict[int, int]:
    """{thread id: nice} of this process's threads (Linux /proc: field 19 of a task's stat)."""
    out = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/stat") as f:
                out[int(tid)] = int(f.read().rsplit(")", 1)[1].split()[16])
        except (OSError, IndexError, ValueError):
            pass  # a thread that just ended
    return out


def test_nice_option_is_validated():
    from feudo_ai import SearchOptions

    for bad in (-1, 20, 1.5, True):
        with pytest.raises(ValueError, match="nice"):
            SearchOptions(nice=bad)
    with pytest.raises(ValueError, match="search_nice"):
        ServiceConfig(search_nice=20)


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="per-thread nice values are a Linux feature")
def test_nice_search_runs_its_worker_on_a_nicer_thread_and_gives_the_same_advice():
    """SearchOptions(nice=7): the C worker runs on its own thread at the caller's nice + 7 while the caller keeps
    its priority; the advice is the same as without it (same seed and iterations)."""
    from feudo_ai import SearchOptions, advise

    state = positions_by_phase(2)[Phase.MOVE]
    seat = state.current_player()
    me = threading.get_native_id()
    base = _thread_nices()[me]
    seen: set[int] = set()
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            seen.update(n for tid, n in _thread_nices().items() if tid != me)
            time.sleep(0.002)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        niced = advise(state, seat, SearchOptions(iterations=60_000, seed=3, nice=7))
    finally:
        done.set()
        watcher.join()
    assert min(base + 7, 19) in seen
    assert _thread_nices()[me] == base  # the caller's priority is untouched
    plain = advise(state, seat, SearchOptions(iterations=60_000, seed=3))
    assert (niced.plan, niced.alternatives, niced.stats.iterations) == (plain.plan, plain.alternatives,
                                                                        plain.stats.iterations)
