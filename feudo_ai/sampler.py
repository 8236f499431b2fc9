"""Determinization: full game states consistent with what one seat may know (rulings.md R22).

A sampler is built from ``state.observation(seat)`` and nothing else, so a search that draws its worlds from
it cannot learn anything the seat does not know: that is what makes the search honest. The only hidden state
of Feudo is each opponent's current secret selection (R6): the Army Cards not yet revealed and the Trading
Card not yet revealed. The plague deck is not stored in a state (a plague draw is a chance node over the kinds
not yet drawn), so the search resolves it with its own seeded generator and there is nothing to sample here.

What a world must respect, per opponent ``q``:

- exactly ``selected_count[q]`` selected Army Cards, all among the cards ``q`` still holds, including every
  card ``q`` has revealed this turn (the observation's ``sel_army[q]`` holds exactly the revealed ones);
- while ``q`` is still picking (SELECT phase, ascending picks), the picks so far are the lowest cards of a full
  selection, so the world can be completed by legal actions;
- a Trading Card only once ``q`` has finished selecting (``sel_done``), among the cards ``q`` holds (one per
  distinct value: identical cards are one choice), unless it is already revealed;
- R7/R16/R22 public evidence: ``merc_moved[q] > 0`` proves that the card's shillings, with the King's Help
  ``q`` would receive, cover every Mercenary moved.

The seat's own selection is copied from the observation unchanged.

Two samplers: :class:`UniformSampler` (every consistent selection equally likely, per legal choice) and
:class:`WeightedSampler` (a simple opponent model: cards of tokens that can move, and of stronger tokens, are
more likely to have been picked; cards with shillings more likely when the player has tokens on the map).
"""

from __future__ import annotations

import random
from typing import Callable, Sequence

from engine.serialize import state_from_dict
from engine.state import DEAD, Game, Phase, State

OBS_EXTRA_KEYS = ("selected_count", "seat", "current_player")


def observation_fields(obs: dict) -> dict:
    """The state fields of an observation (its extra keys stripped), as a fresh dict safe to modify."""
    out = {}
    for k, v in obs.items():
        if k in OBS_EXTRA_KEYS:
            continue
        if isinstance(v, list):
            out[k] = [list(x) if isinstance(x, list) else x for x in v]
        else:
            out[k] = v
    return out


def placeholder_fields(game: Game, obs: dict) -> dict:
    """The state fields of an observation with every card hidden from its seat filled by a placeholder chosen
    from the observation alone (the lowest held, unrevealed Army Cards, as many as the player has selected; the
    highest Trading Card held, which pays whenever any could, R7), so that a position whose player to act is
    another seat (who must have a card to reveal) loads. Only public facts may be read from it."""
    d = observation_fields(obs)
    seat = obs["seat"]
    values = game.ruleset.trading_cards
    for q in range(game.num_players):
        if q == seat:
            continue
        sel = d["sel_army"][q]
        missing = int(obs["selected_count"][q]) - sum(1 for x in sel if x)
        for t in range(game.num_tokens):
            if missing <= 0:
                break
            if d["army_held"][q][t] and not d["revealed"][q][t] and not sel[t]:
                sel[t] = True
                missing -= 1
        if d["sel_done"][q] and not d["trade_revealed"][q] and d["sel_trade"][q] < 0:
            held = [c for c in range(len(values)) if d["trade_held"][q][c]]
            if held:
                d["sel_trade"][q] = max(held, key=lambda c: (values[c], -c))
    return d


def _weighted_choice(rng: random.Random, items: Sequence[int], weights: Sequence[float]) -> int:
    total = sum(weights)
    r = rng.random() * total
    acc = 0.0
    for item, w in zip(items, weights):
        acc += w
        if r < acc:
            return item
    return items[-1]


def _weighted_subset(rng: random.Random, items: list[int], weights: list[float], size: int) -> list[int]:
    """``size`` distinct items, drawn one by one with probability proportional to weight (no replacement)."""
    items, weights = list(items), list(weights)
    out = []
    for _ in range(size):
        i = items.index(_weighted_choice(rng, items, weights))
        out.append(items.pop(i))
        weights.pop(i)
    return out


