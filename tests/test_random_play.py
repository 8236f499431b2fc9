"""Random-play invariants over thousands of seeded games (2, 3 and 4 players, basic rules and each option of R20).

After every action: R8 stacking and terrain (own stacking, First Knight alone, Wood <= 1, no two players'
non-Milady tokens together, nobody on its own Castle territory, nobody steps onto a Mountain / the plague Village,
nobody in a City it does not own, Villages and Cities only for Baron/Mercenary/Infantryman, the Convent entered
only by stricken tokens), and VP = the sum of the logged VP events (R15, R16). Every game ends within its turns
plus the tie-break cap (R19). At random points: clone independence and the exact JSON round trip. At the end:
replaying the GameRecord reproduces the final state.
"""

from __future__ import annotations

import random

import pytest

from engine import GameRecord, State, new_game, play_game
from engine.board import Kind
from engine.state import DEAD

from helpers import RS, game_map

GAMES = 200  # per parametrisation: 12 x 200 = 2400 games
DEEP_CHECK_RATE = 0.004  # JSON round trip + clone independence at ~2 random points per game
CONFIGS = {
    "basic": {},
    "virulent": {"virulent_plague": True},
    "strategy_only": {"strategy_only": True},
    "turns15": {"turns": 15},
}
FORMATS = [(n, name) for name in CONFIGS for n in (2, 3, 4)]


class Checker:
    def __init__(self, state: State, rng: random.Random):
        g = state.game
        self.g = g
        self.rng = rng
        self.kind = g.kind
        self.central = g.map.central_hill
        self.token_kind = g.token_kind
        self.enters = g.enters_towns
        self.prev = [list(row) for row in state.loc]
        self.prev_stricken = [list(row) for row in state.stricken]
        self.actions = 0
        self.last = None

    def __call__(self, state: State, action: int) -> None:  # called before each action: checks the state
        self.check(state)
        self.actions += 1
        if self.rng.random() < DEEP_CHECK_RATE:
            self.deep_checks(state)

    def check(self, s: State) -> None:
        key = (str(s.loc), str(s.owner), s.plague_village, str(s.stricken), len(s.vp_log))
        if key == self.last:
            return  # nothing that these invariants look at has changed since the last check
        self.last = key
        g, kind = self.g, self.kind
        occ: dict[int, list[tuple[int, int]]] = {}
        for p in range(g.num_players):
            castle = s.castle_territory(p)
            for t, x in enumerate(s.loc[p]):
                was = self.prev[p][t]
                if x >= 0:
                    occ.setdefault(x, []).append((p, t))
                    assert x != castle, f"{p}/{t} on its own Castle territory"
                    k = kind[x]
                    assert k != Kind.MOUNTAIN, f"{p}/{t} on a Mountain"
                    if k == Kind.CITY:
                        assert s.owner[x] == p, f"{p}/{t} in a City it does not own"
                    if k in (Kind.CITY, Kind.VILLAGE):
                        assert self.enters[t], f"{p}/{t} ({self.token_kind[t]}) in a Village/City"
                    if x != was:  # it moved (or advanced, or marched) this action
                        assert x != s.plague_village, f"{p}/{t} moved onto the plague Village"
                        if k == Kind.CENTRAL_HILL:
                            # stricken when it entered (the start of the next turn may already have healed it)
                            assert x == self.central and self.prev_stricken[p][t], f"{p}/{t} entered healthy"
                if x != DEAD and was == DEAD:
                    raise AssertionError(f"{p}/{t} came back from the dead")
                self.prev[p][t] = x
                self.prev_stricken[p][t] = s.stricken[p][t]
        for x, here in occ.items():
            if kind[x] == Kind.CENTRAL_HILL:
                continue
            assert not (kind[x] == Kind.WOOD and len(here) > 1), f"Wood {x} holds {here}"
            fighters = {p for p, t in here if t != g.milady}
            assert len(fighters) <= 1, f"two players' tokens together on {x}: {here}"
            for p in {p for p, _ in here}:
                own = [t for q, t in here if q == p]
                assert len(own) <= 2, f"{p} stacks {own} on {x}"
                if len(own) == 2:
                    assert g.baron in own or g.milady in own, f"{p} stacks {own} on {x}"
            if any(self.token_kind[t] == "first_knight" for _, t in here):
                assert len(here) == 1, f"First Knight not alone on {x}: {here}"
        for p in range(g.num_players):
            assert s.vp[p] == sum(d for q, d, _ in s.vp_log if q == p), "VP differ from the VP log"

    def deep_checks(self, s: State) -> None:
        # JSON round trip is exact
        back = State.from_json(s.to_json())
        assert back.canonical() == s.canonical()
        assert back.vp_log == s.vp_log
        assert back.legal_actions() == s.legal_actions()
        # a clone is independent of its original
        before = s.canonical()
        c = s.clone()
        assert c.canonical() == before
        legal = c.legal_actions()
        if legal:
            c.apply_action(self.rng.choice(legal))
        c.loc[0][0] = -2
        c.vp[0] += 100
        c.vp_log.append((0, 100, "test"))
        assert s.canonical() == before and s.vp_log[-1:] != [(0, 100, "test")]


@pytest.mark.parametrize("players,config", FORMATS, ids=[f"{n}p-{c}" for n, c in FORMATS])
def test_random_games(players, config):
    rs = RS.with_options(**CONFIGS[config])
    m = game_map()
    cap = rs.turns + rs.tiebreak_max_turns
    outcomes = {"sole": 0, "shared": 0, "tiebreak": 0}
    for i in range(GAMES):
        seed = 1000 * players + i
        rng = random.Random(seed)
        state = new_game(rs, players, seed=seed, game_map=m)
        checker = Checker(state, rng)
        chooser = lambda s: rng.choice(s.legal_actions())  # noqa: E731
        record, final = play_game([chooser] * players, state, seed=seed, on_action=checker)
        checker.check(final)
        assert final.is_terminal() and rs.turns <= final.turn <= cap
        assert final.turn == rs.turns + final.tiebreak
        assert final.winners and abs(sum(final.returns()) - 1.0) < 1e-9
        top = max(final.vp)
        assert all(final.vp[p] == top for p in final.winners)
        outcomes["sole" if len(final.winners) == 1 else "shared"] += 1
        outcomes["tiebreak"] += final.tiebreak > 0
        if config == "strategy_only":
            assert final.plague_history == []
        else:
            assert len(final.plague_history) == rs.turns
        if i % 10 == 0:
            replayed = GameRecord.from_dict(record.to_dict()).replay()
            assert replayed.canonical() == final.canonical()
            assert replayed.vp_log == final.vp_log
    assert outcomes["sole"] > 0  # the games are not degenerate
