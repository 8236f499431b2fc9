"""The greedy player's Strategy picks in the truncated playout: ``SearchOptions.playout_strategy``. With it a
playout's Army Card picks, Trading Card and reveals (R6-R8) are scored by the greedy player's rules
(``_strategy_scores`` in ``feudo_ai/_feudo_game.pyx``) and the best one is played, instead of a uniform one.

The expected scores are computed here from the reference engine (``engine.state``: ``can_move``,
``destinations``, ``army_move_steps``) and ``feudo_ai.evaluate.position_score``, and the picks are checked against
``feudo_ai.bots.greedy.GreedyBot`` itself, not against the C code under test. Off (the default) the playouts are
those of before, bit for bit: the frozen baselines pin the field to false and their recorded games replay in
tests/test_strength_bots.py; the product's recorded games in tests/test_behaviour_pin.py."""

from __future__ import annotations

import random
import re

import pytest

from engine import Phase
from engine.core import CoreState
from engine.state import CASTLE
from feudo_ai import _feudo_game
from feudo_ai.bots.greedy import GreedyBot
from feudo_ai.evaluate import position_score
from feudo_ai.settings import MAX_PLAYOUT_TURNS, SearchOptions, resolve

from search_helpers import advice_key, check_blind_pairs_agree, hidden_position, play, random_positions
from search_helpers import c_search as search  # noqa: E402 - one C search, SearchOptions names

STRATEGY_PHASES = (Phase.SELECT, Phase.REVEAL)


def _strategy_positions(players: int, seeds=range(1, 9), per_game: int = 12) -> list:
    """Army Card, Trading Card and reveal decisions (two or more legal actions) of seeded random games, taken
    from later turns first so that tokens stand on the map."""
    out = []
    for seed in seeds:
        found = [s for s in random_positions(players, seed, every=1, limit=2000)
                 if s.phase in STRATEGY_PHASES and len(s.legal_actions()) > 1]
        out.extend(found[::-1][:per_game])
    return out


def _best_gain(state, p: int, t: int) -> float | None:
    """The most token t's best move would gain the mover's position_score now (0 when none gains; its pay
    aside), None when it cannot move: every end territory of a move of its army move steps (R8, R18's Fog), the
    token placed there and nothing else changed (the reference engine)."""
    if not state.can_move(p, t):
        return None
    now = position_score(state, p)
    best = 0.0
    for x in state.destinations(p, t, state.army_move_steps(p, t)):
        after = state.clone()
        after.loc[p][t] = x
        after.entered[p][t] = True
        best = max(best, position_score(after, p) - now)
    return best


def _expected_scores(state) -> dict[int, float]:
    """The documented rule (feudo_ai/_feudo_game.pyx, _strategy_scores), from the reference engine."""
    g, L, rs = state.game, state.game.layout, state.game.ruleset
    p = state.current_player()
    out = {}
    for a in state.legal_actions():
        if state.phase == Phase.REVEAL:
            t = a - L.REVEAL
            if (g.token_kind[t] == "mercenary" and state.sel_trade[p] >= 0
                    and state.shillings_of(p, state.sel_trade[p]) < state.merc_moved[p] + 1):
                out[a] = -0.5
                continue
            gain = _best_gain(state, p, t)
            out[a] = -1.0 if gain is None else gain
        elif a >= L.TRADE:
            merc = any(state.sel_army[p][t] and g.token_kind[t] == "mercenary" for t in range(g.num_tokens))
            on_map = any(x >= 0 for x in state.loc[p])
            period = len(rs.trading_cards)
            left = 1 if state.tiebreak else period - (state.turn - 1) % period
            worth = sum(1 for c, v in enumerate(rs.trading_cards) if state.trade_held[p][c] and v > 0)
            value = rs.trading_cards[a - L.TRADE]
            out[a] = value if merc or (on_map and worth >= left) else -value
        else:
            out[a] = _card_score(state, p, a - L.SELECT)
    return out


