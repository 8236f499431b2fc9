"""What the search's Python side needs from a game: the :class:`GameAdapter` protocol.

:func:`feudo_ai.advise` and the backends know no rule of any game. A game's adapter (Feudo:
:mod:`feudo_ai.search.games.feudo`; Fief 2: :mod:`feudo_ai.search.games.fief2`) answers for it:

- **the seat's root**: :meth:`GameAdapter.prepare` turns a full state or an observation into the seat's view
  (honesty: nothing hidden from the seat goes further) with the seat to act, validated once;
- **the compiled game**: :meth:`GameAdapter.search_game` fills the game's C table
  (:class:`feudo_ai._game.SearchGame`) from the prepared root and the game's settings;
- **the beliefs**: :meth:`GameAdapter.beliefs` labels the search's belief counters as per-opponent card
  probabilities (:class:`~feudo_ai.search.answer.CardBelief`);
- **one decision**: the search's plan is the seat's principal variation until new information (another player
  acts, or chance), read by the backend from the root's ``action_to_string``/``legal_actions``; a game whose
  decision spans several searches (Feudo's secret selection, R6) says so with :meth:`GameAdapter.unfinished`,
  and :meth:`GameAdapter.complete` ends it when the budget runs out.

A prepared position has ``seat``, ``root`` (a state of the game's reference engine: ``clone``, ``apply_action``,
``legal_actions``, ``action_to_string``, ``current_player``, ``is_chance_node``, ``is_terminal``) and
``decision`` (``"selection"`` or ``"plan"``).
"""

from __future__ import annotations

from typing import Any, Protocol, Sequence

__all__ = ["GameAdapter"]


class GameAdapter(Protocol):
    name: str
    backends: tuple[str, ...]  # the SearchOptions backends that can search this game

    def owns(self, position: Any) -> bool:
        """Whether ``position`` (a state, an observation or a prepared position) is this game's."""

    def prepare(self, position: Any, seat: int | None) -> Any:
        """``seat``'s pending decision, validated and built once (its view only). :raises ValueError: a bad seat
        or a seat with nothing to decide. :raises StateError: an inconsistent position."""

    def check_to_act(self, position: Any, seat: int | None) -> int:
        """The seat of a single search, which must be the player to act. :raises ValueError: otherwise."""

    def search_game(self, prepared: Any, options: Any) -> Any:
        """The compiled game (a :class:`feudo_ai._game.SearchGame`) of ``prepared``'s root, with the game's
        settings of ``options``. :raises ImportError: the game's compiled table is not built."""

    def beliefs(self, prepared: Any, game: Any, counts: Sequence[int] | None, worlds: int) -> tuple:
        """The labelled beliefs (:class:`~feudo_ai.search.answer.CardBelief`) from the workers' summed counters
        (``counts``, ``game.num_beliefs`` of them; None when no worker ran) over ``worlds`` drawn worlds."""

    def unfinished(self, prepared: Any, plan: Sequence[int]) -> Any:
        """After the search's ``plan`` from ``prepared``: the state where the same decision still asks the seat
        for more (search again from it), or None when the decision is whole."""

    def after(self, state: Any, seat: int) -> Any:
        """The prepared position of an :meth:`unfinished` state (the seat still to act)."""

    def complete(self, state: Any, seat: int) -> list:
        """The rest of an unfinished decision without searching (:class:`PlannedAction` s), when the budget is
        spent."""
