"""The games the tools play: a small registry, name -> :class:`GameEntry`.

An entry says how to make a new game (players, seed, options), which bots play it (made from a spec such as
``greedy`` or ``easy:epsilon=0.5`` with an explicit seed), how a game between callables is played and recorded
(its record format), and the few facts the tools report about a finished game (winners, turns, points). The
``feudo`` commands take ``--game NAME`` (default ``feudo``) and ask the entry; Feudo's own commands keep their
Feudo-specific options (rulesets, maps, the compiled core, the search bots) and paths.

- ``feudo``: the original game (engine/, the searches, hosted matches); its bots are :data:`feudo_ai.bots.BOTS`.
- ``fief2``: Fief 2 (fief2/, rulings F1-F53); bots ``random``, ``greedy``, ``easy``, ``medium``
  (:mod:`feudo_ai.bots.fief2_bots`) and the searches ``ismcts``, ``pimc`` and the levels ``hard``, ``max``
  (:mod:`feudo_ai.bots.fief2_search_bots`, 3-6 players, the compiled core needed); Feudo's other bots are
  refused by name.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

DEFAULT_GAME = "feudo"


@dataclass(frozen=True)
class GameEntry:
    name: str
    title: str
    min_players: int
    max_players: int
    record_format: str
    bots: Mapping[str, Callable[..., Any]]  # bot name -> factory(seed, **params)
    levels: tuple[str, ...]  # the difficulty levels among ``bots``
    new_state: Callable[..., Any]  # (players, seed, **options) -> a state at its first decision
    play: Callable[..., tuple[Any, Any]]  # (choosers, state, seed, on_action=None) -> (record, final state)
    outcome: Callable[[Any], dict]  # final state -> {"winners", "turns", "points"}
    points_name: str = "vp"  # what ``outcome(...)["points"]`` counts
    notes: dict = field(default_factory=dict)

    def check_players(self, players: Any, flag: str = "--players") -> int:
        if isinstance(players, bool) or not isinstance(players, int) or \
                not self.min_players <= players <= self.max_players:
            raise ValueError(f"{flag}: {self.title} is for {self.min_players}-{self.max_players} players, "
                             f"got {players!r}")
        return players

    def make_bot(self, spec: str, seed: int, flag: str = "--bots"):
        """A bot of this game from a spec (``name`` or ``name:key=value:...``); ValueError naming ``flag``, the
        game and its bots for an unknown name (a bot of another game is named as such)."""
        from feudo_ai.bots.registry import factory_parameters, parse_bot_spec

        try:
            base, params = parse_bot_spec(spec)
        except ValueError as e:
            raise ValueError(f"{flag}: {e}") from None
        if base not in self.bots:
            others = [g.title for g in GAMES.values() if g is not self and base in g.bots]
            where = f"{base!r} is a {others[0]} bot, not a {self.title} one" if others else f"unknown bot {base!r}"
            raise ValueError(f"{flag}: {where}; {self.title} bots (--game {self.name}): "
                             f"{', '.join(sorted(self.bots))}")
        factory = self.bots[base]
        known = factory_parameters(factory)
        for key in params:
            if known is not None and key not in known:
                raise ValueError(f"{flag}: bot {spec!r}: {base} has no parameter {key}; known: "
                                 f"{', '.join(known) or 'none'}")
        try:
            bot = factory(seed, **params)
        except (TypeError, ValueError) as e:
            raise ValueError(f"{flag}: bot {spec!r}: {e}") from None
        if params:
            bot.name = str(spec)
        return bot


# ---------------------------------------------------------------------------------------------------------------
# Feudo
# ---------------------------------------------------------------------------------------------------------------
def _feudo_new_state(players: int, seed: int, ruleset=None, map_file=None, backend: str = "auto"):
    from engine import load_map, load_ruleset, new_fast_game

    rs = ruleset if ruleset is not None and not isinstance(ruleset, str) else load_ruleset(ruleset)
    return new_fast_game(rs, players, seed=seed, game_map=load_map(map_file, seed=seed), backend=backend)


def _feudo_play(choosers, state, seed: int, on_action=None):
    from engine import play_game

    return play_game(choosers, state, seed=seed, on_action=on_action)


def _feudo_outcome(final) -> dict:
    return {"winners": list(final.winners), "turns": final.turn, "points": list(final.vp),
            "tiebreak_turns": final.tiebreak}


def _feudo_entry() -> GameEntry:
    from feudo_ai.bots.registry import BOTS, LEVELS

    return GameEntry("feudo", "Feudo", 2, 4, "feudo-record/1", BOTS, tuple(LEVELS), _feudo_new_state,
                     _feudo_play, _feudo_outcome, "vp")


# ---------------------------------------------------------------------------------------------------------------
# Fief 2
# ---------------------------------------------------------------------------------------------------------------
MAX_FIEF2_ACTIONS = 200_000  # random games play about 3,000 actions; a longer game is reported as an error


def fief2_new_state(players: int, seed: int = 0, turn_limit: int | None = None):
    """A new Fief 2 game at its first decision. The setup has no chance (F7: seat 0 picks first), so ``seed``
    only names the game: chance (dealt cards, dice) is drawn from it while the game is played (:func:`fief2_play`).
    ``turn_limit``: F51's limit (default the ruleset's, 30)."""
    from fief2 import new_game

    return new_game(players=players, turn_limit=turn_limit)


def fief2_play(choosers, state, seed: int, on_action=None, max_actions: int = MAX_FIEF2_ACTIONS):
    """Play a Fief 2 game from ``state`` (a new game) to its end: ``choosers[p](state)`` picks seat p's actions,
    chance is drawn from ``random.Random(seed)`` (:func:`fief2.sample_chance`). ``on_action(state, action)`` is
    called before each action (chance included). Returns (:class:`fief2.GameRecord`, final state)."""
    from fief2 import GameRecord, sample_chance

    rng = random.Random(seed)
    record = GameRecord(state.game, seed)
    if state.history_len:
        raise ValueError("fief2_play: expected a new game (no action played yet)")
    st = state
    while not st.is_terminal():
        if len(record.actions) >= max_actions:
            raise RuntimeError(f"game of seed {seed}: no end after {max_actions} actions")
        if st.is_chance_node():
            a = sample_chance(st, rng)
        else:
            a = choosers[st.current_player()](st)
        if on_action is not None:
            on_action(st, a)
        st.apply_action(a)
        record.actions.append(a)
    return record, st


def fief2_outcome(final) -> dict:
    """Winners (F48-F51), turns, and each family's power (F50) at the end."""
    return {"winners": list(final.winners), "turns": final.turn,
            "points": [final.power(f) for f in range(final.num_players)], "tiebreak_turns": 0}


