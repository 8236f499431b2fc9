"""The one validation layer: everything read from outside the engine passes through here.

Three kinds of input share it -- ruleset files (:mod:`engine.ruleset`), map files (:mod:`engine.board`) and
game states (:mod:`engine.serialize`, game records, and :meth:`engine._core.CoreState.from_reference`) -- so
that a hostile or mistaken document fails the same way everywhere: one exception naming the field path
(``basic.json: army[2].colour: unknown field ...``, ``state.won[3][2]: expected ...``), never a traceback
from deep inside the rules or the C core.

* :func:`parse_json` / :func:`read_json_file` and :class:`Checker` (JSON with its traps closed, typed field
  access) live in :mod:`engine.checker`, below the map and ruleset readers that use them; they are re-exported
  here.
* :func:`check_state_fields` / :func:`check_state`: every field of a position against the core's fixed array
  sizes (:data:`CORE_LIMITS`, the enums of ``engine/_core.pxd``), the rules' real ranges and the cross-field
  invariants of each phase (who may act, cursors in range, turn consistent with phase, the Plague Token on a
  Village, an attack target the attacker may really attack, ...), then asks the reference rules for the
  player to act and the legal actions (or chance outcomes): a non-terminal position with none is refused.
  This part sits above :mod:`engine.state`, whose rules it asks.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any, Mapping

from .board import Kind
from .checker import (MAX_CELL, MAX_INT_DIGITS, MAX_JSON_BYTES, MAX_JSON_DEPTH, Checker, join,  # noqa: F401
                      json_type, parse_json, read_json_file)
from .errors import StateError
from .schema import CHANCE, DEAD, STATE_FIELDS, TERMINAL, Phase
from .state import Game, State

# --------------------------------------------------------------------------------------------------------------
# limits
# --------------------------------------------------------------------------------------------------------------

#: The fixed array sizes of the C core (``engine/_core.pxd``); a state or game beyond them is refused here,
#: before any copy into C. Counters of these arrays are ``int8_t``: a length must stay below 128.
CORE_LIMITS = {
    "MAX_PLAYERS": 4, "MAX_TOKENS": 16, "MAX_TERRITORIES": 128, "MAX_SITES": 128, "MAX_TRADING": 8,
    "MAX_PLAGUE_KINDS": 32, "MAX_HISTORY": 128, "MAX_WON": 64, "MAX_NEIGHBORS": 16,
}
MAX_VP = 100_000  # |victory points|: a game's real scores are in the hundreds; the core keeps int32
MAX_VP_LOG = 100_000  # entries in a state's VP log (a long game logs a few hundred)


# --------------------------------------------------------------------------------------------------------------
# states
# --------------------------------------------------------------------------------------------------------------

def check_game_fits_core(game: "Game") -> None:
    """The game's sizes against the core's fixed arrays (StateError naming the size)."""
    L = CORE_LIMITS
    rs, m = game.ruleset, game.map
    for what, value, limit in (
            ("players", game.num_players, L["MAX_PLAYERS"]), ("ruleset.army", game.num_tokens, L["MAX_TOKENS"]),
            ("map.territories", game.num_territories, L["MAX_TERRITORIES"] - 1),
            ("map.castle_sites", len(m.castle_sites), L["MAX_SITES"]),
            ("ruleset.trading_cards", len(rs.trading_cards), L["MAX_TRADING"]),
            ("ruleset.plague_cards", len(rs.plague_cards), L["MAX_PLAGUE_KINDS"]),
            ("ruleset.turns", rs.turns, L["MAX_HISTORY"] - 1)):
        if value > limit:
            raise StateError(f"{what}: the core supports at most {limit}, this game has {value}")


def check_state_fields(game: "Game", d: Any, path: str = "state") -> dict[str, Any]:
    """Validate the fields of a position of ``game`` (a mapping like :meth:`State.to_dict`); returns them
    (plus ``vp_log``) as fresh plain lists. Any fault raises :class:`StateError` naming the field path."""
    ck = Checker(path, StateError, sep=".")
    fields = STATE_FIELDS
    if not isinstance(d, Mapping):
        raise StateError(f"{path}: expected an object, got {json_type(d)}")
    d = dict(d)
    ck.obj(d, "", fields + ("vp_log",), required=fields)
    rs, m = game.ruleset, game.map
    n, k, T = game.num_players, game.num_tokens, game.num_territories
    sites, trading, kinds = len(m.castle_sites), len(rs.trading_cards), len(rs.plague_cards)
    L = CORE_LIMITS

    # Fast paths check a whole list in one comprehension; only a failing list is walked item by item
    # (for the message naming the item).
    def ints(name: str, v: Any, length: int | None, lo: int, hi: int, max_len: int | None = None) -> list[int]:
        arr = ck.array(v, name, length=length, max_len=max_len)
        if all(type(x) is int and lo <= x <= hi for x in arr):
            return list(arr)
        return [ck.integer(x, f"{name}[{i}]", lo, hi) for i, x in enumerate(arr)]

    def bools(name: str, v: Any, length: int) -> list[bool]:
        arr = ck.array(v, name, length=length)
        if all(type(x) is bool for x in arr):
            return list(arr)
        return [ck.boolean(x, f"{name}[{i}]") for i, x in enumerate(arr)]

    def grid(name: str, v: Any, cols: int, lo: int | None = None, hi: int = 0) -> list[list]:
        """n rows of ``cols`` booleans (``lo`` None) or integers in [lo, hi]."""
        arr = ck.array(v, name, length=n)
        return [ints(f"{name}[{p}]", row, cols, lo, hi) if lo is not None else bools(f"{name}[{p}]", row, cols)
                for p, row in enumerate(arr)]

    def distinct(name: str, values: list[int]) -> None:
        seen: set[int] = set()
        for i, v in enumerate(values):
            if v in seen:
                ck.fail(f"{name}[{i}]", f"{v} appears twice (expected distinct values)")
            seen.add(v)

    # ---- types, lengths and each value's own range ----------------------------------------------------
    max_turn = rs.turns + rs.tiebreak_max_turns
    out: dict[str, Any] = {}
    out["turn"] = turn = ck.integer(d["turn"], "turn", 0, max_turn)
    out["phase"] = phase = ck.integer(d["phase"], "phase", 0, len(Phase) - 1)
    out["tiebreak"] = tiebreak = ck.integer(d["tiebreak"], "tiebreak", 0, rs.tiebreak_max_turns)
    out["active"] = active = bools("active", d["active"], n)
    out["order"] = order = ints("order", d["order"], None, 0, n - 1, max_len=n)
    out["castle"] = castle = ints("castle", d["castle"], n, -1, sites - 1)
    out["placed"] = placed = ints("placed", d["placed"], None, 0, n - 1, max_len=n)
    out["decider"] = decider = ck.integer(d["decider"], "decider", -1, n - 1)
    out["vp"] = vp = ints("vp", d["vp"], n, -MAX_VP, MAX_VP)
    out["loc"] = loc = grid("loc", d["loc"], k, DEAD, T - 1)
    for name in ("stricken", "entered", "army_held", "sel_army", "revealed", "march_over", "attacked"):
        out[name] = grid(name, d[name], k)
    out["rest_until"] = rest = grid("rest_until", d["rest_until"], k, 0, turn + 1)
    out["trade_held"] = trade_held = grid("trade_held", d["trade_held"], trading)
    out["sel_trade"] = sel_trade = ints("sel_trade", d["sel_trade"], n, -1, trading - 1)
    out["sel_done"] = sel_done = bools("sel_done", d["sel_done"], n)
    out["trade_revealed"] = trade_revealed = bools("trade_revealed", d["trade_revealed"], n)
    out["owner"] = owner = ints("owner", d["owner"], T, -1, n - 1)
    out["plague_village"] = village = ck.integer(d["plague_village"], "plague_village", -1, T - 1)
    out["plague_drawn"] = drawn = ints("plague_drawn", d["plague_drawn"], kinds, 0, L["MAX_HISTORY"])
    out["plague_history"] = history = ints("plague_history", d["plague_history"], None, 0, kinds - 1,
                                           max_len=min(rs.turns, L["MAX_HISTORY"] - 1))
    out["plague_card"] = plague_card = ck.integer(d["plague_card"], "plague_card", -1, kinds - 1)
    out["king"] = ck.boolean(d["king"], "king")
    out["charmed"] = charmed = bools("charmed", d["charmed"], n)
    mercs = sum(1 for t in rs.army if t.kind == "mercenary")
    out["merc_moved"] = merc_moved = ints("merc_moved", d["merc_moved"], n, 0, mercs)
    won_raw = ck.array(d["won"], "won", max_len=min(n * k, L["MAX_WON"] - 1))
    won: list[list] = []
    for i, w in enumerate(won_raw):
        f = f"won[{i}]"
        ck.array(w, f, length=4)
        wp = ck.integer(w[0], f"{f}[0]", 0, n - 1)
        wx = ck.integer(w[1], f"{f}[1]", 0, T - 1)
        wt = ints(f"{f}[2]", w[2], None, 0, k - 1, max_len=k)
        if not wt:
            ck.fail(f"{f}[2]", "expected at least one attacking token")
        distinct(f"{f}[2]", wt)
        wb = ck.boolean(w[3], f"{f}[3]")
        if wb != (game.baron in wt):
            ck.fail(f"{f}[3]", f"expected {json.dumps(game.baron in wt)} (whether the Baron is among the tokens)")
        won.append([wp, wx, wt, wb])
    out["won"] = won
    out["cursor"] = cursor = ck.integer(d["cursor"], "cursor", 0, n)
    out["round"] = rnd = ck.integer(d["round"], "round", 0, max(rs.army_cards_selected, n * k))
    out["token"] = token = ck.integer(d["token"], "token", -1, k - 1)
    max_shillings = max(rs.trading_cards) + rs.king_help
    out["shillings"] = shillings = ck.integer(d["shillings"], "shillings", 0, max_shillings)
    out["target"] = target = ck.integer(d["target"], "target", -1, T - 1)
    out["joiners"] = joiners = ints("joiners", d["joiners"], None, 0, k - 1, max_len=k)
    out["advanced"] = advanced = ints("advanced", d["advanced"], None, 0, k - 1, max_len=k)
    out["winners"] = winners = ints("winners", d["winners"], None, 0, n - 1, max_len=n)
    for name in ("order", "placed", "joiners", "advanced", "winners"):
        distinct(name, out[name])
    log = ck.array(d.get("vp_log", []), "vp_log", max_len=MAX_VP_LOG)
    vp_log = []
    for i, e in enumerate(log):
        ck.array(e, f"vp_log[{i}]", length=3)
        vp_log.append((ck.integer(e[0], f"vp_log[{i}][0]", 0, n - 1),
                       ck.integer(e[1], f"vp_log[{i}][1]", -MAX_VP, MAX_VP),
                       ck.string(e[2], f"vp_log[{i}][2]", nonempty=False)))
    out["vp_log"] = vp_log

    # ---- cross-field invariants ------------------------------------------------------------------------
    P = Phase
    setup = phase in (P.CHANCE_PLACER, P.PLACE_CASTLE)
    in_turn = P.SELECT <= phase <= P.ADVANCE  # an order of play exists
    after_select = P.CHANCE_PLAGUE <= phase <= P.ADVANCE
    selected = rs.army_cards_selected
    ph_name = P(phase).name

    # turn, tie-break and phase (R19, R21)
    if setup:
        if turn != 0 or tiebreak != 0:
            ck.fail("turn", f"expected 0 during Castle placement ({ph_name}), got {turn}")
    elif turn < 1:
        ck.fail("turn", f"expected at least 1 in phase {ph_name}, got {turn}")
    elif tiebreak > 0 and turn != rs.turns + tiebreak:
        ck.fail("turn", f"expected {rs.turns + tiebreak} in tie-break turn {tiebreak} ({rs.turns} regular turns)")
    elif tiebreak == 0 and turn > rs.turns:
        ck.fail("turn", f"expected at most {rs.turns} outside the tie-break, got {turn}")
    if phase == P.TERMINAL and turn != rs.turns + tiebreak:
        ck.fail("turn", f"expected {rs.turns + tiebreak} once the game is over, got {turn}")
    plague_turn = rs.has_plague and tiebreak == 0
    if phase == P.CHANCE_PLAGUE and not plague_turn:
        ck.fail("phase", "a plague draw only happens in regular turns of a game with plague (R18, R19, R20)")

    # players taking part (R19)
    nactive = sum(active)
    if tiebreak == 0 and nactive != n:
        ck.fail("active", "expected every player outside the tie-break (R19)")
    if tiebreak > 0 and nactive < 2:
        ck.fail("active", "expected at least two tied players in a tie-break turn (R19)")

    # Castles (R21)
    if len(placed) > n or (setup and len(placed) >= n) or (not setup and len(placed) != n):
        ck.fail("placed", f"expected {'fewer than ' if setup else ''}{n} players in phase {ph_name}, got {len(placed)}")
    for p in range(n):
        if (castle[p] >= 0) != (p in placed):
            ck.fail(f"castle[{p}]", "expected a site exactly for the players in placed")
    boards: dict[int, int] = {}
    for p in placed:
        b = m.castle_sites[castle[p]].board
        if b in boards:
            ck.fail(f"castle[{p}]", f"site {castle[p]} is on the board of player {boards[b]}'s Castle (R21)")
        boards[b] = p

    # order of play (R5)
    if in_turn:
        if sorted(order) != [p for p in range(n) if active[p]]:
            ck.fail("order", f"expected an order of the players taking part in phase {ph_name}, got {order}")
    elif order:
        ck.fail("order", f"expected [] in phase {ph_name}, got {order}")
    if phase == P.CHOOSE_ORDER and (decider < 0 or not active[decider]):
        ck.fail("decider", f"expected a player taking part, got {decider}")

    # secret selection (R6, R7, R9)
    for p in range(n):
        held = [t for t in range(k) if out["army_held"][p][t]]
        sel = [t for t in range(k) if out["sel_army"][p][t]]
        need = min(selected, len(held))
        for t in sel:
            if not out["army_held"][p][t]:
                ck.fail(f"sel_army[{p}][{t}]", "selected an Army Card that is not held")
        for t in range(k):
            if out["revealed"][p][t] and not out["sel_army"][p][t]:
                ck.fail(f"revealed[{p}][{t}]", "revealed an Army Card that was not selected")
        # A seat's public view (R22) hides the others' unrevealed picks: sel_trade -1 and only the revealed Army
        # Cards in sel_army, so a finished selection may show fewer cards than it holds.
        if sel_trade[p] >= 0 and not sel_done[p]:
            ck.fail(f"sel_trade[{p}]", "a Trading Card is selected but sel_done is false")
        if sel_trade[p] >= 0 and not trade_held[p][sel_trade[p]]:
            ck.fail(f"sel_trade[{p}]", "selected a Trading Card that is not held")
        if active[p] and not setup:
            # R4, R19: one card is discarded per turn played, and all come back every len(trading) turns
            period = len(rs.trading_cards)
            played = ((turn - 1) if tiebreak == 0 else (tiebreak - 1)) % period
            want_held = period - played - (1 if phase == P.TERMINAL else 0)
            # Fewer cards than that would leave the player without a card to select before the next refresh (a
            # game that can never end). More is harmless (a player who sat out tie-break turns keeps cards; a
            # position set up by hand may give every card back): at least, not exactly.
            if sum(trade_held[p]) < want_held:
                ck.fail(f"trade_held[{p}]", f"expected at least {want_held} Trading Cards held in turn {turn}, "
                        f"got {sum(trade_held[p])}")
        if len(sel) > need:
            ck.fail(f"sel_army[{p}]", f"expected at most {need} selected Army Cards, got {len(sel)}")
        if trade_revealed[p] and sel_trade[p] < 0:
            ck.fail(f"sel_trade[{p}]", "a revealed Trading Card is public: expected its index, got -1")
        if trade_revealed[p] and not sel_done[p]:
            ck.fail(f"trade_revealed[{p}]", "revealed a Trading Card that was not selected")
        if not active[p] and (sel or sel_done[p] or charmed[p] or merc_moved[p]):
            ck.fail(f"sel_army[{p}]", "a player not taking part in this turn has no selection")
        if after_select and active[p] and not sel_done[p]:
            ck.fail(f"sel_done[{p}]", f"expected true in phase {ph_name} (every player has selected)")
        if not in_turn and (sel or sel_done[p] or trade_revealed[p] or charmed[p] or merc_moved[p]):
            ck.fail(f"sel_done[{p}]" if sel_done[p] else f"sel_army[{p}]",
                    f"expected no selection in phase {ph_name}")
        for t in range(k):
            if loc[p][t] >= 0 and not out["entered"][p][t]:
                ck.fail(f"entered[{p}][{t}]", "a token on the map has entered it (R16)")
            if rest[p][t] > turn + 1:
                ck.fail(f"rest_until[{p}][{t}]", f"expected at most turn + 1 = {turn + 1}")
    if phase == P.SELECT:
        if cursor >= n or not active[cursor]:
            ck.fail("cursor", f"expected a player taking part in SELECT, got {cursor}")
        for p in range(n):
            if active[p] and sel_done[p] != (p < cursor):
                ck.fail(f"sel_done[{p}]", f"players select in seat order (R6); the selector is {cursor}")
            if p != cursor and not sel_done[p] and any(out["sel_army"][p]):
                ck.fail(f"sel_army[{p}]", f"player {p} has not started selecting (the selector is {cursor})")

    # Cities (R11)
    for x, o in enumerate(owner):
        if o >= 0 and game.kind[x] != Kind.CITY:
            ck.fail(f"owner[{x}]", f"only Cities have owners; territory {x} is a {game.kind[x].name.lower()}")

    # plague (R2, R18, R20)
    if rs.has_plague and tiebreak == 0:
        if village < 0 or game.kind[village] != Kind.VILLAGE:
            ck.fail("plague_village", f"expected the Village holding the Plague Token, got {village}")
    elif village != -1:
        ck.fail("plague_village", "expected -1 (no Plague Token " +
                ("in tie-break turns, R19)" if rs.has_plague else "without plague, R20)"))
    if rs.has_plague:
        # one card in each regular turn, drawn after the selection (R18): turn - 1 cards before it, turn after
        expect = 0 if setup else min(turn if phase > P.CHANCE_PLAGUE else turn - 1, rs.turns)
        # at most (a position set up by hand, e.g. a rulebook example, may start without its past draws)
        if len(history) > expect:
            ck.fail("plague_history", f"expected at most one card per regular turn played ({expect}), "
                    f"got {len(history)}")
        last = min(turn, rs.turns)
        shuffle = 1
        for t in range(2, last + 1):
            if (t - 1) % rs.plague_reshuffle_every == 0:
                shuffle = t
        since = Counter(history[shuffle - 1:])
        for c in rs.plague_cards:
            if drawn[c.index] != since.get(c.index, 0):
                ck.fail(f"plague_drawn[{c.index}]", f"expected {since.get(c.index, 0)} (the cards of plague_history "
                        f"since the last reshuffle, turn {shuffle})")
            if drawn[c.index] > c.count:
                ck.fail(f"plague_drawn[{c.index}]", f"expected at most {c.count} (copies in the deck)")
        shows_card = plague_turn and (after_select and phase != P.CHANCE_PLAGUE) or (
            phase == P.TERMINAL and tiebreak == 0)
        want = history[-1] if shows_card and history else -1
        if plague_card != want:
            ck.fail("plague_card", f"expected {want} in phase {ph_name}, got {plague_card}")
        if phase == P.CHANCE_PLAGUE and sum(c.count for c in rs.plague_cards) <= sum(drawn):
            ck.fail("plague_drawn", "expected at least one plague card left to draw")
    else:
        if history or any(drawn) or plague_card != -1:
            ck.fail("plague_history", "expected no plague cards without plague (R20)")

    # the phase's own cursor, round, token, attack and advance fields (R7, R9, R11, R14, R19)
    reveal = phase in (P.REVEAL, P.MOVE, P.MILADY)
    attack = phase in (P.ATTACK, P.ATTACK_JOIN)
    if phase in (P.PLACE_CASTLE, P.CHANCE_PLACER, P.CHANCE_DECIDER, P.CHOOSE_ORDER, P.CHANCE_PLAGUE) and cursor >= n:
        ck.fail("cursor", f"expected a seat in [0, {n - 1}], got {cursor}")
    if phase == P.PLACE_CASTLE and cursor in placed:
        ck.fail("cursor", f"player {cursor} has already placed a Castle")
    if reveal or phase == P.MARCH or attack:
        if cursor >= len(order):
            ck.fail("cursor", f"expected an index into order [0, {len(order) - 1}] in phase {ph_name}, got {cursor}")
    if phase == P.ADVANCE and cursor != len(order):
        ck.fail("cursor", f"expected {len(order)} (every attacker has passed) in ADVANCE, got {cursor}")
    if phase == P.TERMINAL and cursor != 0:
        ck.fail("cursor", f"expected 0 once the game is over, got {cursor}")
    if reveal:
        if rnd >= selected:
            ck.fail("round", f"expected a reveal round in [0, {selected - 1}], got {rnd}")
    elif phase == P.MARCH or attack:
        if rnd != selected:
            ck.fail("round", f"expected {selected} (every Army Card revealed) in phase {ph_name}, got {rnd}")
    elif phase == P.ADVANCE:
        if rnd >= len(won):
            ck.fail("round", f"expected an index into won [0, {len(won) - 1}] in ADVANCE, got {rnd}")
    elif rnd != 0:
        ck.fail("round", f"expected 0 in phase {ph_name}, got {rnd}")
    actor = order[cursor] if (reveal or phase == P.MARCH or attack) else -1
    if phase == P.REVEAL and not any(out["sel_army"][actor][t] and not out["revealed"][actor][t] for t in range(k)):
        ck.fail("cursor", f"player {actor} has no Army Card left to reveal")
    if phase in (P.MOVE, P.MILADY):
        if token < 0 or not out["revealed"][actor][token]:
            ck.fail("token", f"expected a token whose Army Card player {actor} revealed, got {token}")
        if phase == P.MILADY and token != game.milady:
            ck.fail("token", f"expected Milady ({game.milady}) in MILADY, got {token}")
        if loc[actor][token] == DEAD and phase == P.MILADY:
            ck.fail("token", "an eliminated Milady cannot act (R13)")
    elif token != -1:
        ck.fail("token", f"expected -1 in phase {ph_name}, got {token}")
    if phase == P.MARCH:
        if shillings < 1 or not trade_revealed[actor]:
            ck.fail("shillings", f"expected shillings to spend by player {actor}, whose Trading Card is revealed")
    elif shillings != 0:
        ck.fail("shillings", f"expected 0 in phase {ph_name}, got {shillings}")
    if (attack or phase == P.ADVANCE) is False and won:
        ck.fail("won", f"expected [] in phase {ph_name} (won attacks are cleared at the end of the turn)")
    for i, (wp, wx, wt, _) in enumerate(won):
        if not active[wp]:
            ck.fail(f"won[{i}][0]", f"player {wp} does not take part in this turn")
        for j, t in enumerate(wt):
            if not out["attacked"][wp][t]:
                ck.fail(f"won[{i}][2][{j}]", f"token {t} of player {wp} is not marked as having attacked")
    if phase == P.ATTACK_JOIN:
        if target < 0:
            ck.fail("target", f"expected the territory being attacked, got {target}")
        for j, t in enumerate(joiners):
            if loc[actor][t] < 0 or out["attacked"][actor][t] or target not in game.adjacent[loc[actor][t]]:
                ck.fail(f"joiners[{j}]", f"token {t} cannot join an attack on territory {target}")
    else:
        if target != -1:
            ck.fail("target", f"expected -1 in phase {ph_name}, got {target}")
        if joiners:
            ck.fail("joiners", f"expected [] in phase {ph_name}, got {joiners}")
    if phase != P.ADVANCE and advanced:
        ck.fail("advanced", f"expected [] in phase {ph_name}, got {advanced}")
    if phase == P.TERMINAL:
        top = max(vp)
        want_w = [p for p in range(n) if vp[p] == top]
        if sorted(winners) != want_w:
            ck.fail("winners", f"expected the players with the most VP {want_w}, got {winners}")
    elif winners:
        ck.fail("winners", f"expected [] before the end, got {winners}")
    return out


def check_state(state: "State", path: str = "state") -> None:
    """Validate a whole position (fields, invariants, and that someone can act). Raises :class:`StateError`."""
    check_state_fields(state.game, {name: getattr(state, name) for name in STATE_FIELDS}
                       | {"vp_log": [list(e) for e in state.vp_log]}, path)
    check_playable(state, path)


def check_playable(state: "State", path: str = "state") -> None:
    """The rules' own view: the player to act is a player taking part, and a non-terminal position has at least
    one legal action (or chance outcome, with probabilities summing to 1)."""
    name = Phase(state.phase).name
    try:
        p = state.current_player()
        if p == TERMINAL:
            return
        if p == CHANCE:
            outcomes = state.chance_outcomes()
            if not outcomes:
                raise StateError(f"{path}.phase: a chance node ({name}) with no outcome")
            if abs(sum(pr for _, pr in outcomes) - 1.0) > 1e-9:
                raise StateError(f"{path}.phase: chance outcomes of {name} do not sum to 1")
            return
        if not 0 <= p < state.num_players or not state.active[p]:
            raise StateError(f"{path}.cursor: the player to act ({p}) in phase {name} is not a player taking part")
        if isinstance(state, State):
            state._legal = None
            if state.phase == Phase.ATTACK_JOIN and state.target not in state._attack_targets(p):
                raise StateError(f"{path}.target: territory {state.target} is not one player {p} may attack (R11)")
        if not state.legal_actions():
            raise StateError(f"{path}.phase: no legal action for player {p} in phase {name}, and the game is not over")
    except StateError:
        raise
    except (IndexError, KeyError, TypeError, ValueError, ZeroDivisionError) as e:
        raise StateError(f"{path}: inconsistent for phase {name} ({type(e).__name__}: {e})") from None
