"""The Advisor's positions: the match form (a hosted match's seat, read by the server), the history form through
the server's cache of replays (same answers, cost of the new entries only, seat isolation), and the answer's
clock (reading counts against the budget, SearchStats' parts) with the no-search flag."""

from __future__ import annotations

import random
import threading
import time

import grpc
import pytest
from service_helpers import running_server

from engine import history as eh
from engine import new_game, sample_chance
from feudo.v1 import advisor_pb2 as apb
from feudo.v1 import advisor_pb2_grpc as apb_grpc
from feudo.v1 import game_pb2 as gpb
from feudo_ai.matches.client import MatchesClient
from feudo_ai.wire import advisor as wire_advisor
from feudo_ai.wire import convert
from feudo_ai.wire.convert import history_from_entries, setup_from_game
from feudo_ai.wire.history_cache import HistoryCache, prefix_keys


# ------------------------------------------------------------------------------------------------ a game's logs
def _game(players: int = 4, seed: int = 1, turns: int = 10):
    """A seeded random game to the end of turn ``turns``: its start, setup, full log and decisions
    (index in the log, seat, turn) where the player to act has a real choice."""
    rng = random.Random(seed)
    state = new_game(players=players, seed=seed)
    start = state.clone()
    actions, decisions = [], []
    while not state.is_terminal() and state.turn <= turns:
        if not state.is_chance_node() and len(state.legal_actions()) > 1:
            decisions.append((len(actions), state.current_player(), state.turn))
        a = sample_chance(state, rng) if state.is_chance_node() else rng.choice(state.legal_actions())
        actions.append(a)
        state.apply_action(a)
    return start, setup_from_game(start.game), eh.game_log(start, actions), decisions


@pytest.fixture(scope="module")
def game4():
    return _game()


def _history(log, seat: int, n: int) -> gpb.History:
    return history_from_entries(eh.seat_view(log[:n], seat))


# ------------------------------------------------------------------------------------------------ history cache
def test_history_cache_gives_the_same_views_and_replays_only_the_new_entries(game4, monkeypatch):
    start, setup, log, decisions = game4
    game = start.game
    pushes = [0]
    real_push = eh.SeatReplay.push

    def counted(self, entry):
        pushes[0] += 1
        return real_push(self, entry)

    monkeypatch.setattr(eh.SeatReplay, "push", counted)
    cache = HistoryCache()
    last = {}  # seat -> entries sent in its previous call
    steps_by_turn: dict[int, list[int]] = {}
    for index, seat, turn in decisions:
        history = _history(log, seat, index)
        pushes[0] = 0
        info: dict = {}
        cached = convert.observed_from_history(game, history, seat, cache=cache, setup=setup, info=info)
        steps = pushes[0]
        assert steps == info["replayed"] == index - last.get(seat, 0)  # only what this seat's last call lacked
        assert info["cached"] == last.get(seat, 0)
        last[seat] = index
        steps_by_turn.setdefault(turn, []).append(steps)
        if turn in (1, 2, 5, 10):  # the same view as a replay of the whole log (no cache)
            plain = convert.observed_from_history(game, history, seat)
            assert cached.observation == plain.observation
    # the cost at turn 10 is that of turn 1: the entries since the seat's previous decision, not the game so far
    assert max(decisions)[0] > 400
    assert max(steps_by_turn[10]) <= max(max(v) for v in steps_by_turn.values() if v) and max(steps_by_turn[10]) < 100
    assert cache.stats.hits > 0 and len(cache) <= cache.max_entries


def test_history_cache_never_serves_a_replay_to_another_seat(game4):
    start, setup, log, decisions = game4
    game = start.game
    # the first selection of the game: seat 1's own log shows its picks, the others' hide them
    first_pick = next(i for i, e in enumerate(log) if e.pick and e.player == 1)
    n = first_pick + 8
    cache = HistoryCache()
    info: dict = {}
    convert.observed_from_history(game, _history(log, 1, n), 1, cache=cache, setup=setup, info=info)
    assert (info["cached"], info["replayed"]) == (0, n)
    for seat in (0, 2, 3):
        # a prefix whose entries are the same for every seat (before any pick) is not shared across seats
        info = {}
        convert.observed_from_history(game, _history(log, seat, first_pick), seat, cache=cache, setup=setup,
                                      info=info)
        assert info["cached"] == 0, "a replay cached for seat 1 was used for another seat"
        info = {}
        view = convert.observed_from_history(game, _history(log, seat, n), seat, cache=cache, setup=setup, info=info)
        assert info["cached"] in (0, first_pick)  # at most its own earlier replay
        assert view.observation == convert.observed_from_history(game, _history(log, seat, n), seat).observation
        assert not any(view.observation["sel_army"][1])  # seat 1's unrevealed picks are not in it
    # every key of a seat differs from every key of another seat, the empty prefix included
    entries = eh.seat_view(log[:first_pick], 0)
    keys = [set(prefix_keys(b"setup", s, entries)) for s in range(4)]
    assert all(not (keys[a] & keys[b]) for a in range(4) for b in range(a + 1, 4))


