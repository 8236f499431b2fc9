"""The strength work's bot machinery: the frozen baselines (ismcts-v1, pimc), plan following, the per-game clock, the
difficulty presets."""

from __future__ import annotations

import json
import os
import random

import pytest

from engine import new_game, sample_chance
from engine.serialize import state_from_dict

import feudo_ai
from feudo_ai.settings import MAX_PLAYOUT_TURNS, SearchOptions
from feudo_ai.bots import make_bot, search_bots
from feudo_ai.settings import profile_base

# the frozen baselines' pinned settings, less their default budget
V1_OPTIONS = {k: v for k, v in profile_base("ismcts-v1").items() if k != "iterations"}

fast_search = pytest.importorskip("feudo_ai.search.c_backend")
if not fast_search.available():  # pragma: no cover - depends on the build
    pytest.skip("C search not built", allow_module_level=True)

BASELINE = os.path.join(os.path.dirname(__file__), "data", "ismcts_v1_baseline.json")


def _baseline() -> dict:
    with open(BASELINE) as f:
        return json.load(f)


def _play(bots, game_seed: int, players: int = 2) -> tuple[list[int], list[float]]:
    rng = random.Random(game_seed)
    state = new_game(players=players, seed=game_seed)
    actions = []
    while not state.is_terminal():
        a = sample_chance(state, rng) if state.is_chance_node() else bots[state.current_player()](state)
        actions.append(a)
        state.apply_action(a)
    return actions, state.returns()


def test_v1_options_pin_every_search_option() -> None:
    """A new SearchOptions field must be pinned for the frozen baselines too (or be a limit, seed or a choice
    fixed by the bot), else a later default change would alter them."""
    # nice: the workers' scheduling priority only (same advice at any value: tests/test_service_load.py)
    not_pinned = {"iterations", "seconds", "deadline", "seed", "algorithm", "backend", "engine", "nice"}
    from feudo_ai.settings import FIELDS

    names = set(FIELDS)
    assert names - not_pinned - set(V1_OPTIONS) == set()


def test_v1_options_are_the_defaults_recorded_at_bf7be3f() -> None:
    """The pinned values, written out from the defaults of SearchOptions at commit bf7be3f (the evaluation then
    was the hand-made one, the only one there was, and the tree had no action prior: prior_weight 0 is the search
    of then, bit for bit; no margin term either: margin_weight 0 is that evaluation, bit for bit; the playouts
    were uniform but for attacks: playout_greedy 0 is that playout, bit for bit; a full node pool stopped the trees
    growing, recycle false; every search started afresh, reuse_tree false; nothing mixed into the hand-made
    evaluation, handmade_weight 0, which only a learned one reads; a finished game scored by its R19 returns alone,
    final_margin_weight 0; every search spent its whole budget, early_stop false)."""
    assert V1_OPTIONS == {"c": 0.2, "exp3_gamma": 0.15, "playout": "truncated", "playout_turns": 0,
                                      "sampler": "uniform", "temperature": 1.0, "worlds": 8, "max_nodes": None,
                                      "threads": 1, "evaluation": "handmade", "handmade_weight": 0.0,
                                      "prior_weight": 0.0,
                                      "prior_temperature": 1.0, "margin_weight": 0.0, "margin_temperature": 4.0,
                                      "playout_greedy": 0.0, "recycle": False, "reuse_tree": False,
                                      "final_margin_weight": 0.0, "early_stop": False}
    for name in ("ismcts-v1", "pimc"):
        opts = make_bot(name, 0).options
        assert opts.iterations == 5000 and opts.seconds is None
        assert {k: getattr(opts, k) for k in V1_OPTIONS} == V1_OPTIONS
    assert make_bot("ismcts-v1:seconds=0.1", 0).options.iterations is None  # a given limit replaces the budget


