"""Greedy moves in the truncated playout: ``SearchOptions.playout_greedy``, the probability that a
playout plays a Move, March, Advance or Milady (R8-R14) as the greedy bot would, the mover's best one-ply
``position_score`` (``_greedy_pick`` in ``feudo_ai/_feudo_game.pyx``), instead of a uniformly random one.

A Move, March or Advance is scored by what the mover's score gains once the token stands on its destination
(the rules' bookkeeping after the placement, such as the end of the turn, left out); a Milady's charm or
infection by the score after the action. The expected scores and picks are computed here from the reference
engine and ``feudo_ai.evaluate.position_score`` (the Python reference the C scores are tested against), not from
the C code under test. Off (0, the default) the
playouts are those of before, bit for bit: the frozen ``ismcts-v1`` pins the field to 0 and its recorded games
replay in tests/test_strength_bots.py."""

from __future__ import annotations

import math
import random
import re

import pytest

from engine import Phase
from engine.core import CoreState
from feudo_ai import _feudo_game
from feudo_ai.bots.greedy import GreedyBot
from feudo_ai.evaluate import position_score
from feudo_ai.settings import MAX_PLAYOUT_TURNS, SearchOptions, resolve

from helpers import benchmark_module
from search_helpers import advice_key, check_blind_pairs_agree, find_position, hidden_position, play, positions
from search_helpers import c_search as search  # one C search, SearchOptions names


def greedy_playouts(players: int) -> dict:
    """The playout settings of the product profile in a game of ``players``."""
    return {k: v for k, v in product_options(players).items() if k.startswith("playout")}


def product_options(players: int) -> dict:
    """The settings the product profile adds to the defaults in a game of ``players``."""
    return resolve("product", players).changes()


GREEDY_PHASES = (Phase.MOVE, Phase.MARCH, Phase.ADVANCE, Phase.MILADY)
SEEDS = range(40)


def _placed(state, a: int):
    """The reference state with the token of Move, March or Advance ``a`` placed on its destination (and so
    entered, R16), nothing else changed; ``state`` itself for PASS."""
    L, g = state.game.layout, state.game
    after = state.clone()
    if a == L.PASS:
        return after
    p = state.current_player()
    if state.phase == Phase.MOVE:
        t, x = state.token, a - L.MOVE
    elif state.phase == Phase.MARCH:
        t, x = divmod(a - L.MARCH, g.num_territories)
    else:
        t, x = a - L.ADVANCE, state.won[state.round][1]
    after.loc[p][t] = x
    after.entered[p][t] = True
    return after


def _one_ply_scores(state) -> dict[int, float]:
    """{legal action: the mover's position_score once the action's token is placed (Move, March, Advance), or
    after the action (Milady)}, by the reference engine."""
    p = state.current_player()
    out = {}
    for a in state.legal_actions():
        if state.phase == Phase.MILADY:
            after = state.clone()
            after.apply_action(a)
        else:
            after = _placed(state, a)
        out[a] = position_score(after, p)
    return out


def _choice_positions(limit: int = 24) -> list:
    """Move/March/Advance/Milady positions of 2 and 4 players where the one-ply scores do not all tie."""
    out = []
    for players in (2, 4):
        for state in positions(players, seeds=(1, 2, 3)):
            if state.phase in GREEDY_PHASES and len(state.legal_actions()) > 2:
                scores = _one_ply_scores(state)
                if max(scores.values()) - min(scores.values()) > 1e-6:
                    out.append((state, scores))
    assert len(out) >= limit // 2, "too few positions to test the greedy playout on"
    return out[:limit]


def test_greedy_one_always_plays_a_best_one_ply_move() -> None:
    """R8-R14 decisions: with playout_greedy 1 every pick is among the actions after which the mover's
    position_score (reference engine) is highest."""
    phases = set()
    for state, scores in _choice_positions():
        best = max(scores.values())
        core = CoreState.from_reference(state)
        for seed in SEEDS:
            a = _feudo_game.playout_action(core, seed, 1.0)
            assert scores[a] == pytest.approx(best, abs=1e-9), (state.phase, a, scores)
        phases.add(state.phase)
    assert Phase.MOVE in phases