def test_history_cache_is_bounded_lru_and_safe_under_concurrency(game4):
    start, setup, log, decisions = game4
    game = start.game
    small = HistoryCache(max_entries=2)
    for n in (10, 20, 30):
        convert.observed_from_history(game, _history(log, 0, n), 0, cache=small, setup=setup)
    assert len(small) == 2 and small.stats.evicted >= 1
    off = HistoryCache(max_entries=0)
    info: dict = {}
    convert.observed_from_history(game, _history(log, 0, 40), 0, cache=off, setup=setup, info=info)
    assert len(off) == 0 and info["replayed"] == 40

    shared = HistoryCache(max_entries=8)
    jobs = [(seat, n) for seat in range(4) for n in (60, 120, 180, 240)]
    expected = {j: convert.observed_from_history(game, _history(log, j[0], j[1]), j[0]).observation for j in jobs}
    errors: list = []

    def work(order: list) -> None:
        try:
            for seat, n in order:
                got = convert.observed_from_history(game, _history(log, seat, n), seat, cache=shared, setup=setup)
                assert got.observation == expected[(seat, n)]
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(random.Random(i).sample(jobs, len(jobs)),)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(shared) <= 8


def test_service_history_form_is_cached_per_call(game4):
    start, setup, log, decisions = game4
    index, seat, _ = decisions[-1]
    position = gpb.Position(setup=setup, history=_history(log, seat, index))
    with running_server() as server, grpc.insecure_channel(f"127.0.0.1:{server.port}") as channel:
        stub = apb_grpc.AdvisorStub(channel)
        first = stub.LegalActions(apb.LegalActionsRequest(position=position, seat=seat), timeout=30)
        replayed = server.servicer.history_cache.stats.replayed
        again = stub.LegalActions(apb.LegalActionsRequest(position=position, seat=seat), timeout=30)
        assert again == first and server.servicer.history_cache.stats.replayed == replayed  # nothing replayed
        advice = stub.Suggest(apb.SuggestRequest(position=position, seat=seat,
                                                 limits=apb.Limits(iterations=300, seed=1)), timeout=30).advice
        assert advice.best.id in [a.id for a in first.actions]
        assert server.servicer.history_cache.stats.replayed == replayed


# ------------------------------------------------------------------------------------------------ match form
def _match_to_seat0(mc: MatchesClient):
    """A 4-player match, seats 0 and 1 external, 2 and 3 random bots; played (seat 1 at random) until seat 0 is to
    act with a real choice in a Strategy selection or later."""
    match_id, tokens = mc.create_match(players=4, seats=["external", "external", "random", "random"], seed=5,
                                       castles=[0, 9, 25, 34])
    rng = random.Random(5)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        for seat in (0, 1):
            obs = mc.observation(match_id, seat, tokens[seat])
            if obs.finished:
                raise AssertionError("the match ended before seat 0 had a real choice")
            if obs.HasField("to_act") and obs.to_act == seat:
                if seat == 0 and len(obs.legal_actions) > 1 and obs.observation.turn >= 2:
                    return match_id, tokens, obs
                mc.submit(match_id, seat, tokens[seat], rng.choice(obs.legal_actions).id, obs.action_count)
                break
        else:
            time.sleep(0.02)  # a bot is to act
    raise AssertionError("seat 0 never came to act")


def _code(call, *args) -> grpc.StatusCode:
    with pytest.raises(grpc.RpcError) as e:
        call(*args, timeout=30)
    return e.value.code()


