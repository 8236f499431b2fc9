"""The C search knows no rule of Feudo: a second hidden-information game, Goofspiel with hidden bids
(feudo_ai/_goofspiel.pyx), behind the same interface (feudo_ai/_game.pxd), searched by the same C MO-ISMCTS.

Expected answers are worked out by hand in each test (not read from the search)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from feudo_ai import _search
from feudo_ai._goofspiel import GoofspielGame

HIDDEN = -1  # LABEL_HIDDEN of feudo_ai/_game.pxd


def _worker(game, iterations: int, seed: int = 1, playout: str = "random", **kw):
    w = _search.SearchWorker(game, seed, iterations, 0.0, 200_000, playout, 0, 0.7, 0.15, None, **kw)
    assert w.run() == "iterations"
    return w


def _endgame(bid0: int, seat: int = 1) -> GoofspielGame:
    """Round 4 of 5: prize 5 on the table, prize 1 left in the deck, scores 4 to 5. Player 1 holds {1, 5},
    player 0 holds {2, 3} and has bid ``bid0`` in secret."""
    return GoofspielGame(5, [[2, 3], [1, 5]], [1], 5, [bid0, None], [4, 5], seat)


def test_search_module_names_no_feudo_rule() -> None:
    """_search.pyx/.pxd cimport only the game interface: no engine module, no Feudo constant."""
    root = Path(__file__).resolve().parents[1] / "feudo_ai"
    for name in ("_search.pyx", "_search.pxd"):
        text = (root / name).read_text()
        imports = re.findall(r"^\s*(?:from|cimport|import)\s+([\w.]+)", text, flags=re.M)
        assert all(m.split(".")[0] in ("libc", "feudo_ai") for m in imports), imports
        assert all(m in ("feudo_ai._game",) for m in imports if m.startswith("feudo_ai")), imports
        for feudo_word in ("CoreState", "PH_", "sel_army", "trade_revealed", "MAX_TOKENS", "engine"):
            assert feudo_word not in text.split('"""', 2)[-1], (name, feudo_word)


def test_finds_the_obvious_best_bid() -> None:
    """Bidding 5 wins the prize 5 whatever player 0 bid (2 or 3), and then the last round's 1 loses prize 1:
    final 5+5=10 to 4+1=5, a win. Bidding 1 loses prize 5 and wins prize 1: 6 to 9, a loss. So bid 5 (action
    index 4), with a value near 1, and bid 1 (index 0) near 0."""
    game = _endgame(3)
    assert game.to_move() == 1 and game.legal_actions() == [0, 4]
    w = _worker(game, 400)
    stats = w.root_stats()
    assert max(stats, key=lambda a: stats[a][0]) == 4
    visits5, total5 = stats[4]
    visits1, total1 = stats[0]
    assert total5 / visits5 == pytest.approx(1.0) and total1 / visits1 == pytest.approx(0.0)


def test_advice_does_not_depend_on_the_opponents_hidden_bid() -> None:
    """Honesty: player 0's bid (2 or 3) is erased from the root and redrawn in every world, so the search's
    trees, statistics and beliefs are the same either way (same seed)."""
    runs = []
    for bid0 in (2, 3):
        game = _endgame(bid0)
        assert game.root_bids() == (-1, -1)  # the search never holds the true hidden bid
        w = _worker(game, 300, seed=7)
        runs.append((w.root_stats(), w.stats()["nodes"], w.belief_counts()))
    assert runs[0] == runs[1]


def test_beliefs_about_the_hidden_bid_are_uniform_over_the_hand() -> None:
    """The uniform determinization: player 0's bid is 2 or 3 with probability 1/2 each (counters [q * n + i])."""
    w = _worker(_endgame(2), 2000, seed=3)
    counts, worlds = w.belief_counts()
    assert worlds == 2000
    p2, p3 = counts[0 * 5 + 1] / worlds, counts[0 * 5 + 2] / worlds
    assert p2 + p3 == pytest.approx(1.0)
    assert abs(p2 - 0.5) < 0.05  # 2000 draws: standard deviation 0.011
    assert sum(counts[5:]) == 0  # nothing hidden about the searching seat


