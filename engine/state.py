"""The Feudo game state: the readable reference implementation of every rule (R4-R25).

Vocabulary follows OpenSpiel: :meth:`State.current_player`, :meth:`State.legal_actions`,
:meth:`State.apply_action`, :meth:`State.clone`, :meth:`State.is_chance_node`, :meth:`State.chance_outcomes`,
:meth:`State.is_terminal`, :meth:`State.returns`, :meth:`State.observation` and
:meth:`State.information_state_string`. Actions are ints (:mod:`engine.actions`).

The state is plain lists of ints and bools (no objects per token) so that it maps one-to-one onto the C
struct of the Cython core and serialises to JSON exactly.

Hidden information (R22) lives in exactly two places: each player's current secret selection
(``sel_army``/``sel_trade`` before reveal) and the future plague cards. The plague deck is not stored: a
plague draw is a chance node whose outcomes are the card kinds not yet drawn since the last shuffle,
weighted by the copies left. Drawing the deck lazily is the same distribution as dealing 10 of 20 face down,
and it leaves no hidden deck order in the state for a search to peek at.

R25: the shape of the decision sequence (who acts, in which phase, how many decisions) depends only on public
facts and the acting seat's own cards. The one step whose presence used to depend on a hidden card, the move
decision of a revealed Mercenary (payable or not by the unrevealed Trading Card, R7), is always offered; every
other optional step (a token's move, Milady's charm or infection, marching, attacking, advancing) is decided by
public facts only, the Trading Card being revealed before the marching step is considered (R9).

Rulings taken here where the rulebook and rulings.md are silent (cited as "ruling" in comments):
- Shilling marches (R9) choose a destination; the cost is the shortest legal path, so a march may pass over
  own tokens just as an Army Card move does.
- A charmed player (R13) moves nothing more, but his Milady, if revealed later, may still charm or infect
  from where she stands: charm is not movement.
- When an attack on an enemy City with no tokens in it is lost, the City's owner is the eliminator (R15).
- A joined corner holding two Castles (R24) is own Castle territory for both owners (their tokens enter the map
  from it and may pass it, never stop on it, R8) and an enemy Castle for every other player.
- In tie-break turns (R19) the winner is whoever alone has the most VP at the end of a turn; if several
  share the lead, they are the players of the next extra turn.
"""

from __future__ import annotations

import json
import numbers
from typing import Any, Callable, Iterable

from .actions import PLAYER_NAMES, ActionLayout, permutations_of
from .board import GameMap, Kind, load_map
from .errors import IllegalActionError, StateError
from .ruleset import Ruleset, load_ruleset
# The shape of a position lives in engine.schema (below the validator and the pictures); re-exported here, where
# the rest of the project has always imported it from.
from .schema import CASTLE, CHANCE, DEAD, STATE_FIELDS, STATE_FORMAT, TERMINAL, Phase


class Game:
    """Everything fixed for a game: ruleset, map, number of players, action layout and derived tables."""

    def __init__(self, ruleset: Ruleset, game_map: GameMap, players: int):
        if not isinstance(players, int) or not ruleset.min_players <= players <= ruleset.max_players:
            raise StateError(f"players: expected an integer in [{ruleset.min_players}, {ruleset.max_players}], "
                             f"got {players!r}")
        boards = {s.board for s in game_map.castle_sites}
        if len(boards) < players:
            raise StateError(f"map {game_map.name!r}: castle sites on {len(boards)} boards, "
                             f"but {players} players need one board each (R21)")
        self.ruleset = ruleset
        self.map = game_map
        self.num_players = players
        self.num_tokens = ruleset.tokens_per_player
        self.num_territories = len(game_map.territories)
        self.layout = ActionLayout(
            sites=len(game_map.castle_sites), players=players, tokens=self.num_tokens,
            trading=len(ruleset.trading_cards), territories=self.num_territories,
            plague_kinds=len(ruleset.plague_cards))
        self.kind = [t.kind for t in game_map.territories]
        self.neighbors = [t.neighbors for t in game_map.territories]
        self.adjacent = [set(t.neighbors) for t in game_map.territories]
        self.token_kind = [t.kind for t in ruleset.army]
        self.baron = ruleset.baron
        self.milady = ruleset.milady
        self.enters_towns = [t.enters_villages_and_cities for t in ruleset.army]
        self.takes_cities = [t.takes_cities for t in ruleset.army]
        self.central = game_map.central_hill if ruleset.has_convent else None

    def player_name(self, p: int) -> str:
        return PLAYER_NAMES[p] if 0 <= p < len(PLAYER_NAMES) else f"P{p}"

    @property
    def num_distinct_actions(self) -> int:
        return self.layout.num_distinct_actions

    def to_dict(self) -> dict:
        return {"ruleset": self.ruleset.to_dict(), "map": self.map.to_dict(), "players": self.num_players}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Game) and self.to_dict() == other.to_dict()

    def __hash__(self) -> int:
        return hash((self.ruleset.name, self.map.name, self.num_players))


_FIELDS = STATE_FIELDS  # the short name used inside this module

# Reading a position back from JSON (engine.serialize: every field validated, which builds and checks a State) and
# its text picture (engine.render) build on this module, so it cannot import them: each hands its function over
# when imported (install_view). engine/__init__.py imports both, and Python runs a package's __init__ before any
# of its modules, so they are in place before any State exists.
_views: dict[str, Callable[..., Any]] = {}
_VIEW_NAMES = ("from_json", "text")


def install_view(name: str, fn: Callable[..., Any]) -> None:
    """Called by the modules above: ``"from_json"`` backs :meth:`State.from_json`, ``"text"`` ``str(state)``."""
    if name not in _VIEW_NAMES:
        raise ValueError(f"view: expected one of {', '.join(_VIEW_NAMES)}, got {name!r}")
    _views[name] = fn


def _copy_lists(value: Any) -> Any:
    """A deep copy of the state's nested lists of ints and bools (as copy.deepcopy, several times faster:
    observations and clones are made at every step of a search or a test walk)."""
    if isinstance(value, list):
        return [_copy_lists(v) for v in value]
    return value


