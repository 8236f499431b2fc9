"""The state-loader fuzz run, meant to run in a subprocess (see tests/test_state_fuzz.py).

    python tests/fuzz_states.py EXAMPLES SEED

Hypothesis mutates valid states taken from seeded random games (wrong lengths, extreme integers, wrong
types, deleted and extra fields, shuffled phases, negative cursors, JSON-level damage) and feeds each one to
``State.from_json`` and to the core. A mutated state is either refused with a :class:`StateError` whose
message starts with a field path, or it loads, and then the reference and the core agree on ``canonical()``,
the player to act and the legal actions, a random playout finishes on both, and a 50-iteration C search
(feudo_ai.advise) does not crash at a decision node. Any other outcome (an exception, a disagreement) fails the Hypothesis
property and the process exits non-zero; a crash of the C code kills this process, never pytest.

Prints one JSON line: examples tried, how many loaded, and the rejections tallied by field path.
"""

from __future__ import annotations

import copy
import json
import random
import re
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from engine import StateError, load_ruleset, new_game, sample_chance  # noqa: E402
from engine.core import CoreState  # noqa: E402
from engine.state import STATE_FIELDS, State  # noqa: E402

EXTREME_INTS = [-2**63, -2**31, -129, -128, -3, -2, -1, 0, 1, 2, 3, 7, 15, 16, 17, 63, 64, 65, 100, 101, 127, 128,
                129, 255, 256, 2**15, 2**16, 2**31 - 1, 2**31, 2**63, 10**20]
JUNK = [None, True, False, "x", "", 1.5, float("inf"), [], {}, [[]], {"a": 1}, [True], ["0"]]
LENGTHS = [0, 1, 2, 3, 4, 5, 15, 16, 17, 63, 64, 65, 100, 127, 128, 129, 300]
FIELD_RE = re.compile(r"^[A-Za-z_][^:\n]*: ")  # "state.won[3][2]: ...", 'state."cursor ": ...', "format: ..."


def base_documents() -> list[dict]:
    """Valid states of seeded random games (every phase, several options and player counts)."""
    docs = []
    configs = [(2, {}), (3, {"virulent_plague": True}), (4, {}), (3, {"strategy_only": True}), (2, {"turns": 12})]
    for g, (players, opts) in enumerate(configs):
        state = new_game(load_ruleset().with_options(**opts), players=players, seed=100 + g)
        rng = random.Random(100 + g)
        step = 0
        while True:
            if step % 23 == 0 or state.is_terminal():
                docs.append(json.loads(state.to_json()))
            if state.is_terminal():
                break
            action = sample_chance(state, rng) if state.is_chance_node() else rng.choice(state.legal_actions())
            state.apply_action(action)
            step += 1
    return docs


BASES = base_documents()
TALLY: Counter = Counter()
COUNTS = Counter()


def _value(data, like):
    kind = data.draw(st.sampled_from(["int", "junk", "list_of_ints", "bool"]))
    if kind == "int":
        return data.draw(st.sampled_from(EXTREME_INTS) | st.integers(-300, 300))
    if kind == "junk":
        return data.draw(st.sampled_from(JUNK))
    if kind == "bool":
        return data.draw(st.booleans())
    return data.draw(st.lists(st.sampled_from(EXTREME_INTS) | st.integers(-3, 20), max_size=5))


def _mutate_list(data, v: list):
    how = data.draw(st.sampled_from(["grow", "shrink", "item", "nested", "shuffle"]))
    if how == "grow" or not v:
        n = data.draw(st.sampled_from(LENGTHS))
        fill = data.draw(st.sampled_from(["copy", "int", "junk"]))
        out = list(v)
        while len(out) < n:
            if fill == "copy" and v:
                out.append(copy.deepcopy(v[len(out) % len(v)]))
            elif fill == "int":
                out.append(data.draw(st.integers(-2, 20)))
            else:
                out.append(data.draw(st.sampled_from(JUNK)))
        return out
    if how == "shrink":
        return v[:data.draw(st.integers(0, max(0, len(v) - 1)))]
    i = data.draw(st.integers(0, len(v) - 1))
    out = copy.deepcopy(v)
    if how == "nested" and isinstance(out[i], list):
        out[i] = _mutate_list(data, out[i])
    elif how == "shuffle":
        data.draw(st.randoms(use_true_random=False)).shuffle(out)
    else:
        out[i] = _value(data, out[i])
    return out


