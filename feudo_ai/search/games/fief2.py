"""Fief 2's adapter of the search (:class:`~feudo_ai.search.games.base.GameAdapter`).

Hidden information (F46): the other families' hands, the cards they discarded or saw change hands, and a card
offered in a gift between two other families. Everything else is public (F52: the hand counts too). The deck is
lazy (F2-D2: a dealt card is drawn from every card neither in a hand nor in play), so a world is the other
families' hands dealt from the cards the seat cannot see.

- :class:`ObservedFief2Position` is a seat's observation (``state.observation(seat)``), validated;
- :func:`seat_view` builds from it the state the search starts from: the seat's own cards as they are and the
  other families' hands filled with a *placeholder* dealing (the lowest unseen cards, in seat order) that depends
  on the observation only, so the root's legal actions and texts (which read hand counts, never another's cards)
  are the real ones and two positions that differ only in hidden cards give the same root (honesty);
- :func:`deal_hidden_hands` draws one world of the seat's information set: the other families' hands dealt
  uniformly from the unseen cards, hand counts kept, a card the seat saw offered to it (F53.11: the answer is
  pending) kept in the giver's hand. It is the reference of the compiled table's ``determinize``
  (``feudo_ai/_fief2_game.pyx``) and of the belief counters' layout (``[q * C + card]``: worlds where family q
  holds the card);
- one decision is the seat's plan until new information (another family acts, or chance): a compound choice
  (F2-D1: an item then its place, a card then its target, a step's parts) is planned whole.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from engine.errors import StateError

from ..answer import CardBelief
from ..position import SeatObservation

__all__ = ["ObservedFief2Position", "PreparedFief2Position", "Fief2Adapter", "FIEF2", "seat_view", "unseen_cards",
           "deal_hidden_hands", "hand_beliefs", "require", "check_options"]

_EXTRA_FIELDS = ("hand_counts", "deck_count", "seat", "current_player")  # in an observation, not in a state


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _state_types():
    from fief2.state import State  # imported on use: Feudo's searches never load Fief 2

    return State


def _frames():
    from fief2 import state as st

    return st.FR_ANSWER, st.A_GIVE


@dataclass(frozen=True)
class ObservedFief2Position(SeatObservation):
    """A Fief 2 position as one family sees it: the game and ``state.observation(seat)`` (F46). It holds no card
    hidden from ``observation["seat"]``; :func:`seat_view` builds the search's root from it."""

    game: Any  # fief2.Game
    observation: Mapping[str, Any]

    def __post_init__(self) -> None:
        seat = self._checked_seat()
        obs, n = self.observation, self.game.num_players
        hs = self.game.ruleset.hand_size
        counts = obs.get("hand_counts")
        if not isinstance(counts, list) or len(counts) != n or not all(_is_int(c) and 0 <= c <= hs for c in counts):
            raise StateError(f"observation.hand_counts: expected {n} integers in [0, {hs}], got {counts!r:.80}")
        hands = obs.get("hands")
        if not isinstance(hands, list) or len(hands) != n or not all(isinstance(h, list) for h in hands):
            raise StateError(f"observation.hands: expected {n} lists, got {hands!r:.80}")
        for q in range(n):
            if q != seat and hands[q]:
                raise StateError(f"observation.hands[{q}]: another family's hand in seat {seat}'s observation "
                                 f"(F46: only its count is seen)")
        if len(hands[seat]) != counts[seat]:
            raise StateError(f"observation.hand_counts[{seat}]: expected the seat's hand size "
                             f"{len(hands[seat])}, got {counts[seat]}")


def _pinned(stack: Sequence[Sequence[int]], seat: int) -> dict[int, int]:
    """Cards the seat knows to be in another family's hand: a gift offered to it whose answer is pending
    (F11, F53.11: the giver keeps the card until the gift is accepted). {card: family}."""
    fr_answer, a_give = _frames()
    return {fr[4]: fr[1] for fr in stack
            if fr[0] == fr_answer and fr[3] == a_give and fr[2] == seat and fr[1] != seat and fr[4] >= 0}


def unseen_cards(state: Any, seat: int) -> list[int]:
    """The cards ``seat`` cannot place: neither in its hand nor in play (the deck and the other families' hands,
    F46, F2-D2), ascending. Reads ``state``'s public fields and the seat's own hand only."""
    out = set(range(state.game.C))
    out.difference_update(state.hands[seat])
    out.difference_update(state.in_play())
    return sorted(out)


