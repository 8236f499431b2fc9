"""Hosted matches without gRPC (feudo_ai/matches): setup, tokens, submit semantics, events, persistence, bots.

Security is checked by scanning every message a seat receives over whole matches (R22): no event carries
another seat's Strategy pick, no observation another seat's unrevealed card, and every observation a seat gets
is exactly what its own events let it rebuild (engine.history, R25).
"""

from __future__ import annotations

import json
import random
import threading
import time

import pytest

from engine.history import Entry, SeatReplay
from feudo_ai.matches import (FailedPrecondition, InvalidArgument, MatchService, MatchSetup, NotFound,
                              PermissionDenied, Unauthenticated)


@pytest.fixture
def svc():
    service = MatchService(":memory:")
    yield service
    service.close()


def play_external(svc, match_id, tokens, rng, inbox=None, timeout=60.0):
    """Drive every external seat with random legal actions until the match ends; ``inbox[seat]`` collects
    every message that seat receives (observations and submit answers)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        progressed = False
        for seat, token in tokens.items():
            obs = svc.get_observation(match_id, seat, token)
            if inbox is not None:
                inbox[seat].append(("observation", obs))
            if obs["finished"]:
                return obs
            if obs["legal_actions"]:
                a = rng.choice(obs["legal_actions"])["action"]
                answer = svc.submit_action(match_id, seat, token, a, obs["action_count"])
                if inbox is not None:
                    inbox[seat].append(("submit", answer))
                progressed = True
        if not progressed:
            count = obs["action_count"]
            svc.wait(match_id, 5, until=lambda m: m.action_count > count or m.finished)
    pytest.fail("match did not end in time")


# -- setup ---------------------------------------------------------------------------------------------------
def test_setup_validation_names_the_field(svc):
    cases = [({"players": 5}, r"^players: expected an integer in \[2, 4\]"),
             ({"players": 2, "seats": ["external"]}, r"^seats: expected a list of 2 seats"),
             ({"players": 2, "seats": ["external", "nosuchbot"]}, r"^seats\[1\]: unknown bot 'nosuchbot'"),
             ({"players": 2, "seats": ["external", "ismcts:bogus=1"]}, r"^seats\[1\]: .*bogus"),
             ({"seed": -1}, r"^seed: expected an integer"),
             ({"ruleset": "../etc/passwd"}, r"^ruleset: expected the name of a packaged ruleset"),
             ({"ruleset": "nosuch"}, r"^ruleset: unknown ruleset"),
             ({"map": "nosuch"}, r"^map: .*unknown map"),
             ({"board_order": [0, 1, 1, 2]}, r"^board_order: expected a permutation"),
             ({"turns": 0}, r"^turns: expected an integer"),
             ({"virulent_plague": "yes"}, r"^virulent_plague: expected true or false"),
             ({"players": 2, "castles": [0]}, r"^castles: expected a list of 2"),
             ({"players": 2, "castles": [0, 1]}, r"castles\[1\]: site 1 is not a free castle site"),
             ({"colour": "red"}, r"^setup: unknown field\(s\) colour")]
    for setup, message in cases:
        with pytest.raises(InvalidArgument, match=message):
            svc.create_match(setup)
    assert svc.list_matches() == []


def test_setup_board_order_and_round_trip():
    a = MatchSetup.from_dict({"players": 3, "seats": ["external", "random", "greedy"], "seed": 5,
                              "board_order": [2, 0, 3, 1], "turns": 15, "virulent_plague": True})
    assert MatchSetup.from_dict(json.loads(json.dumps(a.to_dict()))) == a
    s1 = a.start_state("reference")
    assert s1.game.ruleset.turns == 15 and s1.game.ruleset.virulent_plague
    # the board order is the table's: a different order is a different map
    b = MatchSetup.from_dict({**a.to_dict(), "board_order": [0, 1, 2, 3]})
    assert s1.game.map.to_dict() != b.start_state("reference").game.map.to_dict()


# -- tokens --------------------------------------------------------------------------------------------------
def test_seat_tokens_paste_safely_after_the_token_flag():
    """A token starting with '-' read as an option in `feudo play --token T` (CI found it with token_urlsafe)."""
    import re

    from feudo_ai.matches.tokens import new_token

    drawn = [new_token() for _ in range(2000)]
    assert all(re.fullmatch(r"[A-Za-z0-9]{32}", t) for t in drawn)
    assert len(set(drawn)) == len(drawn)


def test_every_seat_call_needs_that_seats_token(svc):
    r = svc.create_match({"players": 3, "seats": ["external", "external", "random"], "seed": 1})
    mid, tokens = r["match_id"], r["tokens"]
    assert set(tokens) == {0, 1} and tokens[0] != tokens[1] and len(tokens[0]) >= 32
    calls = [lambda s, t: svc.get_observation(mid, s, t),
             lambda s, t: svc.submit_action(mid, s, t, 0, 0),
             lambda s, t: list(svc.watch(mid, s, t, 0, cancel=_set_event()))]
    for call in calls:
        with pytest.raises(Unauthenticated):
            call(0, "")
        with pytest.raises(Unauthenticated):
            call(0, None)
        with pytest.raises(PermissionDenied, match="not the token of seat 0"):
            call(0, tokens[1])  # another seat's token
        with pytest.raises(PermissionDenied):
            call(0, tokens[0][:-1] + ("A" if tokens[0][-1] != "A" else "B"))
        with pytest.raises(PermissionDenied, match="played by a bot"):
            call(2, tokens[0])
        with pytest.raises(InvalidArgument, match=r"^seat: expected an integer in \[0, 3\)"):
            call(7, tokens[0])
    with pytest.raises(NotFound, match="no match"):
        svc.get_observation("nope", 0, tokens[0])
    # nothing stores a token in clear: the database holds hashes only
    stored = svc.store.load_all()[0]
    assert tokens[0] not in json.dumps(stored.token_hashes) and len(stored.token_hashes[0]) == 64


def _set_event():
    e = threading.Event()
    e.set()
    return e


# -- submit --------------------------------------------------------------------------------------------------
def test_submit_is_idempotent_and_refuses_stale_out_of_turn_and_illegal(svc):
    r = svc.create_match({"players": 2, "seats": ["external", "external"], "seed": 4})
    mid, tokens = r["match_id"], r["tokens"]
    obs = {s: svc.get_observation(mid, s, tokens[s]) for s in (0, 1)}
    actor = next(s for s in (0, 1) if obs[s]["legal_actions"])
    other = 1 - actor
    n = obs[actor]["action_count"]
    assert obs[actor]["current_player"] == actor and obs[other]["legal_actions"] == []
    legal = [x["action"] for x in obs[actor]["legal_actions"]]
    illegal = next(a for a in range(1000) if a not in legal)
    with pytest.raises(InvalidArgument, match=r"^action: .* is not legal now"):
        svc.submit_action(mid, actor, tokens[actor], illegal, n)
    with pytest.raises(InvalidArgument, match=r"^action: expected an integer"):
        svc.submit_action(mid, actor, tokens[actor], "1", n)
    with pytest.raises(FailedPrecondition, match="out of turn"):
        svc.submit_action(mid, other, tokens[other], legal[0], n)
    with pytest.raises(FailedPrecondition, match="expected_action_count"):
        svc.submit_action(mid, actor, tokens[actor], legal[0], n + 3)
    assert svc.get_observation(mid, actor, tokens[actor]) == obs[actor]  # nothing changed
    first = svc.submit_action(mid, actor, tokens[actor], legal[0], n)
    after = svc.get_observation(mid, actor, tokens[actor])["action_count"]
    assert first["action_count"] == n + 1 and after >= n + 1
    again = svc.submit_action(mid, actor, tokens[actor], legal[0], n)  # a retry: same answer, not applied twice
    assert again["action_count"] == first["action_count"]
    assert svc.get_observation(mid, actor, tokens[actor])["action_count"] == after
    assert svc._matches[mid].actions.count(legal[0]) >= 1 and len(svc._matches[mid].actions) == after
    if len(legal) > 1:
        with pytest.raises(FailedPrecondition, match="stale"):
            svc.submit_action(mid, actor, tokens[actor], legal[1], n)  # another action at a past count
    with pytest.raises(FailedPrecondition, match="not over"):
        svc.get_record(mid)


# -- whole matches, security scan ----------------------------------------------------------------------------
def hidden_of(state, q):
    """Seat q's unrevealed secret picks, as the action ints that would betray them."""
    L = state.game.layout
    out = {L.SELECT + t for t in range(state.game.num_tokens) if state.sel_army[q][t] and not state.revealed[q][t]}
    if state.sel_trade[q] >= 0 and not state.trade_revealed[q]:
        out.add(L.TRADE + state.sel_trade[q])
    return out


