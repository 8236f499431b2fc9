"""The tree's optional action prior: ``SearchOptions.prior_weight`` / ``prior_temperature``, the game
table's ``prior`` entry (``feudo_ai/_game.pxd``), Feudo's one-ply scores (``feudo_ai/_feudo_game.pyx``) and the toy
Goofspiel's fixed preference table.

Off (``prior_weight=0``, the default) the search is the search of before, bit for bit (the recorded games of the
frozen ``ismcts-v1`` replay in tests/test_strength_bots.py, which pins the field to 0); on, it is deterministic, and
a prior concentrated on one action draws visits to it."""

from __future__ import annotations

import math
import random
import re

import pytest

from engine import Phase
from engine.core import CoreState
from feudo_ai import _feudo_game, _search
from feudo_ai._goofspiel import GoofspielGame
from feudo_ai.settings import SearchOptions
from feudo_ai.evaluate import position_score

from search_helpers import advice_key, check_blind_pairs_agree, find_position, hidden_position
from search_helpers import c_search as search  # noqa: E402 - one C search, SearchOptions names


def _worker(game, iterations: int, seed: int = 1, **kw):
    w = _search.SearchWorker(game, seed, iterations, 0.0, 200_000, "random", 0, 0.7, 0.15, None, **kw)
    assert w.run() == "iterations"
    return w


def _opening(prior=None) -> GoofspielGame:
    """Goofspiel of 5 cards, prize 5 on the table, player 0 has bid (hidden from player 1), player 1 to bid from
    a full hand: a UCB1 node (player 1 bids last) with five actions."""
    return GoofspielGame(5, [[1, 2, 3, 4, 5], [1, 2, 3, 4, 5]], [1, 2, 3, 4], 5, [2, None], [0, 0], 1, prior=prior)


def _visits(worker) -> dict[int, int]:
    return {a: v for a, (v, _) in worker.root_stats().items()}


def test_no_prior_entry_or_weight_zero_is_the_search_without_prior() -> None:
    """Weight 0 never calls the game's prior; a game without a prior (NULL entry) ignores any weight. Both give
    exactly the trees of a search with neither (same root statistics and node counts)."""
    runs = [_worker(_opening(), 800, seed=3),
            _worker(_opening(), 800, seed=3, prior_weight=2.0, prior_temperature=0.1),  # NULL entry
            _worker(_opening([0, 0, 9, 0, 0]), 800, seed=3),  # a prior, weight 0
            _worker(_opening([0, 0, 9, 0, 0]), 800, seed=3, prior_weight=0.0, prior_temperature=7.0)]
    keys = [(w.root_stats(), w.stats()["nodes"]) for w in runs]
    assert all(k == keys[0] for k in keys)


def test_prior_concentrated_on_one_bid_draws_visits_to_it() -> None:
    """Bid 3 (index 2) is a middling bid for the prize 5 (bid 5 wins it whatever player 0 bid, except a tie).
    Without a prior the search gives it few of 300 visits; with a prior on it alone (temperature 0.1: its
    probability ~1, the others e^-90) it is expanded first and its progressive bias 10 / (1 + n) keeps it
    visited, so it gets at least twice the visits over five seeds; the best bid (index 4) stays the most
    visited without the prior."""
    seeds = range(1, 6)
    off = [_visits(_worker(_opening([0, 0, 9, 0, 0]), 300, seed=s)) for s in seeds]
    on = [_visits(_worker(_opening([0, 0, 9, 0, 0]), 300, seed=s, prior_weight=10.0, prior_temperature=0.1))
          for s in seeds]
    off3, on3 = sum(v[2] for v in off), sum(v[2] for v in on)
    assert on3 >= 2 * off3, (off3, on3)
    assert all(max(v, key=v.get) == 4 for v in off)
    assert all(sum(v.values()) == 300 for v in on)


def test_prior_on_is_deterministic_and_changes_the_search() -> None:
    a, b = (_worker(_opening([5, 4, 3, 2, 1]), 600, seed=9, prior_weight=1.0) for _ in range(2))
    key = lambda w: (w.root_stats(), w.stats()["nodes"], w.stats()["max_depth"])  # noqa: E731 - no timings
    assert key(a) == key(b)
    c = _worker(_opening([5, 4, 3, 2, 1]), 600, seed=9)
    assert a.root_stats() != c.root_stats()


