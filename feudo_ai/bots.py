"""Bots: anything that picks an action for the player to act. One interface, many players.

A bot is called only for its own decisions (never at chance nodes) and must return one of
``state.legal_actions()``. Every bot takes an explicit seed: the same seed gives the same choices.
"""

from __future__ import annotations

import abc
import random
from typing import Callable

from engine import State


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
    """A bot that plays :func:`feudo_ai.advise`'s answer with its :class:`~feudo_ai.advice.SearchOptions`
    (``options``, set by the subclass; each search seeded from the bot's generator). The seat's whole secret
    selection (R6: one simultaneous decision, sequential in the engine) is decided at its first pick, and the
    next picks follow it: nothing new is seen between them. Any other decision is searched afresh."""

    name = "advice"
    # follow_plan: also follow the planned actions of any other decision (the seat's principal variation until
    # new information arrives: another player acts or chance) instead of searching each one afresh
    follow_plan = False

    def __init__(self, seed: int = 0):
        super().__init__(seed)
        self.options = None  # a SearchOptions, set by the subclass
        self.last_advice = None
        self._planned: list[tuple[dict, int]] = []  # (the seat's observation before a pick, the pick)
        self.followed = 0  # decisions played from a plan without a search (statistics)

    def search_options(self, state: State):
        """The options of the search of the decision in ``state`` (a subclass may budget it, e.g. a game clock;
        None: no search, play :meth:`fallback`)."""
        return self.options

    def choose(self, state: State) -> int:
        from .advice import advise

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
        advice = advise(state, seat, opts.replace(seed=self.rng.getrandbits(31)))
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

    def searched(self, state: State, advice) -> None:
        """Called after each search (a subclass may book its time)."""

    def on_followed(self, state: State) -> None:
        """Called for a decision played from the plan without a search (a subclass may bank its budget)."""

    def fallback(self, state: State) -> int:
        """The move when :meth:`search_options` gives no search: the greedy bot's (no search, milliseconds)."""
        if getattr(self, "_fallback", None) is None:
            from .greedy import GreedyBot

            self._fallback = GreedyBot(self.seed)
        return self._fallback.choose(state)


def _lazy(module: str, cls: str) -> Callable[..., Bot]:
    """A factory importing its bot module on first use (the bot modules import this one)."""

    def target() -> type:
        import importlib

        return getattr(importlib.import_module(f"feudo_ai.{module}"), cls)

    def factory(seed: int = 0, **params) -> Bot:
        return target()(seed, **params)

    factory.__name__ = cls
    factory.target = target  # type: ignore[attr-defined]  # the class, for its parameter names
    return factory


def bot_parameters(base: str) -> list[str] | None:
    """The parameter names a bot takes after its name (None: any, the bot takes ``**kwargs``)."""
    import inspect

    factory = BOTS[base]
    cls = factory.target() if hasattr(factory, "target") else factory
    names = []
    for p in list(inspect.signature(cls).parameters.values())[1:]:  # the first is the seed
        if p.kind == p.VAR_KEYWORD:
            return None
        if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
            names.append(p.name)
    return names


BOTS: dict[str, Callable[..., Bot]] = {
    "random": RandomBot,
    "greedy": _lazy("greedy", "GreedyBot"),
    # the searches in C over the Cython core (feudo_ai/fast_search.py): the strong players
    "ismcts": _lazy("fast_search", "ISMCTSBot"),
    "ismcts-v1": _lazy("fast_search", "ISMCTSV1Bot"),  # the ismcts of before issue 14, frozen (a baseline)
    "pimc": _lazy("fast_search", "PIMCBot"),
    # the same algorithms in readable Python (feudo_ai/ismcts.py): references, about 50x slower
    "ismcts-py": _lazy("ismcts", "PyISMCTSBot"),
    "pimc-py": _lazy("ismcts", "PyPIMCBot"),
}


