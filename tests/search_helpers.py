"""Positions for the search and bot tests: seeded random games stopped at decisions of interest."""

from __future__ import annotations

import random
from functools import lru_cache

from engine import Phase, new_game, sample_chance
from engine.serialize import state_from_dict


def random_positions(players: int, seed: int, every: int = 7, limit: int = 400):
    """Clones of decision states of one random game (every ``every``-th decision, up to ``limit`` decisions)."""
    rng = random.Random(seed)
    state = new_game(players=players, seed=seed)
    out = []
    decisions = 0
    while not state.is_terminal() and decisions < limit:
        if state.is_chance_node():
            state.apply_action(sample_chance(state, rng))
            continue
        decisions += 1
        if decisions % every == 0:
            out.append(state.clone())
        state.apply_action(rng.choice(state.legal_actions()))
    return out


@lru_cache(maxsize=None)
def _positions(players: int, seeds: tuple[int, ...]) -> tuple:
    out = []
    for s in seeds:
        out.extend(random_positions(players, s))
    return tuple(out)


def positions(players: int, seeds=(1, 2)) -> list:
    return [s.clone() for s in _positions(players, tuple(seeds))]


def play(players: int, seed: int, pick=None, until=None):
    """Play the game of ``seed``: chance outcomes by :func:`sample_chance`, moves by ``pick(state, rng)`` (uniformly
    at random without one), every draw from one ``random.Random(seed)``. With ``until``: the first decision state
    satisfying it, or None if the game ends first; without: the finished state."""
    rng = random.Random(seed)
    state = new_game(players=players, seed=seed)
    while not state.is_terminal():
        if state.is_chance_node():
            state.apply_action(sample_chance(state, rng))
            continue
        if until is not None and until(state):
            return state
        state.apply_action(pick(state, rng) if pick is not None else rng.choice(state.legal_actions()))
    return None if until is not None else state


def find_position(pred, players: int = 4, seeds=range(1, 60)):
    """The first decision state (over random games of the given seeds) satisfying ``pred``."""
    for seed in seeds:
        state = play(players, seed, until=pred)
        if state is not None:
            return state
    raise AssertionError("no position found")


def hidden_of_others(state, seat: int) -> bool:
    """Some opponent has unrevealed selected cards or an unrevealed Trading Card."""
    for q in range(state.num_players):
        if q == seat:
            continue
        if any(state.sel_army[q][t] and not state.revealed[q][t] for t in range(state.game.num_tokens)):
            return True
        if state.sel_done[q] and not state.trade_revealed[q]:
            return True
    return False


def with_other_selections(state, seat: int, rng: random.Random):
    """A copy of ``state`` where every opponent's hidden selection is replaced by another consistent one
    (different when possible). The seat's observation is unchanged."""
    d = state.to_dict()
    g = state.game
    k = g.num_tokens
    for q in range(state.num_players):
        if q == seat:
            continue
        hidden = [t for t in range(k) if d["sel_army"][q][t] and not d["revealed"][q][t]]
        if hidden and (state.phase != Phase.SELECT or d["sel_done"][q]):
            pool = [t for t in range(k) if d["army_held"][q][t] and not d["revealed"][q][t]]
            new = hidden
            for _ in range(30):  # a different set when there is one
                new = sorted(rng.sample(pool, len(hidden)))
                if set(new) != set(hidden):
                    break
            d["sel_army"][q] = [bool(d["revealed"][q][t]) or t in new for t in range(k)]
        if d["sel_done"][q] and not d["trade_revealed"][q]:
            held = [c for c in range(len(g.ruleset.trading_cards)) if d["trade_held"][q][c]]
            ok = [c for c in held if state.shillings_of(q, c) >= state.merc_moved[q]]
            others = [c for c in ok if g.ruleset.trading_cards[c] != g.ruleset.trading_cards[d["sel_trade"][q]]]
            d["sel_trade"][q] = rng.choice(others or ok)
    other = state_from_dict(g, d)
    return other