def test_r22_whole_matches_no_message_carries_another_seats_hidden_cards(svc):
    """Two external seats and two bots, 2 turns; every observation and event each seat receives is scanned."""
    r = svc.create_match({"players": 4, "seats": ["external", "greedy", "external", "random"], "seed": 8,
                          "turns": 2})
    mid, tokens = r["match_id"], r["tokens"]
    m = svc._matches[mid]
    inbox = {s: [] for s in tokens}
    checked = {"observations": 0, "events": 0, "hidden_moments": 0}
    real_hidden_seen = []

    orig = svc.get_observation

    def observe(match_id, seat, token):  # record the real hidden cards at the moment of each answer
        with m.lock:
            obs = orig(match_id, seat, token)
            real_hidden_seen.append((seat, {q: hidden_of(m.state, q) for q in range(4) if q != seat}))
        return obs

    svc.get_observation = observe
    final = play_external(svc, mid, tokens, random.Random(3), inbox)
    assert final["finished"]
    for seat in tokens:
        replay = SeatReplay(m.start, seat)
        events = list(svc.watch(mid, seat, tokens[seat], 0))
        assert events[-1]["kind"] == "end" and len(events) == m.action_count + 1
        by_count = {}
        for ev in events[:-1]:
            checked["events"] += 1
            if ev["player"] not in (seat, -1) and ev["pick"]:
                assert ev["action"] is None and "select" not in ev["text"]
            replay.push(Entry.from_dict({k: ev[k] for k in ("player", "action", "trades", "pick")}))
            by_count[ev["action_count"]] = replay.state.observation(seat)
        for kind, msg in inbox[seat]:
            if kind != "observation":
                continue
            checked["observations"] += 1
            # every observation is exactly what the seat's own events rebuild (nothing else leaks in)
            if msg["action_count"] in by_count:
                assert msg["observation"] == by_count[msg["action_count"]]
    # direct scan: at each answer, no other seat's unrevealed pick is in it
    for seat in tokens:
        answers = [msg for kind, msg in inbox[seat] if kind == "observation"]
        moments = [hidden for s, hidden in real_hidden_seen if s == seat]
        assert len(answers) == len(moments)
        for msg, hidden in zip(answers, moments):
            o = msg["observation"]
            for q, cards in hidden.items():
                checked["hidden_moments"] += bool(cards)
                assert o["sel_army"][q] == o["revealed"][q]  # of the others' Army Cards, only the revealed ones
                if not o["trade_revealed"][q]:
                    assert o["sel_trade"][q] == -1
    assert checked["observations"] > 50 and checked["events"] > 100 and checked["hidden_moments"] > 10
    rec = svc.get_record(mid)
    assert rec["actions"] == m.actions and rec["setup"]["seats"][1] == "greedy"