def test_match_form_gives_the_observation_forms_answers_and_checks_the_token():
    with running_server() as server, grpc.insecure_channel(f"127.0.0.1:{server.port}") as channel, \
            MatchesClient(f"127.0.0.1:{server.port}") as mc:
        stub = apb_grpc.AdvisorStub(channel)
        match_id, tokens, obs = _match_to_seat0(mc)
        by_match = gpb.Position(match=gpb.MatchSeat(match_id=match_id, seat=0, token=tokens[0]))
        by_obs = gpb.Position(setup=obs.setup, observation=obs.observation)
        limits = apb.Limits(iterations=2000, seed=3)
        legal_m = stub.LegalActions(apb.LegalActionsRequest(position=by_match, seat=0), timeout=30)
        legal_o = stub.LegalActions(apb.LegalActionsRequest(position=by_obs, seat=0), timeout=30)
        assert legal_m == legal_o and legal_m.seat_to_act
        assert [a.id for a in legal_m.actions] == [a.id for a in obs.legal_actions]
        adv_m = stub.Suggest(apb.SuggestRequest(position=by_match, seat=0, limits=limits), timeout=60).advice
        adv_o = stub.Suggest(apb.SuggestRequest(position=by_obs, seat=0, limits=limits), timeout=60).advice
        assert adv_m.plan == adv_o.plan and adv_m.alternatives == adv_o.alternatives
        assert adv_m.beliefs == adv_o.beliefs and adv_m.stats.iterations == adv_o.stats.iterations
        assert adv_m.stats.searched
        final = list(stub.Analyze(apb.AnalyzeRequest(position=by_match, seat=0, limits=limits), timeout=60))[-1]
        assert final.final and final.advice.best.id in [a.id for a in legal_m.actions]
        svg_m = stub.RenderPosition(apb.RenderPositionRequest(position=by_match, seat=0), timeout=30).svg
        assert svg_m == stub.RenderPosition(apb.RenderPositionRequest(position=by_obs, seat=0), timeout=30).svg
        # seat 1 waits: its view through the match form too (no actions, the player to act)
        waiting = stub.LegalActions(apb.LegalActionsRequest(position=gpb.Position(match=gpb.MatchSeat(
            match_id=match_id, seat=1, token=tokens[1])), seat=1), timeout=30)
        assert not waiting.seat_to_act and waiting.current_player == 0

        def ask(match: gpb.MatchSeat, seat: int = 0) -> grpc.StatusCode:
            return _code(stub.LegalActions, apb.LegalActionsRequest(position=gpb.Position(match=match), seat=seat))

        assert ask(gpb.MatchSeat(match_id="nosuchmatch", seat=0, token=tokens[0])) == grpc.StatusCode.NOT_FOUND
        assert ask(gpb.MatchSeat(match_id=match_id, seat=0, token="")) == grpc.StatusCode.UNAUTHENTICATED
        assert ask(gpb.MatchSeat(match_id=match_id, seat=0, token=tokens[1])) == grpc.StatusCode.PERMISSION_DENIED
        assert ask(gpb.MatchSeat(match_id=match_id, seat=2, token=tokens[0]), 2) == \
            grpc.StatusCode.PERMISSION_DENIED  # a bot's seat
        assert ask(gpb.MatchSeat(match_id=match_id, seat=1, token=tokens[1]), 0) == grpc.StatusCode.INVALID_ARGUMENT
        wrong = gpb.Position(match=gpb.MatchSeat(match_id=match_id, seat=0, token=tokens[1]))
        assert _code(stub.Suggest, apb.SuggestRequest(position=wrong, seat=0, limits=limits)) == \
            grpc.StatusCode.PERMISSION_DENIED
        assert _code(stub.RenderPosition, apb.RenderPositionRequest(position=wrong, seat=0)) == \
            grpc.StatusCode.PERMISSION_DENIED


def test_match_form_without_hosted_matches_is_failed_precondition():
    position = gpb.Position(match=gpb.MatchSeat(match_id="m", seat=0, token="t"))
    with pytest.raises(convert.NoMatches) as e:
        convert.observed_position(position, 0)
    assert wire_advisor.status_of(e.value) == grpc.StatusCode.FAILED_PRECONDITION


