"""The Fief 2 search: the compiled table (feudo_ai/_fief2_game.pyx over fief2/_core) behind advise() and the
bots ismcts and pimc of --game fief2 (F46 honesty, determinism, the evaluation's C port, a game to its end)."""

from __future__ import annotations

import random

import pytest

import feudo_ai
from fief2 import sample_chance
from fief2.state import CARDS, new_game
from feudo_ai.bots.fief2_bots import family_value
from feudo_ai.games import get_game
from feudo_ai.search.games.fief2 import unseen_cards

from fief2_helpers import hidden_twin, played


def _built() -> bool:
    try:
        from feudo_ai import _fief2_game  # noqa: F401
        from fief2 import _core  # noqa: F401
    except ImportError:
        return False
    return True


pytestmark = pytest.mark.skipif(not _built(), reason="fief2._core / feudo_ai._fief2_game are not built "
                                                     "(python setup.py build_ext --inplace)")

FIEF2_GAME = get_game("fief2")


def _cards_decision(seed: int, players: int = 4):
    def ok(st):
        seat = st.current_player()
        return (st.phase == CARDS and len(st.legal_actions()) > 1
                and any(st.hands[q] for q in range(st.num_players) if q != seat))
    st = played(seed, players, until=ok)
    assert st is not None
    return st


def _game(st, seat):
    from feudo_ai._fief2_game import Fief2Game
    from fief2._core import Fief2Core

    return Fief2Game(Fief2Core.from_state(st), seat)


# --------------------------------------------------------------------------------------------------- the table
@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_evaluation_in_c_is_the_greedy_players_family_value(seed):
    from fief2._core import Fief2Core

    rng = random.Random(seed)
    st = new_game(players=4)
    g = None
    checked = 0
    for i in range(1500):
        if st.is_terminal():
            break
        if st.is_chance_node():
            st.apply_action(sample_chance(st, rng))
            continue
        if g is None:
            g = _game(st, st.current_player())
        if i % 50 == 0:
            c = g.family_values(Fief2Core.from_state(st))
            assert c == pytest.approx([family_value(st, f) for f in range(4)], abs=1e-9)
            r = g.rewards(Fief2Core.from_state(st))
            assert sum(r) == pytest.approx(1.0) and all(0.0 <= x <= 1.0 for x in r)
            # the softmax orders the families as their values do
            assert sorted(range(4), key=lambda f: r[f]) == sorted(range(4), key=lambda f: c[f])
            checked += 1
        st.apply_action(rng.choice(st.legal_actions()))
    assert checked >= 5


def test_f46_hide_erases_the_other_hands_and_worlds_deal_them_from_the_unseen_cards():
    st = _cards_decision(5)
    seat = st.current_player()
    g = _game(st, seat)
    root = g.root_hands()
    assert root[seat] == st.hands[seat]
    assert all(all(c == -1 for c in root[q]) and len(root[q]) == len(st.hands[q])
               for q in range(4) if q != seat)
    pool = set(unseen_cards(st, seat))
    twin = _game(hidden_twin(st, seat), seat)
    for s in range(20):
        hands, counters = g.world_hands(s)
        assert (hands, counters) == twin.world_hands(s)  # the hidden cards never reach a world
        assert [len(h) for h in hands] == [len(h) for h in st.hands] and hands[seat] == st.hands[seat]
        dealt = [c for q in range(4) if q != seat for c in hands[q]]
        assert len(dealt) == len(set(dealt)) and set(dealt) <= pool
        assert all(h == sorted(h) for h in hands)
        C = st.game.C
        assert counters == [int(c in hands[q]) if q != seat else 0 for q in range(4) for c in range(C)]


@pytest.mark.parametrize("players", [5, 6])
def test_five_and_six_families_are_searched_alike_from_the_same_seed(players):
    st = _cards_decision(6, players=players)
    seat = st.current_player()
    opts = feudo_ai.SearchOptions(iterations=300, seed=4, playout_turns=0)
    a = feudo_ai.advise(st, seat, opts)
    assert a.best in st.legal_actions() and a.stats.iterations == 300
    assert all(0.0 <= c.win_probability <= 1.0 for c in a.alternatives)
    b = feudo_ai.advise(st, seat, opts)
    assert (b.best, [(c.action, c.visits, c.win_probability) for c in b.alternatives]) == \
        (a.best, [(c.action, c.visits, c.win_probability) for c in a.alternatives])
    # F46 with the rewards of the fifth and sixth families kept beside the node pool: a twin differing only in
    # another family's hand gets the same advice
    twin = feudo_ai.advise(hidden_twin(st, seat), seat, opts)
    assert [(c.action, c.visits, c.win_probability) for c in twin.alternatives] == \
        [(c.action, c.visits, c.win_probability) for c in a.alternatives]