# Difficulty levels (issue 14): named bots for front-ends, each beating the one below at a measured rate
# (docs/search.md "Difficulty levels"). The search levels' budgets are iterations per searched decision, so a
# level plays the same on any machine; parameters given after a level's name override its own (``hard:threads=2``).
# hard keeps the plain playouts and the sharp evaluation it was measured with: 300 iterations of them still beat
# the greedy player. max is the product's own search (the "ismcts" bot's greedy playouts, their horizon by the
# game's players, and its wide margin in 4-player games) at
# 10,000 iterations, twice the default "ismcts"'s, under a second a decision; it beat the max of before (30,000
# plain iterations), which the default "ismcts" itself outplays (docs/search.md, "Difficulty levels").
LEVELS: dict[str, str] = {
    "easy": "greedy:epsilon=0.6",  # the greedy player, six decisions in ten at random
    "medium": "greedy",  # the one-ply heuristic player: no search, instant
    "hard": "ismcts:iterations=300:c=0.2:exp3_gamma=0.15:playout_greedy=0:playout_turns=0:margin_weight=0",
    "max": "ismcts:iterations=10000:c=0.2:exp3_gamma=0.15:playout_greedy=1",
}


def _level(level: str) -> Callable[..., Bot]:
    def factory(seed: int = 0, **params) -> Bot:
        base, own = parse_bot_spec(LEVELS[level])
        bot = BOTS[base](seed, **{**own, **params})
        bot.name = level
        return bot

    factory.__name__ = f"level_{level}"
    def target() -> type:
        base = BOTS[parse_bot_spec(LEVELS[level])[0]]
        return base.target() if hasattr(base, "target") else base

    factory.target = target  # type: ignore[attr-defined]
    return factory


for _name in LEVELS:
    BOTS[_name] = _level(_name)


def register(name: str, factory: Callable[..., Bot]) -> None:
    BOTS[name] = factory


def _parse_value(text: str):
    low = text.lower()
    if low in ("true", "yes", "on"):
        return True
    if low in ("false", "no", "off"):
        return False
    if low in ("none", "null"):
        return None
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    return text


def parse_bot_spec(spec: str) -> tuple[str, dict]:
    """``"ismcts:iterations=2000:playout=random"`` -> ("ismcts", {"iterations": 2000, "playout": "random"}).

    Parameters follow the name, each ``key=value``, separated by ``:`` (``;`` also accepted), so that a spec
    never contains the comma that separates seats in ``feudo selfplay --bots``.
    """
    parts = [x for x in str(spec).replace(";", ":").split(":")]
    name, params = parts[0].strip(), {}
    for item in parts[1:]:
        item = item.strip()
        if not item:
            continue
        if "=" not in item:
            raise ValueError(f"bot {spec!r}: expected key=value parameters after the name, got {item!r}")
        key, value = item.split("=", 1)
        params[key.strip()] = _parse_value(value.strip())
    return name, params


def make_bot(name: str, seed: int) -> Bot:
    """A bot by spec (see :data:`BOTS` and :func:`parse_bot_spec`); ValueError naming the known bots for an
    unknown one, or the bad parameter for a bad one."""
    base, params = parse_bot_spec(name)
    if base not in BOTS:
        raise ValueError(f"unknown bot {base!r}; known bots: {', '.join(sorted(BOTS))}")
    try:
        known = bot_parameters(base)
    except ImportError as e:  # a C search whose extension is not built
        raise ValueError(f"bot {name!r}: {e}") from None
    for key in params:
        if known is not None and key not in known:
            raise ValueError(f"bot {name!r}: {base} has no parameter {key}; known: {', '.join(known) or 'none'}")
    try:
        bot = BOTS[base](seed, **params)
    except TypeError as e:
        raise ValueError(f"bot {name!r}: bad parameters ({e})") from None
    except ImportError as e:  # a C search whose extension is not built
        raise ValueError(f"bot {name!r}: {e}") from None
    if params:
        bot.name = str(name)
    return bot
