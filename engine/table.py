"""What may come next at a real table, as one seat knows the game (R6, R7, R22).

A companion follows a game played on the physical board: a person enters each event as it happens there, and
the position is a :class:`~engine.history.SeatReplay` of that seat's log, whose other seats' unrevealed picks are
placeholders. What the person may enter next is then not just the replay's legal actions:

- another seat's Strategy pick is secret: one hidden entry, never a card (R6, R22);
- another seat may reveal any Army Card it holds face down, whatever the placeholders hold (the replay repairs
  them when the card is revealed, R7);
- an action may turn over Trading Cards (R7, R9): the seat's own is known, another seat's is what the person sees
  at the table, any card value that seat still holds. One action may turn over several (a card that pays nothing
  gives no march decision, so the next is turned over at once), so each card's value may change what follows:
  every consistent sequence of values is one possible entry.

:func:`next_entries` lists these entries, each one the replay accepts. The
terminal companion (``feudo companion``) and the Advisor's ``LegalActions`` (``include_next_entries``, the web
companion) use it.
"""

from __future__ import annotations

from typing import Iterator

from .errors import IllegalActionError
from .history import Entry, HistoryError, SeatReplay
from .serialize import state_from_dict
from .state import Phase, State

__all__ = ["next_actions", "next_entries", "probe", "trade_choices", "turned_over"]


def next_actions(state: State, seat: int) -> list[int]:
    """The actions that may come next as ``seat`` knows the game: chance's outcomes, the legal actions, except
    that another seat may reveal any Army Card it holds face down (its selection is unknown to ``seat``)."""
    p = state.current_player()
    if state.phase == Phase.REVEAL and p != seat:
        L = state.game.layout
        return [L.REVEAL + t for t in range(state.game.num_tokens)
                if state.army_held[p][t] and not state.revealed[p][t]]
    if state.is_chance_node():
        return [a for a, _ in state.chance_outcomes()]
    return state.legal_actions()


def probe(state: State, action: int, known: dict[int, int]) -> State:
    """``state`` after ``action`` in a world where the other seats' Trading Cards are ``known`` (as the person saw
    them turned over) and an opponent's revealed Army Card is among its placeholder picks."""
    p, L = state.current_player(), state.game.layout
    d = state.to_dict()
    for q, c in known.items():
        d["sel_trade"][q] = c
    if state.phase == Phase.REVEAL and not d["sel_army"][p][action - L.REVEAL]:
        spare = next(t for t in range(state.game.num_tokens) if d["sel_army"][p][t] and not d["revealed"][p][t])
        d["sel_army"][p][spare], d["sel_army"][p][action - L.REVEAL] = False, True
    out = state_from_dict(state.game, d)
    out.apply_action(action)
    return out


def turned_over(state: State, action: int, known: dict[int, int]) -> list[int]:
    """The players whose Trading Card ``action`` turns over (in order of play), with the other seats' cards
    ``known`` so far. :raises IllegalActionError: the action is impossible with these cards."""
    if not any(state.sel_trade[q] >= 0 and not state.trade_revealed[q] for q in range(state.num_players)):
        return []  # nothing face down: nothing to turn over (and no probe to pay for)
    after = probe(state, action, known)
    return [q for q in (state.order or range(state.num_players))
            if state.sel_trade[q] >= 0 and not state.trade_revealed[q]
            and (after.trade_revealed[q] or after.sel_trade[q] != known.get(q, state.sel_trade[q]))]


def trade_choices(state: State, q: int) -> dict[int, int]:
    """The Trading Cards ``q`` may turn over, one per value: ``{value: card index}`` (the first held card of each
    value, as the TRADE actions name them), highest value first."""
    values = state.game.ruleset.trading_cards
    out = {values[i]: i for i in reversed(range(len(values))) if state.trade_held[q][i]}
    return dict(sorted(out.items(), reverse=True))


def _trade_variants(state: State, seat: int, action: int, known: dict[int, int]) -> Iterator[tuple[tuple[int, int], ...]]:
    try:
        turned = turned_over(state, action, known)
    except IllegalActionError:  # impossible with these cards (e.g. a Mercenary's move the card cannot pay, R7)
        return
    ask = [q for q in turned if q != seat and q not in known]
    if not ask:
        yield tuple((q, known.get(q, state.sel_trade[q])) for q in turned)
        return
    q = ask[0]
    for card in trade_choices(state, q).values():
        yield from _trade_variants(state, seat, action, {**known, q: card})


def next_entries(replay: SeatReplay) -> list[Entry]:
    """Every entry that may come next in the log ``replay`` has read (see the module), as its seat knows the game:
    one per action and consistent sequence of Trading Cards it turns over, each one the replay accepts (a copy of
    it is tried: what the log revealed earlier may rule a card out); another seat's Strategy pick is the one hidden
    entry; none when the game is over."""
    state, seat = replay.state, replay.seat
    if state.is_terminal():
        return []
    p = state.current_player()
    if state.phase == Phase.SELECT and p != seat:
        return [Entry(p, None, (), True)]
    out: list[Entry] = []
    pick = state.phase == Phase.SELECT
    for a in next_actions(state, seat):
        seen = set()
        for trades in _trade_variants(state, seat, a, {}):
            if trades in seen:
                continue
            seen.add(trades)
            entry = Entry(p, a, trades, pick)
            try:
                replay.clone().push(entry)
            except HistoryError:
                continue
            out.append(entry)
    return out