def _fief2_entry() -> GameEntry:
    from feudo_ai.bots.base import RandomBot
    from feudo_ai.bots.fief2_bots import Fief2GreedyBot, easy_bot, medium_bot
    from feudo_ai.bots.fief2_search_bots import Fief2ISMCTSBot, Fief2PIMCBot, hard_bot, max_bot

    bots = {"random": RandomBot, "greedy": Fief2GreedyBot, "easy": easy_bot, "medium": medium_bot,
            "hard": hard_bot, "max": max_bot, "ismcts": Fief2ISMCTSBot, "pimc": Fief2PIMCBot}
    return GameEntry("fief2", "Fief 2", 3, 6, "fief2-game/1", bots, ("easy", "medium", "hard", "max"),
                     fief2_new_state, fief2_play, fief2_outcome, "power")


class _Games(dict):
    """name -> GameEntry, each built on first use (Feudo's bots import the searches)."""

    _makers: dict[str, Callable[[], GameEntry]] = {"feudo": _feudo_entry, "fief2": _fief2_entry}

    def __missing__(self, name: str) -> GameEntry:
        if name not in self._makers:
            raise KeyError(name)
        entry = self._makers[name]()
        self[name] = entry
        return entry

    def values(self):  # every game, built
        return [self[n] for n in self._makers]

    def names(self) -> list[str]:
        return list(self._makers)


GAMES = _Games()
GAME_NAMES = tuple(_Games._makers)


def get_game(name: str | None, flag: str = "--game") -> GameEntry:
    """The entry of a game by name (None: Feudo); ValueError naming ``flag`` and the known games."""
    name = DEFAULT_GAME if name is None else name
    if name not in _Games._makers:
        raise ValueError(f"{flag}: unknown game {name!r}; known games: {', '.join(GAME_NAMES)}")
    return GAMES[name]
