"""The fast C search (feudo_ai/_search.pyx, feudo_ai/fast_search.py): legal advice, determinism, honesty (the
opponents' secret selections never change the result), node cap, cancel latency, root-parallel merging,
whole games as a bot, strength against random, and the C evaluation/determinization against the Python ones.

Fails (does not skip) when the extension is not built: ``python setup.py build_ext --inplace``.
"""

from __future__ import annotations

import random
import threading
import time

import pytest

from engine import Phase, new_game, play_game
from engine.core import CoreState
from feudo_ai.bots import RandomBot
from feudo_ai.search.cancel import CancelEvent
from feudo_ai.evaluate import position_score

# A missing extension is a collection error (the tests fail, never skip): python setup.py build_ext --inplace
from feudo_ai import _feudo_game, _search
from feudo_ai._feudo_game import FeudoGame
from feudo_ai.settings import SearchOptions
from feudo_ai.search.answer import derive_seed
from feudo_ai.bots.search_bots import ISMCTSBot
from feudo_ai.search.python_backend import _selects_later as selects_later

from search_helpers import c_search as search  # noqa: E402 - one C search, SearchOptions names
from search_helpers import (advice_key, cancel_after, find_position, hidden_of_others, hidden_position, positions,
                            score_against_random, with_other_selections)


def test_returns_legal_actions_on_many_positions() -> None:
    for players in (2, 4):
        for state in positions(players, seeds=(1,))[::3]:
            legal = state.legal_actions()
            advice = search(state, iterations=300, seed=5)
            assert advice.best in legal
            assert all(a.action in legal for a in advice.alternatives)
            assert advice.stats.iterations == 300
            if len(legal) > 1:
                assert sum(a.visits for a in advice.alternatives) == 300  # every iteration chose at the root
            assert advice.plan and advice.plan[0].action == advice.best


def test_core_state_input_and_same_answer_as_reference() -> None:
    state = hidden_position()
    a = search(state, iterations=2000, seed=3)
    b = search(CoreState.from_reference(state), iterations=2000, seed=3)
    assert advice_key(a) == advice_key(b)


def test_deterministic_same_seed_same_iterations() -> None:
    state = hidden_position()
    for kw in ({}, {"threads": 2}, {"playout": "random"}, {"playout": "eval"}):
        a = search(state, iterations=1500, seed=11, **kw)
        b = search(state, iterations=1500, seed=11, **kw)
        assert advice_key(a) == advice_key(b)
    c = search(state, iterations=1500, seed=12)
    assert advice_key(c) != advice_key(search(state, iterations=1500, seed=11))


_HONESTY_PHASES = (Phase.REVEAL, Phase.MOVE, Phase.MARCH, Phase.SELECT)


@pytest.mark.parametrize("players", [2, 4])
def test_honesty_opponents_secret_selections_do_not_matter(players: int) -> None:
    rng = random.Random(4)
    checked = set()
    for phase in _HONESTY_PHASES:
        for seed in range(1, 30):
            try:
                state = find_position(lambda s: s.phase == phase and len(s.legal_actions()) > 1
                                      and hidden_of_others(s, s.current_player()), players=players, seeds=[seed])
            except AssertionError:
                continue
            seat = state.current_player()
            other = with_other_selections(state, seat, rng)
            if other.sel_army == state.sel_army and other.sel_trade == state.sel_trade:
                continue  # nothing else was possible: try another game
            assert other.observation(seat) == state.observation(seat)
            for kw in ({"iterations": 3000}, {"iterations": 2000, "threads": 2, "playout": "random"},
                       {"iterations": 2000, "sampler": "weighted"}, {"iterations": 2000, "algorithm": "pimc"},
                       {"iterations": 2000, "algorithm": "pimc", "worlds": 3, "sampler": "weighted"}):
                assert advice_key(search(state, seed=seed, **kw)) == advice_key(search(other, seed=seed, **kw))
            checked.add(phase)
            break
    assert set(_HONESTY_PHASES) == checked, checked  # (by ATTACK everything is revealed)


