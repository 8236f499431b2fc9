"""Fief 2 computer players: ``random``, ``greedy`` (a hand-made one-ply evaluation), and the levels ``easy``
(greedy with random mistakes) and ``medium`` (greedy).

The evaluation (:func:`evaluate`, documented term by term in docs/fief2-bots.md) reads only what every family
sees: titles, fiefs, villages, improvements, money, tokens and the cards in play (F46: everything but the hands is
public; F52: counts are public). It never reads a hand, its own included.

The greedy player looks one decision ahead: each legal action is applied to a copy of the position and the copy
evaluated. A compound choice (F2-D1: a purchase is the item then its place, a card is played then aimed, a step is
persons, soldiers, prisoners, then a destination) is a short sequence of the same family's decisions; when an
action leaves the same family to decide, its value is the best of the next decision's values (one more level,
:data:`CONTINUATION_DEPTH`). The look-ahead stops at chance (dice, dealt cards) and at another family's decision, so
it never sees a die before it is rolled or another family's answer before it is given. Ties go to the lowest
action number, which is "end" wherever "end" is legal: the greedy player does nothing rather than something
pointless.
"""

from __future__ import annotations

from fief2.actions import W
from fief2.state import OVER

from .base import Bot

END = W["END"]  # the word "end" is action 0 of every Fief 2 game (fief2/actions.py)

CONTINUATION_DEPTH = 3  # levels of the same family's follow-up decisions looked at (the first decision counts)
MAX_CHILDREN = 40  # follow-up decisions with more actions (gift amounts, 53) are sampled evenly to this many

# The evaluation's weights, in points of power (F50: 1 point = 50 florins). See docs/fief2-bots.md.
W_INCOME_TURNS = 0.6  # a florin of income a turn is worth this share of the florins it brings until the limit
INCOME_HORIZON = 10  # ... counted over at most this many turns
W_SOLDIER = 2.5  # each of a family's first GARRISON Soldiers (Guards included; price 100 = 2 points; F5, F22, F28)
GARRISON = 20
W_SOLDIER_MORE = 1.0  # each Soldier beyond those, and every Soldier in the last LATE_TURNS turns (F51: power only)
LATE_TURNS = 3
W_PERSON = 8.0  # a free person (F1, F13: persons lead steps, hold titles; none left ends the family, F49)
W_PRISONER = 3.0  # a person held prisoner (F35: income put aside, no vote)
W_VILLAGE = 1.5  # an owned village (F9)
W_OCCUPIED_UNOWNED = 0.7  # an unowned village the family alone occupies (owned at the end of the movement turn, F9.3)
W_FIEF_PROGRESS = 10.0  # x (share of a free fief's villages owned and occupied)^2 (F23: enfeoffment's condition)
W_THREAT = 0.5  # x value at stake where an enemy force within two steps exceeds the family's force (F25, F26, F28)
W_THREAT_FAR = 0.6  # an enemy two steps away counts for this share of its force
W_OPPONENTS = 0.5  # the evaluation is own value minus this share of the mean of the living opponents'
W_WIN = 1000.0  # a finished game: the family's return (F51) times this


class _Facts:
    """Public facts of a position gathered in one pass (who stands where, with what force), for the evaluation."""

    def __init__(self, st):
        g = st.game
        n, V = st.num_players, g.V
        self.soldiers = [[sum(st.sold[f][v]) for v in range(V)] for f in range(n)]  # ordinary, by village
        self.free = [[0] * V for _ in range(n)]  # free persons in the village (roads excluded)
        self.force = [[0] * V for _ in range(n)]  # F1/F28 force: soldiers, Guards, fighting persons
        self.persons = [0] * n
        self.prisoners = [0] * n
        for p in range(g.P):
            f = st.fam[p]
            if f < 0:
                continue
            if st.captor[p] >= 0:
                self.prisoners[f] += 1
                continue
            self.persons[f] += 1
            if st.onroad[p] == -1:
                self.free[f][st.loc[p]] += 1
                self.force[f][st.loc[p]] += st.force_of_person(p)
        self.guards = [0] * n
        for leader, strength in ((st.qg_leader(), st.qg), (st.kg_leader(), st.kg)):
            if leader >= 0 and st.captor[leader] == -1 and strength > 0:
                f = st.fam[leader]
                self.guards[f] += strength
                if st.onroad[leader] == -1:
                    self.force[f][st.loc[leader]] += strength
        for f in range(n):
            for v in range(V):
                self.force[f][v] += self.soldiers[f][v]
        # F1 occupies: a Soldier (Guards included) or a free person there
        self.occupies = [[self.force[f][v] > 0 or self.free[f][v] > 0 for v in range(V)] for f in range(n)]


