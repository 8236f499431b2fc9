"""The one advice API (feudo_ai.advise): options, whole decisions, out-of-turn selection, honesty, determinism."""

from __future__ import annotations

import math
import threading

import pytest

import feudo_ai
from engine import Phase, StateError
from feudo_ai import ObservedPosition, SearchOptions, advise
from search_helpers import find_position, hidden_of_others


def _at_select(seat_to_act: int = 0, players: int = 4):
    return find_position(lambda s: s.phase == Phase.SELECT and s.current_player() == seat_to_act
                         and not any(s.sel_army[seat_to_act]), players=players)


def _comparable(advice) -> dict:
    d = advice.to_dict()
    for k in ("elapsed", "iterations_per_s", "search_seconds"):  # timings
        d["stats"].pop(k)
    return d


@pytest.mark.parametrize("field,value", [
    ("iterations", 0), ("iterations", 1.5), ("seconds", -1), ("seconds", math.nan), ("threads", 0),
    ("threads", 65), ("algorithm", "alphabeta"), ("backend", "gpu"), ("playout", "nope"), ("sampler", "x"),
    ("c", math.nan), ("c", -0.1), ("exp3_gamma", 0), ("temperature", math.inf), ("worlds", 0),
    ("max_nodes", 3), ("playout_turns", 2**40), ("seed", "1"), ("deadline", math.nan),
    # the caps: beyond the documented maxima
    ("iterations", 10**8 + 1), ("playout_turns", 201), ("c", 100.5), ("temperature", 2e6), ("max_nodes", 2**24 + 1),
    ("engine", "gpu")])
def test_bad_option_is_named(field, value):
    with pytest.raises(ValueError, match=f"^{field}:"):
        SearchOptions(**{field: value})


def test_memory_of_a_search_is_capped():
    """threads x max_nodes x 64 bytes within 1 GiB for the C search (MAX_SEARCH_BYTES), 1,000,000 nodes over the
    workers of the Python search; the largest allowed pools are accepted."""
    SearchOptions(max_nodes=2**24)  # 16,777,216 nodes x 64 bytes = 1 GiB on one thread
    SearchOptions(max_nodes=2**23, threads=2)
    with pytest.raises(ValueError, match="^max_nodes: 2 threads"):
        SearchOptions(max_nodes=2**23 + 1, threads=2)
    SearchOptions(backend="python", max_nodes=500_000, threads=2)
    with pytest.raises(ValueError, match="^max_nodes: 2 workers"):
        SearchOptions(backend="python", max_nodes=500_001, threads=2)


def test_c_node_size_is_what_the_memory_cap_counts():
    from feudo_ai import _search
    from feudo_ai.settings import NODE_BYTES, node_bytes

    assert _search.node_bytes() == NODE_BYTES
    # the fifth and sixth players' reward sums beside the pool: 8 bytes a node each (settings.node_bytes)
    assert [_search.node_bytes(n) for n in range(1, 7)] == [64, 64, 64, 64, 72, 80]
    assert [node_bytes(n) for n in range(1, 7)] == [_search.node_bytes(n) for n in range(1, 7)]


def test_mixed_playout_only_for_the_python_backend():
    SearchOptions(playout="mixed", backend="python")
    with pytest.raises(ValueError, match="^playout:"):
        SearchOptions(playout="mixed")


def test_unknown_option_names_the_known_ones():
    with pytest.raises(ValueError, match="unknown search option.*vp_temperature.*known: iterations"):
        SearchOptions.from_dict({"vp_temperature": 1.0})


@pytest.mark.parametrize("name", ["prior_widening", "playout_strategy"])
def test_settings_removed_for_not_paying_are_refused_as_unknown(name):
    """docs/bots.md, "Experimental": the settings measured not to pay were removed, not left to be ignored; a spec,
    a profile override or a request naming one is refused, naming it."""
    from feudo_ai.bots.registry import make_bot

    with pytest.raises(ValueError, match=f"unknown search option.*{name}"):
        SearchOptions.from_dict({name: True})
    with pytest.raises(ValueError, match=f"unknown search option.*{name}"):
        feudo_ai.resolve("product", players=2, overrides={name: True})
    with pytest.raises(ValueError, match=f"unknown search option.*{name}"):
        make_bot(f"ismcts:{name}=true", 0)