def test_c_worker_blanks_true_hidden_fields_itself() -> None:
    """Even given a CoreState with the opponents' true selections (not the observation), the C worker's result
    does not depend on them: it blanks them before searching and overwrites them in every world."""
    rng = random.Random(2)
    state = hidden_position()
    seat = state.current_player()
    other = with_other_selections(state, seat, rng)
    assert (other.sel_army, other.sel_trade) != (state.sel_army, state.sel_trade)
    results = []
    for s in (state, other):
        w = _search.SearchWorker(FeudoGame(CoreState.from_reference(s), seat), 99, 3000, 0.0, 100_000, "truncated",
                                 0, 0.2, 0.15, None)
        assert w.run() == "iterations"
        results.append((w.root_stats(), w.stats()["nodes"], w.belief_counts()))
    assert results[0] == results[1]


@pytest.mark.parametrize("sampler", ["uniform", "weighted"])
def test_determinization_is_consistent_and_uses_public_facts_only(sampler: str) -> None:
    rng = random.Random(9)
    state = hidden_position()
    seat = state.current_player()
    other = with_other_selections(state, seat, rng)
    g = state.game
    need = min(g.ruleset.army_cards_selected, 10**9)
    core, core_other = CoreState.from_reference(state), CoreState.from_reference(other)
    worlds = set()
    for seed in range(30):
        w = _feudo_game.determinize(core, seat, seed, sampler)
        assert w.canonical() == _feudo_game.determinize(core_other, seat, seed, sampler).canonical()
        ref = w.to_reference()
        assert ref.sel_army[seat] == state.sel_army[seat] and ref.sel_trade[seat] == state.sel_trade[seat]
        for q in range(g.num_players):
            if q == seat:
                continue
            assert sum(ref.sel_army[q]) == sum(state.sel_army[q])  # the selected count is public
            for t in range(g.num_tokens):
                if state.revealed[q][t]:
                    assert ref.sel_army[q][t]
                if ref.sel_army[q][t]:
                    assert state.army_held[q][t]
            if state.sel_done[q]:
                c = ref.sel_trade[q]
                assert state.trade_held[q][c] and ref.shillings_of(q, c) >= state.merc_moved[q]
                if state.trade_revealed[q]:
                    assert c == state.sel_trade[q]
        assert need > 0
        # every world can be played on
        assert ref.legal_actions()
        worlds.add(w.canonical())
    assert len(worlds) > 1  # the hidden selections really are resampled


def test_weighted_sampler_matches_the_python_opponent_model() -> None:
    """The C weighted determinization draws each opponent's cards with the marginals of
    feudo_ai.sampler.WeightedSampler (same weights, draws without replacement), and they differ from the
    uniform sampler's: 6,000 worlds each, per-card frequencies within 0.035."""
    from feudo_ai.sampler import make_sampler

    state = find_position(lambda s: s.phase == Phase.SELECT and s.turn >= 2 and len(s.legal_actions()) > 1
                          and sum(s.sel_done) >= 1 and not s.sel_done[s.current_player()], players=4,
                          seeds=range(1, 60))
    seat = state.current_player()
    g = state.game
    core = CoreState.from_reference(state)
    n = 6000
    py_rng = random.Random(1)
    freq = {name: [[0.0] * g.num_tokens for _ in range(g.num_players)] for name in ("c", "py", "uniform")}
    trade = {name: [[0.0] * len(g.ruleset.trading_cards) for _ in range(g.num_players)] for name in ("c", "py")}
    py_sampler = make_sampler("weighted", g, state.observation(seat))
    for i in range(n):
        worlds = {"c": _feudo_game.determinize(core, seat, i, "weighted").to_reference(),
                  "uniform": _feudo_game.determinize(core, seat, i, "uniform").to_reference()}
        d = py_sampler.sample_fields(py_rng)
        for q in range(g.num_players):
            if q == seat:
                continue
            for t in range(g.num_tokens):
                freq["c"][q][t] += worlds["c"].sel_army[q][t] / n
                freq["uniform"][q][t] += worlds["uniform"].sel_army[q][t] / n
                freq["py"][q][t] += d["sel_army"][q][t] / n
            if state.sel_done[q]:
                trade["c"][q][worlds["c"].sel_trade[q]] += 1 / n
                trade["py"][q][d["sel_trade"][q]] += 1 / n
    gap = max(abs(freq["c"][q][t] - freq["py"][q][t]) for q in range(g.num_players) for t in range(g.num_tokens))
    assert gap < 0.035, (gap, freq)
    tgap = max(abs(a - b) for q in range(g.num_players) for a, b in zip(trade["c"][q], trade["py"][q]))
    assert tgap < 0.035, (tgap, trade)
    shift = max(abs(freq["c"][q][t] - freq["uniform"][q][t]) for q in range(g.num_players)
                for t in range(g.num_tokens))
    assert shift > 0.05, shift  # the opponent model really moves the marginals