def mutate(data, doc: dict):
    """A mutated copy of a state document, or raw text/bytes for JSON-level damage."""
    doc = copy.deepcopy(doc)
    s = doc["state"]
    for _ in range(data.draw(st.integers(0, 3))):  # 0: the valid state itself
        what = data.draw(st.sampled_from(
            ["field_value", "field_list", "delete", "extra", "phase", "negative", "top", "json", "ruleset",
             "flip", "tweak", "flip", "tweak"]))
        field = data.draw(st.sampled_from(STATE_FIELDS))
        if what == "flip":  # plausible damage: one boolean of a per-token table turned over
            name = data.draw(st.sampled_from(["stricken", "entered", "army_held", "march_over", "attacked",
                                              "sel_army", "revealed", "trade_held", "charmed", "king"]))
            if name not in s or not isinstance(s[name], list) or not s[name] or (
                    name != "charmed" and not isinstance(s[name][0], list)):
                if name in s and isinstance(s[name], bool):
                    s[name] = not s[name]
            elif name == "king":
                s["king"] = not s["king"]
            elif name == "charmed":
                p = data.draw(st.integers(0, len(s[name]) - 1))
                s[name][p] = not s[name][p]
            else:
                p = data.draw(st.integers(0, len(s[name]) - 1))
                t = data.draw(st.integers(0, len(s[name][p]) - 1))
                s[name][p][t] = not s[name][p][t]
        elif what == "tweak":  # plausible damage: an integer off by a little
            name = data.draw(st.sampled_from(["vp", "loc", "rest_until", "owner", "merc_moved", "shillings", "turn",
                                              "cursor", "round", "token", "target", "plague_village", "castle"]))
            delta = data.draw(st.sampled_from([-2, -1, 1, 2, 5]))
            if name not in s or isinstance(s[name], bool) or not isinstance(s[name], (int, list)):
                pass
            elif isinstance(s[name], int):
                s[name] += delta
            elif s[name] and isinstance(s[name][0], list) and s[name][0] and all(
                    type(x) is int for x in s[name][0]):
                t = data.draw(st.integers(0, len(s[name][0]) - 1))
                s[name][0][t] += delta
            elif s[name] and type(s[name][0]) is int:
                s[name][0] += delta
        elif what == "field_value":
            s[field] = _value(data, s[field])
        elif what == "field_list":
            s[field] = _mutate_list(data, s[field]) if isinstance(s[field], list) else _value(data, s[field])
        elif what == "delete":
            s.pop(field, None)
        elif what == "extra":
            s[data.draw(st.sampled_from(["extra", "Turn", "vp_logs", "cursor "]))] = _value(data, None)
        elif what == "phase":
            s["phase"] = data.draw(st.integers(0, 13))
        elif what == "negative":
            s[data.draw(st.sampled_from(["cursor", "round", "target", "token", "decider", "turn", "tiebreak",
                                          "shillings", "plague_village", "plague_card"]))] = data.draw(
                st.sampled_from([-1, -2, -3, -129, -2**31]))
        elif what == "top":
            key = data.draw(st.sampled_from(["players", "format", "state", "ruleset", "map", "extra"]))
            if data.draw(st.booleans()):
                doc.pop(key, None)
            else:
                doc[key] = _value(data, None)
        elif what == "ruleset" and isinstance(doc.get("ruleset"), dict):
            key = data.draw(st.sampled_from(["turns", "tiebreak_max_turns", "options", "army", "trading_cards"]))
            doc["ruleset"][key] = _value(data, None)
        elif what == "json":
            text = json.dumps(doc, allow_nan=True)
            damage = data.draw(st.sampled_from(["deep", "utf8", "bigint", "truncate", "nan"]))
            if damage == "deep":
                depth = data.draw(st.sampled_from([40, 1000, 100_000]))
                return text[:-1] + ', "deep": ' + "[" * depth + "]" * depth + "}"
            if damage == "utf8":
                return text.encode("utf-8")[:50] + b"\xff\xfe" + text.encode("utf-8")[50:]
            if damage == "bigint":
                return text.replace('"turn": ', '"turn": ' + "9" * 5000 + ", \"x\": ", 1)
            if damage == "truncate":
                return text[:data.draw(st.integers(0, len(text) - 1))]
            return text.replace('"turn": ', '"turn": NaN, "y": ', 1)
    return doc


def reference_playout(state: State, seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(200_000):
        if state.is_terminal():
            return
        action = sample_chance(state, rng) if state.is_chance_node() else rng.choice(state.legal_actions())
        state.apply_action(action)
    raise AssertionError("reference playout did not finish")


def check_loaded(ref: State, text, seed: int) -> None:
    core = CoreState.from_reference(ref)
    assert CoreState.from_json(text).canonical() == ref.canonical()
    assert core.canonical() == ref.canonical(), "canonical() differs"
    assert core.current_player() == ref.current_player(), "current player differs"
    assert core.legal_actions() == ref.legal_actions(), "legal actions differ"
    if ref.is_chance_node():
        assert [a for a, _ in core.chance_outcomes()] == [a for a, _ in ref.chance_outcomes()]
    assert len(core.random_playout(seed)) == ref.num_players
    reference_playout(ref.clone(), seed)
    if not ref.is_terminal() and not ref.is_chance_node():
        import feudo_ai

        advice = feudo_ai.advise(ref, ref.current_player(), feudo_ai.SearchOptions(iterations=50, seed=seed))
        assert advice.best in ref.legal_actions()


def run(examples: int, seed: int) -> dict:
    @settings(max_examples=examples, database=None, deadline=None, derandomize=False,
              suppress_health_check=list(HealthCheck), print_blob=True)
    @given(st.data())
    def prop(data):
        doc = BASES[data.draw(st.integers(0, len(BASES) - 1))]
        mutated = mutate(data, doc)
        text = mutated if isinstance(mutated, (str, bytes)) else json.dumps(mutated, allow_nan=True)
        COUNTS["tried"] += 1
        try:
            ref = State.from_json(text)
        except StateError as e:
            msg = str(e)
            assert FIELD_RE.match(msg), f"rejection without a field path: {msg!r}"
            TALLY[re.sub(r"\[\d+\]", "[]", msg.split(": ", 1)[0])] += 1
            COUNTS["rejected"] += 1
            return
        COUNTS["loaded"] += 1
        check_loaded(ref, text, data.draw(st.integers(0, 2**32)))

    random.seed(seed)  # Hypothesis seeds from the global generator when not derandomized
    from hypothesis import seed as hseed

    hseed(seed)(prop)()
    return {"tried": COUNTS["tried"], "loaded": COUNTS["loaded"], "rejected": COUNTS["rejected"],
            "bases": len(BASES), "rejections_by_field": dict(TALLY.most_common())}


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    s = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    print(json.dumps(run(n, s)))
