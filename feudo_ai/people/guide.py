"""What a person needs beside the bare choices: each choice's cost, the rules of the phase at hand and why an
option is missing, and matching what they type against the choices (``baron`` for ``select Baron``).

    notes = choice_notes(state, actions)     # per action: "" or e.g. "2 shillings, 2 left"
    for line in phase_help(state, seat):     # the phase, its rules (R-numbers of docs/rules.md), what is missing
        print(line)
    action, matches = match_choice("baron", [(a, state.action_to_string(a)) for a in actions])

Everything here reads only what the seat may know (R22): the public position and the seat's own cards.
"""

from __future__ import annotations

from typing import Any

from engine.actions import action_info
from engine.schema import CASTLE, DEAD, Phase

__all__ = ["choice_notes", "phase_help", "match_choice", "hint_lines", "choice_columns", "readable_text",
           "PHASE_NAMES"]

#: A phase as the rulebook names it (R4), for headings.
PHASE_NAMES = {
    Phase.CHANCE_PLACER: "Setup: who places the next Castle (chance)",
    Phase.PLACE_CASTLE: "Setup: Castle placement",
    Phase.CHANCE_DECIDER: "Diplomacy: who decides the order (chance)",
    Phase.CHOOSE_ORDER: "Diplomacy: the order of play",
    Phase.SELECT: "Strategy: the secret selection",
    Phase.CHANCE_PLAGUE: "Plague: the plague card (chance)",
    Phase.REVEAL: "Movement: reveal an Army Card",
    Phase.MOVE: "Movement: move the revealed token",
    Phase.MILADY: "Movement: Milady",
    Phase.MARCH: "Movement: shilling marches",
    Phase.ATTACK: "Attack: declare an attack",
    Phase.ATTACK_JOIN: "Attack: who joins the attack",
    Phase.ADVANCE: "Advance",
    Phase.TERMINAL: "Game over",
}

_RULES = {
    Phase.PLACE_CASTLE: [
        "Put your Castle on a Hill on the outer edge of the map (R21), on a mapboard that has no Castle yet;",
        "the two halves of a joined corner (e.g. Hill E1 and Hill F1) are separate sites (R24).",
        "Your tokens enter the map from the Castle's territory; City VP are counted from it (R15).",
    ],
    Phase.CHOOSE_ORDER: [
        "You have the fewest VP (on turn 1: you placed the last Castle), so you set everybody's order of play (R5):",
        "who reveals, moves and attacks first in every round of this turn.",
    ],
    Phase.SELECT: [
        "Pick 3 Army Cards (fewer if you hold fewer) and then 1 Trading Card, in secret (R6).",
        "The Army Cards are picked in ascending order (a set is one sequence): once you picked a card, the cards",
        "listed before it are no longer offered. A picked card moves its token this turn; the Trading Card's",
        "shillings pay your Mercenaries first, the rest marches tokens on the map one territory a shilling (R9).",
        "Used cards are discarded until you have played them all.",
    ],
    Phase.REVEAL: [
        "In order of play everybody reveals one selected Army Card a round, three rounds (R7); then the",
        "Trading Cards are turned over. Choose which of your selected cards to reveal now.",
    ],
    Phase.MOVE: [
        "The revealed token may stay (pass) or move up to its current number of territories (R7), along a path",
        "that avoids Mountains, the Central Hill, free Cities, the Plague Token's Village and enemy tokens, Castles",
        "and Cities (R8). A token in its Castle enters on the Castle's territory for free and must move off it.",
        "Entering a Wood ends the move; a Wood holds one token; only the Baron, Mercenaries and Infantrymen enter",
        "Villages and own Cities; two own tokens may share a territory only with the Baron or Milady (R8).",
    ],
    Phase.MILADY: [
        "Your Milady stands next to an enemy Baron: a healthy Milady may charm him (his player moves nothing more",
        "this turn; she goes home to rest), a plague-stricken one may infect adjacent enemy tokens (R13).",
    ],
    Phase.MARCH: [
        "Your Trading Card is turned over: after paying 1 shilling per Mercenary moved this turn, every shilling",
        "left moves a token already on the map one territory (R9); a march costs the length of its path.",
        "Shillings not spent are lost (pass ends your marches). Entering a Wood ends that token's marching.",
    ],
    Phase.ATTACK: [
        "Declare an attack on a territory next to your tokens, or pass (R11). Force: the attackers' current",
        "numbers; defence: the defenders' numbers + Wood 5, Village 3, City 7. Only a greater force wins: a tie",
        "or less eliminates the attackers. A City needs a Mercenary or Infantryman among the attackers.",
    ],
    Phase.ATTACK_JOIN: [
        "Add your tokens next to the target to the attack, then pass to launch it (R11). A token fights in one",
        "attack a turn; the Baron and the token sharing his territory fight together.",
    ],
    Phase.ADVANCE: [
        "You won an attack: one token that took part (the Baron plus one if he fought) may move into the emptied",
        "territory or conquered City, free (R14); pass to stay.",
    ],
}


def _ref(state: Any) -> Any:
    return state.to_reference() if hasattr(state, "to_reference") else state


