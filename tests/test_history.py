"""A game's log as one seat saw it, and its replay (engine/history.py; R22, R25).

The central property: for every seat and after every action of a game, the position rebuilt from that seat's
log alone has the same observation for that seat as the real game. Failures name the seed, step and seat.
"""

from __future__ import annotations

import json
import random

import pytest

from engine import GameRecord, load_ruleset, new_fast_game, new_game, sample_chance
from engine.core import core_available
from engine.history import (Entry, HistoryError, SeatReplay, entry_of, game_log, replay_seat_log, seat_log,
                            seat_view)
from engine.state import Phase

from helpers import DEFAULT_CASTLES, game_map

RS = load_ruleset()


def play_random(seed: int, players: int, ruleset=RS, castles: bool = False, backend: str = "reference",
                max_turns: int | None = None):
    """A random game: (start position, actions, every position after each action)."""
    rs = ruleset if max_turns is None else ruleset.with_options(turns=max_turns)
    start = new_fast_game(rs, players, seed=seed, game_map=game_map(),
                          castles=DEFAULT_CASTLES[:players] if castles else None, backend=backend)
    rng = random.Random(seed)
    state = start.clone()
    actions, states = [], []
    while not state.is_terminal():
        a = sample_chance(state, rng) if state.is_chance_node() else rng.choice(state.legal_actions())
        state.apply_action(a)
        actions.append(a)
        states.append(state.clone())
    return start, actions, states


def assert_seat_replays_match(start, actions, states, where: str, every_seat: bool = True) -> None:
    """Every seat's incremental replay agrees with the real game on that seat's observation at every step
    (``every_seat=False``: every seat is replayed at every step, the seats' observations compared in turn,
    seat ``i % players`` after step ``i``, to keep the CI tests fast; observations are the costly part).
    The compiled core keeps no VP log: against a core game the log is left out of the comparison."""
    core = type(start).__name__ == "CoreState"
    full = game_log(start, actions)
    players = start.num_players
    replays = [SeatReplay(start, s) for s in range(players)]
    for i, entry in enumerate(full):
        for s in range(players):
            replays[s].push(entry.seen_by(s))
            if not every_seat and s != i % players:
                continue
            got, want = replays[s].state.observation(s), states[i].observation(s)
            if core:
                del got["vp_log"], want["vp_log"]
            if got != want:
                diff = sorted(k for k in want if got.get(k) != want[k])
                pytest.fail(f"{where}: step {i} ({start.action_to_string(actions[i])}), seat {s}: "
                            f"observation differs in {diff}")


# -- the property on short random games (CI) ------------------------------------------------------------------
@pytest.mark.parametrize("players", [2, 3, 4])
def test_r22_r25_seat_replay_matches_observation_every_step(players):
    seed = 100 * players
    start, actions, states = play_random(seed, players, castles=players == 3, max_turns=1)
    assert_seat_replays_match(start, actions, states, f"{players}p seed {seed}", every_seat=players == 2)


@pytest.mark.parametrize("options", [{"strategy_only": True}, {"virulent_plague": True}])
def test_r20_options_seat_replay_matches_observation(options):
    start, actions, states = play_random(7, 3, ruleset=RS.with_options(**options), max_turns=1)
    assert_seat_replays_match(start, actions, states, f"options {options}", every_seat=False)


