"""The bot interface: anything that picks an action for the player to act; the search bots' base.

A bot is called only for its own decisions (never at chance nodes) and must return one of
``state.legal_actions()``. Every bot takes an explicit seed: the same seed gives the same choices.
"""

from __future__ import annotations

import abc
import random
from typing import Callable

from engine import State

from feudo_ai.search import advise


class Bot(abc.ABC):
    """Base class: ``choose(state)`` returns a legal action of ``state.current_player()``."""

    name = "bot"

    def __init__(self, seed: int = 0):
        self.seed = seed
        self.rng = random.Random(seed)

    @abc.abstractmethod
    def choose(self, state: State) -> int:
        """The bot's action for a decision with two or more legal actions."""

    def __call__(self, state: State) -> int:
        legal = state.legal_actions()
        if len(legal) == 1:
            return legal[0]  # decisions with one legal action are never searched
        return self.choose(state)


class RandomBot(Bot):
    """Uniformly random legal actions."""

    name = "random"

    def choose(self, state: State) -> int:
        return self.rng.choice(state.legal_actions())


class AdviceBot(Bot):
    """A bot that plays :func:`feudo_ai.advise`'s answer with its :class:`~feudo_ai.settings.SearchOptions`
    (``options``, set by the subclass; each search seeded from the bot's generator). The seat's whole secret
    selection (R6: one simultaneous decision, sequential in the engine) is decided at its first pick, and the
    next picks follow it: nothing new is seen between them. Any other decision is searched afresh.

    Who runs the bot may set two attributes (both None by default, and then the bot searches exactly as before):
    :attr:`cancel`, a ``threading.Event`` that, set, stops the search under way within milliseconds (its best
    action so far is returned: e.g. a server shutting down); and :attr:`searcher`, a function
    ``searcher(state, seat, options, cancel) -> Advice`` that runs each search instead of
    :func:`feudo_ai.advise` (e.g. a server's admission and caps, :class:`feudo_ai.matches.runner.BotRunner`)."""

    name = "advice"
    # follow_plan: also follow the planned actions of any other decision (the seat's principal variation until
    # new information arrives: another player acts or chance) instead of searching each one afresh
    follow_plan = False
    fallback_bot: type | None = None  # the bot class that moves when no search is made (see fallback)

    def __init__(self, seed: int = 0):
        super().__init__(seed)
        self.options = None  # a SearchOptions, set by the subclass
        self.last_advice = None
        self._planned: list[tuple[dict, int]] = []  # (the seat's observation before a pick, the pick)
        self.followed = 0  # decisions played from a plan without a search (statistics)
        self.cancel = None  # a threading.Event: set, the search under way stops (see the class)
        self.searcher = None  # runs each search instead of advise (see the class)

    def search_options(self, state: State):
        """The options of the search of the decision in ``state`` (a subclass may budget it, e.g. a game clock;
        None: no search, play :meth:`fallback`)."""
        return self.options

    def choose(self, state: State) -> int:
        seat = state.current_player()
        obs = state.observation(seat)
        for i, (expected, action) in enumerate(self._planned):
            if expected == obs:  # the same decision, further on (forced picks are played without asking)
                self._planned = self._planned[i + 1:]
                self.followed += 1
                self.on_followed(state)
                return action
        opts = self.search_options(state)
        if opts is None:  # no time left to search (a game clock ran out): the fallback's move, no search
            return self.fallback(state)
        opts = opts.replace(seed=self.rng.getrandbits(31))
        if self.searcher is not None:
            advice = self.searcher(state, seat, opts, self.cancel)
        else:
            advice = advise(state, seat, opts, cancel=self.cancel, memory=self.tree_memory(seat, opts))
        self.searched(state, advice)
        self.last_advice = advice
        self._planned = []
        if advice.decision == "selection" or self.follow_plan:
            s = state.clone()
            for i, p in enumerate(advice.plan):
                if i:
                    # The plan was made in the seat's view, where another seat may seem to pass: stop where the
                    # game gives the turn to someone else. That reads nothing hidden in effect: a step is played
                    # only when the seat's observation is the one recorded, which another seat's action changes.
                    if s.current_player() != seat or p.action not in s.legal_actions():
                        break
                    self._planned.append((s.observation(seat), p.action))
                s.apply_action(p.action)
                if s.is_chance_node() or s.is_terminal():
                    break  # (a plan ends at new information; never follow it past chance)
        return advice.best

    def tree_memory(self, seat: int, options):
        """The seat's :class:`~feudo_ai.search.reuse.TreeMemory` for a search with ``options`` (a subclass that
        reuses its trees keeps one; None: every search starts afresh)."""
        return None

    def observe(self, state: State, action: int) -> None:
        """Told by the game's driver before every action of the game (``state`` about to play ``action``); a bot
        that reuses its trees records the action as its seat sees it (:meth:`TreeMemory.observe`). A driver that
        does not call it leaves the bot searching every decision afresh."""

    def searched(self, state: State, advice) -> None:
        """Called after each search (a subclass may book its time)."""

    def on_followed(self, state: State) -> None:
        """Called for a decision played from the plan without a search (a subclass may bank its budget)."""

    def fallback(self, state: State) -> int:
        """The move when :meth:`search_options` gives no search: the :attr:`fallback_bot`'s (set by a subclass;
        no search, milliseconds), else the first legal action."""
        if self.fallback_bot is None:
            return state.legal_actions()[0]
        if getattr(self, "_fallback", None) is None:
            self._fallback = self.fallback_bot(self.seed)
        return self._fallback.choose(state)
