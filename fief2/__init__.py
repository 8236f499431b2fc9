"""Fief 2: the rules engine (readable reference implementation of the rulebook and rulings F1-F53).

A random-bot game in a few lines::

    >>> import random
    >>> from fief2 import new_game, sample_chance
    >>> st = new_game(players=4)
    >>> rng = random.Random(1)
    >>> while not st.is_terminal():
    ...     if st.is_chance_node():
    ...         st.apply_action(sample_chance(st, rng))
    ...     else:
    ...         st.apply_action(rng.choice(st.legal_actions()))
    >>> sum(st.returns())
    1.0

Or, recorded and replayable: ``rec = fief2.play_random(players=6, seed=3)``; ``rec.replay()`` rebuilds the final
state from ``rec.to_json()``. Pictures: ``str(state)`` (text), ``fief2.render_svg(state, seat=None)`` and
``fief2.render_png(state, path)`` (cairosvg).
"""

from .data import Map, Ruleset, load_map, load_ruleset, map_from_dict, ruleset_from_dict
from .record import GameRecord, play_random, sample_chance
from .render import render_png, render_svg, render_text
from .state import CHANCE, MOB, TERMINAL, Game, State, install_text_picture, new_game

install_text_picture(render_text)

__all__ = ["CHANCE", "MOB", "TERMINAL", "Game", "GameRecord", "Map", "Ruleset", "State", "load_map",
           "load_ruleset", "map_from_dict", "new_game", "play_random", "render_png", "render_svg", "render_text",
           "ruleset_from_dict", "sample_chance"]
