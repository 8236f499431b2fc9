"""The Fief 2 search bots: ``ismcts`` (MO-ISMCTS) and ``pimc`` (determinized UCT) of ``--game fief2``.

They are Feudo's search bots (:mod:`feudo_ai.bots.search_bots`) on another game: each plays
:func:`feudo_ai.advise`'s answer (the position's game adapter, :mod:`feudo_ai.search.games.fief2`, builds the
seat's view and the compiled table :mod:`feudo_ai._fief2_game`) with the settings of its named profile
(``fief2-product``, ``fief2-pimc`` in ``feudo_ai/data/profiles.json``) resolved by
:func:`feudo_ai.settings.resolve`, the spec's parameters as overrides (the same vocabulary: ``iterations``,
``seconds``, ``c``, ``playout_turns``, ``temperature``, ...). A decision's plan (the seat's actions until new
information: a compound choice of F2-D1 is one plan) is followed without searching again; out of game-clock
time the greedy player moves.
"""

from __future__ import annotations

from feudo_ai.search.games.fief2 import check_options, require

from .fief2_bots import Fief2GreedyBot
from .search_bots import ISMCTSBot


class Fief2ISMCTSBot(ISMCTSBot):
    """Bot "ismcts" of Fief 2: the C MO-ISMCTS with the ``fief2-product`` profile (playouts to the end of the
    turn, then the hand-made evaluation's softmax). Parameters as Feudo's ``ismcts`` (settings by name,
    ``follow_plan``, ``bank``, ``game_seconds``). :raises ImportError: the Fief 2 table is not built."""

    name = "ismcts"
    profile = "fief2-product"
    fallback_bot = Fief2GreedyBot

    def __init__(self, seed: int = 0, **params):
        require()
        super().__init__(seed, **params)
        check_options(self.options)  # fail at construction, not at the first decision

    def picks_ahead(self, state) -> int:
        return 0  # every Fief 2 decision is planned by one search (no secret selection)


class Fief2PIMCBot(Fief2ISMCTSBot):
    """Bot "pimc" of Fief 2: determinized UCT (profile ``fief2-pimc``: worlds sampled from the seat's
    observation, plain UCT on each), the same playouts and evaluation as "ismcts"; frozen settings, every
    decision searched afresh."""

    name = "pimc"
    profile = "fief2-pimc"
    follow_plan = False
    bank = False
    frozen = True


HARD_ITERATIONS = 300  # the ``hard`` level's search budget a decision


def hard_bot(seed: int = 0, **params) -> Fief2ISMCTSBot:
    """The ``hard`` level: ``ismcts`` at :data:`HARD_ITERATIONS` iterations a decision (docs/fief2-bots.md,
    "Strength": measured against ``medium``)."""
    bot = Fief2ISMCTSBot(seed, **{"iterations": HARD_ITERATIONS, **params})
    bot.name = "hard"
    return bot


def max_bot(seed: int = 0, **params) -> Fief2ISMCTSBot:
    """The ``max`` level: ``ismcts`` as the product plays it (profile ``fief2-product``: 1,000 iterations a
    decision; docs/fief2-bots.md, "Strength": measured against ``hard``)."""
    bot = Fief2ISMCTSBot(seed, **params)
    bot.name = "max"
    return bot


hard_bot.target = max_bot.target = Fief2ISMCTSBot  # type: ignore[attr-defined]  # their parameters are ismcts's
