"""Perft: counting action sequences, the move-generator check borrowed from chess engines.

``perft(state, d)`` counts the action sequences of length ``d`` from ``state``; chance outcomes count as
branches (each outcome once, whatever its probability) and a sequence that ends the game early counts once.
``divide`` splits the count by first action, which is what to print when a count no longer matches.
Works on any state with the engine API (the reference ``State`` or the core's ``CoreState``).
"""

from __future__ import annotations


def perft(state, depth: int) -> int:
    if depth == 0 or state.is_terminal():
        return 1
    total = 0
    for action in state.legal_actions():
        child = state.clone()
        child.apply_action(action)
        total += perft(child, depth - 1)
    return total


def divide(state, depth: int) -> dict[str, int]:
    """``{"<action int> <action text>": perft of the child}`` for every legal action."""
    out = {}
    for action in state.legal_actions():
        child = state.clone()
        child.apply_action(action)
        out[f"{action} {state.action_to_string(action)}"] = perft(child, depth - 1)
    return out