def test_strategy_scores_follow_the_rule_by_the_reference_engine() -> None:
    """R6-R8: every Army Card, Trading Card and reveal score of the C scorer is the rule's, computed here from
    the reference engine, in 2, 3 and 4 players; the positions hold each kind of decision, tokens that can and
    cannot move, and gains."""
    kinds, gains, stuck = set(), 0, 0
    for state in [s for players in (2, 3, 4) for s in _strategy_positions(players, seeds=range(1, 6))]:
        got = _feudo_game.strategy_scores(CoreState.from_reference(state))
        want = _expected_scores(state)
        assert set(got) == set(want)
        for a, score in got.items():
            assert score == pytest.approx(want[a], abs=1e-9), (state.phase, a, got, want)
        L = state.game.layout
        kinds |= {"reveal" if state.phase == Phase.REVEAL else "trade" if a >= L.TRADE else "army" for a in got}
        gains += sum(1 for v in want.values() if 0.4 < v < 9)
        stuck += sum(1 for v in want.values() if v in (-10.0, -1.0))
    assert kinds == {"army", "trade", "reveal"}
    assert gains > 0 and stuck > 0


def _wanted_pick(state) -> int:
    """The documented Army Card pick: of the cards the player may still take (above its last taken one, R6 as
    the core orders a selection), the ``room`` best scored (ties: the lower card) are wanted, the lowest of
    them is taken."""
    g, L = state.game, state.game.layout
    p = state.current_player()
    last = max((t for t in range(g.num_tokens) if state.sel_army[p][t]), default=-1)
    cand = [t for t in range(last + 1, g.num_tokens) if state.army_held[p][t]]
    room = min(g.ruleset.army_cards_selected, sum(state.army_held[p])) - sum(state.sel_army[p])
    card = {t: _card_score(state, p, t) for t in cand}
    wanted = sorted(cand, key=lambda t: (-round(card[t], 9), t))[:room]  # (float noise: ties are exact in C)
    return L.SELECT + min(wanted)


def _card_score(state, p: int, t: int) -> float:
    """The documented Army Card score (_army_card_score), from the reference engine."""
    gain = _best_gain(state, p, t)
    if gain is None:
        return -10.0
    return (gain * (0.8 if state.game.token_kind[t] == "mercenary" else 1.0) + 0.05 * state.number(p, t)
            + (0.3 if state.loc[p][t] == CASTLE else 0.0))


def test_strategy_picks_are_the_greedy_bots_choices() -> None:
    """The C pick (any seed) is one the greedy bot would make (feudo_ai.bots.greedy): a first Army Card of a
    selection its own pick, a later one the rule's lowest wanted card, a Trading Card of the value it picks, a
    reveal whose gain is the largest by its own measure; on positions without Fog (where the greedy bot's
    selection counts a token's full steps, R18)."""
    bot = GreedyBot()
    checked, first_picks = 0, 0
    for players in (2, 4):
        for state in _strategy_positions(players):
            if state.plague_card >= 0 and state.game.ruleset.plague_cards[state.plague_card].effect == "fog":
                continue
            g, L = state.game, state.game.layout
            p = state.current_player()
            core = CoreState.from_reference(state)
            picks = {_feudo_game.playout_action(core, seed, 1.0, True) for seed in range(6)}
            if state.phase == Phase.REVEAL:
                best = max(bot._token_gain(state, p, a - L.REVEAL) for a in state.legal_actions())
                assert all(bot._token_gain(state, p, a - L.REVEAL) == pytest.approx(best) for a in picks)
            elif state.legal_actions()[0] >= L.TRADE:
                theirs = g.ruleset.trading_cards[bot._decide(state, p) - L.TRADE]
                assert {g.ruleset.trading_cards[a - L.TRADE] for a in picks} == {theirs}
            else:
                assert picks == {_wanted_pick(state)}
                if not any(state.sel_army[p]):  # the greedy bot's pick is the same card
                    assert picks == {bot._decide(state, p)}
                    first_picks += 1
            checked += 1
    assert checked >= 40 and first_picks >= 5


def test_a_selection_takes_the_best_cards_whatever_their_order() -> None:
    """R6: the core takes a selection's cards in ascending order, so the playout's picks, one after another, end
    with the best scored cards selected (the whole selection played out by the C pick, checked against the
    scores of the first pick's position)."""
    done = 0
    for players in (2, 4):
        for state in _strategy_positions(players):
            g, L = state.game, state.game.layout
            p = state.current_player()
            if state.phase != Phase.SELECT or state.legal_actions()[0] >= L.TRADE or any(state.sel_army[p]):
                continue
            held = [t for t in range(g.num_tokens) if state.army_held[p][t]]
            need = min(g.ruleset.army_cards_selected, len(held))
            card = {t: _card_score(state, p, t) for t in held}
            s = state.clone()
            while s.phase == Phase.SELECT and s.current_player() == p and s.legal_actions()[0] < L.TRADE:
                s.apply_action(_feudo_game.playout_action(CoreState.from_reference(s), 0, 1.0, True))
            taken = sorted(t for t in range(g.num_tokens) if s.sel_army[p][t])
            assert taken == sorted(sorted(held, key=lambda t: (-round(card[t], 9), t))[:need]), (str(card), taken)
            done += 1
    assert done >= 5


