"""The greedy bot: a sensible one-ply heuristic player (no search).

Honest like the searches: it never reads the state it is given beyond ``state.observation(seat)``; it rebuilds a
world from the observation (opponents' hidden selections drawn by a sampler with a seed fixed per decision) and
looks one action ahead with :func:`feudo_ai.evaluate.position_score`, which reads public facts only.

Rules of thumb, per phase:

- Castle (R21): the site closest to the Cities.
- Order (R5): play first (first to march on free Cities, first to strike).
- Selection (R6): the Army Cards of the tokens whose best move improves the position most (tokens that cannot
  move are picked last); the Trading Card with shillings when a Mercenary is picked or when the remaining
  zero cards cannot cover the turns until the refresh, else a zero card.
- Reveal/Move/March/Advance/Milady (R7-R14): the action with the best one-ply evaluation (it avoids the plague
  village's neighbourhood and exposed squares; it marches towards free Cities); a Milady charms the leader.
- Attack (R11): the winnable attack with the largest gain (defenders' VP plus a City's distance); never an attack
  whose full force does not strictly exceed the defence, so never a losing attack; the attack is launched with
  every token that can join.
"""

from __future__ import annotations

import random

from engine.actions import permutations_of
from engine.board import Kind
from engine.state import CASTLE, DEAD, Phase

from feudo_ai.evaluate import position_score
from feudo_ai.sampler import make_sampler

from .base import Bot


def attack_plan(state, p: int, x: int) -> tuple[int, int, bool]:
    """(max force, defence, launchable) of an attack by p on territory x with every token that can join."""
    g, rs = state.game, state.game.ruleset
    tokens = [t for t in range(g.num_tokens) if state._can_attack_with(p, t) and x in g.adjacent[state.loc[p][t]]]
    # R11: the Baron's companion comes with him even when not adjacent to the target itself.
    mate = state._companion(p)
    if mate >= 0 and (g.baron in tokens or mate in tokens):
        for u in (g.baron, mate):
            if u not in tokens and state._can_attack_with(p, u):
                tokens.append(u)
    force = sum(state.number(p, t) for t in tokens)
    bonus = {Kind.WOOD: rs.defence_wood, Kind.VILLAGE: rs.defence_village, Kind.CITY: rs.defence_city}
    defenders = state._defenders(p, x)
    defence = sum(state.number(q, u) for q, u in defenders) + bonus.get(g.kind[x], 0)
    ok = bool(tokens) and (g.kind[x] != Kind.CITY or state._city_attack_allowed(p, tokens))
    return force, defence, ok


def attack_gain(state, p: int, x: int) -> float:
    g = state.game
    gain = float(sum(state.number(q, u) for q, u in state._defenders(p, x)))
    if g.kind[x] == Kind.CITY:
        gain += g.map.distance[state.castle_territory(p)][x]
        if state.owner[x] >= 0:
            gain += 0.5 * g.map.distance[state.castle_territory(state.owner[x])][x]
    return gain