def test_ismcts_bot_plays_greedy_playouts_unless_told_otherwise() -> None:
    """The "ismcts" bot's playouts are greedy moves (docs/search.md): to the end of the game in 2
    players, one more turn in 3 and 4; a spec's playout_turns fixes the horizon everywhere, a spec can turn them
    off, and SearchOptions itself (advise, the Python reference) keeps the plain ones."""
    bot = make_bot("ismcts", 0)
    assert (bot.options.playout_greedy, bot.options.playout_turns) == (1.0, 1)
    assert [bot.options_for(n).playout_turns for n in (2, 3, 4)] == [MAX_PLAYOUT_TURNS, 1, 1]
    for players in (2, 4):  # what a game's searches are given
        state = new_game(players=players, seed=3)
        while state.is_chance_node() or len(state.legal_actions()) < 2:
            state.apply_action(sample_chance(state, random.Random(3)) if state.is_chance_node()
                               else state.legal_actions()[0])
        opts = make_bot("ismcts:seconds=0.1", 0).search_options(state)
        assert (opts.playout_greedy, opts.playout_turns, opts.seconds) == \
               (1.0, MAX_PLAYOUT_TURNS if players == 2 else 1, 0.1)
    assert make_bot("ismcts:seconds=0.1", 0).options.playout_greedy == 1.0  # a limit replaces the budget only
    fixed = make_bot("ismcts:playout_turns=3", 0)
    assert [fixed.options_for(n).playout_turns for n in (2, 4)] == [3, 3]
    plain = make_bot("ismcts:playout_greedy=0:playout_turns=0", 0)
    assert (plain.options.playout_greedy, plain.options.playout_turns) == (0.0, 0)
    assert plain.options_for(2).playout_turns == 0
    assert make_bot("ismcts:playout_greedy=0", 0).options_for(2).playout_turns == 1  # no greedy: no long playouts
    assert make_bot("ismcts-v1", 0).options_for(2).playout_turns == 0  # the frozen baselines keep theirs
    assert (SearchOptions().playout_greedy, SearchOptions().playout_turns) == (0.0, 0)


def test_ismcts_bot_evaluates_with_the_wide_margin_unless_told_otherwise() -> None:
    """The "ismcts" bot's hand-made evaluation has the wide margin in 4-player games (docs/search.md
    "Four players: the wide margin"): margin_weight 0.5 at margin_temperature 4, the sharp evaluation in 2 and 3
    players; a spec's margin_weight holds in every game, a learned evaluation goes without it, and the hard level
    and the frozen baselines keep the sharp evaluation."""
    def margin(spec: str, players: int = 4) -> tuple:
        opts = make_bot(spec, 0).options_for(players)
        return (opts.evaluation, opts.margin_weight, opts.margin_temperature)

    assert [margin("ismcts", n) for n in (2, 3, 4)] == [("handmade", 0.0, 4.0)] * 2 + [("handmade", 0.5, 4.0)]
    assert make_bot("ismcts", 0).options.margin_weight == 0.5  # options: the 4-player ones
    assert margin("ismcts:seconds=0.1") == margin("max") == ("handmade", 0.5, 4.0)
    assert margin("max", 2) == ("handmade", 0.0, 4.0)
    assert margin("ismcts:margin_weight=0") == ("handmade", 0.0, 4.0)
    assert [margin("ismcts:margin_weight=0.3", n) for n in (2, 4)] == [("handmade", 0.3, 4.0)] * 2
    assert margin("ismcts:margin_temperature=2") == ("handmade", 0.5, 2.0)
    assert margin("ismcts:evaluation=learned") == ("learned", 0.0, 4.0)
    for spec in ("hard", "ismcts-v1", "pimc"):
        assert margin(spec) == ("handmade", 0.0, 4.0), spec
    with pytest.raises(ValueError, match="margin_weight"):  # asked for both: refused, naming the field
        make_bot("ismcts:evaluation=learned:margin_weight=0.5", 0)


