"""The bots by name: :data:`BOTS`, the difficulty levels (:data:`feudo_ai.settings.LEVELS`, named profiles in
``feudo_ai/data/profiles.json``), and :func:`make_bot`, which makes one from a spec such as
``"ismcts:iterations=2000"``."""

from __future__ import annotations

import inspect
from typing import Callable

from feudo_ai.settings import LEVELS

from .base import Bot, RandomBot
from .greedy import GreedyBot
from .search_bots import ISMCTSBot, ISMCTSV1Bot, ISMCTSV2Bot, PIMCBot, PyISMCTSBot, PyPIMCBot

__all__ = ["BOTS", "LEVELS", "bot_parameters", "factory_parameters", "make_bot", "parse_bot_spec", "register"]


def factory_parameters(factory: Callable[..., Bot]) -> list[str] | None:
    """The parameter names a bot factory takes after the seed (None: any, it takes ``**kwargs``); a level's factory
    answers for the class it makes (its ``target``)."""
    cls = getattr(factory, "target", factory)
    names = []
    for p in list(inspect.signature(cls).parameters.values())[1:]:  # the first is the seed
        if p.kind == p.VAR_KEYWORD:
            return None
        if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
            names.append(p.name)
    return names


def bot_parameters(base: str) -> list[str] | None:
    """The parameter names a bot takes after its name (None: any, the bot takes ``**kwargs``)."""
    return factory_parameters(BOTS[base])


BOTS: dict[str, Callable[..., Bot]] = {
    "random": RandomBot,
    "greedy": GreedyBot,
    # the searches in C over the compiled core: the strong players
    "ismcts": ISMCTSBot,
    "ismcts-v1": ISMCTSV1Bot,  # the ismcts frozen at commit bf7be3f (a baseline)
    "ismcts-v2": ISMCTSV2Bot,  # the product's ismcts frozen at commit 675d4c0 (a baseline)
    "pimc": PIMCBot,
    # the same algorithms in readable Python: references, about 50x slower
    "ismcts-py": PyISMCTSBot,
    "pimc-py": PyPIMCBot,
}


def _level(level: str) -> Callable[..., Bot]:
    """The factory of a difficulty level: the bot of its spec, with the caller's parameters over the level's own
    (``hard:threads=2``)."""
    base_name, own = parse_bot_spec(LEVELS[level])

    def factory(seed: int = 0, **params) -> Bot:
        bot = BOTS[base_name](seed, **{**own, **params})
        bot.name = level
        return bot

    factory.__name__ = f"level_{level}"
    factory.target = BOTS[base_name]  # type: ignore[attr-defined]  # the class, for its parameter names
    return factory


def register(name: str, factory: Callable[..., Bot]) -> None:
    BOTS[name] = factory


def parse_value(text: str):
    """A spec parameter's value: true/false, none, an integer, a number, or the text itself."""
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
        params[key.strip()] = parse_value(value.strip())
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


for _name in LEVELS:
    BOTS[_name] = _level(_name)