def _check_selection(state, advice, seat: int) -> None:
    """R6: three ascending Army Cards then one Trading Card, each legal in turn from the seat's decision."""
    game = state.game
    assert advice.decision == "selection"
    assert [p.action for p in advice.plan][0] == advice.best
    texts = [p.text for p in advice.plan]
    assert len(texts) == game.ruleset.army_cards_selected + 1, texts
    assert all(t.startswith("select ") and "trading card" not in t for t in texts[:-1]), texts
    assert texts[-1].startswith("select trading card "), texts
    # replay: the picks are legal one after the other for this seat (the engine's own check)
    replay = state.clone()
    for q in range(replay.num_players):  # the players before the seat pick first (their picks are irrelevant)
        if q == seat:
            break
        while replay.phase == Phase.SELECT and replay.current_player() == q:
            replay.apply_action(replay.legal_actions()[0])
    for p in advice.plan:
        assert replay.current_player() == seat
        assert p.action in replay.legal_actions()
        assert replay.action_to_string(p.action) == p.text
        replay.apply_action(p.action)
    assert replay.sel_done[seat]


@pytest.mark.parametrize("backend,iterations", [("c", 2000), ("python", 120)])
def test_selection_is_complete(backend, iterations):
    state = _at_select()
    advice = advise(state, 0, SearchOptions(iterations=iterations, seed=3, backend=backend))
    _check_selection(state, advice, 0)
    assert advice.stats.backend == backend and advice.stats.iterations >= iterations


def test_tiny_budget_still_gives_a_whole_selection():
    state = _at_select()
    advice = advise(state, 0, SearchOptions(iterations=4, seed=3))
    _check_selection(state, advice, 0)


def test_a_later_seat_asks_for_its_selection_while_another_is_to_act():
    state = _at_select(0)
    for seat in (1, 3):
        advice = advise(state, seat, SearchOptions(iterations=1500, seed=5))
        assert advice.seat == seat
        _check_selection(state, advice, seat)


@pytest.mark.parametrize("backend,iterations", [("c", 800), ("python", 60)])
def test_out_of_turn_beliefs_cover_whole_selections_on_both_backends(backend, iterations):
    """Seat 3 asks while seat 0 is to act: seats 0-2 are treated as done selecting, so each world gives each of
    them min(army_cards_selected, held) Army Cards (R6) and one Trading Card, on the C and the Python backend."""
    state = _at_select(0)
    advice = advise(state, 3, SearchOptions(iterations=iterations, seed=2, backend=backend))
    need = state.game.ruleset.army_cards_selected
    for q in (0, 1, 2):
        army = sum(b.probability for b in advice.beliefs if b.player == q and b.kind == "army")
        trade = sum(b.probability for b in advice.beliefs if b.player == q and b.kind == "trading")
        assert army == pytest.approx(min(need, sum(state.army_held[q]))), (backend, q)
        assert trade == pytest.approx(1.0), (backend, q)


def test_seat_with_nothing_pending_is_refused():
    state = _at_select(0)
    # seat 0 selects: afterwards seat 0 has nothing pending in the Strategy phase
    while state.current_player() == 0:
        state.apply_action(state.legal_actions()[0])
    with pytest.raises(ValueError, match="^seat: no decision of seat 0 is pending"):
        advise(state, 0, SearchOptions(iterations=10))
    with pytest.raises(ValueError, match="^seat:"):
        advise(state, 7, SearchOptions(iterations=10))


def test_movement_plan_is_the_seats_own_legal_sequence():
    state = find_position(lambda s: s.phase == Phase.REVEAL and len(s.legal_actions()) > 1)
    seat = state.current_player()
    advice = advise(state, options=SearchOptions(iterations=3000, seed=2))
    assert advice.decision == "plan" and advice.best == advice.plan[0].action
    replay = state.clone()
    for p in advice.plan:
        assert replay.current_player() == seat and p.action in replay.legal_actions()
        replay.apply_action(p.action)
    assert [a.action for a in advice.alternatives][0] == advice.best
    assert set(a.action for a in advice.alternatives) <= set(state.legal_actions())
    assert all(0.0 <= a.win_probability <= 1.0 for a in advice.alternatives)


