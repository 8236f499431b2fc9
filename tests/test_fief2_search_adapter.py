"""The Fief 2 adapter of the search's Python side (feudo_ai/search/games/fief2.py): the seat's view, the worlds
dealt from it, the labelled beliefs, the dispatch of advise() (F46, F52, F53.11, F2-D2)."""

from __future__ import annotations

import random
from collections import Counter

import pytest

import feudo_ai
from engine import new_fast_game
from engine.errors import StateError
from fief2.state import A_GIVE, CARDS, FR_ANSWER
from feudo_ai.search.games import adapter_for
from feudo_ai.search.games.feudo import FEUDO
from feudo_ai.search.games.fief2 import (FIEF2, ObservedFief2Position, deal_hidden_hands, hand_beliefs, seat_view,
                                         unseen_cards)

from fief2_helpers import hidden_twin, played


def _cards_decision(seed: int):
    """A card-phase decision where the family to act and another family both hold cards."""
    def ok(st):
        seat = st.current_player()
        return st.phase == CARDS and st.hands[seat] and any(st.hands[q] for q in range(st.num_players) if q != seat)
    st = played(seed, until=ok)
    assert st is not None, f"seed {seed}: no such decision"
    return st


# ------------------------------------------------------------------------------------------------- the seat's view
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_f46_view_of_twins_is_one_state_with_the_real_legal_actions(seed):
    st = _cards_decision(seed)
    seat = st.current_player()
    twin = hidden_twin(st, seat)
    a = FIEF2.prepare(st, None)
    b = FIEF2.prepare(twin, None)
    assert a.root.to_dict() == b.root.to_dict()  # nothing hidden reaches the search's root
    assert a.root.legal_actions() == st.legal_actions()  # the seat's choices read hand counts only (F52)
    assert [len(h) for h in a.root.hands] == [len(h) for h in st.hands]
    assert a.root.hands[seat] == st.hands[seat]
    assert a.decision == "plan" and a.seat == seat


def test_f46_view_deals_the_others_only_cards_the_seat_cannot_see():
    st = _cards_decision(4)
    seat = st.current_player()
    view = seat_view(ObservedFief2Position.from_state(st, seat))
    pool = set(unseen_cards(st, seat))
    others = [c for q in range(st.num_players) if q != seat for c in view.hands[q]]
    assert len(others) == len(set(others)) and set(others) <= pool
    assert not set(others) & set(st.hands[seat])


def test_observation_errors_name_the_field():
    st = _cards_decision(5)
    seat = st.current_player()
    obs = st.observation(seat)
    q = next(q for q in range(st.num_players) if q != seat and st.hands[q])
    leaky = dict(obs, hands=[list(st.hands[p]) for p in range(st.num_players)])
    with pytest.raises(StateError, match=rf"observation.hands\[{q}\]: another family's hand"):
        ObservedFief2Position(st.game, leaky)
    with pytest.raises(StateError, match="observation.hand_counts"):
        ObservedFief2Position(st.game, dict(obs, hand_counts=[99] * st.num_players))
    with pytest.raises(StateError, match="observation.seat"):
        ObservedFief2Position(st.game, dict(obs, seat=9))
    with pytest.raises(ValueError, match="seat: no decision of seat"):
        FIEF2.prepare(st, (seat + 1) % st.num_players)


# ------------------------------------------------------------------------------------------------------- worlds
def test_f2_d2_worlds_keep_counts_and_the_seats_knowledge_and_ignore_the_hidden_cards():
    st = _cards_decision(6)
    seat = st.current_player()
    twin = hidden_twin(st, seat)
    view_a, view_b = FIEF2.prepare(st, None).root, FIEF2.prepare(twin, None).root
    pool = set(unseen_cards(st, seat))
    for seed in range(20):
        wa = deal_hidden_hands(view_a, seat, random.Random(seed))
        wb = deal_hidden_hands(view_b, seat, random.Random(seed))
        assert wa.to_dict() == wb.to_dict()  # the world depends on the seat's knowledge and the seed only
        assert [len(h) for h in wa.hands] == [len(h) for h in st.hands]
        assert wa.hands[seat] == st.hands[seat]
        dealt = [c for q in range(st.num_players) if q != seat for c in wa.hands[q]]
        assert len(dealt) == len(set(dealt)) and set(dealt) <= pool
        assert wa.legal_actions() == st.legal_actions()
        # a world is a real position: it plays on (the deck is what neither a hand nor play holds)
        assert sorted(wa.deck() + dealt) == sorted(pool)