def seat_view(observed: ObservedFief2Position) -> Any:
    """The state the search starts from for the observation's seat (see the module): public fields and the seat's
    own cards as observed, the other families' hands a placeholder dealing that depends on the observation only.

    :raises StateError: an inconsistent observation (naming the field)."""
    State = _state_types()
    obs, seat = observed.observation, observed.seat
    fields_ = {k: v for k, v in obs.items() if k not in _EXTRA_FIELDS}
    view = State.from_dict(fields_, observed.game)
    counts = list(obs["hand_counts"])
    pool = unseen_cards(view, seat)
    pinned = _pinned(view.stack, seat)
    hands: list[list[int]] = [[] for _ in range(view.num_players)]
    for c, q in pinned.items():
        if c not in pool:
            raise StateError(f"observation.stack: the card {c} offered to seat {seat} is not among the unseen cards")
        hands[q].append(c)
        pool.remove(c)
    for q in range(view.num_players):
        if q == seat:
            continue
        need = counts[q] - len(hands[q])
        if need < 0 or need > len(pool):
            raise StateError(f"observation.hand_counts[{q}]: {counts[q]} cards cannot be dealt from the "
                             f"{len(pool) + len(hands[q])} cards seat {seat} cannot see")
        hands[q].extend(pool[:need])
        del pool[:need]
    for q in range(view.num_players):
        if q != seat:
            view.hands[q] = sorted(hands[q])
    view._legal = None
    return view


def deal_hidden_hands(view: Any, seat: int, rng: random.Random, beliefs: list[int] | None = None) -> Any:
    """One world of ``seat``'s information set in ``view`` (a state where the other families' hands may be
    anything of the right sizes, e.g. :func:`seat_view`'s): a copy with those hands dealt uniformly from the cards
    the seat cannot see, each family's hand count kept, a card offered to the seat (pending answer) kept in its
    giver's hand, and a card offered between two other families drawn from its giver's dealt hand. Every hidden
    field is overwritten before any is read, so the world depends only on what the seat may know and ``rng``.

    :param beliefs: None, or ``num_players * C`` counters: ``beliefs[q * C + c]`` is incremented when family q is
        dealt card c (the layout of the compiled table's counters)."""
    w = view.clone()
    n, C = w.num_players, w.game.C
    counts = [len(h) for h in w.hands]
    pinned = _pinned(w.stack, seat)
    for q in range(n):
        if q != seat:
            w.hands[q] = []
            w.discards_seen[q] = []
            w.seen_cards[q] = []
    pool = [c for c in unseen_cards(w, seat) if c not in pinned]
    for c, q in sorted(pinned.items()):
        w.hands[q].append(c)
    for q in range(n):
        if q == seat:
            continue
        need = counts[q] - len(w.hands[q])
        picks = rng.sample(pool, need)
        for c in picks:
            pool.remove(c)
        w.hands[q].extend(picks)
        w.hands[q].sort()
        if beliefs is not None:
            for c in w.hands[q]:
                beliefs[q * C + c] += 1
    fr_answer, a_give = _frames()
    for fr in w.stack:  # a gift between two other families: its card is one of the giver's
        if fr[0] == fr_answer and fr[3] == a_give and seat not in (fr[1], fr[2]) and w.hands[fr[1]]:
            fr[4] = rng.choice(w.hands[fr[1]])
    w._legal = None
    return w


def hand_beliefs(game: Any, seat: int, counts: Sequence[int] | None, worlds: int,
                 hand_counts: Sequence[int]) -> tuple[CardBelief, ...]:
    """Per other family with cards in hand, P(it holds card c) for each card drawn for it in some world
    (``counts[q * C + c]`` over ``worlds``), most likely first."""
    if counts is None or worlds <= 0:
        return ()
    C = game.C
    if len(counts) != game.num_players * C:
        raise ValueError(f"counts: expected {game.num_players * C} counters, got {len(counts)}")
    out = []
    for q in range(game.num_players):
        if q == seat or not hand_counts[q]:
            continue
        row = [(c, counts[q * C + c] / worlds) for c in range(C) if counts[q * C + c] > 0]
        for c, pr in sorted(row, key=lambda x: (-x[1], x[0])):
            out.append(CardBelief(q, "hand", c, game.card_name(c), float(pr)))
    return tuple(out)


@dataclass(frozen=True, eq=False)
class PreparedFief2Position:
    """One family's pending decision in Fief 2, built once (:meth:`Fief2Adapter.prepare`): ``root`` is
    :func:`seat_view`'s state (the seat to act), ``observation`` the seat's observation it was built from."""

    seat: int
    root: Any
    observation: Mapping[str, Any]
    _core: list = field(default_factory=list, repr=False)

    decision = "plan"

    @property
    def game(self) -> Any:
        return self.root.game

    @property
    def hand_counts(self) -> list[int]:
        return list(self.observation["hand_counts"])

    def core(self) -> Any:
        """The root on the compiled Fief 2 core, built once. :raises ImportError: the core is not built."""
        if not self._core:
            try:
                from fief2 import _core
            except ImportError as e:
                raise ImportError(f"fief2._core is not built ({e}); run `python setup.py build_ext --inplace` in "
                                  f"the repository root") from None
            self._core.append(_core.Fief2Core.from_state(self.root))
        return self._core[0]