def test_spectator_watch_hides_every_pick_and_reconnects_from_any_count(svc):
    r = svc.create_match({"players": 2, "seats": ["random", "random"], "seed": 2, "turns": 1})
    mid = r["match_id"]
    assert r["tokens"] == {}
    assert svc.wait(mid, 60)
    events = list(svc.watch(mid, None, None, 0))
    assert events[-1]["kind"] == "end"
    picks = [e for e in events[:-1] if e["pick"]]
    assert picks and all(e["action"] is None for e in picks)
    tail = list(svc.watch(mid, None, None, 10))
    assert tail == events[10:]
    assert svc.get_record(mid)["actions"] == svc._matches[mid].actions


@pytest.mark.timing
def test_watch_streams_live_and_bots_move_without_blocking_other_calls(svc):
    """A slow bot thinks in the background: other calls answer at once; a watcher sees its move arrive."""
    r = svc.create_match({"players": 2, "seats": ["external", "ismcts:seconds=0.6"], "seed": 6,
                          "castles": [0, 9]})
    mid, token = r["match_id"], r["tokens"][0]
    rng = random.Random(0)
    got: list[dict] = []
    stop = threading.Event()

    def watcher():
        for ev in svc.watch(mid, 0, token, 0, cancel=stop, poll=0.05):
            got.append(ev)

    t = threading.Thread(target=watcher, daemon=True)
    t.start()
    thinking_waits = 0  # waits during which the bot really searched (>= 0.4 s)
    deadline = time.monotonic() + 60
    while thinking_waits < 2 and time.monotonic() < deadline:
        obs = svc.get_observation(mid, 0, token)
        assert not obs["finished"]
        if obs["legal_actions"]:
            svc.submit_action(mid, 0, token, rng.choice(obs["legal_actions"])["action"], obs["action_count"])
            continue
        waited = time.monotonic()
        count = obs["action_count"]
        # while the bot thinks, other calls answer at once
        for _ in range(3):
            started = time.monotonic()
            svc.list_matches()
            svc.get_observation(mid, 0, token)
            assert time.monotonic() - started < 0.3  # the bot searches for 0.6 s
            time.sleep(0.05)
        assert svc.wait(mid, 30, until=lambda m: m.action_count > count)
        thinking_waits += time.monotonic() - waited >= 0.4
    assert thinking_waits == 2
    count = svc.get_observation(mid, 0, token)["action_count"]
    deadline = time.monotonic() + 5
    while len(got) < count and time.monotonic() < deadline:
        time.sleep(0.02)
    stop.set()
    t.join(5)
    assert [e["action_count"] for e in got[:count]] == list(range(1, count + 1))