def positions_blind_pairs(phase_sets, seeds, rng: random.Random, per_set: int = 1, players: int = 2):
    """Pairs of decision states a seat cannot tell apart, for honesty tests (R22): for each set of phases, the
    first ``per_set`` positions (over random games of ``seeds``) in one of those phases with a choice to make and
    opponents' hidden selections, each with a copy whose hidden selections are redrawn
    (:func:`with_other_selections`, skipped when nothing could change). Yields ``(seed, seat, state, other)``;
    the seat's observations of the two are checked equal here."""
    for phases in phase_sets:
        found = 0
        for seed in seeds:
            try:
                state = find_position(lambda s: s.phase in phases and len(s.legal_actions()) > 1
                                      and hidden_of_others(s, s.current_player()), players=players, seeds=[seed])
            except AssertionError:
                continue
            seat = state.current_player()
            other = with_other_selections(state, seat, rng)
            if other.sel_army == state.sel_army and other.sel_trade == state.sel_trade:
                continue
            assert other.observation(seat) == state.observation(seat)
            yield seed, seat, state, other
            found += 1
            if found == per_set:
                break


def check_blind_pairs_agree(search, phase_sets, seeds, rng: random.Random, per_set: int = 1, **options) -> int:
    """R22 with search ``options``: for each pair of :func:`positions_blind_pairs`, ``search(state, seed=seed,
    **options)`` gives the same advice on both states (asserted). Returns the number of pairs checked."""
    checked = 0
    for seed, _, state, other in positions_blind_pairs(phase_sets, seeds, rng, per_set=per_set):
        assert advice_key(search(state, seed=seed, **options)) == advice_key(search(other, seed=seed, **options))
        checked += 1
    return checked


import pytest  # noqa: E402

@pytest.fixture(params=["reference", "core"], autouse=False)
def engine(request) -> str:
    """The engine of the Python search's worlds (SearchOptions.engine): the reference, then the core."""
    return request.param


def hidden_position(players: int = 4):
    """A decision of the seat to act while an opponent holds unrevealed selected cards and Trading Card."""
    return find_position(lambda s: s.phase in (Phase.REVEAL, Phase.MOVE, Phase.ATTACK, Phase.SELECT)
                         and len(s.legal_actions()) > 1 and hidden_of_others(s, s.current_player()),
                         players=players)


def advice_key(advice):
    """Everything of an Advice that a seed and an iteration budget fix (timings left out)."""
    from dataclasses import asdict

    return ([(a.action, a.visits, round(a.win_probability, 12)) for a in advice.alternatives], advice.best,
            advice.plan, advice.beliefs, {k: v for k, v in asdict(advice.stats).items()
                                          if k not in ("elapsed", "search_seconds", "iterations_per_s")})


def cancel_after(search_fn, cancel, delay: float = 0.15, **kwargs):
    """Run ``search_fn(cancel=cancel, **kwargs)`` in a thread, set ``cancel`` after ``delay`` seconds; returns
    (advice, seconds from the cancel to the search's return). Fails if the search is still running 5 s later."""
    import threading
    import time

    box = {}

    def run():
        box["advice"] = search_fn(cancel=cancel, **kwargs)
        box["done"] = time.monotonic()

    th = threading.Thread(target=run)
    th.start()
    time.sleep(delay)
    t0 = time.monotonic()
    cancel.set()
    th.join(5.0)
    assert not th.is_alive(), "the search did not stop within 5 s of the cancel"
    return box["advice"], box["done"] - t0


def score_against_random(make_bot, games: int) -> float:
    """Seat-rotated 2-player games of ``make_bot(game_index)`` against a random bot (game seed = index):
    the bot's total R19 return."""
    from engine import play_game
    from feudo_ai.bots import RandomBot

    score = 0.0
    for g in range(games):
        seat = g % 2
        bots = [RandomBot(100 + g), RandomBot(200 + g)]
        bots[seat] = make_bot(g)
        _, final = play_game(bots, new_game(players=2, seed=g), seed=g)
        score += final.returns()[seat]
    return score


def c_search(state, seat=None, cancel=None, **options):
    """One search of the C backend (feudo_ai.fast_search.search), options by their SearchOptions names."""
    from feudo_ai.search import c_backend as fast_search
    from feudo_ai.settings import SearchOptions

    return fast_search.search(state, seat, SearchOptions.from_dict(options), cancel=cancel)


def py_search(state, seat=None, cancel=None, **options):
    """One search of the Python reference backend (feudo_ai.ismcts.search), options by their SearchOptions
    names (``backend="python"`` implied)."""
    from feudo_ai.search import python_backend as ismcts
    from feudo_ai.settings import SearchOptions

    return ismcts.search(state, seat, SearchOptions.from_dict({**options, "backend": "python"}), cancel=cancel)
