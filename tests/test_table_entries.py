"""engine.table: what a person at a real table may enter next (the companions' choices). On random games, every
real event, as the seat sees it, is among the entries offered at its moment (other seats' picks hidden, R22; any
face-down Army Card revealable, R7; every Trading Card value turned over, R7/R9)."""

from __future__ import annotations

import random

import pytest

from engine import new_game, sample_chance
from engine.history import SeatReplay, apply_logged
from engine.table import next_entries


def _key(e):
    return e.player, e.action, frozenset(e.trades), e.pick


@pytest.mark.parametrize("players,seed", [(2, 0), (2, 1), (3, 2), (4, 3)])
def test_every_real_event_is_offered_and_every_offer_replays_r7_r22(players, seed):
    seat = seed % players
    start = new_game(players=players, seed=seed)
    rng = random.Random(seed)
    real, replay = start.clone(), SeatReplay(start, seat)
    turned_by_others = 0  # events that turned over Trading Cards, offered in every value the card may have
    while not real.is_terminal():
        offered = next_entries(replay)
        actor = real.current_player()
        action = sample_chance(real, rng) if real.is_chance_node() else rng.choice(real.legal_actions())
        seen = apply_logged(real, action).seen_by(seat)
        assert _key(seen) in {_key(e) for e in offered}, (replay.count, seen)
        if seen.trades and actor != seat:
            turned_by_others += 1
        if actor >= 0 and actor != seat and seen.pick:
            assert offered == [seen] and seen.hidden  # another seat's secret pick: one hidden entry, no card
        replay.push(seen)
    assert turned_by_others > 0
    assert next_entries(replay) == []


def test_legal_actions_gives_the_next_entries_and_the_observation_of_a_history_r22(client):
    """The service's side (LegalActions include_next_entries / include_observation, the web companion's calls): the
    entries it lists are engine.table's for an independent replay of the same log, in the protocol's HistoryEntry
    form; the observation is the seat's; another seat's pick is listed hidden, never as a card."""
    import grpc

    from feudo.v1 import advisor_pb2 as apb
    from feudo.v1 import advisor_pb2_grpc as apb_grpc
    from feudo.v1 import game_pb2 as gpb
    from feudo_ai.wire.convert import history_from_entries, observation_from_dict

    stub = apb_grpc.AdvisorStub(client.channel)
    start = new_game(players=2, seed=0)
    rng = random.Random(7)
    real, replay, log = start.clone(), SeatReplay(start, 1), []
    saw_hidden = saw_chance = 0
    for _ in range(40):
        r = stub.LegalActions(apb.LegalActionsRequest(
            position=gpb.Position(setup=gpb.GameSetup(players=2), history=history_from_entries(log)), seat=1,
            include_observation=True, include_next_entries=True))
        assert r.observation == observation_from_dict(real.game, real.observation(1))
        expected = history_from_entries(next_entries(replay)).entries
        assert [n.entry for n in r.next_entries] == list(expected)
        for n in r.next_entries:
            if n.entry.WhichOneof("what") == "hidden_pick":
                saw_hidden += 1
                assert n.text == "Blue: selects a card (hidden)" and not n.HasField("action")
            else:
                assert n.action.id == n.entry.action and n.text
                saw_chance += not n.entry.HasField("player")
        action = sample_chance(real, rng) if real.is_chance_node() else rng.choice(real.legal_actions())
        seen = apply_logged(real, action).seen_by(1)
        replay.push(seen)
        log.append(seen)
    assert saw_hidden and saw_chance
    # only the history form has a log to go on from
    with pytest.raises(grpc.RpcError) as e:
        stub.LegalActions(apb.LegalActionsRequest(
            position=gpb.Position(setup=gpb.GameSetup(players=2), observation=observation_from_dict(
                real.game, real.observation(1))), seat=1, include_next_entries=True))
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "include_next_entries" in e.value.details()