def test_same_seed_and_iterations_same_advice():
    state = find_position(lambda s: s.phase == Phase.REVEAL and hidden_of_others(s, s.current_player()))
    opts = SearchOptions(iterations=1500, seed=11)
    assert _comparable(advise(state, options=opts)) == _comparable(advise(state, options=opts))


@pytest.mark.parametrize("backend,iterations", [("c", 1500), ("python", 100)])
def test_hidden_cards_of_others_do_not_change_the_advice(backend, iterations):
    """R22: two full states that differ only in an opponent's unrevealed selection give identical advice."""
    state = find_position(lambda s: s.phase == Phase.REVEAL and hidden_of_others(s, s.current_player()))
    seat = state.current_player()
    other = state.clone()
    q = next(q for q in range(state.num_players) if q != seat and state.sel_done[q]
             and any(state.sel_army[q][t] and not state.revealed[q][t] for t in range(state.game.num_tokens)))
    chosen = [t for t in range(state.game.num_tokens) if other.sel_army[q][t] and not other.revealed[q][t]]
    spare = [t for t in range(state.game.num_tokens) if other.army_held[q][t] and not other.sel_army[q][t]]
    assert spare, "the position needs an unselected held card to swap in"
    other.sel_army[q][chosen[0]] = False
    other.sel_army[q][spare[0]] = True
    assert other.canonical() != state.canonical()
    opts = SearchOptions(iterations=iterations, seed=4, backend=backend)
    assert _comparable(advise(state, seat, opts)) == _comparable(advise(other, seat, opts))


def test_observed_position_gives_the_same_advice_as_the_full_state():
    state = find_position(lambda s: s.phase == Phase.REVEAL and hidden_of_others(s, s.current_player()))
    seat = state.current_player()
    opts = SearchOptions(iterations=1000, seed=9)
    assert _comparable(advise(ObservedPosition.from_state(state, seat), options=opts)) == \
        _comparable(advise(state, seat, opts))


def test_observed_position_is_validated():
    state = _at_select()
    obs = dict(state.observation(1))
    obs["selected_count"] = [0, 0]
    with pytest.raises(StateError, match="^observation.selected_count"):
        ObservedPosition(state.game, obs)
    obs = dict(state.observation(1))
    obs["loc"] = "nowhere"
    with pytest.raises(StateError, match="loc"):
        advise(ObservedPosition(state.game, obs), options=SearchOptions(iterations=10))


def test_beliefs_are_labelled_probabilities_of_opponents_hidden_cards():
    state = find_position(lambda s: s.phase == Phase.REVEAL and hidden_of_others(s, s.current_player()))
    seat = state.current_player()
    advice = advise(state, options=SearchOptions(iterations=1000, seed=1))
    assert advice.beliefs
    names = {t.name for t in state.game.ruleset.army}
    for b in advice.beliefs:
        assert b.player != seat and 0.0 <= b.probability <= 1.0
        if b.kind == "army":
            assert b.card in names and not state.revealed[b.player][b.index]
        else:
            assert b.card.endswith("shillings")
    # per opponent the Army Card beliefs sum to the number of its hidden selected cards (an independent count)
    for q in {b.player for b in advice.beliefs}:
        hidden = sum(state.sel_army[q][t] and not state.revealed[q][t] for t in range(state.game.num_tokens))
        total = sum(b.probability for b in advice.beliefs if b.player == q and b.kind == "army")
        assert total == pytest.approx(hidden, abs=1e-6)


def test_cancel_stops_and_still_answers_a_whole_selection():
    state = _at_select()
    cancel = threading.Event()
    cancel.set()
    advice = advise(state, 0, SearchOptions(seconds=30, seed=1), cancel=cancel)
    assert advice.stats.stopped_by == "cancelled" and advice.stats.limited
    _check_selection(state, advice, 0)


def test_text_form_names_the_decision():
    state = _at_select()
    text = str(advise(state, 0, SearchOptions(iterations=500, seed=1)))
    assert text.startswith("seat 0 selection: select ") and "iterations" in text


def test_public_api_is_exported():
    assert set(feudo_ai.__all__) >= {"advise", "SearchOptions", "Advice", "ObservedPosition"}