def test_feudo_prior_scores_are_the_one_ply_position_score() -> None:
    """Move, March and Advance: the C prior of an action is the mover's feudo_ai.evaluate.position_score (the
    Python reference) after the action, as the greedy bot's one-ply evaluation computes it."""
    checked = 0
    for phase in (Phase.MOVE, Phase.MARCH, Phase.ADVANCE):
        for seed_range in (range(1, 30), range(30, 60)):
            try:
                state = find_position(lambda s: s.phase == phase and len(s.legal_actions()) > 1, players=2,
                                      seeds=seed_range)
            except AssertionError:
                continue
            p = state.current_player()
            scores = _feudo_game.prior_scores(CoreState.from_reference(state))
            assert sorted(scores) == sorted(state.legal_actions())
            for a, v in scores.items():
                after = state.clone()
                after.apply_action(a)
                assert v == pytest.approx(position_score(after, p), abs=1e-9), (phase, a)
                checked += 1
    assert checked >= 10


def test_feudo_attack_prior_prefers_winnable_attacks() -> None:
    """Attack (R11): PASS scores 0; an attack its joinable force cannot win -2; a winnable one what it is
    worth (>= 0). Checked against the defence and force worked out from the reference state."""
    from feudo_ai.bots.greedy import attack_plan

    state = find_position(lambda s: s.phase == Phase.ATTACK and len(s.legal_actions()) > 2, players=2)
    p, L = state.current_player(), state.game.layout
    scores = _feudo_game.prior_scores(CoreState.from_reference(state))
    assert scores[L.PASS] == 0.0
    for a, v in scores.items():
        if a == L.PASS:
            continue
        force, defence, _ = attack_plan(state, p, a - L.ATTACK)
        if force <= defence:
            assert v == -2.0
        else:
            assert v >= 0.0


def test_feudo_advice_prior_on_is_deterministic_and_draws_visits_to_the_prior_favourite() -> None:
    """A Feudo move decision: with a strong prior (weight 5, temperature 0.05) the action of the best one-ply
    score gets more of the root's visits than without it; same seed, same advice."""
    state = find_position(lambda s: s.phase == Phase.MOVE and len(s.legal_actions()) >= 4, players=2)
    scores = _feudo_game.prior_scores(CoreState.from_reference(state))
    fav = max(scores, key=lambda a: (scores[a], -a))
    assert sorted(scores.values())[-1] > sorted(scores.values())[-2]  # one favourite, not a tie
    off = search(state, iterations=400, seed=4)
    on = search(state, iterations=400, seed=4, prior_weight=5.0, prior_temperature=0.05)
    assert advice_key(on) == advice_key(search(state, iterations=400, seed=4, prior_weight=5.0,
                                                   prior_temperature=0.05))
    visits = lambda adv: {x.action: x.visits for x in adv.alternatives}.get(fav, 0)  # noqa: E731
    assert visits(on) > visits(off), (visits(on), visits(off))


def test_feudo_prior_off_ignores_the_temperature() -> None:
    """prior_weight 0: the temperature is never read (the same advice as the defaults)."""
    state = hidden_position(players=2)
    assert advice_key(search(state, iterations=800, seed=2)) == \
        advice_key(search(state, iterations=800, seed=2, prior_weight=0.0, prior_temperature=0.01))


def test_honesty_with_the_prior_on() -> None:
    """The prior scores determinized worlds only: two states that differ only in the opponents' secret selections
    (the seat sees the same) give the same advice with the prior on (R22)."""
    assert check_blind_pairs_agree(search, [(Phase.REVEAL,), (Phase.MOVE,)], range(1, 30), random.Random(8),
                                   iterations=2000, prior_weight=0.5, prior_temperature=0.5) == 2


@pytest.mark.parametrize("field, value", [
    ("prior_weight", -0.1), ("prior_weight", math.nan), ("prior_weight", math.inf), ("prior_weight", 101.0),
    ("prior_weight", True), ("prior_weight", "1"), ("prior_temperature", 0), ("prior_temperature", -1.0),
    ("prior_temperature", math.nan), ("prior_temperature", None),
])
def test_bad_prior_options_name_the_field(field: str, value) -> None:
    with pytest.raises(ValueError, match=re.escape(field)):
        SearchOptions(**{field: value})


def test_prior_needs_the_c_backend() -> None:
    with pytest.raises(ValueError, match="prior_weight"):
        SearchOptions(backend="python", prior_weight=0.5)
    SearchOptions(backend="python", prior_temperature=2.0)  # harmless: no prior


def test_worker_and_game_check_their_prior_arguments() -> None:
    with pytest.raises(ValueError, match="prior_weight"):
        _worker(_opening(), 10, prior_weight=-1.0)
    with pytest.raises(ValueError, match="prior_temperature"):
        _worker(_opening(), 10, prior_weight=1.0, prior_temperature=0.0)
    with pytest.raises(ValueError, match=re.escape("prior")):
        _opening([1, 2, 3])
    with pytest.raises(ValueError, match=re.escape("prior")):
        _opening([1, 2, 3, 4, math.nan])


def test_node_stays_64_bytes() -> None:
    """The prior fills the node's padding: the pool's memory per node is unchanged."""
    assert _search.node_bytes() == 64