class GreedyBot(Bot):
    """One-ply heuristic player (see module docstring)."""

    name = "greedy"

    def __init__(self, seed: int = 0, sampler: str = "uniform", epsilon: float = 0.0):
        super().__init__(seed)
        self.sampler_name = sampler
        if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float)) or not 0.0 <= epsilon <= 1.0:
            raise ValueError(f"epsilon: expected a probability in [0, 1], got {epsilon!r}")
        self.epsilon = float(epsilon)  # the share of decisions played at random (the "easy" level's mistakes)

    def choose(self, state) -> int:
        if self.epsilon and self.rng.random() < self.epsilon:
            return self.rng.choice(state.legal_actions())
        seat = state.current_player()
        obs = state.observation(seat)
        return self.choose_from_observation(state.game, obs)

    def choose_from_observation(self, game, obs: dict) -> int:
        seat = obs["seat"]
        rng = random.Random(self.rng.getrandbits(64))
        world = make_sampler(self.sampler_name, game, obs).sample(rng)
        return self._decide(world, seat)

    # -------------------------------------------------------------------------------------------------------
    def _decide(self, s, p: int) -> int:
        g, L = s.game, s.game.layout
        legal = s.legal_actions()
        ph = s.phase
        if len(legal) == 1:
            return legal[0]
        if ph == Phase.PLACE_CASTLE:
            dist = g.map.distance

            def site_score(a: int) -> float:
                x = g.map.castle_sites[a - L.PLACE].territory
                ds = sorted(dist[x][c] for c in g.map.cities)
                return ds[0] + 0.5 * ds[1] if len(ds) > 1 else ds[0]
            return min(legal, key=lambda a: (site_score(a), a))
        if ph == Phase.CHOOSE_ORDER:
            active = tuple(q for q in range(g.num_players) if s.active[q])
            perms = permutations_of(active)
            for a in legal:
                if perms[a - L.ORDER][0] == p:
                    return a
            return legal[0]
        if ph == Phase.SELECT:
            return self._select(s, p, legal)
        if ph == Phase.REVEAL:
            return max(legal, key=lambda a: (self._token_gain(s, p, a - L.REVEAL), -a))
        if ph == Phase.MILADY:
            charms = [a for a in legal if L.CHARM <= a < L.CHARM + g.num_players]
            if charms:
                return max(charms, key=lambda a: (s.vp[a - L.CHARM], -a))
            if L.INFECT in legal:
                return L.INFECT
            return L.PASS
        if ph == Phase.ATTACK:
            best, best_gain = L.PASS, 0.0
            for a in legal:
                if a == L.PASS:
                    continue
                x = a - L.ATTACK
                force, defence, ok = attack_plan(s, p, x)
                if ok and force > defence:
                    gain = attack_gain(s, p, x)
                    if gain > best_gain:
                        best, best_gain = a, gain
            return best
        if ph == Phase.ATTACK_JOIN:
            joins = [a for a in legal if a != L.PASS]
            if joins:
                # strongest first; a City attack needs a city-taker, which every join keeps possible
                return max(joins, key=lambda a: (s.number(p, a - L.JOIN), -a))
            return L.PASS
        # MOVE, MARCH, ADVANCE: one-ply evaluation
        return self._best_by_eval(s, p, legal)

    def _best_by_eval(self, s, p: int, legal: list[int]) -> int:
        best, best_v = legal[0], None
        for a in legal:
            c = s.clone()
            c.apply_action(a)
            v = position_score(c, p)
            if best_v is None or v > best_v + 1e-9:
                best, best_v = a, v
        return best

    def _token_gain(self, s, p: int, t: int) -> float:
        """How much the best move of token t (if it were revealed now) improves the evaluation."""
        if s.loc[p][t] == DEAD or not s.can_move(p, t):
            return -1.0
        g = s.game
        if g.token_kind[t] == "mercenary" and s.sel_trade[p] >= 0 and \
                s.shillings_of(p, s.sel_trade[p]) < s.merc_moved[p] + 1:
            return -0.5
        base = position_score(s, p)
        best = 0.0
        old_loc, old_entered = s.loc[p][t], s.entered[p][t]
        for x in s.destinations(p, t, s.army_move_steps(p, t)):
            s.loc[p][t], s.entered[p][t] = x, True
            best = max(best, position_score(s, p) - base)
        s.loc[p][t], s.entered[p][t] = old_loc, old_entered
        return best

    def _select(self, s, p: int, legal: list[int]) -> int:
        g, L, rs = s.game, s.game.layout, s.game.ruleset
        picks = [a for a in legal if a < L.TRADE]
        if picks:
            held = [t for t in range(g.num_tokens) if s.army_held[p][t]]
            need = min(rs.army_cards_selected, len(held))
            scores = {}
            for t in held:
                x = s.loc[p][t]
                if x == DEAD or not s.can_move(p, t) or s.rest_until[p][t] >= s.turn + 0:
                    scores[t] = -10.0 + 0.01 * t
                    continue
                gain = self._token_gain_select(s, p, t)
                scores[t] = gain + 0.05 * s.number(p, t) + (0.3 if x == CASTLE else 0.0)
            want = sorted(held, key=lambda t: (-scores[t], t))[:need]
            for a in picks:  # ascending: the lowest wanted card still to pick
                if a - L.SELECT in want:
                    return a
            return picks[0]
        # Trading Card
        values = rs.trading_cards
        merc = any(s.sel_army[p][t] and g.token_kind[t] == "mercenary" for t in range(g.num_tokens))
        period = len(values)
        turns_left_in_period = period - ((s.turn - 1) % period) if not s.tiebreak else 1
        nonzero = sum(1 for c, v in enumerate(values) if s.trade_held[p][c] and v > 0)
        on_map = any(x >= 0 for x in s.loc[p])
        by_value = sorted(legal, key=lambda a: (values[a - L.TRADE], a))
        if merc or (on_map and nonzero >= turns_left_in_period):
            return by_value[-1]
        return by_value[0]

    def _token_gain_select(self, s, p: int, t: int) -> float:
        g = s.game
        base = position_score(s, p)
        best = 0.0
        old_loc, old_entered = s.loc[p][t], s.entered[p][t]
        steps = s.number(p, t)
        for x in s.destinations(p, t, steps):
            s.loc[p][t], s.entered[p][t] = x, True
            best = max(best, position_score(s, p) - base)
        s.loc[p][t], s.entered[p][t] = old_loc, old_entered
        if g.token_kind[t] == "mercenary":
            best *= 0.8  # needs a paying card
        return best