# -- persistence ---------------------------------------------------------------------------------------------
def test_persistence_reopen_resumes_at_the_same_count_and_bots_continue(tmp_path):
    db = str(tmp_path / "matches.sqlite3")
    svc = MatchService(db)
    r = svc.create_match({"players": 3, "seats": ["external", "random", "greedy"], "seed": 12, "turns": 2})
    mid, token = r["match_id"], r["tokens"][0]
    rng = random.Random(5)
    for _ in range(6):
        obs = svc.get_observation(mid, 0, token)
        if obs["legal_actions"]:
            svc.submit_action(mid, 0, token, rng.choice(obs["legal_actions"])["action"], obs["action_count"])
        else:
            c = obs["action_count"]
            svc.wait(mid, 10, until=lambda m: m.action_count > c or m.current_player() == 0)
    svc.wait(mid, 10, until=lambda m: m.current_player() == 0 or m.finished)
    before = svc.get_observation(mid, 0, token)
    actions = list(svc._matches[mid].actions)
    # no close(): as if the process died here (every acknowledged action is already committed)
    svc2 = MatchService(db)
    try:
        assert svc2.get_observation(mid, 0, token) == before
        assert svc2._matches[mid].actions == actions
        final = play_external(svc2, mid, {0: token}, rng)
        assert final["finished"] and svc2.get_record(mid)["actions"][:len(actions)] == actions
    finally:
        svc.close()
        svc2.close()


def test_a_failing_bot_is_logged_and_never_stalls_its_match(svc, caplog):
    """A bot that raises (or answers an illegal action) is logged; a seeded random legal action replaces its
    answer for that decision, and the match goes on to its end."""
    from feudo_ai.bots import BOTS, Bot, register

    class Broken(Bot):
        name = "broken-test"

        def choose(self, state):
            if self.rng.random() < 0.5:
                raise RuntimeError("broken on purpose")
            return -7  # never legal

    register("broken-test", Broken)
    try:
        r = svc.create_match({"players": 2, "seats": ["broken-test", "random"], "seed": 3, "turns": 1})
        assert svc.wait(r["match_id"], 60)
        m = svc._matches[r["match_id"]]
        assert m.finished and m.bot_errors > 0
        assert any("broken-test" in rec.getMessage() for rec in caplog.records)
    finally:
        del BOTS["broken-test"]