def _s(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def choice_notes(state: Any, actions: list[int]) -> list[str]:
    """Per action, what it costs or means beyond its text ("" when nothing): a march's shillings and what is left,
    a move's territories out of the token's number, an attack's forces so far, a Castle site's board."""
    s = _ref(state)
    g = s.game
    out = []
    for a in actions:
        try:
            info = action_info(s, a)
        except ValueError:
            out.append("")
            continue
        note = ""
        if info.kind == "MARCH" and info.cost >= 0:
            note = f"{_s(info.cost, 'shilling')}, {s.shillings - info.cost} left"
        elif info.kind == "END_MARCH":
            note = f"the {_s(s.shillings, 'shilling')} left are lost" if s.shillings else ""
        elif info.kind == "MOVE" and info.cost >= 0:
            steps = s.army_move_steps(info.player, info.token)
            note = f"{info.cost} of {steps} territor{'y' if steps == 1 else 'ies'}"
            if info.from_castle:
                note += ", entering from the Castle"
        elif info.kind == "STAY":
            note = "stays in the Castle" if info.from_castle else "does not move"
        elif info.kind == "ATTACK_LAUNCH":
            force, defence = s.attack_odds()
            note = f"force {force} against {defence}: " + ("wins" if force > defence else "loses, attackers eliminated")
        elif info.kind == "ATTACK_JOIN":
            note = f"adds {s.number(info.player, info.token)}"
        elif info.kind == "NO_ATTACK":
            note = "no (further) attack this turn"
        elif info.kind == "SELECT_TRADING_CARD":  # the text's number is the card's printed shillings, not an index
            printed = g.ruleset.trading_cards[info.trading_card]
            pays = s.shillings_of(info.player, info.trading_card)
            note = _s(printed, "shilling") + (f"; pays {pays} with the King's Help" if pays != printed else "")
        out.append(note)
    return out


def _missing(s: Any, seat: int) -> list[str]:
    """Why options a person might expect are not offered now."""
    g, rs = s.game, s.game.ruleset
    army = rs.army
    lines: list[str] = []
    if s.phase == Phase.SELECT and s.current_player() == seat:
        picked = [t for t in range(g.num_tokens) if s.sel_army[seat][t]]
        need = min(rs.army_cards_selected, sum(1 for t in range(g.num_tokens) if s.army_held[seat][t]))
        if picked and len(picked) < need:
            below = [army[t].name for t in range(max(picked)) if s.army_held[seat][t] and not s.sel_army[seat][t]]
            lines.append(f"You picked {', '.join(army[t].name for t in picked)} ({len(picked)} of {need})."
                         + (f" Not offered any more (listed before your last pick, R6): {', '.join(below)}."
                            if below else ""))
        spent = [t for t in range(g.num_tokens) if not s.army_held[seat][t]]
        if spent:
            lines.append(f"Already played (discarded until all are used): {', '.join(army[t].name for t in spent)}.")
        if len(picked) >= need:
            held = [str(rs.trading_cards[c]) for c in range(len(rs.trading_cards)) if s.trade_held[seat][c]]
            lines.append(f"Now your Trading Card: you hold {', '.join(held)} shillings (one card each).")
    elif s.phase == Phase.MOVE and s.current_player() == seat and 0 <= s.token < g.num_tokens:
        t = s.token
        name = army[t].name
        where = s.loc[seat][t]
        legal = s.legal_actions()
        lines.append(f"Revealed: {name} (number {s.number(seat, t)}), "
                     + ("in the Castle." if where == CASTLE else "eliminated." if where == DEAD
                        else f"on {g.map.labels[where]}."))
        if legal == [g.layout.PASS]:
            why = "no legal destination (R8)"
            if g.token_kind[t] == "mercenary":
                pays = s.shillings_of(seat, s.sel_trade[seat]) if s.sel_trade[seat] >= 0 else 0
                moved = s.merc_moved[seat]
                if pays < moved + 1:
                    why = (f"a Mercenary moves only when your Trading Card pays for it (R7): your card pays "
                           f"{_s(pays, 'shilling')} and {_s(moved, 'Mercenary')} moved already this turn")
            elif where == DEAD:
                why = "its token is eliminated; the card is revealed all the same"
            elif s.charmed[seat]:
                why = "your Baron is charmed: you move nothing more this turn (R13)"
            elif s.rest_until[seat][t] >= s.turn:
                why = "the token is resting this turn (R12, R13)"
            lines.append(f"Only pass is possible: {why}.")
    elif s.phase == Phase.MARCH and s.current_player() == seat:
        lines.append(f"Shillings left to march: {s.shillings}.")
    elif s.phase == Phase.ATTACK_JOIN and s.current_player() == seat:
        force, defence = s.attack_odds()
        lines.append(f"Attack on {g.map.labels[s.target]}: force {force} so far against a defence of {defence}.")
    return lines


def phase_help(state: Any, seat: int) -> list[str]:
    """The phase under way, the rules that apply to it, and what explains the choices (why one is missing)."""
    s = _ref(state)
    phase = Phase(s.phase)
    lines = [f"{PHASE_NAMES.get(phase, phase.name)} (turn {s.turn} of {s.game.ruleset.turns})"
             if s.turn else PHASE_NAMES.get(phase, phase.name)]
    lines += ["  " + x for x in _RULES.get(phase, [])]
    lines += ["  " + x for x in _missing(s, seat)]
    lines.append("  The rules in full: docs/rules.md (R-numbers). Places are named by column letter and row number "
                 "of the board (Wood C2: column C, row 2).")
    return lines


def _words(text: str) -> list[str]:
    return text.lower().replace("/", " / ").replace(",", " , ").replace("(", " ").replace(")", " ").split()


def match_choice(text: str, choices: list[tuple[int, str]]) -> tuple[int | None, list[str]]:
    """The choice ``text`` names: its whole text, or a part of it that only one choice contains as whole words
    (``baron`` for ``select Baron``, ``c2`` for ``move Knight 1 to Wood C2``). (action, []) when exactly one
    matches; (None, the matching texts) when several do (ambiguous); (None, []) when none."""
    want = _words(text)
    if not want:
        return None, []
    exact = [a for a, t in choices if _words(t) == want]
    if len(exact) == 1:
        return exact[0], []
    hits = []
    for a, t in choices:
        words = _words(t)
        n = len(want)
        if any(words[i:i + n] == want for i in range(len(words) - n + 1)):
            hits.append((a, t))
    if len(hits) == 1:
        return hits[0][0], []
    return None, [t for _, t in hits]


def readable_text(game: Any, action: int, text: str) -> str:
    """An action's text as a person reads it: a Trading Card pick says that its number is shillings."""
    name, i = game.layout.decode(action)
    if name == "TRADE":
        return f"{text} ({_s(game.ruleset.trading_cards[i], 'shilling')})"
    return text


def hint_lines(advice: Any, game: Any = None) -> list[str]:
    """An advice as the person reads it: their whole decision, the alternatives ranked by visits and why that
    ranking (with a word where a less visited alternative shows a higher win rate, as printed), what the others
    probably selected, by name, and the search's statistics. ``game`` (the game's :class:`engine.Game`) names
    the seats and the Trading Cards' shillings; without it the advice's own words are kept."""
    def said(action: int, text: str) -> str:
        return text if game is None else readable_text(game, action, text)

    def name(q: int) -> str:
        return f"seat {q}" if game is None else game.player_name(q)

    plan = ", then ".join(said(p.action, p.text) for p in advice.plan)
    what = "selection" if advice.decision == "selection" else "moves until new information arrives"
    lines = [f"Advice for your {what} ({name(advice.seat)}): {plan}"]
    alts = list(advice.alternatives)[:5]
    if alts:
        lines.append("  ranked by visits, the search's choice: over the whole search it spends its visits on what it "
                     "rates best; a win rate is an estimate, the less sure the fewer its visits")
        for i, a in enumerate(alts, 1):
            lines.append(f"  {i}. {said(a.action, a.text)} ({a.visits} visits, {a.win_probability:.1%})")
        top = alts[0]
        shown = {id(a): round(a.win_probability * 1000) for a in alts}  # compared as printed (0.1%)
        better = [a for a in alts[1:] if shown[id(a)] > shown[id(top)]]
        if better:
            b = max(better, key=lambda a: a.win_probability)
            lines.append(f"  {said(b.action, b.text)} shows a higher win rate ({b.win_probability:.1%}) than "
                         f"{said(top.action, top.text)} ({top.win_probability:.1%}) but from fewer visits "
                         f"({b.visits} against {top.visits}): a less sure estimate, so the ranking stays by visits")
    by_player: dict[int, list[Any]] = {}
    for b in advice.beliefs:
        by_player.setdefault(b.player, []).append(b)
    for q, bs in sorted(by_player.items()):
        army = [b for b in bs if b.kind == "army"]
        trade = [b for b in bs if b.kind != "army"]
        part = ", ".join(f"{b.card} {b.probability:.0%}" for b in sorted(army, key=lambda b: -b.probability))
        if trade:
            part += "; Trading Card " + ", ".join(f"{b.card} {b.probability:.0%}"
                                                  for b in sorted(trade, key=lambda b: -b.probability))
        lines.append(f"  {name(q)} probably selected: {part}")
    st = advice.stats
    where = f", {st.backend}" if getattr(st, "backend", None) else ""  # "remote": searched by the server
    lines.append(f"  {st.iterations} iterations, {st.elapsed:.2f} s of search ({st.algorithm}{where}"
                 f"{', cut by ' + st.stopped_by if st.limited and st.stopped_by else ''})")
    return lines


def choice_columns(items: list[str], width: int = 110) -> list[str]:
    """Numbered choices laid out in up to three columns (more than 10 of them), read down each column."""
    if not items:
        return []
    cell = max(len(x) for x in items) + 2
    cols = max(1, min(3, width // cell)) if len(items) > 10 else 1
    rows = -(-len(items) // cols)
    return [" " + "".join(items[c * rows + r].ljust(cell) for c in range(cols) if c * rows + r < len(items)).rstrip()
            for r in range(rows)]