def test_merc_evidence_constrains_the_trading_card() -> None:
    state = find_position(lambda s: any(s.merc_moved[q] > 0 and not s.trade_revealed[q] and q != s.current_player()
                                        for q in range(s.num_players)) and len(s.legal_actions()) > 1,
                          players=4, seeds=range(1, 200))
    seat = state.current_player()
    core = CoreState.from_reference(state)
    for seed in range(50):
        ref = _feudo_game.determinize(core, seat, seed).to_reference()
        for q in range(state.num_players):
            if q != seat and state.merc_moved[q] > 0:
                assert ref.shillings_of(q, ref.sel_trade[q]) >= state.merc_moved[q]


def test_c_evaluation_matches_python_position_score() -> None:
    n = 0
    for players in (2, 3, 4):
        for state in positions(players, seeds=(1, 2))[::4]:
            scores, rewards = _feudo_game.evaluate_state(CoreState.from_reference(state))
            for p in range(players):
                assert scores[p] == pytest.approx(position_score(state, p), abs=1e-9)
            assert sum(rewards) == pytest.approx(1.0)
            n += 1
    assert n > 20


def test_node_cap_respected_and_iterations_continue() -> None:
    state = hidden_position()
    advice = search(state, iterations=3000, max_nodes=300, seed=1)
    assert advice.stats.nodes <= 300
    assert advice.stats.iterations == 3000
    assert advice.best in state.legal_actions()
    two = search(state, iterations=3000, max_nodes=300, seed=1, threads=2)
    assert two.stats.nodes <= 600 and two.stats.iterations == 3000


def test_exp3_only_where_another_player_selects_later() -> None:
    """R6: the first selectors' picks are a simultaneous move inside the trees (EXP3); the last selector
    faces selections already made, a one-player choice (UCB1)."""
    seen = set()
    for seed in range(1, 40):
        for state in positions(3, seeds=(seed,)):
            if state.phase != Phase.SELECT or state.is_chance_node() or len(state.legal_actions()) < 2:
                continue
            seat = state.current_player()
            later = selects_later(state, seat)
            w = _search.SearchWorker(FeudoGame(CoreState.from_reference(state), seat), 1, 50, 0.0, 10_000,
                                     "truncated", 0, 0.2, 0.15, None)
            w.run()
            assert w.node_exp3(w.root_index(seat)) == later
            seen.add(later)
        if seen == {True, False}:
            break
    assert seen == {True, False}


def _labels_at_depth(worker, node: int, depth: int) -> list[int]:
    """The edge labels of every node ``depth`` edges below ``node`` in a worker's tree."""
    layer = [node]
    for _ in range(depth - 1):
        layer = [ch for n in layer for _, _, _, ch in worker.children(n)]
    return [a for n in layer for a, _, _, _ in worker.children(n)]


def test_last_selectors_picks_are_hidden_in_the_other_trees() -> None:
    """R6, R22: the last selector chooses by UCB1, but its picks stay secret: in the first selector's tree
    every edge of the second selector's picks is "?" (LABEL_HIDDEN = -1), and the other way round."""
    state = find_position(lambda s: s.phase == Phase.SELECT and not any(s.sel_army[s.current_player()])
                          and s.sel_trade[s.current_player()] < 0
                          and not any(s.sel_done[q] for q in range(s.num_players)), players=2)
    first = state.current_player()
    second = 1 - first
    picks = [min(3, sum(state.army_held[q])) + 1 for q in range(2)]  # Army Cards, then the Trading Card
    w = _search.SearchWorker(FeudoGame(CoreState.from_reference(state), first), 3, 3000, 0.0, 100_000,
                             "truncated", 0, 0.2, 0.15, None)
    w.run()
    hidden = -1  # LABEL_HIDDEN of feudo_ai/_game.pxd
    for depth in range(1, picks[first] + 1):  # the first selector's picks: its own in its tree, "?" in the other
        assert hidden not in _labels_at_depth(w, w.root_index(first), depth)
        assert set(_labels_at_depth(w, w.root_index(second), depth)) <= {hidden}
    for depth in range(picks[first] + 1, picks[first] + picks[second] + 1):  # the second selector's picks
        mine = _labels_at_depth(w, w.root_index(first), depth)
        theirs = _labels_at_depth(w, w.root_index(second), depth)
        assert mine and set(mine) == {hidden}, f"depth {depth}: the second selector's picks seen as {set(mine)}"
        assert theirs and hidden not in theirs  # its own tree: its own picks