def test_f53_11_a_card_offered_to_the_seat_stays_in_its_givers_hand():
    st = _cards_decision(7)
    giver = st.current_player()
    seat = next(q for q in range(st.num_players) if q != giver)
    card = st.hands[giver][0]
    d = st.to_dict()
    d["stack"].append([FR_ANSWER, giver, seat, A_GIVE, card, 0, 0])  # the seat is asked to accept the gift
    from fief2.state import State
    asked = State.from_dict(d, st.game)
    assert asked.current_player() == seat
    prepared = FIEF2.prepare(asked, seat)
    assert card in prepared.root.hands[giver]
    for s in range(10):
        w = deal_hidden_hands(prepared.root, seat, random.Random(s))
        assert card in w.hands[giver] and len(w.hands[giver]) == len(st.hands[giver])


def test_beliefs_are_the_share_of_worlds_holding_each_card():
    st = _cards_decision(8)
    seat = st.current_player()
    view = FIEF2.prepare(st, None).root
    n, C = st.num_players, st.game.C
    counters = [0] * (n * C)
    worlds = 400
    for s in range(worlds):
        deal_hidden_hands(view, seat, random.Random(s), counters)
    beliefs = hand_beliefs(st.game, seat, counters, worlds, [len(h) for h in st.hands])
    pool = len(unseen_cards(st, seat))
    for q in range(n):
        mine = [b for b in beliefs if b.player == q]
        if q == seat or not st.hands[q]:
            assert not mine
            continue
        assert sum(b.probability for b in mine) == pytest.approx(len(st.hands[q]))  # a hand of that many cards
        # uniform dealing: each unseen card is in q's hand in about len(hand) / pool of the worlds
        expected = len(st.hands[q]) / pool
        assert all(abs(b.probability - expected) < 0.12 for b in mine)
        assert {b.kind for b in mine} == {"hand"} and all(b.card == st.game.card_name(b.index) for b in mine)
    assert hand_beliefs(st.game, seat, None, 0, [len(h) for h in st.hands]) == ()


# ----------------------------------------------------------------------------------------------------- dispatch
def test_adapter_for_tells_the_games_apart():
    st = _cards_decision(9)
    assert adapter_for(st) is FIEF2
    assert adapter_for(ObservedFief2Position.from_state(st, st.current_player())) is FIEF2
    assert adapter_for(FIEF2.prepare(st, None)) is FIEF2
    assert adapter_for(new_fast_game(players=3, seed=1)) is FEUDO


def test_advise_refuses_the_python_backend_for_fief2():
    st = _cards_decision(10)
    with pytest.raises(ValueError, match="backend: fief2 is searched by the c backend, got python"):
        feudo_ai.advise(st, options=feudo_ai.SearchOptions(backend="python", iterations=10))


@pytest.mark.parametrize("name, value", [("margin_weight", 0.5), ("final_margin_weight", 0.1), ("playout_greedy", 1.0),
                                         ("sampler", "weighted"), ("prior_weight", 4.0),
                                         ("evaluation", "learned")])
def test_settings_fief2_does_not_read_are_refused_naming_them(name, value):
    """Feudo's evaluation and playout settings have no meaning in Fief 2's table: refused before any search, by
    advise and by the bot's constructor, rather than silently ignored."""
    pytest.importorskip("feudo_ai._fief2_game", reason="C search not built")
    from feudo_ai.games import GAMES

    st = _cards_decision(10)
    with pytest.raises(ValueError, match=f"^{name}: Fief 2's search does not read it"):
        feudo_ai.advise(st, options=feudo_ai.SearchOptions(iterations=10, **{name: value}))
    with pytest.raises(ValueError, match=name):
        GAMES["fief2"].make_bot(f"ismcts:iterations=10:{name}={value}", 1)
    # the neutral value (Fief 2's own profile) still searches
    assert feudo_ai.advise(st, options=feudo_ai.resolve("fief2-product", st.num_players, {"iterations": 10})).best \
        in st.legal_actions()


def test_counts_of_the_worlds_are_uniform_over_the_unseen_cards():
    # an independent check of the dealing: over many worlds each family's cards come from the whole pool alike
    st = _cards_decision(11)
    seat = st.current_player()
    view = FIEF2.prepare(st, None).root
    q = next(q for q in range(st.num_players) if q != seat and st.hands[q])
    seen = Counter()
    for s in range(300):
        seen.update(deal_hidden_hands(view, seat, random.Random(1000 + s)).hands[q])
    assert set(seen) == set(unseen_cards(st, seat))