def require() -> Any:
    """The compiled Fief 2 table's class (:class:`feudo_ai._fief2_game.Fief2Game`, over :mod:`fief2._core`).

    :raises ImportError: it is not built (naming the command that builds it)."""
    try:
        from feudo_ai import _fief2_game
    except ImportError as e:
        raise ImportError(f"feudo_ai._fief2_game is not built ({e}); run `python setup.py build_ext --inplace` in "
                          f"the repository root") from None
    return _fief2_game.Fief2Game


class Fief2Adapter:
    """Fief 2 behind the search's Python side (see the module)."""

    name = "fief2"
    backends = ("c",)

    def owns(self, position: Any) -> bool:
        if isinstance(position, (ObservedFief2Position, PreparedFief2Position)):
            return True
        mod = type(position).__module__ or ""
        return mod == "fief2.state" or mod.startswith("fief2.")

    def check_to_act(self, position: Any, seat: int | None) -> int:
        from fief2.state import CHANCE, TERMINAL

        if isinstance(position, PreparedFief2Position):
            position = position.root
        if isinstance(position, ObservedFief2Position):
            actor = position.observation.get("current_player")
            n = position.game.num_players
        else:
            if not hasattr(position, "current_player"):
                raise ValueError(f"position: expected a Fief 2 State, got {type(position).__name__}")
            actor, n = position.current_player(), position.num_players
        if actor == TERMINAL:
            raise ValueError("position: the game is over, there is nothing to search")
        if actor == CHANCE:
            raise ValueError("position: a chance node (no family decides here)")
        if seat is None:
            return int(actor)
        if not _is_int(seat) or not 0 <= seat < n:
            raise ValueError(f"seat: expected an integer in [0, {n}), got {seat!r}")
        if actor != seat:
            raise ValueError(f"seat: no decision of seat {seat} is pending (family {actor} is to act)")
        return seat

    def prepare(self, position: Any, seat: int | None) -> PreparedFief2Position:
        if isinstance(position, PreparedFief2Position):
            if seat is not None and seat != position.seat:
                raise ValueError(f"seat: the prepared position is seat {position.seat}'s, got {seat!r}")
            return position
        if not isinstance(position, ObservedFief2Position) and not hasattr(position, "observation") \
                and hasattr(position, "to_state"):
            position = position.to_state()  # a compiled core's state (fief2._core.Fief2Core): its reference twin
        seat = self.check_to_act(position, seat)
        if isinstance(position, ObservedFief2Position):
            if seat != position.seat:
                raise ValueError(f"seat: the observation is seat {position.seat}'s, got {seat!r}")
            observed = position
        else:
            observed = ObservedFief2Position.from_state(position, seat)  # F46: nothing hidden goes further
        root = seat_view(observed)
        if root.current_player() != seat:  # pragma: no cover - the observation's own current player
            raise ValueError(f"seat: seat {seat} is not to act in its view")
        return PreparedFief2Position(seat, root, observed.observation)

    def search_game(self, prepared: PreparedFief2Position, opts) -> Any:
        check_options(opts)
        return require()(prepared.core(), prepared.seat, temperature=float(opts.temperature))

    def beliefs(self, prepared: PreparedFief2Position, game: Any, counts: Sequence[int] | None,
                worlds: int) -> tuple[CardBelief, ...]:
        return hand_beliefs(prepared.game, prepared.seat, counts, worlds, prepared.hand_counts)

    def unfinished(self, prepared: PreparedFief2Position, plan: Sequence[int]) -> None:
        return None  # one search plans the whole decision (until new information)

    def after(self, state: Any, seat: int) -> PreparedFief2Position:
        return self.prepare(state, seat)

    def complete(self, state: Any, seat: int) -> list:
        return []  # never unfinished: nothing to complete


FIEF2 = Fief2Adapter()

# Feudo's evaluation and playout settings that Fief 2's table (feudo_ai/_fief2_game.pyx: uniform playouts, the
# hand-made evaluation's softmax at `temperature`, no action prior) does not read, with the value that leaves a
# search as Fief 2 plays it: any other value is refused rather than silently ignored
_NOT_READ = {"playout_greedy": 0.0, "sampler": "uniform", "margin_weight": 0.0, "final_margin_weight": 0.0,
             "evaluation": "handmade", "handmade_weight": 0.0, "prior_weight": 0.0}


def check_options(opts) -> None:
    """:raises ValueError: naming the first setting of ``opts`` that Fief 2's search does not read (see
    :data:`_NOT_READ`) set to anything but its neutral value."""
    for name, neutral in _NOT_READ.items():
        value = getattr(opts, name)
        same = str(value) == neutral if isinstance(neutral, str) else value == neutral  # (choices are str enums)
        if not same:
            raise ValueError(f"{name}: Fief 2's search does not read it (uniform playouts, the hand-made evaluation, "
                             f"no action prior); leave it at {neutral!r}, got {value!r}")
