"""``early_stop``: a C MO-ISMCTS search stops once its most visited root action can no longer be overtaken, and the
``ismcts`` bot banks the budget that saved.

The reference for "the answer did not change" is the same search (same seed) given its whole iteration budget: with
one thread the early stop must give its best action on every position, while spending fewer iterations on some."""

from __future__ import annotations

import pytest

from engine import Phase
from feudo_ai.bots.greedy import GreedyBot
from feudo_ai.bots.registry import make_bot
from feudo_ai.search.advise import advise
from feudo_ai.settings import SearchOptions, resolve

from search_helpers import play

pytest.importorskip("feudo_ai._search", reason="C search not built")

BUDGET = 600


def decisions(players: int, seed: int, count: int, selections: bool = False):
    """Decision states (two or more legal actions) of a game between greedy players: Strategy-phase selections
    when ``selections``, else every other kind; every third one, up to ``count``."""
    bots = [GreedyBot(seed + i) for i in range(players)]
    out, seen = [], [0]

    def collect(state) -> bool:
        if len(state.legal_actions()) >= 2 and (state.phase == Phase.SELECT) == selections:
            seen[0] += 1
            if seen[0] % 3 == 0:
                out.append(state.clone())
        return len(out) >= count

    play(players, seed, pick=lambda state, rng: bots[state.current_player()].choose(state), until=collect)
    return out


@pytest.mark.parametrize("players", [2, 4])
def test_early_stop_keeps_the_whole_budgets_answer(players):
    """One thread, an iteration limit: the most visited action is the one of the full search on every position, and
    where the search stopped early the leader's margin over the runner-up exceeds the iterations it had left."""
    base = resolve("product", players).replace(iterations=BUDGET, seconds=None, seed=11)
    stopped = 0
    for state in decisions(players, 30 + players, 12):
        seat = state.current_player()
        full = advise(state.clone(), seat, base)
        early = advise(state.clone(), seat, base.replace(early_stop=True))
        assert full.stats.iterations == BUDGET and full.stats.stopped_by == "iterations"
        assert early.best == full.best, state.phase
        assert early.stats.iterations <= BUDGET
        if early.stats.stopped_by == "decided":
            stopped += 1
            visits = sorted((a.visits for a in early.alternatives), reverse=True) + [0]
            assert visits[0] - visits[1] > BUDGET - early.stats.iterations
            assert early.stats.iterations < BUDGET
        else:
            assert early.stats.stopped_by == "iterations" and early.stats.iterations == BUDGET
    assert stopped >= 3  # the positions of a greedy game are often settled well before 600 iterations


def test_early_stop_is_deterministic():
    opts = resolve("product", 2).replace(iterations=BUDGET, seconds=None, seed=5, early_stop=True)
    for state in decisions(2, 40, 4):
        a = advise(state.clone(), state.current_player(), opts)
        b = advise(state.clone(), state.current_player(), opts)
        assert a.to_dict()["alternatives"] == b.to_dict()["alternatives"]
        assert a.stats.iterations == b.stats.iterations


def test_a_secret_selection_spends_its_whole_budget():
    """R6: a selection's later picks are read from the same tree, so its search is never cut short."""
    opts = resolve("product", 2).replace(iterations=BUDGET, seconds=None, seed=3, early_stop=True)
    states = decisions(2, 41, 3, selections=True)
    assert states
    for state in states:
        advice = advise(state.clone(), state.current_player(), opts)
        assert advice.decision == "selection"
        assert advice.stats.stopped_by != "decided"
        assert advice.stats.iterations >= BUDGET


def test_a_timed_search_that_stops_early_returns_before_its_time():
    opts = resolve("product", 2).replace(seconds=2.0, seed=1, early_stop=True)
    decided = 0
    for state in decisions(2, 42, 6):
        advice = advise(state.clone(), state.current_player(), opts)
        assert advice.stats.stopped_by in ("decided", "time")
        if advice.stats.stopped_by == "decided":
            decided += 1
            assert advice.stats.elapsed < 2.0
    assert decided >= 1


@pytest.mark.parametrize("bad, message", [
    (dict(early_stop="yes"), "early_stop"),
    (dict(early_stop=1), "early_stop"),
    (dict(early_stop=True, backend="python"), "early_stop"),
    (dict(early_stop=True, algorithm="pimc"), "early_stop"),
])
def test_early_stop_is_validated(bad, message):
    with pytest.raises(ValueError, match=message):
        SearchOptions(**bad)


def test_frozen_baselines_and_the_default_pin_it_off():
    for profile in ("ismcts-v1", "ismcts-v2", "pimc"):
        for players in (2, 4):
            assert resolve(profile, players, {"early_stop": False}).early_stop is False
            assert resolve(profile, players).early_stop is False
    assert SearchOptions().early_stop is False


def _play_against_greedy(spec: str, seed: int, searches: int):
    """The bot of ``spec`` in seat 0 against ``greedy``: (decisions it was asked, [(iterations, stopped_by)] of its
    searches, the bot)."""
    bot, other = make_bot(spec, 1), make_bot("greedy", 2)
    asked, spent = [0], []

    def pick(state, rng) -> int:
        if state.current_player() != 0:
            return other.choose(state)
        asked[0] += 1
        followed = bot.followed
        action = bot.choose(state)
        if bot.followed == followed:
            spent.append((bot.last_advice.stats.iterations, bot.last_advice.stats.stopped_by))
        return action

    play(2, seed, pick=pick, until=lambda state: len(spent) >= searches)
    return asked[0], spent, bot


def test_the_bot_banks_exactly_what_an_early_stop_saves():
    """A fresh bot (empty bank) searching a plan decision: what its settled search left of the 300 iterations is
    banked, as a share of a decision's budget."""
    banked = 0
    for state in decisions(2, 43, 10):
        bot = make_bot("ismcts:iterations=300:early_stop=true", 4)
        bot.choose(state)
        stats = bot.last_advice.stats
        if stats.stopped_by == "decided":
            banked += 1
            assert bot._bank == pytest.approx((300 - stats.iterations) / 300)
        else:
            assert stats.iterations == 300 and bot._bank == 0.0
    assert banked >= 2


def test_the_bot_spends_its_savings_and_never_more_than_its_decisions():
    asked, spent, _ = _play_against_greedy("ismcts:iterations=300:early_stop=true", 7, 40)
    assert any(s[1] == "decided" for s in spent)
    # the bank only moves budget between decisions: the searches spend at most one budget a decision asked
    assert sum(s[0] for s in spent) <= 300 * asked
    # a search after savings gets more than the base budget
    assert any(s[0] > 300 for s in spent)


def test_without_the_bank_nothing_is_banked():
    _, spent, bot = _play_against_greedy("ismcts:iterations=300:early_stop=true:bank=false", 7, 20)
    assert any(s[1] == "decided" for s in spent)
    assert all(s[0] <= 300 for s in spent)
    assert bot._bank == 0.0