def test_greedy_scores_are_what_placing_the_token_gains() -> None:
    """R8-R11, R16: every Move, March and Advance candidate's C score is the gain of the mover's position_score
    (reference engine) from placing the token, in 2, 3 and 4 players; PASS gains nothing."""
    phases = set()
    for players in (2, 3, 4):
        for state in positions(players, seeds=(1, 2, 3, 4)):
            if state.phase not in (Phase.MOVE, Phase.MARCH, Phase.ADVANCE):
                continue
            p = state.current_player()
            now = position_score(state, p)
            got = _feudo_game.greedy_scores(CoreState.from_reference(state))
            assert set(got) == set(state.legal_actions())
            for a, score in got.items():
                assert score == pytest.approx(position_score(_placed(state, a), p) - now, abs=1e-9), (state.phase, a)
            phases.add(state.phase)
    assert phases == {Phase.MOVE, Phase.MARCH, Phase.ADVANCE}


def _greedy_game_positions(players: int, seed: int) -> list:
    """The Move, March and Advance decisions of a game the greedy player plays for every seat: its tokens gather
    by the Cities and stack, which random play rarely does."""
    bots = [GreedyBot(seed * 10 + i) for i in range(players)]
    out = []
    play(players, seed, pick=lambda s, rng: bots[s.current_player()].choose(s),
         until=lambda s: (s.phase in (Phase.MOVE, Phase.MARCH, Phase.ADVANCE) and out.append(s.clone())) or False)
    return out


def _cases(state, a: int) -> set[str]:
    """What the candidate ``a`` exercises in the incremental scorer, by the reference engine: its token is the only
    closest City-taker of an open City (so the City terms of the others fall back on the second closest), and
    another of the mover's tokens stands where it leaves or where it goes (their force changes, R11)."""
    g, p = state.game, state.current_player()
    after = _placed(state, a)
    t = next(u for u in range(g.num_tokens) if after.loc[p][u] != state.loc[p][u])
    src, dest, out = state.loc[p][t], after.loc[p][t], set()
    if any(u != t and state.loc[p][u] == src for u in range(g.num_tokens) if src >= 0):
        out.add("left behind")
    if any(u != t and state.loc[p][u] == dest for u in range(g.num_tokens)):
        out.add("joined")
    castle, dist = state.castle_territory(p), g.map.distance
    if castle >= 0 and g.takes_cities[t] and t != g.milady and src >= 0:
        for c in g.map.cities:
            others = [dist[x][c] for u, x in enumerate(state.loc[p])
                      if u != t and x >= 0 and g.takes_cities[u] and u != g.milady]
            if state.owner[c] != p and all(dist[src][c] < d for d in others):
                out.add("sole closest City-taker")
    return out


def test_greedy_scores_in_greedy_games_are_what_placing_the_token_gains() -> None:
    """The same check on positions of games the greedy player plays (2 and 4 players): every candidate's C score is
    the gain of the reference position_score, including the candidates whose token is the only closest City-taker
    of a City and those whose token leaves or joins others of its side (the scorer's per-City totals and
    per-territory token sets)."""
    seen = set()
    for players, seed in ((2, 1), (2, 2), (4, 3)):
        for state in _greedy_game_positions(players, seed):
            p = state.current_player()
            now = position_score(state, p)
            got = _feudo_game.greedy_scores(CoreState.from_reference(state))
            for a, score in got.items():
                assert score == pytest.approx(position_score(_placed(state, a), p) - now, abs=1e-9), (state.phase, a)
                if a != state.game.layout.PASS:
                    seen |= _cases(state, a)
    assert seen == {"left behind", "joined", "sole closest City-taker"}


def test_a_move_that_ends_the_turn_is_scored_by_its_placement() -> None:
    """A last Move of a turn makes the rules end it (R18's cures, a new turn); the greedy score is still the
    placement's gain, the same rule as every other Move."""
    def last_move(state) -> bool:
        if state.phase != Phase.MOVE or len(state.legal_actions()) < 2:
            return False
        after = state.clone()
        after.apply_action(state.legal_actions()[-1])
        return after.turn != state.turn
    state = find_position(last_move, players=2, seeds=range(1, 200))
    p, a = state.current_player(), state.legal_actions()[-1]
    got = _feudo_game.greedy_scores(CoreState.from_reference(state))
    assert got[a] == pytest.approx(position_score(_placed(state, a), p) - position_score(state, p), abs=1e-9)