def test_default_pool_is_sized_to_the_budget() -> None:
    """Without max_nodes the pool holds 8 nodes per iteration: the trees never stop growing within an
    iteration budget (the trees grow by about 4 nodes an iteration)."""
    state = positions(4, seeds=(1,))[2]
    for kw in ({}, {"algorithm": "pimc"}, {"threads": 2}):
        advice = search(state, iterations=20000, seed=1, **kw)
        assert not advice.stats.pool_full
        assert advice.stats.nodes > 20000  # the trees did grow (ISMCTS: a node per tree and iteration or more)
    assert search(state, iterations=2000, max_nodes=50, seed=1).stats.pool_full


@pytest.mark.timing
@pytest.mark.parametrize("kind", ["flag", "event", "cancel_event"])
def test_cancel_stops_within_50ms(kind: str) -> None:
    """Cancel set while 2 workers run long random playouts: the search returns within 50 ms (the median of 3
    trials, so that one scheduling hiccup of a loaded 2-core machine does not decide the test)."""
    state = positions(4, seeds=(1,))[2]
    latencies = []
    for trial in range(3):
        cancel = {"flag": _search.CancelFlag, "event": threading.Event, "cancel_event": CancelEvent}[kind]()
        advice, latency = cancel_after(search, cancel, state=state, seconds=30.0, threads=2, playout="random",
                                       seed=trial)
        latencies.append(latency)
        assert advice.stats.stopped_by == "cancelled"
        assert advice.stats.iterations > 0
        assert advice.best in state.legal_actions()
    assert sorted(latencies)[1] < 0.05, latencies
    assert max(latencies) < 1.0, latencies


@pytest.mark.timing
def test_time_budget() -> None:
    state = positions(4, seeds=(1,))[2]
    t0 = time.monotonic()
    advice = search(state, seconds=0.2, seed=1)
    assert time.monotonic() - t0 < 0.5
    assert advice.stats.stopped_by == "time" and advice.stats.iterations > 100