def test_strategy_off_plays_uniformly_and_on_plays_a_best_pick() -> None:
    """Off: the uniform picks of before (worse ones too, every legal action over enough seeds somewhere); on:
    always a best-scored Trading Card or reveal, the rule's Army Card."""
    worse_off, every_seen = 0, False
    for state in _strategy_positions(2, seeds=(1, 2, 3)):
        scores = _expected_scores(state)
        best = max(scores.values())
        core = CoreState.from_reference(state)
        off = [_feudo_game.playout_action(core, seed, 1.0, False) for seed in range(100)]
        on = [_feudo_game.playout_action(core, seed, 1.0, True) for seed in range(20)]
        worse_off += sum(scores[a] < best - 1e-9 for a in off)
        every_seen |= set(off) == set(scores)
        L = state.game.layout
        if state.phase == Phase.SELECT and state.legal_actions()[0] < L.TRADE:
            assert set(on) == {_wanted_pick(state)}
        else:
            assert all(scores[a] >= best - 1e-9 for a in on), (state.phase, on, scores)
    assert worse_off > 0 and every_seen


def test_strategy_leaves_moves_and_attacks_as_they_were() -> None:
    """R8-R14: every decision other than a Strategy pick or a reveal is played as without the setting (same
    draws, same picks)."""
    checked = 0
    for players in (2, 4):
        for state in random_positions(players, 3, every=3):
            if state.phase in STRATEGY_PHASES or len(state.legal_actions()) < 2:
                continue
            core = CoreState.from_reference(state)
            for seed in range(3):
                for greedy in (0.0, 1.0):
                    assert (_feudo_game.playout_action(core, seed, greedy, True)
                            == _feudo_game.playout_action(core, seed, greedy, False))
            checked += 1
    assert checked >= 20


def test_playout_strategy_is_deterministic_and_changes_the_search() -> None:
    state = hidden_position(players=2)
    kw = dict(iterations=1500, seed=3, playout_greedy=1.0, playout_turns=1)
    on = search(state, playout_strategy=True, **kw)
    assert advice_key(on) == advice_key(search(state, playout_strategy=True, **kw))
    assert advice_key(on) != advice_key(search(state, **kw))


@pytest.mark.parametrize("turns", [1, MAX_PLAYOUT_TURNS])
def test_honesty_with_strategy_playouts(turns) -> None:
    """Two states that differ only in the opponents' secret selections give the same advice (R22): the playouts
    score the Strategy picks of the world drawn, never of the hidden truth."""
    assert check_blind_pairs_agree(search, [(Phase.SELECT, Phase.REVEAL, Phase.MOVE)], range(1, 40),
                                   random.Random(11), per_set=2, iterations=800, playout_greedy=1.0,
                                   playout_turns=turns, playout_strategy=True) == 2


@pytest.mark.parametrize("value", [1, 0, "true", None, 0.5])
def test_bad_playout_strategy_names_the_field(value) -> None:
    with pytest.raises(ValueError, match=re.escape("playout_strategy")):
        SearchOptions(playout_strategy=value)


def test_playout_strategy_needs_the_c_backend() -> None:
    with pytest.raises(ValueError, match="playout_strategy"):
        SearchOptions(backend="python", playout_strategy=True)
    SearchOptions(backend="python", playout_strategy=False)


def test_strategy_scores_refuse_other_decisions() -> None:
    state = play(2, 1, until=lambda s: s.phase == Phase.MOVE)
    with pytest.raises(ValueError, match="state"):
        _feudo_game.strategy_scores(CoreState.from_reference(state))


def test_frozen_baselines_and_the_product_leave_it_off() -> None:
    for name in ("ismcts-v1", "ismcts-v2", "pimc", "product"):
        for players in (2, 3, 4):
            assert resolve(name, players).playout_strategy is False
    assert resolve("product", 2, {"playout_strategy": True}).playout_strategy is True