class Sampler:
    """Base sampler: ``sample(rng)`` returns a :class:`engine.State` consistent with the observation.

    Subclasses only change :meth:`army_weights` and :meth:`trade_weights` (the opponent model).
    """

    name = "base"

    def __init__(self, game: Game, obs: dict):
        self.game = game
        self.obs = obs
        self.seat: int = obs["seat"]
        self.fields = observation_fields(obs)
        # A probe world: public facts such as King's Help are read from it, never a hidden card.
        self._probe = state_from_dict(game, placeholder_fields(game, obs))
        self.plans: list[tuple[int, int, list[int], list[int], bool, list[int]]] = []
        n, k = game.num_players, game.num_tokens
        for q in range(n):
            if q == self.seat:
                continue
            revealed = [t for t in range(k) if obs["revealed"][q][t]]
            count = obs["selected_count"][q]
            if obs["sel_done"][q]:
                # a player done selecting holds min(army_cards_selected, held) selected cards (R6), a public fact
                # (also for the players feudo_ai.advise marks done when a later seat asks out of turn)
                count = min(game.ruleset.army_cards_selected, sum(obs["army_held"][q]))
            hidden_n = count - len(revealed)
            candidates = [t for t in range(k) if obs["army_held"][q][t] and not obs["revealed"][q][t]]
            if hidden_n < 0 or hidden_n > len(candidates):
                raise ValueError(f"observation: player {q} has {count} selected cards, {len(revealed)} revealed "
                                 f"and {len(candidates)} other held cards")
            # Mid-selection (this player is picking now): the picks so far are a prefix of a full selection.
            need = min(game.ruleset.army_cards_selected, sum(obs["army_held"][q]))
            partial = obs["phase"] == Phase.SELECT and not obs["sel_done"][q] and 0 < count < need
            trade_choices: list[int] = []
            if obs["sel_done"][q] and not obs["trade_revealed"][q]:
                trade_choices = self._trade_choices(q)
                if not trade_choices:
                    raise ValueError(f"observation: no Trading Card of player {q} explains the public evidence "
                                     f"(merc_moved={obs['merc_moved'][q]})")
            self.plans.append((q, hidden_n, candidates, revealed, partial, trade_choices))

    def _trade_choices(self, q: int) -> list[int]:
        """Trading Cards q may have selected: one per distinct held value, consistent with merc evidence."""
        values = self.game.ruleset.trading_cards
        held = self.obs["trade_held"][q]
        paid = self.obs["merc_moved"][q]
        seen: set[int] = set()
        out = []
        for c, v in enumerate(values):
            if held[c] and v not in seen:
                seen.add(v)
                if paid > 0 and self._probe.shillings_of(q, c) < paid:
                    continue  # R7: a moved Mercenary proves the card pays for it
                out.append(c)
        return out

    # -- opponent model ------------------------------------------------------------------------------------
    def army_weights(self, q: int, candidates: list[int]) -> list[float]:
        return [1.0] * len(candidates)

    def trade_weights(self, q: int, choices: list[int]) -> list[float]:
        return [1.0] * len(choices)

    # -- sampling ------------------------------------------------------------------------------------------
    def sample_fields(self, rng: random.Random) -> dict:
        """The state dict of one world (a fresh copy; the observation is not modified)."""
        d = observation_fields(self.obs)
        k = self.game.num_tokens
        need_all = self.game.ruleset.army_cards_selected
        for q, hidden_n, candidates, revealed, partial, trade_choices in self.plans:
            if partial:
                # Draw a full selection the player could be completing, keep its lowest `count` cards.
                held = [t for t in range(k) if self.obs["army_held"][q][t]]
                need = min(need_all, len(held))
                full = _weighted_subset(rng, held, self.army_weights(q, held), need)
                picks = sorted(full)[:hidden_n]
            else:
                picks = _weighted_subset(rng, candidates, self.army_weights(q, candidates), hidden_n)
            sel = [False] * k
            for t in revealed + picks:
                sel[t] = True
            d["sel_army"][q] = sel
            if trade_choices:
                d["sel_trade"][q] = _weighted_choice(rng, trade_choices, self.trade_weights(q, trade_choices))
        return d

    def sample(self, rng: random.Random) -> State:
        """One world: a full :class:`engine.State` (validated by ``state_from_dict``)."""
        return state_from_dict(self.game, self.sample_fields(rng))


class UniformSampler(Sampler):
    """Every consistent selection equally likely (Army Cards uniformly; one of the distinct Trading values)."""

    name = "uniform"


class WeightedSampler(Sampler):
    """Opponent model: players pick cards of tokens that can move, stronger tokens, and shilling cards when
    they have tokens on the map to march (a prior; the public evidence constraints still hold exactly)."""

    name = "weighted"

    def army_weights(self, q: int, candidates: list[int]) -> list[float]:
        s = self._probe
        out = []
        for t in candidates:
            if s.loc[q][t] == DEAD or s.rest_until[q][t] >= s.turn or s.charmed[q]:
                out.append(0.25)  # a card that moves nothing is rarely picked
            else:
                out.append(1.0 + 0.25 * s.number(q, t))
        return out

    def trade_weights(self, q: int, choices: list[int]) -> list[float]:
        s = self._probe
        on_map = any(x >= 0 for x in s.loc[q])
        values = self.game.ruleset.trading_cards
        return [(2.0 if values[c] > 0 and on_map else 1.0) for c in choices]


SAMPLERS: dict[str, Callable[[Game, dict], Sampler]] = {"uniform": UniformSampler, "weighted": WeightedSampler}


def make_sampler(name: str, game: Game, obs: dict) -> Sampler:
    if name not in SAMPLERS:
        raise ValueError(f"unknown sampler {name!r}; known: {', '.join(sorted(SAMPLERS))}")
    return SAMPLERS[name](game, obs)


def sample_world(game: Game, obs: dict, rng: random.Random, sampler: str = "uniform") -> State:
    """Convenience: one world consistent with ``obs``."""
    return make_sampler(sampler, game, obs).sample(rng)
