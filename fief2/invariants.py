"""Invariants every reachable Fief 2 state keeps: cards, tokens and limits (F2, F5, F10), persons (F1, F12-F13),
titles (F3, F37-F38). Used by the random-play tests and benchmarks; raises AssertionError naming what broke."""

from __future__ import annotations


def check_invariants(st) -> None:
    g, rs = st.game, st.game.ruleset
    n = st.num_players
    # F2/F10: every blue card is in exactly one place: a hand, in play, or the deck
    places = [c for h in st.hands for c in h] + st.in_play()
    assert len(places) == len(set(places)), f"a card is in two places: {sorted(places)}"
    assert len(places) + len(st.deck()) == g.C, "cards not conserved"
    for f in range(n):
        assert len(st.hands[f]) <= rs.hand_size, f"family {f} holds {len(st.hands[f])} cards"
        assert st.cash[f] >= 0 and st.cash[f] % rs.money_unit == 0, f"cash[{f}] = {st.cash[f]}"
        assert len(st.persons_of(f)) <= rs.max_persons, f"family {f} has too many persons"
        assert st._ordinary_on_board(f) <= rs.limits["soldiers_per_family"], f"family {f}: too many Soldiers"
        for v in range(g.V):
            assert all(x >= 0 for x in st.sold[f][v]), f"negative soldiers f{f} v{v}"
        if not st.alive[f]:
            assert not st.persons_of(f) and st._ordinary_on_board(f) == 0, f"eliminated family {f} has tokens"
    assert all(e >= 0 for e in st.escrow)
    lim = rs.limits
    assert sum(st.castle) <= lim["castles"] and sum(st.city) <= lim["cities"]
    assert sum(st.mills) <= lim["mills"] and sum(st.presses) <= lim["wine_presses"]
    for v in range(g.V):
        assert st.mills[v] + st.presses[v] <= lim["improvements_per_village"]
        assert not (st.castle[v] and st.city[v]), f"castle and city on {v}"
    assert st.kg <= lim["kings_guard"] and st.qg <= lim["queens_guard"]
    assert 0 <= st.mob_n <= lim["peasants"]
    assert (st.mob_n > 0) == (st.revolt_card >= 0) == (st.mob_v >= 0), "mob and its card disagree"
    assert sum(st.cardinal) <= rs.red_cards["cardinal"]
    for p in range(g.P):
        if st.fam[p] < 0:
            assert st.spouse[p] < 0 and st.captor[p] < 0 and st.bishop[p] < 0 and not st.darc[p]
            assert st.conduct[p] < 0, f"safe conduct (F35.4) on a dead person {p}"
            continue
        assert 0 <= st.loc[p] < g.V, f"person {p} nowhere"
        assert st.captor[p] != st.fam[p]
        assert st.conduct[p] < 0 or st.captor[p] < 0, f"prisoner {p} under safe conduct (F35.4)"
        s = st.spouse[p]
        if s >= 0:
            assert st.spouse[s] == p and st.fam[s] >= 0 and st.male(s) != st.male(p), f"bad marriage {p}-{s}"
        if st.bishop[p] >= 0:
            assert st.male(p) and s < 0
    bishops = [st.bishop[p] for p in range(g.P) if st.bishop[p] >= 0]
    assert len(bishops) == len(set(bishops))
    for y in range(g.NF):
        held = [st.title[y] >= 0, st.pending[y] >= 0, st.retained[y] >= 0]
        assert sum(held) <= 1, f"fief {y} held twice"
        if st.title[y] >= 0:
            assert st.fam[st.title[y]] >= 0, f"title {y} on a dead person"
        if st.capital[y] >= 0:
            assert st.city[st.capital[y]]
    for r in (st.king, st.queen, st.prince):
        assert r < 0 or st.fam[r] >= 0, "a royal card on a dead person"
    if st.queen >= 0 and st.king >= 0 and not st.regent and st.spouse[st.king] >= 0:
        pass
    if st.regent:
        assert st.queen >= 0
    if not st.is_terminal():
        assert st.legal_actions(), "no legal action at a non-terminal state"