_RINGS: dict[int, tuple] = {}  # id(map) -> (the map, kept alive so that its id is not reused; its rings)


def _rings(g, v: int) -> tuple[list[int], list[int]]:
    """The villages one step and exactly two steps from v (F25: a token moves at most two steps a turn)."""
    cached = _RINGS.get(id(g.map))
    rings = cached[1] if cached is not None and cached[0] is g.map else None
    if rings is None:
        rings = []
        for x in range(g.V):
            near = list(g.map.adj[x])
            far = sorted({w for u in near for w in g.map.adj[u]} - set(near) - {x})
            rings.append((near, far))
        _RINGS[id(g.map)] = (g.map, rings)
    return rings[v]


def income_rate(st, f: int, facts: _Facts | None = None) -> int:
    """Florins family ``f`` would collect at the next income phase (F20; F21's escrow counted as income; Tax and
    Tithe left out: those cards are discarded after each income)."""
    facts = facts or _Facts(st)
    g, inc = st.game, st.game.ruleset.income
    occ = facts.occupies[f]
    total = 0
    for v in range(g.V):
        if st.owner[v] != f:
            continue
        y = g.map.village_fief[v]
        if not (occ[v] or (st.capital[y] >= 0 and st.fief_family(y) == f and occ[st.capital[y]])):
            continue
        total += inc["castle"] * st.castle[v] + inc["city"] * st.city[v]
        if st.famine[y] < 0:
            total += inc["mill"] * st.mills[v] + inc["wine_press"] * st.presses[v]
    if st.regent and st.queen >= 0:
        if st.fam[st.queen] == f:
            total += inc["king_pension"] + inc["queen_pension"]
    else:
        if st.king >= 0 and st.fam[st.king] == f:
            total += inc["king_pension"]
        if st.queen >= 0 and st.fam[st.queen] == f:
            total += inc["queen_pension"]
    return total


def family_value(st, f: int, facts: _Facts | None = None) -> float:
    """The value of family ``f``'s position in points of power (see docs/fief2-bots.md for each term)."""
    if not st.alive[f]:
        return 0.0
    facts = facts or _Facts(st)
    g, rs = st.game, st.game.ruleset
    n = st.num_players
    ppf = rs.points["florins_per_point"]
    value = float(st.power(f))  # F50: titles, crowns, Bishops, Cardinals, cash / 50
    limit = rs.turn_limit or rs.scored_turns or 30
    turns_left = max(0, min(INCOME_HORIZON, limit - st.turn))
    value += W_INCOME_TURNS * income_rate(st, f, facts) * turns_left / ppf  # F20
    soldiers = sum(facts.soldiers[f]) + sum(a[4] for a in st.assaults if a[0] == f) + facts.guards[f]
    garrison = min(soldiers, GARRISON) if limit - st.turn > LATE_TURNS else 0
    value += W_SOLDIER * garrison + W_SOLDIER_MORE * (soldiers - garrison)
    value += W_PERSON * facts.persons[f] + W_PRISONER * facts.prisoners[f]
    occ = facts.occupies
    for v in range(g.V):
        if st.owner[v] == f:
            value += W_VILLAGE
        elif st.owner[v] < 0 and occ[f][v] and not any(occ[q][v] for q in range(n) if q != f):
            value += W_OCCUPIED_UNOWNED
    for y in range(g.NF):  # F23: progress towards an enfeoffment
        if st.fief_family(y) >= 0:
            continue
        vs = g.map.fief_villages[y]
        mine = sum(1 for v in vs if st.owner[v] == f and occ[f][v])
        value += W_FIEF_PROGRESS * (mine / len(vs)) ** 2
    # threat (F26, F28): where an enemy's force in a neighbouring village exceeds ours, what we hold there is at risk
    inc = rs.income
    enemies = [e for e in range(n) if st.alive[e] and st.enemies(f, e)]
    for v in range(g.V):
        at_stake = facts.free[f][v] * W_PERSON + facts.force[f][v] * W_SOLDIER_MORE
        if st.owner[v] == f:
            at_stake += (inc["castle"] * st.castle[v] + inc["city"] * st.city[v] + inc["mill"] * st.mills[v]
                         + inc["wine_press"] * st.presses[v]) * 3 / ppf
        if at_stake <= 0:
            continue
        mine = facts.force[f][v]
        near, far = _rings(g, v)
        enemy = max([facts.force[e][w] for w in near for e in enemies]
                    + [W_THREAT_FAR * facts.force[e][w] for w in far for e in enemies], default=0)
        if enemy > mine:
            value -= W_THREAT * at_stake * min(1.0, (enemy - mine) / max(1, enemy))
    return value