@pytest.mark.parametrize("algorithm", ["ismcts", "pimc"])
def test_v1_advice_is_the_advice_recorded_at_bf7be3f(algorithm: str) -> None:
    """tests/data/ismcts_v1_baseline.json was recorded with the code of commit bf7be3f (before the strength
    work): the same positions, seeds and iterations give the same answers with the pinned options."""
    recorded = [r for r in _baseline()["advice"] if r["algorithm"] == algorithm]
    assert len(recorded) == 8
    for r in recorded:
        # the recorded positions came from games of seed 3 (tests/search_helpers.positions)
        state = state_from_dict(new_game(players=r["players"], seed=3).game, r["state"])
        opts = SearchOptions(**V1_OPTIONS, iterations=1500, seed=11 + r["index"], algorithm=algorithm)
        a = feudo_ai.advise(state, state.current_player(), opts)
        assert a.best == r["best"]
        assert [p.action for p in a.plan] == r["plan"]
        assert {str(x.action): x.visits for x in a.alternatives} == r["visits"]


@pytest.mark.parametrize("spec,recorded", [("ismcts-v1:iterations=300", "ismcts:iterations=300"),
                                           ("pimc:iterations=300", "pimc:iterations=300")])
def test_v1_bots_play_the_games_recorded_before_issue_14(spec: str, recorded: str) -> None:
    game = next(g for g in _baseline()["games"] if g["spec"] == recorded)
    bots = [make_bot(spec, s) for s in game["seeds"]]
    actions, returns = _play(bots, game["game_seed"])
    assert actions == game["actions"]
    assert returns == game["returns"]


def test_frozen_baselines_reject_the_new_bot_parameters() -> None:
    for spec in ("ismcts-v1:follow_plan=true", "pimc:game_seconds=10"):
        with pytest.raises(ValueError, match="frozen baseline"):
            make_bot(spec, 0)


# ---------------------------------------------------------------------------------------------------------------
# Plan following
# ---------------------------------------------------------------------------------------------------------------
def test_follow_plan_plays_the_planned_turn_without_searching_again() -> None:
    """With follow_plan the bot searches fewer decisions, and every decision it plays without a search is the
    next action of its last advice's plan, played where the seat's observation is the one the plan expected."""
    bot = make_bot("ismcts:iterations=300:follow_plan=true", 3)
    other = make_bot("ismcts:iterations=300:follow_plan=false", 4)
    rng = random.Random(9)
    state = new_game(players=2, seed=9)
    searched = followed = 0
    while not state.is_terminal():
        if state.is_chance_node():
            state.apply_action(sample_chance(state, rng))
            continue
        p = state.current_player()
        if p == 1:
            state.apply_action(other(state))
            continue
        before, n_before = bot.last_advice, bot.followed
        a = bot(state)
        if bot.followed > n_before:
            followed += 1
            plan = [x.action for x in before.plan]
            assert a in plan[1:]  # an action of the plan, not a fresh choice
        elif bot.last_advice is not before:
            searched += 1
            assert a == bot.last_advice.best
        state.apply_action(a)
    assert followed > 0 and searched > 0
    assert other.followed > 0  # its selections only (R6: the whole selection is one decision)


# ---------------------------------------------------------------------------------------------------------------
# The per-game clock
# ---------------------------------------------------------------------------------------------------------------
class FakeClock:
    """A clock that moves only when told: each search "takes" what ``charge`` says."""

    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def _decisions(players: int = 2, seed: int = 4):
    """The decision states (two or more legal actions) of a random game, in order."""
    rng = random.Random(seed)
    state = new_game(players=players, seed=seed)
    out = []
    while not state.is_terminal():
        if state.is_chance_node():
            state.apply_action(sample_chance(state, rng))
            continue
        if len(state.legal_actions()) > 1:
            out.append(state.clone())
        state.apply_action(rng.choice(state.legal_actions()))
    return out