def test_greedy_scores_refuse_other_decisions() -> None:
    state = find_position(lambda s: s.phase == Phase.SELECT, players=2)
    with pytest.raises(ValueError, match="state"):
        _feudo_game.greedy_scores(CoreState.from_reference(state))


def test_greedy_zero_plays_uniformly_and_a_half_mixes_both() -> None:
    """0: the uniform playout of before (worse moves too, every legal action over enough seeds on some
    position); 0.5: both greedy and non-greedy picks."""
    worse_at_zero = worse_at_half = best_at_half = 0
    every_action_seen = False
    for state, scores in _choice_positions():
        best = max(scores.values())
        core = CoreState.from_reference(state)
        zero = [_feudo_game.playout_action(core, seed, 0.0) for seed in range(200)]
        half = [_feudo_game.playout_action(core, seed, 0.5) for seed in range(200)]
        worse_at_zero += sum(scores[a] < best - 1e-9 for a in zero)
        worse_at_half += sum(scores[a] < best - 1e-9 for a in half)
        best_at_half += sum(scores[a] >= best - 1e-9 for a in half)
        every_action_seen |= set(zero) == set(scores)
    assert worse_at_zero > 0 and worse_at_half > 0 and best_at_half > 0
    assert worse_at_half < worse_at_zero  # half the picks are greedy ones
    assert every_action_seen


def test_greedy_leaves_attacks_to_the_attack_policy() -> None:
    """R11: attacks and joins follow the winnable-attack policy whatever playout_greedy is (same draws)."""
    checked = 0
    for players in (2, 4):
        for state in positions(players, seeds=(1, 2, 3)):
            if state.phase in (Phase.ATTACK, Phase.ATTACK_JOIN) and len(state.legal_actions()) > 1:
                core = CoreState.from_reference(state)
                for seed in range(5):
                    assert _feudo_game.playout_action(core, seed, 1.0) == _feudo_game.playout_action(core, seed, 0.0)
                checked += 1
    assert checked >= 3


def test_playout_greedy_on_is_deterministic_and_changes_the_search() -> None:
    state = hidden_position(players=2)
    kw = dict(iterations=1500, seed=3, playout_greedy=1.0, playout_turns=1)
    on = search(state, **kw)
    assert advice_key(on) == advice_key(search(state, **kw))
    assert advice_key(on) != advice_key(search(state, iterations=1500, seed=3, playout_turns=1))


@pytest.mark.parametrize("turns", [1, MAX_PLAYOUT_TURNS])
def test_honesty_with_greedy_playouts(turns) -> None:
    """Two states that differ only in the opponents' secret selections give the same advice (R22), with one more
    turn and with the product's playouts to the end of the game."""
    assert check_blind_pairs_agree(search, [(Phase.REVEAL, Phase.MOVE)], range(1, 40), random.Random(9), per_set=2,
                                   iterations=1000, playout_greedy=1.0, playout_turns=turns) == 2


def test_product_playouts_reach_the_end_of_a_two_player_game() -> None:
    """In 2 players the product's playouts (greedy_playouts(2)) play to the end of the game, so each leaf is
    scored by the exact R19 returns and the hand-made evaluation's parameters cannot change the advice; with one
    more turn (the 3-4 player horizon) they do, so the check can fail."""
    assert greedy_playouts(2) == {"playout_greedy": 1.0, "playout_turns": MAX_PLAYOUT_TURNS}
    assert greedy_playouts(3) == greedy_playouts(4) == {"playout_greedy": 1.0, "playout_turns": 1}
    for phase in (Phase.MOVE, Phase.SELECT):
        state = find_position(lambda s: s.phase == phase and len(s.legal_actions()) > 1, players=2)
        kw = dict(iterations=600, seed=4, **greedy_playouts(2))
        base = advice_key(search(state, **kw))
        assert advice_key(search(state, temperature=40.0, **kw)) == base
        assert advice_key(search(state, margin_weight=0.7, margin_temperature=2.0, **kw)) == base
        short = dict(kw, playout_turns=1)
        assert advice_key(search(state, temperature=40.0, **short)) != advice_key(search(state, **short))