def evaluate(st, seat: int) -> float:
    """The greedy player's score of a position for ``seat``: at the end, the return (F51) times :data:`W_WIN`;
    before, its family's value minus :data:`W_OPPONENTS` times the mean value of the living opponents."""
    if st.phase == OVER:
        return W_WIN * st.returns()[seat]
    facts = _Facts(st)
    others = [family_value(st, q, facts) for q in range(st.num_players) if q != seat and st.alive[q]]
    mean = sum(others) / len(others) if others else 0.0
    return family_value(st, seat, facts) - W_OPPONENTS * mean


class Fief2GreedyBot(Bot):
    """One-ply greedy Fief 2 player over :func:`evaluate` (see the module docstring). ``epsilon``: the share of
    decisions played at random (the ``easy`` level's mistakes)."""

    name = "greedy"

    def __init__(self, seed: int = 0, epsilon: float = 0.0):
        super().__init__(seed)
        if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float)) or not 0.0 <= epsilon <= 1.0:
            raise ValueError(f"epsilon: expected a probability in [0, 1], got {epsilon!r}")
        self.epsilon = float(epsilon)
        self._tried: dict[str, set[int]] = {}  # this turn's positions decided -> the actions taken there
        self._turn = -1

    def choose(self, state) -> int:
        legal = state.legal_actions()
        if self.epsilon and self.rng.random() < self.epsilon:
            return self.rng.choice(legal)
        # A position met again within the turn (a choice that leads back to itself, e.g. "retreat" then "stop",
        # F2-D10) is decided differently each time, so the greedy player never loops: the actions already taken
        # there are left out while others remain.
        if state.turn != self._turn:
            self._turn, self._tried = state.turn, {}
        key = repr((state.phase, state.step, state.stack, state.sold, state.loc, state.onroad, state.captor,
                    state.cash, state.assaults, state.dice))
        tried = self._tried.setdefault(key, set())
        fresh = [a for a in legal if a not in tried] or legal
        action = self.best(state, fresh)[0]
        tried.add(action)
        return action

    def best(self, state, legal: list[int], depth: int = 1) -> tuple[int, float]:
        """The best action of ``legal`` and its value (ties: the lowest action number)."""
        seat = state.current_player()
        best_a, best_v = legal[0], float("-inf")
        for a in legal:
            v = self.value(state, seat, a, depth)
            if v > best_v:
                best_a, best_v = a, v
        return best_a, best_v

    def value(self, state, seat: int, action: int, depth: int) -> float:
        s = state.clone()
        s.apply_action(action)
        if depth < CONTINUATION_DEPTH and not s.is_terminal() and s.current_player() == seat:
            nxt = s.legal_actions()
        else:
            nxt = []
        if nxt and nxt[0] != END:  # the middle of a compound choice: a decision where "end" is not offered
            if len(nxt) > MAX_CHILDREN:
                step = len(nxt) / MAX_CHILDREN
                nxt = [nxt[int(i * step)] for i in range(MAX_CHILDREN)]
            return self.best(s, nxt, depth + 1)[1]
        return evaluate(s, seat)


def easy_bot(seed: int = 0, epsilon: float = 0.6) -> Fief2GreedyBot:
    """The ``easy`` level: greedy, with 60% of its decisions played at random (as Feudo's easy)."""
    bot = Fief2GreedyBot(seed, epsilon=epsilon)
    bot.name = "easy"
    return bot


def medium_bot(seed: int = 0) -> Fief2GreedyBot:
    """The ``medium`` level: greedy."""
    bot = Fief2GreedyBot(seed)
    bot.name = "medium"
    return bot