class State:
    """One position of a game of Feudo. Create with :func:`new_game`."""

    def __init__(self, game: Game):
        self.game = game
        n, k, g = game.num_players, game.num_tokens, game
        self.turn = 0  # 1-based turn number; 0 during Castle placement
        self.phase = int(Phase.CHANCE_PLACER)
        self.tiebreak = 0  # extra turns played so far (R19)
        self.active = [True] * n  # players taking part in the current turn (tie-break: the tied leaders)
        self.order: list[int] = []  # order of play of this turn (R5)
        self.castle = [-1] * n  # castle site id per player
        self.placed: list[int] = []  # players in the order they placed their Castles
        self.decider = -1  # player who decides the order of play this turn
        self.vp = [0] * n
        self.loc = [[CASTLE] * k for _ in range(n)]  # territory id, CASTLE or DEAD
        self.stricken = [[False] * k for _ in range(n)]  # plague-stricken (black side up)
        self.entered = [[False] * k for _ in range(n)]  # has ever entered the map (R16)
        self.rest_until = [[0] * k for _ in range(n)]  # cannot move while turn <= this (R12, R13)
        self.army_held = [[True] * k for _ in range(n)]  # Army Card not discarded
        self.trade_held = [[True] * len(g.ruleset.trading_cards) for _ in range(n)]
        self.sel_army = [[False] * k for _ in range(n)]  # secret selection (R6, R22)
        self.sel_trade = [-1] * n  # index of the selected Trading Card (secret until revealed)
        self.sel_done = [False] * n  # has finished selecting this turn (public)
        self.revealed = [[False] * k for _ in range(n)]  # Army Cards revealed this turn
        self.trade_revealed = [False] * n
        self.owner = [-1] * g.num_territories  # City owner, -1 = free (R11)
        self.plague_village = g.map.plague_start if g.ruleset.has_plague else -1
        self.plague_drawn = [0] * len(g.ruleset.plague_cards)  # drawn since the last shuffle, per kind
        self.plague_history: list[int] = []  # every plague card drawn, in order (public)
        self.plague_card = -1  # this turn's card
        self.king = False  # the King has intervened (R16)
        self.charmed = [False] * n
        self.merc_moved = [0] * n  # Mercenaries moved this turn: to be paid (R7), public evidence (R22)
        self.march_over = [[False] * k for _ in range(n)]  # entered a Wood while marching (R9)
        self.attacked = [[False] * k for _ in range(n)]  # has taken part in an attack this turn (R11)
        self.won: list[list] = []  # won attacks this turn: [player, territory, [tokens], baron_took_part]
        self.cursor = 0  # index of the acting player in `order` (or seat during SELECT / setup)
        self.round = 0  # reveal round: 0..2 Army Cards, 3 Trading Cards; also index into `won` in ADVANCE
        self.token = -1  # the revealed token (MOVE/MILADY)
        self.shillings = 0  # shillings left to march (R9)
        self.target = -1  # territory of the attack being declared
        self.joiners: list[int] = []  # tokens of the attack being declared
        self.advanced: list[int] = []  # tokens advanced for the current won attack
        self.winners: list[int] = []
        self.vp_log: list[tuple[int, int, str]] = []  # (player, delta, reason) for every VP change
        self._legal: list[int] | None = None  # cache, cleared by every change

    # ------------------------------------------------------------------------------------------------------
    # OpenSpiel-style API
    # ------------------------------------------------------------------------------------------------------
    @property
    def num_players(self) -> int:
        return self.game.num_players

    def current_player(self) -> int:
        ph = self.phase
        if ph == Phase.TERMINAL:
            return TERMINAL
        if ph in (Phase.CHANCE_PLACER, Phase.CHANCE_DECIDER, Phase.CHANCE_PLAGUE):
            return CHANCE
        if ph == Phase.PLACE_CASTLE or ph == Phase.SELECT:
            return self.cursor
        if ph == Phase.CHOOSE_ORDER:
            return self.decider
        if ph == Phase.ADVANCE:
            return self.won[self.round][0]
        return self.order[self.cursor]

    def is_terminal(self) -> bool:
        return self.phase == Phase.TERMINAL

    def is_chance_node(self) -> bool:
        return self.current_player() == CHANCE

    def returns(self) -> list[float]:
        """R19: 1 for a sole win, 1/k for a k-way shared win, 0 otherwise (all 0 before the end)."""
        if not self.winners:
            return [0.0] * self.num_players
        share = 1.0 / len(self.winners)
        return [share if p in self.winners else 0.0 for p in range(self.num_players)]

    def clone(self) -> "State":
        other = State.__new__(State)
        other.game = self.game
        for name in _FIELDS:
            value = getattr(self, name)
            setattr(other, name, _copy_lists(value))
        other.vp_log = list(self.vp_log)
        other._legal = None
        return other

    def chance_outcomes(self) -> list[tuple[int, float]]:
        """(action, probability) pairs at a chance node, in ascending action order."""
        L = self.game.layout
        ph = self.phase
        if ph == Phase.CHANCE_PLACER:
            left = [p for p in range(self.num_players) if p not in self.placed]
            return [(L.CHANCE_PLAYER + p, 1.0 / len(left)) for p in left]
        if ph == Phase.CHANCE_DECIDER:
            tied = self._fewest_vp_players()
            return [(L.CHANCE_PLAYER + p, 1.0 / len(tied)) for p in tied]
        if ph == Phase.CHANCE_PLAGUE:
            cards = self.game.ruleset.plague_cards
            left = [(c.index, c.count - self.plague_drawn[c.index]) for c in cards]
            total = sum(n for _, n in left)
            return [(L.PLAGUE + i, n / total) for i, n in left if n > 0]
        return []

    def legal_actions(self, player: int | None = None) -> list[int]:
        """Legal actions of the player to act (ascending ints); empty for other players and at the end."""
        if player is not None and player != self.current_player():
            return []
        if self._legal is None:
            if self.is_chance_node():
                self._legal = [a for a, _ in self.chance_outcomes()]
            else:
                self._legal = sorted(self._generate_legal())
        return list(self._legal)

    def apply_action(self, action: int) -> None:
        """Apply a legal action; an illegal one raises :class:`IllegalActionError` and changes nothing.
        Any integer type is accepted (numpy integers too, as OpenSpiel-style callers pass them)."""
        if isinstance(action, numbers.Integral) and not isinstance(action, (int, bool)):
            action = int(action)
        legal = self.legal_actions()
        if isinstance(action, bool) or not isinstance(action, int) or action not in legal:
            phase = Phase(self.phase).name
            raise IllegalActionError(
                f"action {action!r} ({self._describe(action)}) is not legal in phase {phase} for "
                f"{self._actor_text()}; legal: {len(legal)} actions"
                + (f" e.g. {', '.join(self.action_to_string(a) for a in legal[:6])}" if legal else ""))
        self._legal = None
        self._apply(action)
        self._legal = None

    def action_to_string(self, action: int, player: int | None = None) -> str:
        """Text form of an action, e.g. ``move Knight 1 to City I5 Evesham``, ``attack Wood C2``,
        ``castle at Hill E1``, ``plague: East 1``. Places are named as a player reads them on the board: terrain
        and grid coordinate (:attr:`engine.board.GameMap.labels`, the names of DescribeGame)."""
        return self._action_text(action, legacy=False)

    def _action_text(self, action: int, legacy: bool) -> str:
        """``legacy``: the texts before places were named by coordinates (the engine's territory names, e.g.
        ``move Knight 1 to A2-1``, ``castle at D0-4/A4-0 (site 5)``), still accepted by :meth:`string_to_action`."""
        g, L = self.game, self.game.layout
        try:
            kind, i = L.decode(action)
        except ValueError as e:
            return f"<{e}>"
        army = g.ruleset.army
        place = [t.name for t in g.map.territories] if legacy else g.map.labels
        if kind == "PASS":
            return "pass"
        if kind == "PLACE":
            if legacy:
                return f"castle at {place[g.map.castle_sites[i].territory]} (site {i})"
            return f"castle at {g.map.site_labels[i]}"
        if kind == "ORDER":
            active = tuple(p for p in range(g.num_players) if self.active[p])
            perms = permutations_of(active)
            if i < len(perms):
                return "order " + ",".join(g.player_name(p) for p in perms[i])
            return f"order #{i}"
        if kind in ("SELECT", "REVEAL", "JOIN", "ADVANCE"):
            verb = {"SELECT": "select", "REVEAL": "reveal", "JOIN": "join", "ADVANCE": "advance"}[kind]
            return f"{verb} {army[i].name}"
        if kind == "TRADE":
            return f"select trading card {g.ruleset.trading_cards[i]}"
        if kind == "MOVE":
            name = army[self.token].name if 0 <= self.token < len(army) else "token"
            return f"move {name} to {place[i]}"
        if kind == "CHARM":
            return f"charm {g.player_name(i)}"
        if kind == "INFECT":
            return "infect"
        if kind == "MARCH":
            t, x = divmod(i, g.num_territories)
            return f"march {army[t].name} to {place[x]}"
        if kind == "ATTACK":
            return f"attack {place[i]}"
        if kind == "CHANCE_PLAYER":
            return f"chance: {g.player_name(i)}"
        return f"plague: {g.ruleset.plague_cards[i].name}"

    def string_to_action(self, text: str) -> int:
        """Parse the text form of a legal action (case and spacing insensitive); the texts naming places by the
        engine's territory names (before coordinates) are accepted too."""
        want = " ".join(str(text).lower().split())
        legal = self.legal_actions()
        for legacy in (False, True):
            for a in legal:
                if self._action_text(a, legacy).lower() == want:
                    return a
        raise IllegalActionError(
            f"{text!r} is not a legal action in phase {Phase(self.phase).name} for {self._actor_text()}; "
            f"legal: {', '.join(self.action_to_string(a) for a in legal[:10])}"
            + (" ..." if len(legal) > 10 else ""))

    # ------------------------------------------------------------------------------------------------------
    # Derived facts
    # ------------------------------------------------------------------------------------------------------
    def living_soldiers(self, p: int) -> int:
        """Living tokens other than Milady (the Baron counts), R17."""
        m = self.game.milady
        return sum(1 for t, x in enumerate(self.loc[p]) if x != DEAD and t != m)

    def desperate(self, p: int) -> bool:
        """R17: fewer than 4 living non-Milady tokens make the Baron 6 / 3 for the rest of the game."""
        return self.living_soldiers(p) < self.game.ruleset.desperate_below

    def number(self, p: int, t: int) -> int:
        """Current number of a token: movement capacity, force and VP value (R1, R17)."""
        rs = self.game.ruleset
        if t == self.game.baron and self.desperate(p):
            return rs.desperate_black if self.stricken[p][t] else rs.desperate_red
        tok = rs.army[t]
        return tok.black if self.stricken[p][t] else tok.red

    def red_number(self, p: int, t: int) -> int:
        rs = self.game.ruleset
        if t == self.game.baron and self.desperate(p):
            return rs.desperate_red
        return rs.army[t].red

    def castle_territory(self, p: int) -> int:
        site = self.castle[p]
        return self.game.map.castle_sites[site].territory if site >= 0 else -1

    def _castle_owners(self) -> dict[int, set[int]]:
        """Territory -> players with a Castle there. R24: a joined corner may hold two Castles (one per half)."""
        out: dict[int, set[int]] = {}
        for q in range(self.num_players):
            if self.castle[q] >= 0:
                out.setdefault(self.castle_territory(q), set()).add(q)
        return out

    def shillings_of(self, p: int, card: int) -> int:
        """Shillings of a Trading Card for player p now: printed value, +King's Help (R9, R16)."""
        value = self.game.ruleset.trading_cards[card]
        if value > 0 and self.king and p in self._fewest_vp_players(all_players=True):
            value += self.game.ruleset.king_help
        return value

    def _fewest_vp_players(self, all_players: bool = False) -> list[int]:
        players = [p for p in range(self.num_players) if all_players or self.active[p]]
        low = min(self.vp[p] for p in players)
        return [p for p in players if self.vp[p] == low]

    def _actor_text(self) -> str:
        p = self.current_player()
        return "chance" if p == CHANCE else ("nobody (game over)" if p == TERMINAL else self.game.player_name(p))

    def _describe(self, action: Any) -> str:
        if isinstance(action, bool) or not isinstance(action, int):
            return "not an int"
        return self.action_to_string(action)

    # ------------------------------------------------------------------------------------------------------
    # Movement (R8, R10)
    # ------------------------------------------------------------------------------------------------------
    def _occupants(self) -> list[list[tuple[int, int]]]:
        occ: list[list[tuple[int, int]]] = [[] for _ in range(self.game.num_territories)]
        for p in range(self.num_players):
            for t, x in enumerate(self.loc[p]):
                if x >= 0:
                    occ[x].append((p, t))
        return occ

    def destinations(self, p: int, t: int, steps: int, occ: list | None = None) -> dict[int, int]:
        """Territories where token t of player p may end a move of up to ``steps`` territories, with the
        length of the shortest legal path (R7, R8, R10). A token in the Castle starts on the Castle
        territory at no cost and may not end there."""
        g = self.game
        if occ is None:
            occ = self._occupants()
        start = self.loc[p][t]
        if start == CASTLE:
            start = self.castle_territory(p)
        if start < 0 or steps <= 0:
            return {}
        castles = self._castle_owners()
        own_castle = self.castle_territory(p)
        towns = g.enters_towns[t]
        stricken = self.stricken[p][t]
        dist = {start: 0}
        frontier = [start]
        for d in range(1, steps + 1):
            nxt = []
            for x in frontier:
                if x != start and not self._can_pass(x):
                    continue
                for y in g.neighbors[x]:
                    if y in dist:
                        continue
                    if not self._can_enter(p, y, towns, stricken, occ, castles):
                        continue
                    dist[y] = d
                    nxt.append(y)
            frontier = nxt
            if not frontier:
                break
        return {x: d for x, d in dist.items()
                if d >= 1 and x != own_castle and self._can_end(p, t, x, occ)}

    def _can_pass(self, x: int) -> bool:
        """Whether a path may continue out of x: entering a Wood or the Central Hill ends the move (R8, R10)."""
        kind = self.game.kind[x]
        return kind != Kind.WOOD and kind != Kind.CENTRAL_HILL

    def _can_enter(self, p: int, x: int, towns: bool, stricken: bool, occ: list,
                   castles: dict[int, set[int]]) -> bool:
        """R8: whether a token of player p may step into territory x (to pass or to stop)."""
        g = self.game
        kind = g.kind[x]
        if kind == Kind.MOUNTAIN or x == self.plague_village:
            return False
        if kind == Kind.CENTRAL_HILL:
            # R10: only a plague-stricken token may enter the Convent; none where there is no Convent (R20).
            return stricken and g.central == x
        if kind == Kind.CITY and (self.owner[x] != p or not towns):
            return False  # free and enemy Cities block everyone; own Cities only Baron/Mercenary/Infantryman
        if kind == Kind.VILLAGE and not towns:
            return False
        owners = castles.get(x)
        if owners and p not in owners:
            return False  # enemy Castle. R24: a joined corner holding p's own Castle too is p's Castle territory
        for (q, u) in occ[x]:
            if q != p and u != g.milady:
                return False  # enemy tokens block; an enemy Milady alone does not
        if kind == Kind.WOOD and occ[x]:
            return False  # a Wood holds one token, and entering it ends the move
        return True

    def _can_end(self, p: int, t: int, x: int, occ: list) -> bool:
        """R8 stacking: at most 2 own tokens, and only when one is the Baron or Milady; the First Knight
        always alone; a Wood holds 1 token. An enemy Milady may be shared (not with the First Knight) only
        when she is the only token there (R23)."""
        g = self.game
        if g.kind[x] == Kind.CENTRAL_HILL:
            return True  # R10: no limit in the Convent
        others = [(q, u) for (q, u) in occ[x] if not (q == p and u == t)]
        if not others:
            return True
        if g.kind[x] == Kind.WOOD or g.token_kind[t] == "first_knight":
            return False
        if any(q != p for (q, _) in others):
            # R23: stopping beside an enemy Milady (the only enemy token _can_enter lets through) is allowed
            # only when she is the only token there: not with own tokens, nor with a second Milady.
            return len(others) == 1
        own = [u for (q, u) in others if q == p]
        if len(own) >= 2:
            return False
        if len(own) == 1:
            u = own[0]
            if g.token_kind[u] == "first_knight":
                return False
            pair = {g.baron, g.milady}
            return t in pair or u in pair
        return True

    def can_move(self, p: int, t: int) -> bool:
        """Whether token t of player p may move at all now (alive, not resting, player not charmed)."""
        return (self.loc[p][t] != DEAD and not self.charmed[p] and self.rest_until[p][t] < self.turn)

    def army_move_steps(self, p: int, t: int) -> int:
        steps = self.number(p, t)
        card = self.game.ruleset.plague_cards[self.plague_card] if self.plague_card >= 0 else None
        if card is not None and card.effect == "fog":
            steps = min(steps, 1)  # R18 Fog: Army Card moves limited to 1 territory this turn
        return steps

    # ------------------------------------------------------------------------------------------------------
    # Legal action generation, per phase
    # ------------------------------------------------------------------------------------------------------
    def _generate_legal(self) -> Iterable[int]:
        g, L, ph = self.game, self.game.layout, self.phase
        p = self.current_player()
        if ph == Phase.PLACE_CASTLE:
            # R21 one Castle per mapboard; R24: the two halves of a joined corner are separate sites, so a
            # Castle on one half leaves the other half (on another board) free.
            used_boards = {g.map.castle_sites[s].board for s in self.castle if s >= 0}
            return [L.PLACE + s.id for s in g.map.castle_sites if s.board not in used_boards]
        if ph == Phase.CHOOSE_ORDER:
            active = tuple(q for q in range(g.num_players) if self.active[q])
            return [L.ORDER + i for i in range(len(permutations_of(active)))]
        if ph == Phase.SELECT:
            return self._legal_select(p)
        if ph == Phase.REVEAL:
            return [L.REVEAL + t for t in range(g.num_tokens) if self.sel_army[p][t] and not self.revealed[p][t]]
        if ph == Phase.MOVE:
            return [L.PASS] + [L.MOVE + x for x in self._move_targets(p, self.token)]
        if ph == Phase.MILADY:
            return [L.PASS] + self._milady_options(p)
        if ph == Phase.MARCH:
            return [L.PASS] + self._march_options(p)
        if ph == Phase.ATTACK:
            return [L.PASS] + [L.ATTACK + x for x in self._attack_targets(p)]
        if ph == Phase.ATTACK_JOIN:
            acts = [L.JOIN + t for t in self._joinable(p)]
            if self._attack_launchable(p):
                acts.append(L.PASS)
            return acts
        if ph == Phase.ADVANCE:
            return [L.PASS] + [L.ADVANCE + t for t in self._advance_options()]
        return []

    def _legal_select(self, p: int) -> list[int]:
        g, L = self.game, self.game.layout
        need = self._army_to_select(p)
        picked = [t for t in range(g.num_tokens) if self.sel_army[p][t]]
        if len(picked) < need:
            # Canonical ascending picks: a set of cards is one action sequence, never a permutation of it.
            last = picked[-1] if picked else -1
            held = [t for t in range(g.num_tokens) if self.army_held[p][t] and t > last]
            room = need - len(picked)
            return [L.SELECT + t for i, t in enumerate(held) if len(held) - i >= room]
        seen: set[int] = set()
        acts = []
        for c, value in enumerate(g.ruleset.trading_cards):
            if self.trade_held[p][c] and value not in seen:
                seen.add(value)  # identical cards are one choice
                acts.append(L.TRADE + c)
        return acts

    def _army_to_select(self, p: int) -> int:
        held = sum(self.army_held[p])
        return min(self.game.ruleset.army_cards_selected, held)

    def _move_targets(self, p: int, t: int) -> list[int]:
        if not self.can_move(p, t):
            return []
        if self.game.token_kind[t] == "mercenary":
            # R7: a Mercenary moves only if the selected Trading Card pays for every Mercenary moved.
            if self.shillings_of(p, self.sel_trade[p]) < self.merc_moved[p] + 1:
                return []
        return sorted(self.destinations(p, t, self.army_move_steps(p, t)))

    def _milady_options(self, p: int) -> list[int]:
        g, L = self.game, self.game.layout
        x = self.loc[p][g.milady]
        if x < 0:
            return []
        if not self.stricken[p][g.milady]:
            acts = []
            for q in range(g.num_players):
                bx = self.loc[q][g.baron]
                if q != p and self.active[q] and not self.charmed[q] and bx >= 0 and bx in g.adjacent[x]:
                    acts.append(L.CHARM + q)
            return acts
        return [L.INFECT] if self._infection_victims(p) else []

    def _infection_victims(self, p: int) -> list[tuple[int, int]]:
        """R13: enemy tokens adjacent to p's stricken Milady, except Barons, Miladies, stricken tokens and tokens
        in Castles, Cities or the Convent."""
        g = self.game
        x = self.loc[p][g.milady]
        out = []
        for q in range(g.num_players):
            if q == p:
                continue
            for u, y in enumerate(self.loc[q]):
                if (y >= 0 and y in g.adjacent[x] and u != g.baron and u != g.milady and not self.stricken[q][u]
                        and g.kind[y] not in (Kind.CITY, Kind.CENTRAL_HILL)):
                    out.append((q, u))
        return out

    def _march_options(self, p: int) -> list[int]:
        g, L = self.game, self.game.layout
        occ = self._occupants()
        acts = []
        for t in range(g.num_tokens):
            if self.loc[p][t] >= 0 and not self.march_over[p][t] and self.can_move(p, t):
                for x in self.destinations(p, t, self.shillings, occ):
                    acts.append(L.MARCH + t * g.num_territories + x)
        return acts

    def _can_attack_with(self, p: int, t: int) -> bool:
        x = self.loc[p][t]
        return (x >= 0 and x != self.game.map.central_hill and t != self.game.milady and not self.attacked[p][t])

    def _defenders(self, p: int, x: int) -> list[tuple[int, int]]:
        """Tokens an attack on x fights: enemy tokens there except Miladies (R11)."""
        m = self.game.milady
        return [(q, u) for q in range(self.num_players) if q != p
                for u, y in enumerate(self.loc[q]) if y == x and u != m]

    def _has_city_takers(self, p: int) -> bool:
        g = self.game
        return any(g.takes_cities[t] and x != DEAD for t, x in enumerate(self.loc[p]))

    def _city_attack_allowed(self, p: int, tokens: Iterable[int]) -> bool:
        """R11: a City attack needs a Mercenary or Infantryman, or the Baron when none of either is left."""
        g = self.game
        tokens = list(tokens)
        if any(g.takes_cities[t] for t in tokens):
            return True
        return g.baron in tokens and not self._has_city_takers(p)

    def _attack_targets(self, p: int) -> list[int]:
        g = self.game
        eligible = [t for t in range(g.num_tokens) if self._can_attack_with(p, t)]
        if not eligible:
            return []
        near: dict[int, list[int]] = {}
        for t in eligible:
            for y in g.neighbors[self.loc[p][t]]:
                near.setdefault(y, []).append(t)
        out = []
        for x, tokens in near.items():
            if g.kind[x] == Kind.CENTRAL_HILL:
                continue  # R10: the Convent cannot be attacked
            if g.kind[x] == Kind.CITY:
                if self.owner[x] == p or any(q == p for q, _ in self._occupants_at(x)):
                    continue
                if not self._city_attack_allowed(p, tokens):
                    continue
                out.append(x)
            elif self._defenders(p, x):
                out.append(x)
        return sorted(out)

    def _occupants_at(self, x: int) -> list[tuple[int, int]]:
        return [(q, u) for q in range(self.num_players) for u, y in enumerate(self.loc[q]) if y == x]

    def _companion(self, p: int) -> int:
        """The army token sharing the Baron's territory (not Milady), or -1 (R11)."""
        g = self.game
        bx = self.loc[p][g.baron]
        if bx < 0:
            return -1
        for t, x in enumerate(self.loc[p]):
            if x == bx and t != g.baron and t != g.milady:
                return t
        return -1

    def _joinable(self, p: int) -> list[int]:
        g = self.game
        x = self.target
        return [t for t in range(g.num_tokens)
                if t not in self.joiners and self._can_attack_with(p, t) and x in g.adjacent[self.loc[p][t]]]

    def _attack_launchable(self, p: int) -> bool:
        if not self.joiners:
            return False
        if self.game.kind[self.target] == Kind.CITY:
            return self._city_attack_allowed(p, self.joiners)
        return True

    def _advance_options(self) -> list[int]:
        g = self.game
        p, x, tokens, baron_in = self.won[self.round]
        if self.advanced:
            if not baron_in or len(self.advanced) >= 2:
                return []
            # R14: the Baron plus one token: the second advancer must make the pair include the Baron.
            tokens = [t for t in tokens if t not in self.advanced and (g.baron in self.advanced or t == g.baron)]
        occ = self._occupants()
        castles = self._castle_owners()
        out = []
        for t in tokens:
            y = self.loc[p][t]
            if y < 0 or x not in g.adjacent[y]:
                continue
            if (self._can_enter(p, x, g.enters_towns[t], self.stricken[p][t], occ, castles)
                    and g.kind[x] != Kind.CENTRAL_HILL and self._can_end(p, t, x, occ)):
                out.append(t)
        return out

    # ------------------------------------------------------------------------------------------------------
    # Applying actions
    # ------------------------------------------------------------------------------------------------------
    def _apply(self, a: int) -> None:
        g, L, ph = self.game, self.game.layout, self.phase
        p = self.current_player()
        if ph == Phase.CHANCE_PLACER:
            self.cursor = a - L.CHANCE_PLAYER
            self.phase = Phase.PLACE_CASTLE
        elif ph == Phase.PLACE_CASTLE:
            self.castle[p] = a - L.PLACE
            self.placed.append(p)
            if len(self.placed) < g.num_players:
                self.phase = Phase.CHANCE_PLACER
            else:
                self._start_turn()
        elif ph == Phase.CHANCE_DECIDER:
            self.decider = a - L.CHANCE_PLAYER
            self.phase = Phase.CHOOSE_ORDER
        elif ph == Phase.CHOOSE_ORDER:
            active = tuple(q for q in range(g.num_players) if self.active[q])
            self.order = list(permutations_of(active)[a - L.ORDER])
            self._start_strategy()
        elif ph == Phase.SELECT:
            if a >= L.TRADE:
                self.sel_trade[p] = a - L.TRADE
                self.sel_done[p] = True
                self._next_selector()
            else:
                self.sel_army[p][a - L.SELECT] = True
        elif ph == Phase.CHANCE_PLAGUE:
            self._plague(a - L.PLAGUE)
        elif ph == Phase.REVEAL:
            t = a - L.REVEAL
            self.revealed[p][t] = True
            self.token = t
            # R25: a revealed Mercenary always gets its move decision ("pass" the only legal one when the
            # hidden Trading Card cannot pay, R7), so whether a step follows never betrays that card. Other
            # tokens' move targets depend on public facts only, so skipping an empty decision reveals nothing.
            if g.token_kind[t] == "mercenary" or self._move_targets(p, t):
                self.phase = Phase.MOVE
            else:
                self._after_move(p, t)
        elif ph == Phase.MOVE:
            t = self.token
            if a != L.PASS:
                self._place(p, t, a - L.MOVE)
                if g.token_kind[t] == "mercenary":
                    self.merc_moved[p] += 1
            self._after_move(p, t)
        elif ph == Phase.MILADY:
            if a != L.PASS:
                if a == L.INFECT:
                    for q, u in self._infection_victims(p):
                        self.stricken[q][u] = True
                else:
                    self.charmed[a - L.CHARM] = True
                    self.loc[p][g.milady] = CASTLE
                    self.rest_until[p][g.milady] = self.turn + 1  # rests the next full turn (R13)
            self._next_reveal()
        elif ph == Phase.MARCH:
            if a == L.PASS:
                self.shillings = 0
            else:
                t, x = divmod(a - L.MARCH, g.num_territories)
                cost = self.destinations(p, t, self.shillings)[x]
                self._place(p, t, x)
                self.shillings -= cost
                if g.kind[x] in (Kind.WOOD, Kind.CENTRAL_HILL):
                    self.march_over[p][t] = True  # R9: entering a Wood ends that token's marching
            if self.shillings <= 0 or not self._march_options(p):
                self.shillings = 0
                self._next_trader()
        elif ph == Phase.ATTACK:
            if a == L.PASS:
                self.cursor += 1
                self._next_attacker()
            else:
                self.target = a - L.ATTACK
                self.joiners = []
                self.phase = Phase.ATTACK_JOIN
        elif ph == Phase.ATTACK_JOIN:
            if a == L.PASS:
                self._resolve_attack(p)
                self.target, self.joiners = -1, []
                self.phase = Phase.ATTACK
                self._next_attacker()
            else:
                t = a - L.JOIN
                self.joiners.append(t)
                # R11: the Baron and the army token sharing his territory attack together.
                mate = self._companion(p)
                if mate >= 0 and t in (g.baron, mate):
                    other = mate if t == g.baron else g.baron
                    if other not in self.joiners and self._can_attack_with(p, other):
                        self.joiners.append(other)
        elif ph == Phase.ADVANCE:
            if a == L.PASS:
                self._next_advance(done=True)
            else:
                t = a - L.ADVANCE
                _, x, _, _ = self.won[self.round]
                self._place(p, t, x)
                self.advanced.append(t)
                self._next_advance(done=False)
        else:  # pragma: no cover - legal_actions() is empty at TERMINAL
            raise StateError(f"no action can be applied in phase {Phase(ph).name}")

    def _place(self, p: int, t: int, x: int) -> None:
        self.loc[p][t] = x
        self.entered[p][t] = True

    # -- turn structure (R4) -------------------------------------------------------------------------------
    def _start_turn(self) -> None:
        """R4 start of turn, then Diplomacy (R5)."""
        g, rs = self.game, self.game.ruleset
        self.turn += 1
        for p in range(g.num_players):
            for t in range(g.num_tokens):
                x = self.loc[p][t]
                if x >= 0 and x == g.central:
                    self.stricken[p][t] = False  # R10: the Convent heals at the start of the turn
            self.stricken[p][g.baron] = False  # R18: a stricken Baron recovers wherever he is (R20 virulent too)
        period = len(rs.trading_cards)
        if (rs.refreshes_trading_cards(self.turn) if self.tiebreak == 0 else (self.tiebreak - 1) % period == 0):
            for p in range(g.num_players):
                self.trade_held[p] = [True] * len(rs.trading_cards)  # R4, R19
        if self.tiebreak == 0 and self.turn > 1 and (self.turn - 1) % rs.plague_reshuffle_every == 0:
            self.plague_drawn = [0] * len(rs.plague_cards)  # R20: all plague cards reshuffled after turn 10
        self.plague_card = -1
        # R5 Diplomacy. Turn 1: the player who placed the last Castle decides.
        if self.turn == 1 and self.tiebreak == 0:
            self.decider = self.placed[-1]
            self.phase = Phase.CHOOSE_ORDER
            return
        tied = self._fewest_vp_players()
        if len(tied) == 1:
            self.decider = tied[0]
            self.phase = Phase.CHOOSE_ORDER
        else:
            self.decider = -1
            self.phase = Phase.CHANCE_DECIDER

    def _start_strategy(self) -> None:
        self.phase = Phase.SELECT
        self.cursor = -1
        self._next_selector()

    def _next_selector(self) -> None:
        """R6: active players select in seat order; hidden from each other (R22)."""
        for p in range(self.cursor + 1, self.num_players):
            if self.active[p]:
                self.cursor = p
                return
        # Plague phase (R18): not in tie-break turns (R19) nor without plague (R20).
        if self.game.ruleset.has_plague and self.tiebreak == 0:
            self.phase = Phase.CHANCE_PLAGUE
        else:
            self._start_movement()

    def _start_movement(self) -> None:
        self.round = 0
        self.cursor = -1
        self._next_reveal()

    def _next_reveal(self) -> None:
        """R7: in order of play, each player reveals one Army Card per round; then Trading Cards."""
        self.token = -1
        rounds = self.game.ruleset.army_cards_selected
        while self.round < rounds:
            self.cursor += 1
            if self.cursor >= len(self.order):
                self.cursor = -1
                self.round += 1
                continue
            p = self.order[self.cursor]
            if any(self.sel_army[p][t] and not self.revealed[p][t] for t in range(self.game.num_tokens)):
                self.phase = Phase.REVEAL
                return
        self.round = rounds
        self.cursor = -1
        self._next_trader()

    def _after_move(self, p: int, t: int) -> None:
        if t == self.game.milady and self._milady_options(p):
            self.phase = Phase.MILADY
        else:
            self._next_reveal()

    def _next_trader(self) -> None:
        """R9: in order of play each player reveals the Trading Card: pay the Mercenaries, then march."""
        while True:
            self.cursor += 1
            if self.cursor >= len(self.order):
                self._start_attacks()
                return
            p = self.order[self.cursor]
            # R25: the card is revealed before anything depends on it, so the presence of the marching step
            # (shillings left after paying the Mercenaries, R9) is computed from public facts only.
            self.trade_revealed[p] = True
            if self.charmed[p]:
                continue  # R13: the card is shown and forfeited
            self.shillings = max(0, self.shillings_of(p, self.sel_trade[p]) - self.merc_moved[p])
            if self.shillings > 0 and self._march_options(p):
                self.phase = Phase.MARCH
                return
            self.shillings = 0

    def _start_attacks(self) -> None:
        self.phase = Phase.ATTACK
        self.cursor = 0
        self._next_attacker()

    def _next_attacker(self) -> None:
        """R11: in order of play; a player with no possible attack passes automatically."""
        while self.cursor < len(self.order):
            if self._attack_targets(self.order[self.cursor]):
                self.phase = Phase.ATTACK
                return
            self.cursor += 1
        self.phase = Phase.ADVANCE
        self.round = -1
        self._next_advance(done=True)

    def _next_advance(self, done: bool) -> None:
        """R14: in order of play, for each won attack, optional free advance."""
        if not done and self._advance_options():
            return
        while True:
            self.round += 1
            self.advanced = []
            if self.round >= len(self.won):
                self._end_turn()
                return
            if self._advance_options():
                self.phase = Phase.ADVANCE
                return

    def _end_turn(self) -> None:
        """R4 end of turn: discard cards of eliminated tokens and the revealed Trading Cards; R19 end."""
        g = self.game
        for p in range(g.num_players):
            for t in range(g.num_tokens):
                if self.loc[p][t] == DEAD:
                    self.army_held[p][t] = False
            if self.sel_trade[p] >= 0:
                self.trade_held[p][self.sel_trade[p]] = False
            self.sel_army[p] = [False] * g.num_tokens
            self.revealed[p] = [False] * g.num_tokens
            self.march_over[p] = [False] * g.num_tokens
            self.attacked[p] = [False] * g.num_tokens
        n = g.num_players
        self.sel_trade = [-1] * n
        self.sel_done = [False] * n
        self.trade_revealed = [False] * n
        self.charmed = [False] * n
        self.merc_moved = [0] * n
        self.won = []
        self.round = 0
        self.cursor = 0
        self.order = []
        if self.turn >= g.ruleset.turns:
            top = max(self.vp)
            leaders = [p for p in range(n) if self.vp[p] == top]
            if len(leaders) == 1 or self.tiebreak >= g.ruleset.tiebreak_max_turns:
                self.winners = leaders
                self.phase = Phase.TERMINAL
                return
            # R19: the tied leaders play extra turns alone, without plague (the Plague Token leaves the map).
            self.tiebreak += 1
            self.active = [p in leaders for p in range(n)]
            self.plague_village = -1
        self._start_turn()

    # -- plague (R18) --------------------------------------------------------------------------------------
    def plague_strikes(self, k: int) -> tuple[int, set[int]]:
        """Where plague card ``k`` drawn now leaves the Plague Token, and the territories it strikes (R18): a move
        card's Village and its neighbours, Lingering Plague the current Village and its neighbours, Border and
        Cross their Hills, Fog none (its friars are the Convent's tokens). Tokens in Castles, Cities and the
        Convent are safe wherever the card strikes."""
        g, m = self.game, self.game.map
        card = g.ruleset.plague_cards[k]
        v = self.plague_village
        if card.effect == "move":
            d = "NESW".index(card.direction)
            for _ in range(card.steps):
                v = m.village_next[v][d]
            return v, {v, *g.neighbors[v]}
        if card.effect == "lingering":
            return v, {v, *g.neighbors[v]}
        if card.effect == "border":
            return v, set(m.border_hills)
        if card.effect == "cross":
            return v, set(m.cross_hills)
        return v, set()

    def _plague(self, k: int) -> None:
        g, rs = self.game, self.game.ruleset
        card = rs.plague_cards[k]
        self.plague_drawn[k] += 1
        self.plague_history.append(k)
        self.plague_card = k
        village, hit = self.plague_strikes(k)
        self.plague_village = village
        if card.effect == "fog" and g.central is not None:
            for p in range(g.num_players):
                for t in range(g.num_tokens):
                    if self.loc[p][t] == g.central:
                        self.loc[p][t] = DEAD  # R18: friars and nuns; nobody scores
        for p in range(g.num_players):
            for t in range(g.num_tokens):
                x = self.loc[p][t]
                if x < 0 or x not in hit or g.kind[x] in (Kind.CITY, Kind.CENTRAL_HILL):
                    continue
                if rs.virulent_plague and t != g.baron:
                    self.loc[p][t] = DEAD  # R20 Virulent Plague
                elif self.stricken[p][t]:
                    self.loc[p][t] = DEAD
                else:
                    self.stricken[p][t] = True
        self._start_movement()

    # -- attacks (R11, R12, R15) ---------------------------------------------------------------------------
    def attack_odds(self) -> tuple[int, int]:
        """(attack force, defence) of the attack being declared (phase ATTACK_JOIN), R11: the joiners' current
        numbers against the defenders' (enemy tokens there but Miladies) plus Wood 5 / Village 3 / City 7.
        The attack wins only if the force is strictly greater. :raises StateError: outside ATTACK_JOIN."""
        if self.phase != Phase.ATTACK_JOIN:
            raise StateError(f"attack_odds: no attack is being declared in phase {Phase(self.phase).name}")
        rs, p, x = self.game.ruleset, self.current_player(), self.target
        force = sum(self.number(p, t) for t in self.joiners)
        bonus = {Kind.WOOD: rs.defence_wood, Kind.VILLAGE: rs.defence_village, Kind.CITY: rs.defence_city}
        return force, sum(self.number(q, u) for q, u in self._defenders(p, x)) + bonus.get(self.game.kind[x], 0)

    def _resolve_attack(self, p: int) -> None:
        g = self.game
        x = self.target
        attackers = list(self.joiners)
        force, defence = self.attack_odds()  # before the attackers are marked: numbers do not depend on it
        defenders = self._defenders(p, x)
        for t in attackers:
            self.attacked[p][t] = True
        if force > defence:
            for q, u in defenders:
                self._defeat(q, u, winner=p)
            if g.kind[x] == Kind.CITY:
                loser = self.owner[x]
                self.owner[x] = p
                self._gain(p, self._city_distance(p, x), f"conquers {g.map.territories[x].name}")
                if loser >= 0:
                    self._gain(loser, -self._city_distance(loser, x), f"loses {g.map.territories[x].name}")
            self.won.append([p, x, attackers, g.baron in attackers])
        else:
            # A lost attack: the attackers are eliminated; the defender (or the City's owner) scores them.
            q = defenders[0][0] if defenders else self.owner[x]
            for t in attackers:
                self._defeat(p, t, winner=q)

    def _city_distance(self, p: int, x: int) -> int:
        return self.game.map.distance[self.castle_territory(p)][x]  # R15: ignoring territory types

    def _defeat(self, p: int, t: int, winner: int) -> None:
        """A token loses a battle: VP to the winner (R15); a Baron is wounded instead of killed (R12)."""
        value = self.number(p, t)
        g = self.game
        if t == g.baron:
            self.loc[p][t] = CASTLE
            self.rest_until[p][t] = self.turn + 1  # R12: cannot move next turn
        else:
            self.loc[p][t] = DEAD
        if winner >= 0:
            self._gain(winner, value, f"defeats {g.player_name(p)} {g.ruleset.army[t].name}")

    def _gain(self, p: int, delta: int, reason: str) -> None:
        """Every VP change goes through here: logged, then the King is checked (R16)."""
        self.vp[p] += delta
        self.vp_log.append((p, delta, reason))
        rs = self.game.ruleset
        if not self.king and max(self.vp) >= rs.king_threshold:
            self.king = True
            for q in range(self.num_players):
                cowards = sum(self.red_number(q, t) for t in range(self.game.num_tokens)
                              if not self.entered[q][t] and self.loc[q][t] != DEAD)
                if cowards:
                    self.vp[q] -= cowards
                    self.vp_log.append((q, -cowards, "the King and the Cowards"))

    # ------------------------------------------------------------------------------------------------------
    # Information (R22) and serialisation
    # ------------------------------------------------------------------------------------------------------
    def to_dict(self) -> dict:
        """Every field of the state as plain JSON values (no ruleset/map: see :meth:`to_json`)."""
        d = {name: _copy_lists(getattr(self, name)) for name in _FIELDS}
        d["vp_log"] = [list(e) for e in self.vp_log]
        return d

    def canonical(self) -> str:
        """A canonical text encoding of the position (the VP log excluded), for comparisons and hashing."""
        return json.dumps([getattr(self, name) for name in _FIELDS], separators=(",", ":"))

    def to_json(self) -> str:
        """A self-contained JSON document: ruleset, map, players and state."""
        return json.dumps({"format": STATE_FORMAT, **self.game.to_dict(), "state": self.to_dict()})

    @classmethod
    def from_json(cls, text: str | dict) -> "State":
        """Read :meth:`to_json` output, every field validated (:func:`engine.serialize.state_from_json`)."""
        return _views["from_json"](text)

    def observation(self, seat: int) -> dict:
        """R22: exactly what ``seat`` may know, as a plain JSON-serialisable dict.

        Others' unrevealed selections are removed (only the count of selected cards, which a player can see
        in their hand, remains); the plague deck is never in the state. Everything else is public.
        """
        if not isinstance(seat, int) or not 0 <= seat < self.num_players:
            raise StateError(f"seat: expected an integer in [0, {self.num_players}), got {seat!r}")
        d = self.to_dict()
        for q in range(self.num_players):
            if q == seat:
                continue
            d["sel_army"][q] = [bool(self.revealed[q][t]) for t in range(self.game.num_tokens)]
            if not self.trade_revealed[q]:
                d["sel_trade"][q] = -1
        d["selected_count"] = [sum(self.sel_army[q]) for q in range(self.num_players)]
        d["seat"] = seat
        d["current_player"] = self.current_player()
        return d

    def information_state_string(self, player: int) -> str:
        return json.dumps(self.observation(player), sort_keys=True, separators=(",", ":"))

    def __str__(self) -> str:
        """The text picture of the position (:func:`engine.render.render_text`)."""
        return _views["text"](self)

    def __repr__(self) -> str:
        return (f"<State turn={self.turn} phase={Phase(self.phase).name} player={self.current_player()} "
                f"vp={self.vp}>")


