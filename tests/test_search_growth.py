"""A search that keeps growing with time: the frozen product bot ``ismcts-v2``, the recycling of a full node pool
(feudo_ai/_search.pyx ``_recycle``) and tree reuse between a seat's decisions (``reuse_tree``,
feudo_ai/search/reuse.py): determinism, honesty (R22: reuse only through the seat's own labels) and that neither
changes a search that does not use it."""

from __future__ import annotations

import random

import pytest

from engine import Phase, new_game, sample_chance
from engine.record import play_game

from feudo_ai.bots import make_bot
from feudo_ai.settings import FIELDS, SearchOptions, profile_base, resolve
import feudo_ai.settings as settings
from helpers import benchmark_module
from search_helpers import advice_key, c_search, hidden_position, positions

fast_search = pytest.importorskip("feudo_ai.search.c_backend")
if not fast_search.available():  # pragma: no cover - depends on the build
    pytest.skip("C search not built", allow_module_level=True)

# what the product may set since ismcts-v2 was frozen, with the values that play the search of then: a full pool
# stopped the trees growing, every search started afresh, the tree had no action prior (the product's 2-player
# search has one since: docs/search-history.md, "The prior turned on")
AFTER_V2 = {"recycle": False, "reuse_tree": False, "prior_weight": 0.0, "prior_temperature": 1.0}
# what a frozen profile does not pin: limits, the seed, choices fixed by the bot, the workers' OS priority
NOT_PINNED = {"iterations", "seconds", "deadline", "seed", "algorithm", "backend", "engine", "nice"}


# ------------------------------------------------------------------------------------------------------------------
# ismcts-v2: the product bot, frozen
# ------------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("players", [2, 3, 4])
@pytest.mark.parametrize("overrides", [{}, {"seconds": 0.1}, {"playout_greedy": 0.0}, {"evaluation": "learned"}])
def test_ismcts_v2_resolves_to_the_product_settings(players: int, overrides: dict) -> None:
    """ismcts-v2 is the product's settings of the commit that froze it, for every player count (and with a spec's
    overrides, its by-player rules apply as the product's do): the same budget (5,000 iterations written out where
    the product takes the default budget), and the settings the product may set since at the values of the search
    of then. Today's product differs from it only by the 2-player action prior (with its playouts to the end)."""
    product = resolve("product", players, overrides)
    v2 = resolve("ismcts-v2", players, overrides)
    assert v2.budget == product.budget == (5000 if not overrides.get("seconds") else None)
    differ = {k for k, v in v2.to_dict().items() if v != product.to_dict()[k]}
    assert differ <= {"iterations"} | set(AFTER_V2)
    with_prior = players == 2 and not {"playout_greedy", "evaluation"} & set(overrides)
    assert differ - {"iterations"} == ({"prior_weight", "prior_temperature"} if with_prior else set())
    assert {k: getattr(v2, k) for k in AFTER_V2} == AFTER_V2
    # and the product of today plays exactly that search while the pool does not fill and nothing is reused
    assert product.replace(**AFTER_V2, iterations=v2.iterations) == v2


def test_ismcts_v2_values_are_written_out_not_aliased(monkeypatch) -> None:
    """Every search setting is pinned in ismcts-v2's own profile, so a later change of SearchOptions' defaults or
    of the product profile does not reach it: changing the product profile here leaves ismcts-v2 as it was."""
    base = profile_base("ismcts-v2")
    assert set(FIELDS) - NOT_PINNED - set(base) == set()
    before = {n: resolve("ismcts-v2", n) for n in (2, 3, 4)}
    product = settings._profiles()["product"]
    monkeypatch.setitem(product, "base", {"playout_greedy": 0.5, "playout_turns": 3, "c": 0.7, "recycle": True})
    monkeypatch.setitem(product, "by_players", {"2": [{"set": {"playout_turns": 9}}]})
    assert resolve("product", 2).c == 0.7  # the product did change
    assert {n: resolve("ismcts-v2", n) for n in (2, 3, 4)} == before
    assert before[2].playout_turns == 200 and before[4].margin_weight == 0.5 and before[3].playout_greedy == 1.0


