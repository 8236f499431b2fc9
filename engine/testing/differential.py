"""Side-by-side play of the reference engine and the Cython core (the proof that they are the same rules).

Used by ``tests/test_core_differential.py`` (CI: a few thousand games) and ``benchmarks/core_diff.py``
(the long run). A game is driven by the reference: chance through :func:`engine.record.sample_chance`,
decisions by a seeded random policy; every action is applied to both states, and at every step the legal
action lists, the chance outcomes, the current player and (every ``canonical_every`` steps, and always at
the end) the canonical encodings are compared. The first difference raises :class:`Mismatch`, whose message
has the seed, the step, the action history as text and a field-by-field diff of the two encodings.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass

from ..board import load_map
from ..record import sample_chance
from ..ruleset import load_ruleset
from ..state import STATE_FIELDS, Game, Phase, State

#: R20 options exercised by the differential runs (label, with_options keywords).
OPTIONS = (
    ("basic", {}),
    ("virulent", {"virulent_plague": True}),
    ("strategy_only", {"strategy_only": True}),
    ("turns15", {"turns": 15}),
)


class Mismatch(AssertionError):
    """The core and the reference disagree (the message is the full report)."""


@dataclass(frozen=True)
class Config:
    """One kind of differential game."""

    label: str
    players: int
    options: dict
    map_name: str | None = None  # None: the default map assembled with the game's seed

    def game(self, seed: int) -> Game:
        ruleset = load_ruleset().with_options(**self.options)
        return Game(ruleset, _map(self.map_name, seed), self.players)


_MAPS: dict = {}


def _map(name: str | None, seed: int):
    key = (name, seed % 24 if name is None else 0)  # 24 board orders of the default map (R3)
    if key not in _MAPS:
        _MAPS[key] = load_map(name, seed=key[1])
    return _MAPS[key]


def configs() -> list[Config]:
    """Every player count with every optional rule on the default map, and the turn example map (2 players)."""
    out = [Config(f"{p}p-{label}", p, opts) for p in (2, 3, 4) for label, opts in OPTIONS]
    out.append(Config("2p-turn_example", 2, {}, "turn_example"))
    out.append(Config("2p-turn_example-virulent", 2, {"virulent_plague": True}, "turn_example"))
    return out


def choose(state, rng: random.Random, aggressive: bool) -> int:
    """The random policy: uniform, or (aggressive) mostly not passing when attacking, advancing, charming or
    marching, so that more games reach conquests, the King, desperate Barons and tie-breaks."""
    legal = state.legal_actions()
    if aggressive and len(legal) > 1 and legal[0] == 0 and rng.random() < 0.8:
        if state.phase in (Phase.ATTACK, Phase.ADVANCE, Phase.MILADY, Phase.MARCH, Phase.ATTACK_JOIN):
            legal = legal[1:]
    return rng.choice(legal)


def field_diff(ref_canonical: str, core_canonical: str, limit: int = 40) -> str:
    """A readable field-by-field diff of two canonical encodings (nested lists down to the differing item)."""
    a, b = json.loads(ref_canonical), json.loads(core_canonical)
    lines: list[str] = []

    def walk(path: str, x, y) -> None:
        if len(lines) >= limit or x == y:
            return
        if isinstance(x, list) and isinstance(y, list) and len(x) == len(y) and path.count("[") < 2:
            for i, (u, v) in enumerate(zip(x, y)):
                walk(f"{path}[{i}]", u, v)
            return
        lines.append(f"  {path}: reference={json.dumps(x)} core={json.dumps(y)}")

    if len(a) != len(b):
        return f"  different number of fields: reference {len(a)}, core {len(b)}"
    for name, x, y in zip(STATE_FIELDS, a, b):
        walk(name, x, y)
    return "\n".join(lines) if lines else "  (identical)"


def _history_text(game: Game, actions: list[int]) -> str:
    state = State(game)
    parts = []
    for i, a in enumerate(actions):
        try:
            text = state.action_to_string(a)
        except Exception as e:  # pragma: no cover - only while reporting a failure
            text = f"<{e}>"
        parts.append(f"{i}:{a}={text}")
        try:
            state.apply_action(a)
        except Exception:
            parts.append("<replay failed>")
            break
    return ", ".join(parts)


def make_core(state: State):
    """The core state the comparison runs against (a seam for the tests of the report itself)."""
    from .._core import CoreState

    return CoreState.from_reference(state)


def play_side_by_side(config: Config, seed: int, canonical_every: int = 1, aggressive: bool | None = None,
                      max_actions: int = 50_000) -> int:
    """Play one seeded game with both implementations; the number of actions, or :class:`Mismatch`."""
    game = config.game(seed)
    ref = State(game)
    core = make_core(ref)
    rng = random.Random(seed)
    if aggressive is None:
        aggressive = seed % 2 == 1
    actions: list[int] = []

    def fail(what: str, extra: str = "") -> Mismatch:
        return Mismatch(
            f"core and reference differ: {what}\n"
            f"config {config.label} (players={config.players}, options={config.options}, "
            f"map={config.map_name or 'default'}), seed {seed}, aggressive={aggressive}, step {len(actions)}, "
            f"phase {Phase(ref.phase).name}\n"
            f"{extra}"
            f"canonical diff (field by field):\n{field_diff(ref.canonical(), core.canonical())}\n"
            f"actions so far ({len(actions)}): {_history_text(game, actions)}")

    step = 0
    while True:
        if ref.current_player() != core.current_player():
            raise fail("current_player", f"reference {ref.current_player()}, core {core.current_player()}\n")
        legal_ref, legal_core = ref.legal_actions(), core.legal_actions()
        if legal_ref != legal_core:
            raise fail("legal actions", f"reference {legal_ref}\ncore      {legal_core}\n")
        chance = ref.is_chance_node()
        if chance:
            out_ref, out_core = ref.chance_outcomes(), core.chance_outcomes()
            if out_ref != out_core:
                raise fail("chance outcomes", f"reference {out_ref}\ncore      {out_core}\n")
        terminal = ref.is_terminal()
        if terminal != core.is_terminal():
            raise fail("is_terminal")
        if terminal or (canonical_every and step % canonical_every == 0):
            if ref.canonical() != core.canonical():
                raise fail("canonical()")
        if terminal:
            if ref.returns() != core.returns():
                raise fail("returns", f"reference {ref.returns()}, core {core.returns()}\n")
            return step
        if step >= max_actions:
            raise fail(f"no end within {max_actions} actions")
        action = sample_chance(ref, rng) if chance else choose(ref, rng, aggressive)
        ref.apply_action(action)
        core.apply_action(action)
        actions.append(action)
        step += 1


def replay_core_playout(config: Config, seed: int, playout_seed: int) -> int:
    """A game chosen by the core's own C random playout, replayed through the reference: every action must be
    legal there, with the same legal lists on the way and the same final position. Returns the length."""
    from .._core import CoreState

    game = config.game(seed)
    ref = State(game)
    core = CoreState.from_reference(ref)
    actions = core.random_playout_actions(playout_seed)
    for i, a in enumerate(actions):
        if ref.legal_actions() != core.legal_actions():
            raise Mismatch(f"{config.label} seed {seed} playout {playout_seed}: legal actions differ at step {i}\n"
                           f"{field_diff(ref.canonical(), core.canonical())}\n"
                           f"actions: {_history_text(game, actions[:i])}")
        ref.apply_action(a)
        core.apply_action(a)
    if not ref.is_terminal() or ref.canonical() != core.canonical():
        raise Mismatch(f"{config.label} seed {seed} playout {playout_seed}: final positions differ\n"
                       f"{field_diff(ref.canonical(), core.canonical())}")
    return len(actions)