@pytest.mark.parametrize("players,recycle", [(4, False), (6, False), (6, True)])
def test_every_node_keeps_each_familys_reward_sums(players, recycle):
    """A playout's rewards are a softmax over the families (or the F51 returns): they add up to 1, so every node's
    reward sums over all the families add up to its visits, for the families whose sums a node holds itself and
    for the fifth and sixth, kept beside the pool, also after a full pool was recycled (its rows move with
    their nodes)."""
    from feudo_ai import _search

    st = _cards_decision(8, players=players)
    seat = players - 1  # the last family: with 6, its own rewards are among those kept beside the pool
    while st.current_player() != seat or len(st.legal_actions()) < 2:
        st.apply_action(sample_chance(st, random.Random(0)) if st.is_chance_node() else st.legal_actions()[0])
    worker = _search.SearchWorker(_game(st, seat), 3, iterations=1500, max_nodes=800 if recycle else 100_000,
                                  recycle=recycle)
    worker.run()
    stats = worker.stats()
    assert stats["recycled"] > 0 if recycle else stats["recycled"] == 0
    checked = 0
    for node in range(stats["nodes"]):
        sums = worker.node_rewards(node)
        assert len(sums) == players and all(x >= 0.0 for x in sums)
        assert sum(sums) == pytest.approx(worker.node_visits(node), abs=1e-6)
        checked += worker.node_visits(node) > 0
    assert checked > 50
    root = worker.root_index(seat)
    seat_sum = sum(r for _, v, r, _ in worker.children(root))
    assert 0.0 < seat_sum <= sum(v for _, v, _, _ in worker.children(root))


# ------------------------------------------------------------------------------------------------ the search
@pytest.mark.parametrize("algorithm", ["ismcts", "pimc"])
def test_f46_twins_differing_in_another_hand_get_the_same_advice(algorithm):
    st = _cards_decision(7)
    seat = st.current_player()
    twin = hidden_twin(st, seat)
    opts = feudo_ai.SearchOptions(algorithm=algorithm, iterations=300, seed=11, playout_turns=0)
    a = feudo_ai.advise(st, seat, opts)
    b = feudo_ai.advise(twin, seat, opts)
    assert a.stats.iterations == 300
    strip = lambda adv: (adv.best, adv.plan, adv.alternatives, adv.beliefs)  # noqa: E731
    assert strip(a) == strip(b)
    assert a.best in st.legal_actions() and a.decision == "plan"


def test_same_seed_same_advice_and_beliefs_count_the_hands():
    st = _cards_decision(8)
    seat = st.current_player()
    opts = feudo_ai.SearchOptions(iterations=300, seed=5)
    a = feudo_ai.advise(st, seat, opts)
    b = feudo_ai.advise(st, seat, opts)
    assert (a.best, a.plan, a.alternatives, a.beliefs) == (b.best, b.plan, b.alternatives, b.beliefs)
    assert sum(x.visits for x in a.alternatives) >= 300 - len(st.legal_actions())
    for q in range(4):
        mine = [x.probability for x in a.beliefs if x.player == q]
        assert sum(mine) == pytest.approx(len(st.hands[q]) if q != seat else 0)


def test_a_plan_is_the_seats_actions_until_another_family_or_chance():
    st = _cards_decision(9)
    seat = st.current_player()
    adv = feudo_ai.advise(st, seat, feudo_ai.SearchOptions(iterations=400, seed=2))
    s = st.clone()
    for p in adv.plan:
        assert s.current_player() == seat and p.action in s.legal_actions()
        assert p.text == s.action_to_string(p.action)
        s.apply_action(p.action)


# --------------------------------------------------------------------------------------------------- the bots
def test_ismcts_plays_a_short_game_against_greedy_to_its_end():
    bots = [FIEF2_GAME.make_bot("ismcts:iterations=40", 1), FIEF2_GAME.make_bot("greedy", 2),
            FIEF2_GAME.make_bot("greedy", 3), FIEF2_GAME.make_bot("greedy", 4)]
    record, final = FIEF2_GAME.play(bots, FIEF2_GAME.new_state(4, 3, turn_limit=2), 3)
    assert final.is_terminal() and final.turn == 2 and sum(final.returns()) == pytest.approx(1.0)
    assert record.replay().to_dict() == final.to_dict()
    assert bots[0].last_advice is not None and bots[0].followed >= 0


def test_bots_are_deterministic_by_seed():
    def play():
        bots = [FIEF2_GAME.make_bot("pimc:iterations=30", 7)] + [FIEF2_GAME.make_bot("random", s) for s in (1, 2)]
        return FIEF2_GAME.play(bots, FIEF2_GAME.new_state(3, 5, turn_limit=1), 5)[0].actions
    assert play() == play()


def test_selfplay_command_plays_ismcts_against_greedy_and_random(capsys):
    from feudo_ai.cli import main

    assert main(["selfplay", "--game", "fief2", "--bots", "ismcts:iterations=30,greedy,random,random",
                 "--turns", "1"]) == 0
    assert "Winner" in capsys.readouterr().out


def test_an_observation_or_a_compiled_state_gets_the_advice_of_the_full_state():
    from fief2._core import Fief2Core
    from feudo_ai.search.games.fief2 import ObservedFief2Position

    st = _cards_decision(10)
    seat = st.current_player()
    opts = feudo_ai.SearchOptions(iterations=200, seed=3)
    want = feudo_ai.advise(st, seat, opts)
    for position in (ObservedFief2Position.from_state(st, seat), Fief2Core.from_state(st)):
        got = feudo_ai.advise(position, seat, opts)
        assert (got.best, got.plan, got.alternatives, got.beliefs) == (want.best, want.plan, want.alternatives,
                                                                      want.beliefs)


def test_six_families_count_their_larger_nodes_against_the_memory_limit():
    from feudo_ai.settings import MAX_NODES

    st = _cards_decision(6, players=6)
    # the most nodes one thread may have at 64 bytes a node is more than 1 GiB at the 80 bytes of six families
    with pytest.raises(ValueError, match=r"max_nodes: 1 threads x 16,777,216 nodes x 80 bytes \(6 players\) "
                                         r"exceeds the memory limit"):
        feudo_ai.advise(st, options=feudo_ai.SearchOptions(iterations=20, seed=1, max_nodes=MAX_NODES))
