"""The entrants of a tournament: bots made from their specs, and the checks made before any game.

:func:`make_entrant` turns an entrant spec (``"ismcts:iterations=2000"``, ``"greedy"``, ``"remote:..."``) into a
bot, naming the entrant in the :class:`~feudo_ai.arena.schedule.ArenaError` of a bad one; the runner makes every
game's bots with it. :func:`check_config` makes every entrant and a first game, so that a bad bot, option or rules
file stops a tournament before it starts.
"""

from __future__ import annotations

from engine import DataFileError, FeudoError, load_map, load_ruleset, new_fast_game

from ..bots import make_bot
from .remote import is_remote, make_remote
from .schedule import ArenaError, TournamentConfig


def make_entrant(spec: str, seed: int, check: bool = False, game: str = "feudo"):
    """A bot from an entrant spec; :class:`ArenaError` naming the entrant for a bad one. With ``check``, also
    whatever can be checked before a game (a remote Advisor is reached). ``game``: a game of
    :mod:`feudo_ai.games` (Feudo's entrants may also be remote Advisors)."""
    if game != "feudo":
        from feudo_ai.games import get_game

        try:
            return get_game(game).make_bot(spec, seed, flag=f"--bots: entrant {spec!r}")
        except ValueError as e:
            raise ArenaError(str(e)) from None
    try:
        bot = make_remote(spec, seed) if is_remote(spec) else make_bot(spec, seed)
    except ValueError as e:
        raise ArenaError(f"--bots: entrant {spec!r}: {e}") from None
    if check:
        probe = getattr(bot, "check", None)
        try:
            if callable(probe):
                probe()
        except (OSError, ValueError, RuntimeError) as e:
            raise ArenaError(f"--bots: entrant {spec!r}: {e}") from None
        finally:
            close_entrant(bot)
    return bot


def close_entrant(bot) -> None:
    """Free what a bot holds (a remote bot's channel); bots without ``close`` hold nothing."""
    close = getattr(bot, "close", None)
    if callable(close):
        close()


def check_config(config: TournamentConfig) -> None:
    """Make every entrant and a first game: a bad bot, option or rules file fails here, before any game."""
    if config.game != "feudo":
        from feudo_ai.games import get_game

        for spec in config.bots:
            make_entrant(spec, 0, game=config.game)
        try:
            get_game(config.game).new_state(config.players, config.seed, turn_limit=config.turns)
        except (FeudoError, DataFileError, ValueError) as e:
            raise ArenaError(f"rules: {e}") from None
        return
    for spec in config.bots:
        make_entrant(spec, 0, check=True)
    try:
        ruleset = load_ruleset(config.ruleset).with_options(turns=config.turns,
                                                            virulent_plague=config.virulent or None,
                                                            strategy_only=config.strategy_only or None)
        new_fast_game(ruleset, config.players, seed=config.seed,
                      game_map=load_map(config.map, seed=config.seed), backend=config.engine)
    except (FeudoError, DataFileError, OSError, ValueError) as e:
        raise ArenaError(f"rules: {e}") from None
    except ImportError as e:
        raise ArenaError(f"--engine {config.engine}: {e}") from None