# ------------------------------------------------------------------------------------------------ the clock
def test_elapsed_seconds_covers_reading_the_position_and_the_search_keeps_a_floor(game4, monkeypatch):
    start, setup, log, decisions = game4
    index, seat, _ = next(d for d in decisions if d[2] == 3)
    position = gpb.Position(setup=setup, history=_history(log, seat, index))
    real = convert.observed_position
    slow = 0.3

    def slow_reader(*args, **kwargs):
        time.sleep(slow)
        return real(*args, **kwargs)

    monkeypatch.setattr(convert, "observed_position", slow_reader)
    with running_server() as server, grpc.insecure_channel(f"127.0.0.1:{server.port}") as channel:
        stub = apb_grpc.AdvisorStub(channel)
        # a budget that covers the reading: the search gets what is left, the answer stays within the budget
        t0 = time.monotonic()
        s = stub.Suggest(apb.SuggestRequest(position=position, seat=seat, limits=apb.Limits(seconds=0.8, seed=1)),
                         timeout=30).advice.stats
        took = time.monotonic() - t0
        assert s.position_seconds >= slow and s.elapsed_seconds >= s.position_seconds + s.search_seconds - 1e-3
        assert s.search_seconds < 0.8 - slow + 0.05 and s.elapsed_seconds <= took + 1e-3
        assert s.elapsed_seconds < 0.8 + 0.1 and s.searched and s.iterations > 0
        # a budget the reading ate: the search still runs its floor (a tenth of the budget), and says it searched
        s = stub.Suggest(apb.SuggestRequest(position=position, seat=seat, limits=apb.Limits(seconds=0.2, seed=1)),
                         timeout=30).advice.stats
        assert s.position_seconds >= slow and s.elapsed_seconds >= slow
        assert s.searched and s.iterations > 0 and s.search_seconds >= 0.01
        assert s.elapsed_seconds < slow + 0.2
        final = list(stub.Analyze(apb.AnalyzeRequest(position=position, seat=seat,
                                                     limits=apb.Limits(seconds=0.5, seed=1)), timeout=30))[-1]
        assert final.advice.stats.position_seconds >= slow and final.advice.stats.elapsed_seconds >= slow


def _forced_state():
    rng = random.Random(2)
    state = new_game(players=4, seed=2)
    while True:
        if state.is_chance_node():
            state.apply_action(sample_chance(state, rng))
            continue
        if len(state.legal_actions()) == 1 and state.turn >= 1:
            return state
        state.apply_action(rng.choice(state.legal_actions()))


def test_an_answer_without_search_says_why():
    state = _forced_state()
    seat = state.current_player()
    position = convert.position_from(state, seat)
    with running_server() as server, grpc.insecure_channel(f"127.0.0.1:{server.port}") as channel:
        stub = apb_grpc.AdvisorStub(channel)
        s = stub.Suggest(apb.SuggestRequest(position=position, seat=seat, limits=apb.Limits(seconds=0.2)),
                         timeout=30).advice.stats
        # a single legal action: the search may still plan the seat's next decisions; if it did not, it says why
        assert s.searched == (s.iterations > 0)
        assert s.searched or s.no_search_reason == apb.NO_SEARCH_REASON_FORCED
    forced = convert.check_decision(convert.observed_position(position, seat))
    # a real choice with no iteration: the budget, or a cancel (the servicer's classification)
    prepared = convert.check_decision(convert.observed_position(convert.position_from(
        *_real_choice()), _real_choice()[1]))

    class _Call:
        started = time.monotonic()

        def set(self, **kv):
            pass

    from feudo_ai.search.cancel import CancelEvent
    for stopped_by, cancelled, reason in (("time", False, apb.NO_SEARCH_REASON_BUDGET_SPENT),
                                          ("cancelled", True, apb.NO_SEARCH_REASON_CANCELLED)):
        stats = apb.SearchStats(iterations=0, stopped_by=stopped_by)
        cancel = CancelEvent()
        if cancelled:
            cancel.set()
        now = time.monotonic()
        wire_advisor.AdvisorServicer._timings(stats, _Call(), now, now, 0.0, prepared, cancel)
        assert not stats.searched and stats.no_search_reason == reason
    stats = apb.SearchStats(iterations=0, stopped_by="")
    wire_advisor.AdvisorServicer._timings(stats, _Call(), now, now, 0.0, forced, CancelEvent())
    assert not stats.searched and stats.no_search_reason == apb.NO_SEARCH_REASON_FORCED
    stats = apb.SearchStats(iterations=5, stopped_by="time")
    wire_advisor.AdvisorServicer._timings(stats, _Call(), now, now, 0.0, prepared, CancelEvent())
    assert stats.searched and stats.no_search_reason == apb.NO_SEARCH_REASON_UNSPECIFIED


def _real_choice():
    rng = random.Random(4)
    state = new_game(players=4, seed=4)
    while state.is_chance_node() or len(state.legal_actions()) < 3:
        state.apply_action(sample_chance(state, rng) if state.is_chance_node() else rng.choice(state.legal_actions()))
    return state, state.current_player()