def test_ismcts_v2_is_a_bot_spec_and_a_benchmark_entrant() -> None:
    """"ismcts-v2" is a bot like "ismcts" then (plan following, the bank), with its settings pinned; the strength
    benchmark records the options it plays with."""
    bot = make_bot("ismcts-v2:seconds=0.1", 3)
    assert type(bot).name == "ismcts-v2" and bot.name.startswith("ismcts-v2") and bot.follow_plan and bot.bank
    for n in (2, 4):
        assert bot.options_for(n) == resolve("ismcts-v2", n, {"seconds": 0.1})
    strength = benchmark_module("strength")
    played = strength.played_options("ismcts-v2:seconds=0.1", 2)
    assert played["playout_turns"] == 200 and played["recycle"] is False and played["reuse_tree"] is False
    assert any(p["b"] == "ismcts-v2:seconds=0.1" for p in strength.growth_pairings(True))


# ------------------------------------------------------------------------------------------------------------------
# Recycling a full node pool
# ------------------------------------------------------------------------------------------------------------------
def test_a_full_pool_is_recycled_and_the_trees_keep_growing() -> None:
    """With a pool far too small for the budget, recycling frees the least-travelled nodes again and again, the
    pool never holds more than its cap, and the trees reach deeper than the same search whose trees stop growing
    when the pool fills; same seed and iterations, same advice."""
    state = hidden_position()
    grown = c_search(state, iterations=6000, max_nodes=400, seed=3, recycle=True)
    stopped = c_search(state, iterations=6000, max_nodes=400, seed=3, recycle=False)
    assert grown.stats.pool_full and stopped.stats.pool_full
    assert grown.stats.recycled >= 5 and stopped.stats.recycled == 0
    assert grown.stats.nodes <= 400 and stopped.stats.nodes == 400
    assert grown.stats.iterations == stopped.stats.iterations == 6000
    assert grown.stats.max_depth > stopped.stats.max_depth
    assert advice_key(c_search(state, iterations=6000, max_nodes=400, seed=3, recycle=True)) == advice_key(grown)
    two = c_search(state, iterations=6000, max_nodes=400, seed=3, threads=2, recycle=True)
    assert two.stats.recycled > 0 and two.stats.nodes <= 800


def test_recycled_search_keeps_its_root_statistics() -> None:
    """Recycling frees subtrees, never the visits already counted at the seat's root: the root's visits add up to
    the iterations (every iteration chooses at the root), as without recycling."""
    state = positions(2, seeds=(4,))[3]
    advice = c_search(state, iterations=3000, max_nodes=200, seed=2, recycle=True)
    assert advice.stats.recycled > 0
    assert sum(a.visits for a in advice.alternatives) == 3000


@pytest.mark.parametrize("players", [2, 4])
def test_recycling_changes_nothing_until_the_pool_fills(players: int) -> None:
    """Recycling starts only when an expansion finds the pool full: a search whose pool does not fill gives the
    same advice with it on or off (so the pinned behaviour of tests/test_behaviour_pin.py holds)."""
    for state in positions(players, seeds=(2,))[1::6][:4]:
        on = c_search(state, iterations=800, seed=5, recycle=True)
        off = c_search(state, iterations=800, seed=5, recycle=False)
        assert not on.stats.pool_full and on.stats.recycled == 0
        assert advice_key(on) == advice_key(off)


def test_recycle_is_a_setting_with_its_constraint() -> None:
    # off by default until the arena shows it pays (docs/search-history.md: 0.375 over 24 tuning games)
    assert SearchOptions().recycle is False and resolve("product", 2).recycle is False
    assert resolve("product", 2, {"recycle": True}).recycle is True
    for name in ("ismcts-v1", "pimc", "ismcts-v2"):
        assert resolve(name, 2).recycle is False
    with pytest.raises(ValueError, match="^recycle: expected true or false"):
        SearchOptions(recycle=1)
    with pytest.raises(ValueError, match="^reuse_tree: expected true or false"):
        SearchOptions(reuse_tree="yes")
    with pytest.raises(ValueError, match="^reuse_tree: tree reuse is only available"):
        SearchOptions(reuse_tree=True, algorithm="pimc")
    with pytest.raises(ValueError, match="^reuse_tree: tree reuse is only available"):
        SearchOptions(reuse_tree=True, backend="python")


# ------------------------------------------------------------------------------------------------------------------
# Tree reuse
# ------------------------------------------------------------------------------------------------------------------
def _game(bots, seed: int, players: int = 2, limit: int | None = None):
    """Play a game with ``bots`` told every action (as the arena does); returns each bot-seat's advice keys in
    order and the actions."""
    state = new_game(players=players, seed=seed)
    keys: list = []

    def chooser(p):
        def choose(st):
            before = bots[p].last_advice
            a = bots[p](st)
            if bots[p].last_advice is not before:
                keys.append((p, advice_key(bots[p].last_advice), bots[p].last_advice.stats.reused_nodes))
            return a
        return choose

    def tell(st, a):
        for b in bots:
            b.observe(st, a)

    record, final = play_game([chooser(p) for p in range(players)], state, seed=seed, on_action=tell)
    return keys, record.actions


