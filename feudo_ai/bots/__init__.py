"""Bots behind one interface (:class:`Bot`): random, greedy, the search bots and the difficulty levels, made
by name with :func:`make_bot`."""

from .base import AdviceBot, Bot, RandomBot
from .registry import BOTS, LEVELS, bot_parameters, make_bot, parse_bot_spec, register

__all__ = ["Bot", "RandomBot", "AdviceBot", "BOTS", "LEVELS", "bot_parameters", "make_bot", "parse_bot_spec",
           "register"]
