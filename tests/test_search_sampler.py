"""Determinization (feudo_ai/sampler.py): sampled worlds agree with the seat's observation (R22) on every public
field, keep the seat's own selection, give opponents legal selections, and respect R7 merc evidence."""

from __future__ import annotations

import random

import pytest

from engine import DEAD, Phase, sample_chance
from feudo_ai.sampler import (OBS_EXTRA_KEYS, UniformSampler, WeightedSampler, make_sampler, observation_fields,
                              sample_world)
from search_helpers import find_position, hidden_of_others, positions


def _check_world(state, world, seat: int) -> None:
    g = state.game
    obs = state.observation(seat)
    # Every public field and the seat's own selection: the world looks the same to the seat.
    assert world.observation(seat) == obs
    for q in range(state.num_players):
        if q == seat:
            assert world.sel_army[q] == state.sel_army[q] and world.sel_trade[q] == state.sel_trade[q]
            continue
        sel = [t for t in range(g.num_tokens) if world.sel_army[q][t]]
        assert len(sel) == obs["selected_count"][q]
        assert all(world.army_held[q][t] for t in sel), "selected a discarded card"
        assert all(world.sel_army[q][t] for t in range(g.num_tokens) if state.revealed[q][t]), "revealed card lost"
        if state.sel_done[q]:
            c = world.sel_trade[q]
            assert c >= 0 and world.trade_held[q][c]
            assert world.shillings_of(q, c) >= world.merc_moved[q], "R7 evidence ignored"
        else:
            assert world.sel_trade[q] == -1


@pytest.mark.parametrize("players", [2, 3, 4])
@pytest.mark.parametrize("sampler", ["uniform", "weighted"])
def test_sampled_worlds_match_the_observation(players: int, sampler: str) -> None:
    rng = random.Random(players)
    checked = hidden = 0
    for state in positions(players, seeds=(players, 10 + players)):
        seat = state.current_player()
        obs = state.observation(seat)
        s = make_sampler(sampler, state.game, obs)
        for _ in range(3):
            world = s.sample(rng)
            _check_world(state, world, seat)
            assert world.legal_actions() == state.legal_actions()  # the seat's choices are public + own
            checked += 1
        hidden += hidden_of_others(state, seat)
    assert checked >= 60 and hidden >= 5  # the positions do exercise hidden selections


def test_worlds_vary_and_cover_the_hidden_cards() -> None:
    state = find_position(lambda s: s.phase == Phase.REVEAL and s.turn >= 2 and hidden_of_others(s, s.current_player()))
    seat = state.current_player()
    s = UniformSampler(state.game, state.observation(seat))
    rng = random.Random(5)
    seen = {tuple(tuple(w.sel_army[q]) for q in range(state.num_players)) for w in (s.sample(rng) for _ in range(40))}
    assert len(seen) > 5


def test_sampling_ignores_the_true_selections() -> None:
    """Two sampler runs with the same seed give the same worlds whatever the opponents really selected."""
    from search_helpers import with_other_selections

    state = find_position(lambda s: s.phase == Phase.REVEAL and hidden_of_others(s, s.current_player()))
    seat = state.current_player()
    other = with_other_selections(state, seat, random.Random(3))
    assert other.to_dict() != state.to_dict() and other.observation(seat) == state.observation(seat)
    a = [w.to_dict() for w in (sample_world(state.game, state.observation(seat), random.Random(9)) for _ in range(1))]
    b = [w.to_dict() for w in (sample_world(other.game, other.observation(seat), random.Random(9)) for _ in range(1))]
    assert a == b


def test_r7_merc_evidence_is_respected() -> None:
    """A Mercenary moved by an opponent proves a Trading Card with shillings (R7, R22)."""

    def pred(s):
        seat = s.current_player()
        return any(q != seat and s.merc_moved[q] > 0 and not s.trade_revealed[q] for q in range(s.num_players))

    state = find_position(pred)
    seat = state.current_player()
    q = next(q for q in range(state.num_players)
             if q != seat and state.merc_moved[q] > 0 and not state.trade_revealed[q])
    values = state.game.ruleset.trading_cards
    for cls in (UniformSampler, WeightedSampler):
        s = cls(state.game, state.observation(seat))
        rng = random.Random(1)
        cards = {s.sample(rng).sel_trade[q] for _ in range(60)}
        assert cards and all(state.shillings_of(q, c) >= state.merc_moved[q] for c in cards)
        assert all(values[c] > 0 for c in cards) or state.king
    # Without the evidence (same position, merc_moved cleared), zero cards are possible again.
    obs = state.observation(seat)
    obs["merc_moved"] = [0] * state.num_players
    s = UniformSampler(state.game, obs)
    rng = random.Random(1)
    if any(state.trade_held[q][c] and values[c] == 0 for c in range(len(values))):
        assert any(values[s.sample(rng).sel_trade[q]] == 0 for _ in range(60))


def test_mid_selection_observer_gets_completable_worlds() -> None:
    """Observed by another seat while a player is picking, worlds keep the picks completable (ascending)."""
    state = find_position(lambda s: s.phase == Phase.SELECT and 0 < sum(s.sel_army[s.current_player()]) < 3,
                          players=3)
    picker = state.current_player()
    seat = (picker + 1) % state.num_players
    s = UniformSampler(state.game, state.observation(seat))
    rng = random.Random(2)
    for _ in range(30):
        world = s.sample(rng)
        assert sum(world.sel_army[picker]) == sum(state.sel_army[picker])
        w = world.clone()
        while w.phase == Phase.SELECT and w.current_player() == picker:
            legal = w.legal_actions()
            assert legal, "world cannot be completed"
            w.apply_action(legal[0])


def test_worlds_play_to_the_end() -> None:
    rng = random.Random(4)
    for state in positions(4, seeds=(3,))[::6]:
        seat = state.current_player()
        world = sample_world(state.game, state.observation(seat), rng, sampler="weighted")
        while not world.is_terminal():
            world.apply_action(sample_chance(world, rng) if world.is_chance_node() else rng.choice(world.legal_actions()))
        assert world.winners


def test_observation_fields_strips_extras_and_copies() -> None:
    state = positions(2, seeds=(1,))[5]
    obs = state.observation(0)
    d = observation_fields(obs)
    assert not any(k in d for k in OBS_EXTRA_KEYS)
    d["sel_army"][1][0] = "x"
    assert obs["sel_army"][1][0] != "x"
    with pytest.raises(ValueError):
        make_sampler("nope", state.game, obs)


def test_dead_tokens_cards_are_unlikely_under_weighted_model() -> None:
    state = find_position(lambda s: s.phase == Phase.REVEAL and s.turn >= 4 and any(
        DEAD in s.loc[q] and s.army_held[q][s.loc[q].index(DEAD)] for q in range(s.num_players)
        if q != s.current_player()) and hidden_of_others(s, s.current_player()), seeds=range(1, 80))
    seat = state.current_player()
    s = WeightedSampler(state.game, state.observation(seat))
    for q in range(state.num_players):
        if q == seat:
            continue
        cands = [t for t in range(state.game.num_tokens) if state.army_held[q][t]]
        w = s.army_weights(q, cands)
        for t, x in zip(cands, w):
            if state.loc[q][t] == DEAD:
                assert x < min(w[i] for i, u in enumerate(cands) if state.loc[q][u] != DEAD and state.can_move(q, u))