def test_same_seed_same_search_and_seeds_matter() -> None:
    game = GoofspielGame(4, [[1, 2, 3, 4], [1, 2, 3, 4]], [1, 2, 3], 4, [None, None], [0, 0], 0)
    a, b, c = (_worker(game, 1500, seed=s) for s in (5, 5, 6))
    assert (a.root_stats(), a.stats()["nodes"]) == (b.root_stats(), b.stats()["nodes"])
    assert a.root_stats() != c.root_stats()


def test_simultaneous_bids_use_exp3_and_bids_are_hidden_from_the_other_tree() -> None:
    """Player 0 bids while player 1 still bids after it: EXP3 at its node; player 1 bids last: UCB1. In each
    player's tree the other's bids are the single edge "?" (LABEL_HIDDEN), and the reveal is a public signal
    (a label <= -2) in both trees."""
    game = GoofspielGame(3, [[1, 2, 3], [1, 2, 3]], [1, 2], 3, [None, None], [0, 0], 0)
    w = _worker(game, 3000, seed=2)
    r0, r1 = w.root_index(0), w.root_index(1)
    assert w.node_exp3(r0) and w.node_actor(r0) == 0
    bids0 = w.children(r0)
    assert sorted(a for a, *_ in bids0) == [0, 1, 2]
    kids1 = w.children(r1)
    assert [a for a, *_ in kids1] == [HIDDEN]  # player 0's bid, seen by player 1
    node1 = kids1[0][3]
    assert w.node_actor(node1) == 1 and not w.node_exp3(node1)
    assert sorted(a for a, *_ in w.children(node1)) == [0, 1, 2]  # player 1's own bids
    for _, _, _, child in bids0:  # in player 0's tree, player 1's bid is "?" and then the reveal
        labels = [a for a, *_ in w.children(child)]
        assert labels == [HIDDEN]
        reveals = [a for a, *_ in w.children(w.children(child)[0][3])]
        assert reveals and all(a <= -2 for a in reveals)


def test_pimc_and_truncated_playouts_run_on_the_toy_game() -> None:
    """The other search modes go through the same table: PIMC over 4 worlds finds the obvious bid too, and a
    truncated playout (horizon 0: stop after the root's round) evaluates by the score difference: with two
    iterations each bid is expanded once and played out from the end of the round."""
    w = _worker(_endgame(2), 400, algorithm="pimc", worlds=4)
    stats = w.root_stats()
    assert max(stats, key=lambda a: stats[a][0]) == 4
    t = _worker(_endgame(2), 2, playout="truncated")
    stats = t.root_stats()
    # player 1's reward after this round only: bid 5 wins the 5 points (10 to 4), bid 1 loses them (5 to 9)
    assert stats[4] == (1, pytest.approx(0.5 + 0.5 * 6 / 15))
    assert stats[0] == (1, pytest.approx(0.5 - 0.5 * 4 / 15))


@pytest.mark.parametrize("bad, field", [
    (dict(n=1), "n"), (dict(hands=[[1, 2]]), "hands"), (dict(hands=[[1, 2], [1, 9]]), "hands[1]"),
    (dict(deck=[1, 1]), "deck"), (dict(prize=1), "prize"), (dict(bids=[4, None]), "bids[0]"),
    (dict(bids=[None, 1]), "bids"), (dict(scores=[-1, 0]), "scores"), (dict(seat=2), "seat"),
])
def test_bad_positions_name_the_field(bad: dict, field: str) -> None:
    args = dict(n=5, hands=[[2, 3], [1, 5]], deck=[1], prize=5, bids=[3, None], scores=[4, 5], seat=1)
    args.update(bad)
    with pytest.raises(ValueError, match=re.escape(field)):
        GoofspielGame(**args)