def test_clock_never_exceeds_the_total_and_weighs_the_decisions() -> None:
    from feudo_ai.bots.clock import GameClock, decision_weight

    fake = FakeClock()
    clock = GameClock(60.0, clock=fake)
    base = SearchOptions()
    states = _decisions()
    searched = 0
    for state in states:
        clock.begin(state)
        fake.t += 0.002  # the bot's overhead around a search: 2 ms a decision
        if not clock.exhausted(state):
            left = clock.left(state)
            opts = clock.options_for(state, base)
            assert opts.iterations is None and opts.seconds is not None and opts.seconds <= left
            fake.t += opts.seconds + 0.001  # the search used its whole slice, and a millisecond more
            clock.stop()
            searched += 1
        clock.end()
    assert clock.used <= 60.0
    assert clock.searching > 0.5 * 60.0  # and it does use the time it has
    assert clock.overhead == pytest.approx(0.002)  # (the extra millisecond was inside the search)
    # the same clock (fresh, same turn): a selection gets more than an attack, more than a plain decision,
    # more than a choice between two actions
    from feudo_ai.bots.clock import W_ATTACK, W_NARROW, W_SELECTION
    for turn in range(3, 8):
        kinds = {}
        for st in states:
            if st.turn == turn:
                kinds.setdefault(decision_weight(st), st)
        if {W_SELECTION, W_ATTACK, 1.0, W_NARROW} <= set(kinds):
            break
    else:
        raise AssertionError("no turn with every kind of decision")
    got = {w: GameClock(60.0, clock=fake).slice_for(st) for w, st in kinds.items()}
    assert got[W_SELECTION] > got[W_ATTACK] > got[1.0] > got[W_NARROW] > 0


def test_clock_runs_out_then_stops_searching() -> None:
    """A clock charged more than it gives (a slow machine) runs out: from then on no search is started."""
    from feudo_ai.bots.clock import GameClock

    fake = FakeClock()
    clock = GameClock(5.0, clock=fake)
    states = _decisions()
    ran_out_at = None
    for i, state in enumerate(states):
        clock.begin(state)
        if clock.exhausted(state):
            ran_out_at = i
            clock.end()
            break
        clock.options_for(state, SearchOptions())
        fake.t += 0.4
        clock.stop()
        clock.end()
    assert ran_out_at is not None and ran_out_at < len(states) - 1
    assert clock.used <= 5.0 + 0.4  # the last search may only overrun by what it was charged beyond its slice
    with pytest.raises(RuntimeError, match="no time left"):
        clock.options_for(states[ran_out_at], SearchOptions())


def test_clock_reserves_the_overhead_of_the_decisions_to_come() -> None:
    """A bot whose decisions cost 50 ms outside the search keeps that time back for the rest of the game."""
    from feudo_ai.bots.clock import GameClock

    fake = FakeClock()
    clock = GameClock(30.0, clock=fake)
    states = _decisions()
    for state in states[:40]:
        clock.begin(state)
        fake.t += 0.05
        clock.end()
    late = states[40]
    assert clock.reserve(late) == pytest.approx(0.05 * clock.expected_decisions(late))
    assert clock.left(late) == pytest.approx(30.0 - clock.used - clock.reserve(late))


def test_clock_resets_for_a_new_game() -> None:
    from feudo_ai.bots.clock import GameClock

    fake = FakeClock()
    clock = GameClock(10.0, clock=fake)
    states = _decisions()
    late = [s for s in states if s.turn >= 5][0]
    clock.begin(late)
    clock.options_for(late, SearchOptions())
    fake.t += 5.0
    clock.stop()
    clock.end()
    assert clock.used == 5.0
    clock.slice_for(states[0])  # turn 0 again: another game
    assert clock.used == 0.0


def test_bot_with_a_game_clock_plays_a_whole_game_within_it() -> None:
    """ismcts:game_seconds with an injected fake clock charging every search 0.25 s and every decision 10 ms:
    the bot keeps to its total, then plays its fallback (the greedy move) without searching; every move is
    legal."""
    fake = FakeClock()
    other = make_bot("ismcts:iterations=1", 1)
    bot = search_bots.ISMCTSBot(5, game_seconds=8.0, clock=fake)
    real_searched = bot.searched

    def charged(state, advice):
        fake.t += 0.25
        real_searched(state, advice)

    bot.searched = charged
    rng = random.Random(2)
    state = new_game(players=2, seed=2)
    fallbacks = 0
    while not state.is_terminal():
        if state.is_chance_node():
            state.apply_action(sample_chance(state, rng))
            continue
        if state.current_player() == 0:
            legal = state.legal_actions()
            before, followed = bot.last_advice, bot.followed
            fake.t += 0.01
            a = bot(state)
            if len(legal) > 1 and bot.last_advice is before and bot.followed == followed:
                fallbacks += 1
            assert a in legal
        else:
            a = other(state)
        state.apply_action(a)
    assert bot.clock.used <= 8.0
    assert len(bot.clock.slices) >= 8
    assert fallbacks > 0  # 0.25 s charged a search: the 8 s ran out before the end


