"""Honesty (R22): with a fixed seed and budget, a seat's advice is the same whatever the opponents' actual hidden
selections are and whatever chance would draw next — for the C and Python ismcts and pimc, and greedy."""

from __future__ import annotations

import random

import pytest

from engine import Phase, new_game
from feudo_ai.bots import make_bot
from search_helpers import c_search, engine, find_position, hidden_of_others, py_search  # noqa: F401 - fixture
from search_helpers import with_other_selections

PHASES = [Phase.REVEAL, Phase.MOVE, Phase.MARCH, Phase.MILADY, Phase.SELECT]  # phases with hidden cards


@pytest.fixture(autouse=True)
def _engine(engine, monkeypatch):
    """Every test here runs with the Python search's worlds on the reference engine and on the core."""
    monkeypatch.setitem(_ENGINE, 0, engine)
    return engine


_ENGINE = {0: "core"}  # the engine of the running test (set by the autouse fixture)


def advise(state, algorithm: str = "ismcts", **options):
    """One search of the Python reference backend with the test's engine."""
    return py_search(state, algorithm=algorithm, engine=_ENGINE[0], **options)


def _pair(phase: Phase, players: int):
    def pred(s):
        seat = s.current_player()
        if not (s.phase == phase and len(s.legal_actions()) > 1 and hidden_of_others(s, seat) and s.turn >= 2):
            return False
        return with_other_selections(s, seat, random.Random(int(phase))).to_dict() != s.to_dict()

    state = find_position(pred, players=players)
    seat = state.current_player()
    other = with_other_selections(state, seat, random.Random(int(phase)))
    assert other.to_dict() != state.to_dict(), "the two games must differ in hidden selections"
    assert other.observation(seat) == state.observation(seat)
    return state, other, seat


def _summary(adv):
    return (adv.best, [(a.action, a.visits, round(a.win_probability, 12)) for a in adv.alternatives], adv.plan,
            adv.beliefs, adv.stats.iterations, adv.stats.nodes)


@pytest.mark.parametrize("phase", PHASES, ids=lambda p: p.name)
@pytest.mark.parametrize("algorithm", ["ismcts", "pimc"])
def test_search_advice_ignores_hidden_selections(phase: Phase, algorithm: str) -> None:
    state, other, seat = _pair(phase, players=4 if phase != Phase.MARCH else 3)
    kw = dict(iterations=40, seed=11)
    a = advise(state, algorithm=algorithm, **kw)
    b = advise(other, algorithm=algorithm, **kw)
    assert _summary(a) == _summary(b)


@pytest.mark.parametrize("phase", PHASES, ids=lambda p: p.name)
@pytest.mark.parametrize("spec", ["greedy", "ismcts:iterations=300", "pimc:iterations=300:worlds=3",
                                  "ismcts:iterations=300:sampler=weighted", "ismcts-py:iterations=30",
                                  "pimc-py:iterations=30:worlds=3"])
def test_bot_choice_ignores_hidden_selections(phase: Phase, spec: str) -> None:
    state, other, seat = _pair(phase, players=4 if phase != Phase.MARCH else 3)
    assert make_bot(spec, 5)(state) == make_bot(spec, 5)(other)


def test_advice_ignores_what_chance_will_draw() -> None:
    """The same public history reached by drivers with different chance seeds gives the same advice: the
    search draws chance itself and the state holds no deck."""
    def drive(seed_chance: int):
        rng_moves = random.Random(1)
        rng_chance = random.Random(seed_chance)
        state = new_game(players=3, seed=4)
        while not (state.phase == Phase.REVEAL and state.turn == 1):
            if state.is_chance_node():
                # the same outcome (the first), whatever the driver's generator would have drawn
                rng_chance.random()
                state.apply_action(state.chance_outcomes()[0][0])
            else:
                state.apply_action(rng_moves.choice(state.legal_actions()))
        return state

    s1, s2 = drive(1), drive(2)
    seat = s1.current_player()
    assert s1.observation(seat) == s2.observation(seat)
    for algo in ("ismcts", "pimc"):
        assert _summary(advise(s1, algorithm=algo, iterations=30, seed=3)) == \
            _summary(advise(s2, algorithm=algo, iterations=30, seed=3))
    for algo in ("ismcts", "pimc"):  # the C searches (fail, not skip, when not built)
        assert _summary(c_search(s1, algorithm=algo, iterations=2000, seed=3)) == \
            _summary(c_search(s2, algorithm=algo, iterations=2000, seed=3))


def test_the_honesty_check_catches_a_cheating_search(monkeypatch) -> None:
    """The comparison above has teeth: a search whose worlds are the true state fails it."""
    import feudo_ai.search.python_backend as ismcts_mod

    results = []
    for phase in (Phase.REVEAL, Phase.MOVE, Phase.SELECT):
        state, other, seat = _pair(phase, players=4)
        summaries = []
        for truth in (state, other):
            class Cheat:
                def __init__(self, game, obs):
                    self.truth = truth

                def sample_fields(self, rng):
                    return self.truth.to_dict()

            monkeypatch.setattr(ismcts_mod, "make_sampler", lambda name, game, obs: Cheat(game, obs))
            summaries.append(_summary(advise(truth, algorithm="ismcts", iterations=40, seed=11)))
        results.append(summaries[0] != summaries[1])
    assert any(results)
