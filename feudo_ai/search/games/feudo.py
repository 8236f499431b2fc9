"""Feudo's adapter of the search (:class:`~feudo_ai.search.games.base.GameAdapter`): the seat's view of an
:class:`engine.State`, ``CoreState`` or observation (:mod:`feudo_ai.search.position`), the compiled game
(:class:`feudo_ai._feudo_game.FeudoGame` over the compiled core), the beliefs about the opponents' hidden
selections (R6), and the whole secret selection as one decision (its picks may take several searches)."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from engine.state import Game, Phase, State

from feudo_ai.settings import Evaluation

from ..answer import CardBelief, PlannedAction
from ..position import PreparedPosition, check_to_act, prepare, prepare_root

__all__ = ["FeudoAdapter", "FEUDO", "belief_list"]


def belief_list(game: Game, seat: int, raw: Mapping[int, Mapping[str, list[float]]], root: State,
                selected: list[int]) -> tuple[CardBelief, ...]:
    """Labelled beliefs of the opponents with a hidden selection in the searched root (``raw``: per opponent,
    P(Army Card t selected) and P(Trading Card c selected) over the worlds drawn; ``selected``: the root's
    observation's count of cards each player has selected)."""
    out = []
    army = game.ruleset.army
    trading = game.ruleset.trading_cards
    for q in sorted(raw):
        if q == seat or not (root.sel_done[q] or selected[q] > 0):
            continue  # nothing selected yet: nothing hidden to believe about
        for t, pr in enumerate(raw[q]["army"]):
            if root.army_held[q][t] and not root.revealed[q][t]:
                out.append(CardBelief(q, "army", t, army[t].name, float(pr)))
        seen = set()
        for c, pr in enumerate(raw[q]["trade"]):
            # cards of equal value are one choice (the sampler draws distinct values): merge them
            if root.trade_held[q][c] and not root.trade_revealed[q] and trading[c] not in seen:
                seen.add(trading[c])
                same = sum(float(raw[q]["trade"][d]) for d in range(len(trading)) if trading[d] == trading[c])
                out.append(CardBelief(q, "trading", c, f"{trading[c]} shillings", same))
    return tuple(out)


class FeudoAdapter:
    """Feudo behind the search's Python side (see the module)."""

    name = "feudo"
    backends = ("c", "python")

    def owns(self, position: Any) -> bool:
        return True  # the default game: anything not claimed by another adapter is validated as Feudo's

    def prepare(self, position: Any, seat: int | None) -> PreparedPosition:
        return prepare(position, seat)

    def check_to_act(self, position: Any, seat: int | None) -> int:
        return check_to_act(position, seat)

    def search_game(self, prepared: PreparedPosition, opts) -> Any:
        from feudo_ai import _feudo_game  # compiled; only the C backend asks for it

        value, evaluation = None, str(opts.evaluation)
        if opts.evaluation == Evaluation.LEARNED:
            from feudo_ai.experimental.value import c_model  # experimental: only a search that asks for it loads it

            value = c_model()  # the shipped model (feudo_ai/data/value_v1.json), validated once per process
        elif opts.evaluation != Evaluation.HANDMADE:
            from feudo_ai.experimental.value import c_model_file, check_trained_for

            check_trained_for(opts.evaluation, prepared.game.num_players)
            value = c_model_file(opts.evaluation)  # a model file's path: read and validated once per process
            evaluation = Evaluation.LEARNED.value
        return _feudo_game.FeudoGame(prepared.core(), prepared.seat, sampler=str(opts.sampler),
                                     temperature=float(opts.temperature), evaluation=evaluation,
                                     value=value, margin_weight=float(opts.margin_weight),
                                     margin_temperature=float(opts.margin_temperature),
                                     playout_greedy=float(opts.playout_greedy),
                                     handmade_weight=float(opts.handmade_weight),
                                     final_margin_weight=float(opts.final_margin_weight))

    def beliefs(self, prepared: PreparedPosition, game: Any, counts: Sequence[int] | None,
                worlds: int) -> tuple[CardBelief, ...]:
        return belief_list(prepared.game, prepared.seat, game.beliefs(counts, worlds), prepared.root,
                           prepared.selected)

    def unfinished(self, prepared: PreparedPosition, plan: Sequence[int]) -> State | None:
        """The secret selection (R6) is one decision: while the seat still has picks to make after the plan, the
        state where it makes them."""
        if prepared.decision != "selection":
            return None
        state = prepared.root.clone()
        for a in plan:
            state.apply_action(a)
        if state.phase != Phase.SELECT or state.current_player() != prepared.seat:
            return None
        return state

    def after(self, state: State, seat: int) -> PreparedPosition:
        """The prepared position of ``unfinished``'s state (the seat still to pick)."""
        return prepare_root(state, seat)

    def complete(self, state: State, seat: int) -> list[PlannedAction]:
        """A selection cut short (cancelled, out of time) still answers whole: the remaining picks are the first
        legal ones (ascending, as the engine asks for them)."""
        out = []
        while state.phase == Phase.SELECT and state.current_player() == seat:
            a = state.legal_actions()[0]
            out.append(PlannedAction(a, state.action_to_string(a)))
            state = state.clone()
            state.apply_action(a)
        return out


FEUDO = FeudoAdapter()