@pytest.mark.parametrize("spec,field", [("ismcts:game_seconds=0", "game_seconds"),
                                        ("ismcts:game_seconds=abc", "game_seconds"),
                                        ("ismcts:game_seconds=10:seconds=0.1", "game_seconds"),
                                        ("ismcts:follow_plan=3", "follow_plan")])
def test_bad_clock_parameters_name_the_field(spec: str, field: str) -> None:
    with pytest.raises(ValueError, match=field):
        make_bot(spec, 0)


# ---------------------------------------------------------------------------------------------------------------
# Difficulty levels
# ---------------------------------------------------------------------------------------------------------------
def test_levels_are_bots_of_growing_strength_by_construction() -> None:
    """easy: greedy with random mistakes; medium: greedy; hard: ismcts at 300 iterations a searched decision,
    max: ismcts at 10,000 with the product's greedy playouts (the measured rates between the levels are in
    docs/search.md)."""
    from feudo_ai.bots import BOTS, LEVELS
    from feudo_ai.bots.greedy import GreedyBot

    bots = {level: make_bot(level, 1) for level in ("easy", "medium", "hard", "max")}
    assert set(LEVELS) == set(bots) and all(level in BOTS for level in bots)
    assert all(b.name == level for level, b in bots.items())
    assert isinstance(bots["easy"], GreedyBot) and 0 < bots["easy"].epsilon < 1
    assert isinstance(bots["medium"], GreedyBot) and bots["medium"].epsilon == 0
    assert isinstance(bots["hard"], search_bots.ISMCTSBot) and isinstance(bots["max"], search_bots.ISMCTSBot)
    # the budgets measured in docs/search.md "Difficulty levels", with the search options pinned there
    assert (bots["hard"].options.iterations, bots["max"].options.iterations) == (300, 10_000)
    assert all((bots[lv].options.c, bots[lv].options.exp3_gamma) == (0.2, 0.15) for lv in ("hard", "max"))
    # hard: plain playouts in every game; max: greedy ones, to the end of a 2-player game, one turn in 3 or 4
    def playouts(level: str) -> list[tuple[float, int]]:
        return [(o.playout_greedy, o.playout_turns) for o in map(bots[level].options_for, (2, 3, 4))]

    assert playouts("hard") == [(0.0, 0)] * 3
    assert playouts("max") == [(1.0, 200), (1.0, 1), (1.0, 1)]
    assert bots["easy"].epsilon == 0.6
    hard2 = make_bot("hard:threads=2", 1)  # a level's own parameters can be overridden
    assert hard2.options.threads == 2 and hard2.options.iterations == bots["hard"].options.iterations
    with pytest.raises(ValueError, match="nope"):
        make_bot("hard:nope=1", 1)
    with pytest.raises(ValueError, match="epsilon"):
        make_bot("easy:epsilon=2", 1)


def test_easy_plays_random_moves_at_its_rate() -> None:
    """greedy:epsilon=e plays a uniformly random legal action in a share e of its decisions (seeded)."""
    from feudo_ai.bots.greedy import GreedyBot

    states = [s for s in _decisions()[:400] if len(s.legal_actions()) > 3][:150]
    greedy, noisy = GreedyBot(3), GreedyBot(3, epsilon=0.4)
    differ = sum(greedy.choose(s) != noisy.choose(s) for s in states)
    assert 0.1 * len(states) < differ < 0.6 * len(states)
    assert [GreedyBot(3, epsilon=0.4).choose(s) for s in states[:20]] == \
        [GreedyBot(3, epsilon=0.4).choose(s) for s in states[:20]]