def test_product_options_add_the_wide_margin_in_4_players_and_the_action_prior_in_2() -> None:
    """the product profile (what the product searches with) are the greedy playouts; in 4 players the wide margin
    (margin_weight 0.5 at margin_temperature 4), in 2 players the strong action prior (weight 4, temperature 0.25:
    measured with the playouts to the end, docs/search-history.md "Combinations"); each changes the advice where
    it is set (so it is live where it was measured)."""
    assert product_options(2) == {**greedy_playouts(2), "prior_weight": 4.0, "prior_temperature": 0.25}
    assert product_options(3) == greedy_playouts(3)
    two = find_position(lambda s: s.phase == Phase.MOVE and len(s.legal_actions()) > 1, players=2)
    assert advice_key(search(two, iterations=600, seed=4, **product_options(2))) != \
           advice_key(search(two, iterations=600, seed=4, **greedy_playouts(2)))
    # (the wide margin's temperature, 4 VP, is also the default one: only its weight differs)
    assert product_options(4) == {**greedy_playouts(4), "margin_weight": 0.5}
    assert resolve("product", 4).margin_temperature == 4.0
    four = find_position(lambda s: s.phase == Phase.MOVE and len(s.legal_actions()) > 1, players=4)
    assert advice_key(search(four, iterations=600, seed=4, **product_options(4))) != \
           advice_key(search(four, iterations=600, seed=4, **greedy_playouts(4)))


@pytest.mark.parametrize("players", [0, -1, 2.0, "2", True])
def test_the_product_profile_refuses_a_bad_number_of_players(players) -> None:
    with pytest.raises(ValueError, match="^players:"):
        product_options(players)


@pytest.mark.parametrize("value", [-0.1, 1.01, math.nan, math.inf, True, "1", None])
def test_bad_playout_greedy_names_the_field(value) -> None:
    with pytest.raises(ValueError, match=re.escape("playout_greedy")):
        SearchOptions(playout_greedy=value)


def test_playout_greedy_needs_the_c_backend() -> None:
    with pytest.raises(ValueError, match="playout_greedy"):
        SearchOptions(backend="python", playout_greedy=0.5)
    SearchOptions(backend="python", playout_greedy=0.0)


def test_game_and_helper_check_their_greedy_arguments() -> None:
    state = positions(2, seeds=(1,))[3]
    core = CoreState.from_reference(state)
    with pytest.raises(ValueError, match="playout_greedy"):
        _feudo_game.FeudoGame(core, state.current_player(), "uniform", 1.0, "handmade", None, 0.0, 4.0, 1.5)
    with pytest.raises(ValueError, match="greedy"):
        _feudo_game.playout_action(core, 1, -0.5)


def test_frozen_baselines_pin_greedy_playouts_off() -> None:
    assert resolve("ismcts-v1").playout_greedy == resolve("pimc").playout_greedy == 0.0
    from feudo_ai.bots import make_bot
    for name in ("ismcts-v1", "pimc"):
        assert make_bot(name, 1).options.playout_greedy == 0.0


def test_playout_ties_benchmark_counts_the_ties_of_the_reference_scores() -> None:
    """benchmarks/playout_ties.py (R8-R14): at every decision it reports, the actions tied at the top of the C
    playout's scores are those tied at the top of the reference engine's one-ply scores, and ties occur."""
    ties = benchmark_module("playout_ties")
    decisions, tied = 0, 0
    for state, scores in ties.tied_decisions(players=2, seed=20, games=1):
        reference = _one_ply_scores(state)
        best = max(reference.values())
        top = {a for a, v in reference.items() if v == pytest.approx(best, abs=1e-9)}
        assert {a for a, v in scores.items() if v == max(scores.values())} == top, (state.phase, scores, reference)
        assert ties.top_ties(scores) == len(top)
        decisions += 1
        tied += len(top) > 1
    assert decisions >= 20 and 0 < tied < decisions