def new_game(ruleset: Ruleset | None = None, players: int = 4, seed: int = 0, game_map: GameMap | None = None,
             castles: list[int] | None = None) -> State:
    """A new game at its first decision (R21 Castle placement), or at turn 1 from given Castle sites.

    ``seed`` chooses the default map's board order when no map is given; chance nodes are sampled by whoever
    drives the game (see :mod:`engine.record`), so the state itself holds no random generator.
    """
    if ruleset is None:
        ruleset = load_ruleset()
    if game_map is None:
        game_map = load_map(None, seed=seed)
    state = State(Game(ruleset, game_map, players))
    if castles is not None:
        if not isinstance(castles, (list, tuple)) or len(castles) != players:
            raise StateError(f"castles: expected a list of {players} castle site ids, got {castles!r}")
        for p, site in enumerate(castles):
            state.apply_action(state.game.layout.CHANCE_PLAYER + p)
            if not isinstance(site, int) or state.game.layout.PLACE + site not in state.legal_actions():
                where = (f": {state.game.map.site_labels[site]}"
                         if isinstance(site, int) and 0 <= site < len(state.game.map.castle_sites) else "")
                raise StateError(f"castles[{p}]: site {site!r} is not a free castle site on a board of its own{where}")
            state.apply_action(state.game.layout.PLACE + site)
    return state