def test_levels_play_in_the_arena_and_in_hosted_matches() -> None:
    from feudo_ai.arena import TournamentConfig, run_tournament
    from feudo_ai.matches.spec import MatchSetup

    run = run_tournament(TournamentConfig(bots=("easy", "medium"), players=2, games=2, seed=5001,
                                          format="gauntlet"), jobs=1)
    assert run.summary["games_played"] == 2
    MatchSetup.from_dict({"players": 2, "seats": ["external", "hard"], "seed": 1}).check_bots()


def test_cli_selfplay_accepts_a_level(capsys) -> None:
    from feudo_ai.cli import main

    assert main(["selfplay", "--players", "2", "--bots", "easy,greedy", "--seed", "3", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["bots"] == ["easy", "greedy"]


def test_bank_adds_the_followed_decisions_budget_to_the_next_search() -> None:
    bot = make_bot("ismcts:iterations=1000", 1)
    assert bot.search_options(None).iterations == 1000
    bot.on_followed(None)
    bot.on_followed(None)
    assert bot.search_options(None).iterations == 3000  # this search: its own budget and the two banked ones
    assert bot.search_options(None).iterations == 1000  # spent
    for _ in range(10):
        bot.on_followed(None)
    assert bot.search_options(None).iterations == 1000 * (1 + search_bots.BANK_CAP)  # capped a search
    timed = make_bot("ismcts:seconds=0.1", 1)
    timed.on_followed(None)
    assert timed.search_options(None).seconds == pytest.approx(0.2)
    plain = make_bot("ismcts:iterations=1000:bank=false", 1)
    plain.on_followed(None)
    assert plain.search_options(None).iterations == 1000


def test_bank_pays_a_selection_in_advance() -> None:
    """A secret selection's search gets the budget of its four picks (R6: three Army Cards, one Trading Card);
    the three picks then played from its plan add nothing to the bank."""
    from engine.state import Phase

    rng = random.Random(1)
    state = new_game(players=2, seed=3)
    while state.phase != Phase.SELECT:
        state.apply_action(sample_chance(state, rng) if state.is_chance_node() else rng.choice(state.legal_actions()))
    bot = make_bot("ismcts:iterations=500", 1)
    assert bot.search_options(state).iterations == 2000
    for _ in range(3):
        bot.on_followed(state)
    assert bot._bank == 0.0
    bot.on_followed(state)  # a plan's decision beyond the selection
    assert bot._bank == 1.0


def test_strength_benchmark_strength_targets_suite() -> None:
    """The table of the strength targets as a suite: every pairing named with its target; one cheap pairing runs
    (under the suite's earlier name too, which the commands recorded with older results use)."""
    import subprocess
    import sys

    from helpers import benchmark_module

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    strength = benchmark_module("strength")
    names = [p["name"] for p in strength.strength_target_pairings(False)]
    assert len(names) == 9 and all(p["target"] for p in strength.strength_target_pairings(False))
    long = strength.strength_target_pairings(False, long=True)
    assert len(long) == 10 and long[-1]["a"] == "ismcts:seconds=1" and long[-1]["b"] == "ismcts:seconds=0.2"
    assert all(p["games"] >= 400 for p in strength.strength_target_pairings(False))
    # every run, full or --quick, plays whole seat rotations (A from every seat of each deal)
    for quick in (False, True):
        assert all(p["games"] % p["players"] == 0 for p in strength.strength_target_pairings(quick, long=True))
    assert strength.SUITE_ALIASES == {"issue14": "strength-targets"}
    out = subprocess.run([sys.executable, "benchmarks/strength.py", "--suite", "strength-targets", "--only",
                          "medium vs easy", "--games", "2", "--jobs", "1", "--json"], cwd=root, capture_output=True,
                         text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    summary = json.loads(out.stdout)
    assert summary["suite"] == "strength-targets" and summary["seed"] == 1000
    (p,) = summary["pairings"]
    assert p["name"] == "medium vs easy (2p)" and p["games"] == 2 and p["target"] == ">= 0.70"
    lo, hi = p["wilson95"]
    assert 0.0 <= lo <= p["win_rate_a"] <= hi <= 1.0