@pytest.mark.skipif(not core_available(), reason="engine._core is not built")
def test_r22_core_backend_game_and_replay():
    """A game played on the compiled core gives the same log as on the reference; the replay can be returned
    as a core state, with the real game's observation (the core keeps no VP log, so neither side has one)."""
    start, actions, states = play_random(11, 4, castles=True, backend="core", max_turns=1)
    assert type(start).__name__ == "CoreState"
    full = game_log(start, actions)
    assert full == game_log(start.to_reference(), actions)
    for k in (len(actions) // 3, len(actions) // 2, len(actions)):
        for seat in range(4):
            replayed = replay_seat_log(start, seat_view(full[:k], seat), seat, backend="core")
            assert type(replayed).__name__ == "CoreState"
            assert replayed.observation(seat) == states[k - 1].observation(seat), (k, seat)


@pytest.mark.slow
def test_r22_r25_seat_replay_whole_games():
    """Whole games (all turns, tie-breaks), 2-4 players, the batch function on every 25th prefix too."""
    for seed in range(3):
        players = 2 + seed % 3
        start, actions, states = play_random(500 + seed, players, castles=seed % 2 == 0)
        assert_seat_replays_match(start, actions, states, f"whole game seed {500 + seed}")
        for k in range(0, len(actions) + 1, 25):
            seat = k % players
            got = replay_seat_log(start, seat_log(actions[:k], seat, start=start), seat)
            want = states[k - 1] if k else start
            assert got.observation(seat) == want.observation(seat), (seed, k, seat)


# -- what a seat's log holds ---------------------------------------------------------------------------------
def test_r22_seat_log_hides_exactly_other_seats_picks():
    start, actions, _ = play_random(3, 3, max_turns=2)
    L = start.game.layout
    full = game_log(start, actions)
    assert all(not e.hidden for e in full)
    picks = [e for e in full if e.pick]
    assert picks and all(L.SELECT <= e.action < L.REVEAL for e in picks)  # exactly the SELECT/TRADE actions
    assert sum(1 for a in actions if L.SELECT <= a < L.REVEAL) == len(picks)
    for seat in range(3):
        log = seat_log(actions, seat, start=start)
        assert len(log) == len(actions)
        for e, a in zip(log, full):
            if a.pick and a.player != seat:
                assert e.hidden and e.action is None and e.player == a.player
            else:
                assert e == a
        # the serialised log carries no other seat's pick at all
        text = json.dumps([e.to_dict() for e in log])
        assert [Entry.from_dict(d) for d in json.loads(text)] == log
        for d in json.loads(text):
            if d["player"] != seat and d.get("pick"):
                assert d["action"] is None


def test_r7_trading_cards_turned_over_are_public_entries():
    """Trading Cards are turned over by no action of their own: the entry whose action turned them over
    lists them, each selected card exactly once, the same in every seat's log."""
    start, actions, states = play_random(5, 4, max_turns=3)
    L = start.game.layout
    full = game_log(start, actions)
    turned = [(i, q, c) for i, e in enumerate(full) for q, c in e.trades]
    assert len(turned) == sum(1 for a in actions if L.TRADE <= a < L.REVEAL)  # one per Trading Card picked
    for i, q, c in turned:
        prev = states[i - 1] if i else start
        assert prev.sel_trade[q] == c and not prev.trade_revealed[q]
    for seat in range(4):
        assert [e.trades for e in seat_log(actions, seat, start=start)] == [e.trades for e in full]


def test_record_source_and_entry_of():
    start, actions, states = play_random(9, 2, max_turns=2)
    record = GameRecord(RS.with_options(turns=2), game_map(), 2, 9, list(actions))
    assert seat_log(record, 1) == seat_view(game_log(start, actions), 1)
    before = start.clone()
    before.apply_action(actions[0])
    assert entry_of(start, actions[0], before) == game_log(start, actions[:1])[0]


# -- repairs and impossible logs ----------------------------------------------------------------------------
def _first(full, pred):
    return next(i for i, e in enumerate(full) if pred(e))


def test_r7_revealed_cards_repair_the_placeholders():
    """The replay's placeholder picks are not the real ones, yet every revealed card is in the replayed
    selection from its reveal on, and once all is revealed the replayed selection is the real one."""
    start, actions, states = play_random(21, 4, castles=True, max_turns=1)
    full = game_log(start, actions)
    L = start.game.layout
    end_reveals = _first(full, lambda e: e.trades)  # Army Card rounds over, Trading Cards turning over
    seat = 0
    replay = SeatReplay(start, seat)
    swapped = 0
    for i, e in enumerate(full[:end_reveals]):
        is_reveal = e.action is not None and L.REVEAL <= e.action < L.MOVE and e.player != seat
        if is_reveal:
            swapped += not replay.state.sel_army[e.player][e.action - L.REVEAL]
        replay.push(e.seen_by(seat))
        if is_reveal:
            assert replay.state.sel_army[e.player][e.action - L.REVEAL]
            assert replay.state.revealed[e.player] == states[i].revealed[e.player]
    assert swapped > 0  # the placeholders were wrong at least once: a repair really happened
    for q in range(4):  # three rounds reveal every selected Army Card
        assert replay.state.sel_army[q] == states[end_reveals - 1].sel_army[q]
    replay.push(full[end_reveals].seen_by(seat))
    assert full[end_reveals].trades
    for q, c in full[end_reveals].trades:
        assert replay.state.sel_trade[q] == c


def _reveals(full, L, player):
    return [i for i, e in enumerate(full) if e.player == player and e.action is not None
            and L.REVEAL <= e.action < L.MOVE]


def test_history_error_move_impossible_under_every_repair():
    """A reveal followed by a move no selection allows (onto a Mountain, R8): the repairs are tried, then the
    error names the entry and says why."""
    start, actions, _ = play_random(4, 2, castles=True, max_turns=1)
    full = game_log(start, actions)
    L = start.game.layout
    mountain = next(t.id for t in start.game.map.territories if t.kind.name == "MOUNTAIN")
    i = next(i for i in _reveals(full, L, 1) if full[i + 1].player == 1 and L.MOVE <= full[i + 1].action < L.CHARM
             or full[i + 1].action == L.PASS and full[i + 1].player == 1)
    log = seat_log(actions, 0, start=start)[:i + 1] + [Entry(1, L.MOVE + mountain)]
    with pytest.raises(HistoryError, match=rf"^entry {i + 1} \(White: move .*\): impossible under every "
                                           rf"selection consistent with the log"):
        replay_seat_log(start, log, 0)
    # a refused entry changes nothing: the replay goes on with the real one to the same end
    replay = SeatReplay(start, 0)
    for e in log[:-1]:
        replay.push(e)
    with pytest.raises(HistoryError):
        replay.push(log[-1])
    assert replay.count == i + 1
    for e in seat_log(actions, 0, start=start)[i + 1:]:
        replay.push(e)
    assert replay.state.observation(0) == replay_seat_log(start, seat_log(actions, 0, start=start), 0).observation(0)


def test_history_error_reveal_of_a_card_not_held():
    """R6: a reveal of an Army Card its owner has discarded (its token eliminated) is refused at once."""
    L = None
    for seed in range(40):
        start, actions, states = play_random(seed, 2, castles=True, max_turns=5)
        L = start.game.layout
        full = game_log(start, actions)
        for i in _reveals(full, L, 1):
            held = (states[i - 1]).army_held[1]
            if not all(held):
                dead = held.index(False)
                log = seat_log(actions, 0, start=start)[:i] + [Entry(1, L.REVEAL + dead)]
                with pytest.raises(HistoryError, match=rf"^entry {i}: White reveals .*, an Army Card White does "
                                                       rf"not hold"):
                    replay_seat_log(start, log, 0)
                return
    pytest.fail("no game with a discarded Army Card in 40 seeds")


def test_history_error_cases_name_the_entry():
    start, actions, _ = play_random(8, 2, castles=True, max_turns=1)
    full = game_log(start, actions)
    L = start.game.layout
    log = seat_log(actions, 0, start=start)
    # a hidden pick in the seat's own log
    own = _first(full, lambda e: e.pick and e.player == 0)
    bad = list(log)
    bad[own] = Entry(0, None, (), True)
    with pytest.raises(HistoryError, match=rf"^entry {own} .*own Strategy pick is hidden"):
        replay_seat_log(start, bad, 0)
    # a Trading Card outside the game turned over
    k = _first(full, lambda e: e.trades)
    bad = list(log)
    bad[k] = Entry(log[k].player, log[k].action, ((1, 99),), log[k].pick)
    with pytest.raises(HistoryError, match=rf"^entry {k}: a Trading Card"):
        replay_seat_log(start, bad, 0)
    # an action by the wrong player
    j = _first(full, lambda e: e.player == 1 and not e.pick)
    bad = log[:j] + [Entry(0, log[j].action)]
    with pytest.raises(HistoryError, match=rf"^entry {j}\b.*White's turn|^entry {j}\b.*it is White"):
        replay_seat_log(start, bad, 0)
    # the same Army Card revealed twice
    r = _reveals(full, L, 1)
    bad = log[:r[1]] + [Entry(1, log[r[0]].action)]
    with pytest.raises(HistoryError, match=rf"^entry {r[1]}\b"):
        replay_seat_log(start, bad, 0)
    # a fourth distinct Army Card revealed in one turn (three selected, R6)
    revealed = {full[i].action - L.REVEAL for i in r[:3]}
    extra = next(t for t in range(start.game.num_tokens) if t not in revealed)
    bad = log[:r[2] + 1] + [Entry(1, L.REVEAL + extra)]
    with pytest.raises(HistoryError, match=rf"^entry {r[2] + 1}: White reveals 4 Army Cards but selected 3"):
        replay_seat_log(start, bad, 0)
    # malformed entries name the field
    with pytest.raises(HistoryError, match=r"entry\.action: expected an integer or null"):
        Entry.from_dict({"player": 0, "action": "x"})
    with pytest.raises(HistoryError, match=r"only a Strategy pick"):
        Entry.from_dict({"player": 0, "action": None})
    with pytest.raises(HistoryError, match=r"seat: expected"):
        SeatReplay(start, 5)