def test_a_search_with_the_handmade_evaluation_loads_no_numpy() -> None:
    """The first timed search of a process (a one-shot ``feudo advise --seconds 0.1``, a bot's first move) spends
    its time searching: numpy, whose cold import took about 0.1 s, is loaded only by a learned evaluation's
    weights (feudo_ai/_value.pyx), so the product's search never waits for it. In a fresh interpreter."""
    import subprocess
    import sys

    code = ("import random, sys\n"
            "import feudo_ai\n"
            "from engine import new_game, sample_chance\n"
            "s = new_game(players=2, seed=7); rng = random.Random(7)\n"
            "while s.is_chance_node(): s.apply_action(sample_chance(s, rng))\n"
            "opts = feudo_ai.resolve('product', 2, {'iterations': 50})\n"
            "a = feudo_ai.advise(s, s.current_player(), opts)\n"
            "print(a.stats.iterations, 'numpy' in sys.modules)\n"
            "from feudo_ai.experimental.value import c_model\n"
            "c_model()\n"
            "print('numpy' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["50", "False", "True"]  # a learned model's weights do load it


def test_threads_merge_root_statistics() -> None:
    state = hidden_position()
    two = search(state, iterations=4001, threads=2, seed=7)
    assert two.stats.threads == 2
    assert two.stats.worker_iterations == (2001, 2000)
    assert two.stats.iterations == sum(two.stats.worker_iterations) == 4001
    assert sum(a.visits for a in two.alternatives) == 4001
    # the merged statistics are the sums of the single workers' (worker i is seeded by seed and i)

    merged: dict = {}
    for i, iters in enumerate((2001, 2000)):
        w = _search.SearchWorker(FeudoGame(CoreState.from_reference(_public(state)), state.current_player()),
                                 derive_seed(7, i), iters, 0.0, 1_000_000, "truncated", 0, 0.2, 0.15, None)
        w.run()
        for a, (v, r) in w.root_stats().items():
            mv, mr = merged.get(a, (0, 0.0))
            merged[a] = (mv + v, mr + r)
    assert {a.action: a.visits for a in two.alternatives} == {a: v for a, (v, _) in merged.items()}


def _public(state):
    from engine.serialize import state_from_dict
    from feudo_ai.sampler import observation_fields

    return state_from_dict(state.game, observation_fields(state.observation(state.current_player())))


def test_argument_validation_names_the_argument() -> None:
    state = positions(2, seeds=(1,))[1]
    bad = [({"iterations": 0}, "iterations"), ({"seconds": -1}, "seconds"), ({"threads": 0}, "threads"),
           ({"max_nodes": 3}, "max_nodes"), ({"playout": "x"}, "playout"), ({"seat": 9}, "seat"),
           ({"c": -1}, "c"), ({"exp3_gamma": 0}, "exp3_gamma"), ({"temperature": 0}, "temperature"),
           ({"seed": 1.5}, "seed"), ({"playout_turns": -1}, "playout_turns"),
           ({"algorithm": "alphabeta"}, "algorithm"), ({"sampler": "psychic"}, "sampler"), ({"worlds": 0}, "worlds"),
           ({"algorithm": "pimc", "worlds": 40, "max_nodes": 20}, "max_nodes")]
    for kw, name in bad:
        with pytest.raises(ValueError, match=name):
            search(state, **kw)
    with pytest.raises(ValueError, match="cancel"):
        search(state, cancel=3)
    with pytest.raises(ValueError, match="seat"):
        search(state, seat=1 - state.current_player(), iterations=10)
    with pytest.raises(ValueError, match="nonsense"):
        ISMCTSBot(1, nonsense=3)
    s = new_game(players=2, seed=1)
    with pytest.raises(ValueError, match="chance"):
        search(s, iterations=10)


@pytest.mark.parametrize("players", [2, 4])
def test_full_games_as_a_bot(players: int) -> None:
    bots = [ISMCTSBot(seed=p, iterations=60 if players == 4 else 100) if p % 2 == 0 else RandomBot(p)
            for p in range(players)]
    record, final = play_game(bots, new_game(players=players, seed=3), seed=3)
    assert final.is_terminal()
    assert abs(sum(final.returns()) - 1.0) < 1e-9


def test_beats_random_two_players() -> None:
    # measured: 18.5/20 at 300 iterations (seeds 0-19), 9/10 at 2000; this seeded run is deterministic
    score = score_against_random(lambda g: ISMCTSBot(seed=g, iterations=300), games=10)
    assert score >= 8.0, score


def test_bot_decides_its_whole_selection_at_the_first_pick() -> None:
    """R6: the selection is one simultaneous decision: the bot asks feudo_ai.advise once at its first pick and
    plays the advised selection's next picks without searching again (its own picks: nothing new is seen)."""
    state = find_position(lambda s: s.phase == Phase.SELECT and sum(s.sel_army[s.current_player()]) == 0
                          and s.sel_trade[s.current_player()] < 0, players=3)
    seat = state.current_player()
    bot = ISMCTSBot(seed=4, iterations=400)
    played = []
    first = None
    while state.phase == Phase.SELECT and state.current_player() == seat:
        a = bot(state)
        first = first or bot.last_advice
        assert bot.last_advice is first  # no second search
        played.append(a)
        state.apply_action(a)
    assert first.decision == "selection" and played == [p.action for p in first.plan]
    # a different position (another seat's selection) is searched afresh
    if state.phase == Phase.SELECT and not state.is_chance_node() and len(state.legal_actions()) > 1:
        bot(state)
        assert bot.last_advice is not first