def test_tree_reuse_is_deterministic_and_used() -> None:
    """Same seeds, same positions, same budgets: the same advice at every decision with reuse on; and the trees
    were reused (searches started from the seat's previous subtree)."""
    spec = "ismcts:iterations=250:reuse_tree=true"
    one = _game([make_bot(spec, 1), make_bot(spec, 2)], seed=11)
    two = _game([make_bot(spec, 1), make_bot(spec, 2)], seed=11)
    assert one == two
    reused = [r for _, _, r in one[0]]
    assert sum(1 for r in reused if r > 0) >= len(reused) // 4  # most paths stay in the tree at this budget
    fresh = _game([make_bot("ismcts:iterations=250", 1), make_bot("ismcts:iterations=250", 2)], seed=11)
    assert all(r == 0 for _, _, r in fresh[0])
    assert [k for _, k, _ in fresh[0]] != [k for _, k, _ in one[0]]  # reuse changes the searches


def test_reuse_off_by_default_and_not_without_the_game_actions() -> None:
    """reuse_tree is off by default; a bot that is not told the game's actions (a driver without ``observe``)
    never roots an old tree at a new position: its searches start afresh."""
    assert resolve("product", 2).reuse_tree is False and SearchOptions().reuse_tree is False
    bot = make_bot("ismcts:iterations=200:reuse_tree=true", 4)
    state = new_game(players=2, seed=6)
    rng = random.Random(6)
    reused = []
    while not state.is_terminal() and len(reused) < 15:
        if state.is_chance_node():
            a = sample_chance(state, rng)
        elif state.current_player() == 0:
            before = bot.last_advice
            a = bot(state)
            if bot.last_advice is not before:
                reused.append(bot.last_advice.stats.reused_nodes)
        else:
            a = state.legal_actions()[0]
        state.apply_action(a)
    assert len(reused) == 15 and all(r == 0 for r in reused[1:])


def _fork_pair(seed: int, spec: str):
    """Two games, identical until seat 1's first pick of a turn's selection, where seat 1 picks another Army Card
    (hidden from seat 0, R6, R22); seat 0 is a reusing bot told every action. Returns seat 0's advice at its
    first decision after the fork in each game, and the two states then (None when the game gives none with seat 0
    seeing the same position in both)."""
    results = []
    for branch in (0, 1):
        bot = make_bot(spec, 9)
        state = new_game(players=2, seed=seed)
        rng = random.Random(seed)
        forked = False
        while not state.is_terminal():
            p = state.current_player()
            if state.is_chance_node():
                a = sample_chance(state, rng)
            elif p == 0:
                if forked and len(state.legal_actions()) > 1:
                    bot(state)
                    results.append((bot.last_advice, state.clone()))
                    break
                a = bot(state)
            else:
                legal = state.legal_actions()
                if (state.phase == Phase.SELECT and state.turn >= 2 and not forked and not any(state.sel_army[1])
                        and len(legal) > 1):
                    a = legal[branch]
                    forked = True
                else:
                    a = legal[0]
            bot.observe(state, a)
            state.apply_action(a)
    return results


def test_tree_reuse_is_honest_hidden_card_twins_get_the_same_advice() -> None:
    """R22 with reuse on: two games differing only in a card seat 1 selected (hidden from seat 0) give seat 0 the
    same advice at its next decision, where its search starts from its previous tree (the path runs through seat
    1's hidden picks, which seat 0's labels see as "?")."""
    checked = 0
    for seed in range(1, 12):
        pair = _fork_pair(seed, "ismcts:iterations=800:reuse_tree=true:playout_greedy=0:playout_turns=0")
        if len(pair) != 2:
            continue
        (a, sa), (b, sb) = pair
        assert sa.to_dict() != sb.to_dict()  # the games do differ (seat 1's hidden selection)
        if sa.observation(0) != sb.observation(0):
            continue  # seat 1's card was revealed before seat 0's next decision: not a hidden twin
        assert advice_key(a) == advice_key(b)
        if a.stats.reused_nodes > 0:
            checked += 1
        if checked >= 2:
            break
    assert checked >= 2
