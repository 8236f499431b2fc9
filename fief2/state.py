"""The Fief 2 game state: the readable reference implementation of the rulebook and rulings F1-F53.

Vocabulary follows OpenSpiel (and :mod:`engine.state`): :meth:`State.current_player` (a seat, :data:`CHANCE` or
:data:`TERMINAL`), :meth:`State.legal_actions`, :meth:`State.apply_action`, :meth:`State.is_chance_node`,
:meth:`State.chance_outcomes`, :meth:`State.returns`, :meth:`State.observation`, :meth:`State.clone`,
:meth:`State.to_dict` / :meth:`State.from_dict`. Actions are ints (:mod:`fief2.actions`).

The state is flat: ints, bools and lists of them (one slot per person, village, fief, family), so a C core can
mirror it. Decisions that nest (a card that starts a battle, a step that asks consent, a battle that asks for a
retreat) live on ``stack``: a list of frames, each a list of ints ``[FRAME_KIND, fields...]``; the top frame says
who decides and what is legal. When the stack is empty the phase driver (:meth:`State._drive`) moves the turn on
(F8).

Chance (F10, dice everywhere) is explicit: a dealt card is a chance node over the cards of the deck (dealing lazily
from a shuffled deck is the same distribution, and leaves no hidden deck order in the state for a search to peek
at); every die is a chance node over 1..6. A driver samples them with an explicit seed (:mod:`fief2.record`).

Decisions taken here beyond the rulings are named F2-D1.. in docs/fief2-rules.md and cited in comments.
"""

from __future__ import annotations

import json
import numbers
from typing import Any

from engine.errors import IllegalActionError, StateError

from .actions import BUY_ITEMS, W, WORDS, Layout
from .data import Map, Ruleset, load_map, load_ruleset

CHANCE = -1
TERMINAL = -4
MOB = 6  # the mob's "family" code in assaults and battles (F1: the mob is nobody's)
INF_TURN = 10 ** 6
STATE_FORMAT = "fief2-state/1"

# phases (F8)
SETUP, CARDS, INCOME, PURCHASES, MOVEMENT, COMBAT, NEGOTIATION, END_TURN, OVER = range(9)
PHASE_NAMES = ("setup", "cards", "income", "purchases", "movement", "combat", "negotiation", "end of turn", "over")

# frame kinds; the field layout of each is given where it is pushed
(FR_SETUP, FR_DEAL, FR_CARDTURN, FR_TARGET, FR_PLACE, FR_BIRTH, FR_JUSTICE, FR_DICE, FR_ANSWER, FR_PURCHASE,
 FR_MOVE, FR_GROUP, FR_CONSENT, FR_EVAC, FR_BATTLE, FR_LOSSPICK, FR_TITLE, FR_HEIR, FR_CITYSOLDIER, FR_NEGO,
 FR_AMOUNT, FR_TRANSFER, FR_ELECT, FR_RETREAT) = range(24)
FRAME_NAMES = ("setup", "deal", "card turn", "card target", "place person", "birth transfers", "justice window",
               "dice", "answer", "purchase", "movement", "group", "consent", "evacuation", "battle", "loss choice",
               "title choice", "heir choice", "city soldier", "proposals", "amount", "transfer", "election",
               "retreat")

# answer kinds (FR_ANSWER)
A_GIVE, A_ASK, A_MARRY, A_ALLY, A_RELEASE, A_RANSOM = range(6)
# dice purposes (FR_DICE)
D_PLAGUE, D_REVOLT, D_CALM, D_BATTLE = range(4)
# battle stages
B_START, B_JOIN, B_CALM, B_DEF, B_ATT, B_AIM_DEF, B_AIM_ATT, B_ROLL, B_LOSS, B_END = range(10)

RANK_VALUE = {"baron": 30, "count": 40, "duke": 50}


class Game:
    """The fixed part of a game: ruleset, map, number of families, and the action layout."""

    def __init__(self, ruleset: Ruleset | None = None, game_map: Map | None = None, players: int = 4):
        self.map = game_map or load_map()
        self.ruleset = ruleset or load_ruleset(game_map=self.map)
        if not isinstance(players, int) or not 3 <= players <= 6:
            raise StateError(f"players: expected an integer in [3, 6] (F1), got {players!r}")
        self.num_players = players
        rs, m = self.ruleset, self.map
        self.V, self.P, self.C, self.NF = m.num_villages, len(rs.person_ids), len(rs.cards), len(m.fief_ids)
        self.layout = Layout(self.V, self.P, self.C, rs.max_transfer // rs.money_unit + 1,
                             rs.limits["soldiers_per_family"], self.NF, rs.calm_max_steps + 1)
        self.person_card = [-1] * self.P
        for c in rs.cards:
            if c.person >= 0:
                self.person_card[c.person] = c.index
        self.kind = [c.kind for c in rs.cards]
        self.fief_rank = [RANK_VALUE[r] for r in m.fief_rank]
        self.fief_price = [rs.prices[r] for r in m.fief_rank]

    def num_distinct_actions(self) -> int:
        return self.layout.size

    def village_name(self, v: int) -> str:
        return f"{self.map.village_ids[v]} {self.map.village_names[v]}"

    def person_name(self, p: int) -> str:
        return f"{self.ruleset.person_ids[p]} {self.ruleset.person_names[p]}"

    def card_name(self, c: int) -> str:
        card = self.ruleset.cards[c]
        extra = {"lord": self.ruleset.person_names[card.person] if card.person >= 0 else "",
                 "lady": self.ruleset.person_names[card.person] if card.person >= 0 else "",
                 "bishop": card.bishopric_id}.get(card.kind, "")
        return f"{card.id} {card.kind.replace('_', ' ')}" + (f" {extra}" if extra else "")


# state fields, in to_dict order; all ints, bools, or (nested) lists of them
_FIELDS = ("turn", "phase", "step", "first", "alive", "cash", "hands", "discards_seen", "seen_cards",
           "fam", "loc", "onroad", "captor", "conduct", "used", "spouse", "wed", "bishop", "cardinal", "darc", "escrow",
           "sold", "owner", "castle", "city", "mills", "presses",
           "title", "pending", "pend_spouse", "pend_seq", "retained", "capital", "esc_wait",
           "bad_weather", "famine", "tax", "tithe", "king", "queen", "prince", "regent", "regency_end", "kg", "qg",
           "mob_v", "mob_n", "mob_road", "mob_ctrl", "revolt_card", "allied",
           "assaults", "stamp", "garrison", "first_owner", "mob_held", "battle_lost", "won_by", "refused",
           "exit_refused", "calm_bishop", "tally", "winners", "stack", "dice", "aims", "answer", "cand", "votes", "seq",
           "history_len")


class State:
    """One position of a game of Fief 2. Create with :func:`new_game`."""

    def __init__(self, game: Game):
        self.game = g = game
        n, V, P, NF = g.num_players, g.V, g.P, g.NF
        self.turn = 0
        self.phase = SETUP
        self.step = 0  # position inside the phase driver
        self.first = 0  # holder of the First Player card (F7: seat 0 on turn 1)
        self.alive = [True] * n
        self.cash = [0] * n
        self.hands: list[list[int]] = [[] for _ in range(n)]  # card indices, private (F46)
        self.discards_seen: list[list[int]] = [[] for _ in range(n)]  # own discards (F46)
        self.seen_cards: list[list[int]] = [[] for _ in range(n)]  # cards seen change hands (F46, F53.11)
        # persons (F4): family -1 = not on the board
        self.fam = [-1] * P
        self.loc = [-1] * P
        self.onroad = [-1] * P  # village the person came from when standing on a road into loc (F26.3)
        self.captor = [-1] * P  # -1 free, else the holding family (F35)
        self.conduct = [-1] * P  # F35.4: the former captor of a ransomed person, until its family's next move ends
        self.used = [0] * P  # movement counter (F25)
        self.spouse = [-1] * P
        self.wed = [False] * P  # ever married (F12: d'Arc needs never married or widowed... F44)
        self.bishop = [-1] * P  # bishopric index
        self.cardinal = [False] * P
        self.darc = [False] * P
        self.escrow = [0] * P  # F21
        # ordinary Soldiers: sold[f][v] = counts by movement counter used 0..3 (F25)
        self.sold = [[[0, 0, 0, 0] for _ in range(V)] for _ in range(n)]
        self.owner = [-1] * V  # F9
        self.castle = [False] * V
        self.city = [False] * V
        self.mills = [0] * V
        self.presses = [0] * V
        # fief titles (F3, F23, F37, F38)
        self.title = [-1] * NF  # person holding the title
        self.pending = [-1] * NF  # family for which it is pending (F37)
        self.pend_spouse = [-1] * NF  # family of the dead holder's spouse at death (F38.2)
        self.pend_seq = [0] * NF  # order of death (F38)
        self.retained = [-1] * NF  # family retaining it (F38.4)
        self.capital = [-1] * NF
        self.esc_wait = [0] * NF  # escrow of a dead holder, waiting for the heir of this fief (F21)
        # cards in play on the board (card index or -1)
        self.bad_weather = [-1] * NF
        self.famine = [-1] * NF
        self.tax = [-1] * NF
        self.tithe = [-1] * len(g.map.bishopric_ids)
        # the crown (F36, F39, F40)
        self.king = -1
        self.queen = -1
        self.prince = -1
        self.regent = False
        self.regency_end = 0
        self.kg = -1  # King's Guard strength, -1 in the supply
        self.qg = -1
        # the mob (F17, F18)
        self.mob_v = -1
        self.mob_n = 0
        self.mob_road = -1
        self.mob_ctrl = -1
        self.revolt_card = -1
        self.allied = [[False] * n for _ in range(n)]  # F43
        # this turn's assaults (F26, F29): [family or MOB, village, road-from or -1 (inside), target or -1, soldiers]
        self.assaults: list[list[int]] = []
        self.stamp = [INF_TURN] * V  # order of the first assault declared on the village (F29.1)
        self.garrison = [0] * V  # bitmask of families occupying V at the first assault (F30.1)
        self.first_owner = [-1] * V  # owner at the first assault (F30.5)
        self.mob_held = [False] * V  # the mob held V (a City) at the first assault (F30.4)
        self.battle_lost = [False] * V  # the defence lost a token in a battle at V this turn (F9.4)
        self.won_by = [-1] * V  # family that led a winning attack at V this turn (F53.2)
        self.refused: list[int] = []  # villages refused to the moving family this movement turn (F53.4)
        self.exit_refused = [[False] * V for _ in range(n)]  # F26.4: f was refused leaving v this turn
        self.calm_bishop = -1  # the Bishop who calmed the mob in the current battle (F18.5)
        self.tally = [0] * n  # F50
        self.winners: list[int] = []
        self.stack: list[list[int]] = []
        self.dice: list[int] = []
        self.aims: list[list[int]] = [[], []]  # persons aimed at by the defence, the attack (F32)
        self.answer = -1  # last consent answer (1 grant, 0 refuse)
        self.cand = [-1] * n  # F45
        self.votes = [0] * P
        self.seq = 0  # counter for assault stamps and deaths
        self.history_len = 0
        self._legal: list[int] | None = None

    # ==================================================================================================
    # OpenSpiel API
    # ==================================================================================================
    @property
    def num_players(self) -> int:
        return self.game.num_players

    def current_player(self) -> int:
        if self.phase == OVER:
            return TERMINAL
        fr = self.stack[-1]
        return self._actor(fr)

    def is_terminal(self) -> bool:
        return self.phase == OVER

    def is_chance_node(self) -> bool:
        return self.current_player() == CHANCE

    def returns(self) -> list[float]:
        """F51: 1/k to each of k winners, 0 to everyone else (all 0 before the end)."""
        if self.phase != OVER or not self.winners:
            return [0.0] * self.num_players
        share = 1.0 / len(self.winners)
        return [share if p in self.winners else 0.0 for p in range(self.num_players)]

    def chance_outcomes(self) -> list[tuple[int, float]]:
        if not self.is_chance_node():
            return []
        L = self.game.layout
        fr = self.stack[-1]
        if fr[0] == FR_DEAL:
            deck = self.deck()
            return [(L.a("deal", c), 1.0 / len(deck)) for c in deck]
        return [(L.a("die", i), 1.0 / 6) for i in range(6)]

    def legal_actions(self, player: int | None = None) -> list[int]:
        if player is not None and player != self.current_player():
            return []
        if self.phase == OVER:
            return []
        if self._legal is None:
            if self.is_chance_node():
                self._legal = [a for a, _ in self.chance_outcomes()]
            else:
                self._legal = sorted(set(self._gen_legal(self.stack[-1])))
        return list(self._legal)

    def apply_action(self, action: int) -> None:
        if isinstance(action, numbers.Integral) and not isinstance(action, (int, bool)):
            action = int(action)
        legal = self.legal_actions()
        if isinstance(action, bool) or not isinstance(action, int) or action not in legal:
            raise IllegalActionError(
                f"action {action!r} is not legal at {FRAME_NAMES[self.stack[-1][0]] if self.stack else 'the end'} "
                f"for {self.current_player()}; legal: "
                + ", ".join(self.action_to_string(a) for a in legal[:6]))
        self._legal = None
        kind, arg = self.game.layout.decode(action)
        self._apply(self.stack[-1], kind, arg)
        self.history_len += 1
        self._settle()
        self._legal = None

    def clone(self) -> "State":
        other = State.__new__(State)
        other.game = self.game
        for name in _FIELDS:
            setattr(other, name, _copy(getattr(self, name)))
        other._legal = None
        return other

    def action_to_string(self, action: int, player: int | None = None) -> str:
        g = self.game
        kind, x = g.layout.decode(action)
        L = g.layout
        F = L.MAX_FAMILIES
        if kind == "word":
            return WORDS[x]
        if kind == "die":
            return f"die {x + 1}"
        if kind in ("deal", "play", "discard", "hand_over"):
            return f"{kind.replace('_', ' ')} {g.card_name(x)}"
        if kind == "give":
            return f"give {g.card_name(x // F)} to family {x % F}"
        if kind in ("ask", "family", "ally", "unally", "gift"):
            return {"ask": "ask a card of", "family": "family", "ally": "propose alliance to",
                    "unally": "end alliance with", "gift": "gift to"}[kind] + f" family {x}"
        if kind in ("person", "aim", "vote", "candidate", "prisoner"):
            return f"{kind} {g.person_name(x)}"
        if kind in ("village", "group", "mob"):
            return {"village": "village", "group": "group at", "mob": "mob to"}[kind] + f" {g.village_name(x)}"
        if kind in ("fief", "transfer"):
            return f"{'fief' if kind == 'fief' else 'transfer title of'} {g.map.fief_ids[x]}"
        if kind == "amount":
            return f"amount {x * g.ruleset.money_unit}"
        if kind == "soldiers":
            return f"soldiers used {x // L.K}: {x % L.K}"
        if kind == "buy":
            return f"buy {BUY_ITEMS[x]}"
        if kind == "marry":
            return f"propose marriage {g.person_name(x // g.P)} with {g.person_name(x % g.P)}"
        if kind in ("release", "ransom"):
            return f"{'release' if kind == 'release' else 'ransom'} {g.person_name(x)}"
        if kind == "inside":
            return f"inside assault at {g.village_name(x // F)} on family {x % F}"
        if kind == "calm":
            k = x % L.calm_steps
            return f"calm by {g.person_name(x // L.calm_steps)} paying {k * g.ruleset.calm_step_price}"
        return f"{kind} {x}"  # pragma: no cover

    def string_to_action(self, text: str) -> int:
        for a in self.legal_actions():
            if self.action_to_string(a) == text:
                return a
        raise IllegalActionError(f"no legal action reads {text!r}")

    # ==================================================================================================
    # derived facts (F1)
    # ==================================================================================================
    def order(self) -> list[int]:
        """F1: clockwise from the First Player, skipping eliminated families."""
        n = self.num_players
        return [(self.first + i) % n for i in range(n) if self.alive[(self.first + i) % n]]

    def deck(self) -> list[int]:
        """F10: every blue card neither in a hand nor in play."""
        out = set(range(self.game.C))
        for h in self.hands:
            out.difference_update(h)
        out.difference_update(self.in_play())
        return sorted(out)

    def in_play(self) -> list[int]:
        g = self.game
        cards = []
        for p in range(g.P):
            if self.fam[p] >= 0:
                cards.append(g.person_card[p])
                if self.darc[p]:
                    cards.append(self._card_of_kind("darc"))
                if self.bishop[p] >= 0:
                    cards.append(self._bishop_card(self.bishop[p]))
        for lst in (self.bad_weather, self.famine, self.tax, self.tithe):
            cards.extend(c for c in lst if c >= 0)
        if self.revolt_card >= 0:
            cards.append(self.revolt_card)
        return cards

    def _card_of_kind(self, kind: str) -> int:
        return self.game.kind.index(kind)

    def _bishop_card(self, b: int) -> int:
        for c in self.game.ruleset.cards:
            if c.kind == "bishop" and c.bishopric == b:
                return c.index
        raise StateError(f"no bishop card for bishopric {b}")  # pragma: no cover

    def free(self, p: int) -> bool:
        return self.fam[p] >= 0 and self.captor[p] == -1

    def persons_of(self, f: int) -> list[int]:
        return [p for p in range(self.game.P) if self.fam[p] == f]

    def free_at(self, f: int, v: int, road: bool = False) -> list[int]:
        """Free persons of f in village v (on a road into v too when ``road``)."""
        return [p for p in range(self.game.P) if self.fam[p] == f and self.captor[p] == -1 and self.loc[p] == v
                and (road or self.onroad[p] == -1)]

    def male(self, p: int) -> bool:
        return self.game.ruleset.person_male[p]

    def fief_titles(self, p: int) -> list[int]:
        return [y for y in range(self.game.NF) if self.title[y] == p]

    def crowned(self, p: int) -> bool:
        """F1: holding Baron, Count, Duke, King, Queen or Prince."""
        return bool(self.fief_titles(p)) or p in (self.king, self.queen, self.prince)

    def crown_rank(self, p: int, without: int = -1) -> int:
        """F24/F53.16: the highest crown of p (King 50 = Duke 50 > Count 40 > Queen 30 = Baron 30)."""
        r = [self.game.fief_rank[y] for y in self.fief_titles(p) if y != without]
        if p == self.king:
            r.append(50)
        if p == self.queen:
            r.append(30)
        return max(r, default=0)

    def force_of_person(self, p: int) -> int:
        """F1: free Lord 1, free crowned Lady 1, free d'Arc 6; others 0."""
        if not self.free(p):
            return 0
        if self.darc[p]:
            return self.game.ruleset.darc_force
        if self.male(p) or self.crowned(p):
            return 1
        return 0

    def fief_family(self, y: int) -> int:
        """F1: the family holding fief y (title on a person, pending or retained), -1 if in the supply."""
        if self.title[y] >= 0:
            return self.fam[self.title[y]]
        if self.pending[y] >= 0:
            return self.pending[y]
        return self.retained[y]

    def kg_leader(self) -> int:
        """F36.2: the Regent during a Regency, else the King; -1 when the Guard is in the supply."""
        if self.kg < 0:
            return -1
        return self.queen if self.regent else self.king

    def qg_leader(self) -> int:
        return self.queen if self.qg >= 0 else -1

    def guards_at(self, f: int, v: int, road: bool = False) -> tuple[int, int]:
        """(Queen's Guard, King's Guard) soldiers of family f standing in v (F36.1; off board if the leader is a
        prisoner, F36.4)."""
        out = []
        for leader, strength in ((self.qg_leader(), self.qg), (self.kg_leader(), self.kg)):
            ok = (leader >= 0 and self.fam[leader] == f and self.captor[leader] == -1 and self.loc[leader] == v
                  and (road or self.onroad[leader] == -1))
            out.append(strength if ok else 0)
        return out[0], out[1]

    def soldiers_at(self, f: int, v: int) -> int:
        """Soldiers (ordinary and Guard) of f in village v, roads excluded."""
        q, k = self.guards_at(f, v)
        return sum(self.sold[f][v]) + q + k

    def occupies(self, f: int, v: int) -> bool:
        """F1: a Soldier or a free person of f in v."""
        return self.soldiers_at(f, v) > 0 or bool(self.free_at(f, v))

    def has_tokens(self, f: int, v: int) -> bool:
        """Any token of f in v (prisoners it holds included)."""
        if self.occupies(f, v):
            return True
        return any(self.captor[p] == f and self.loc[p] == v and self.onroad[p] == -1 for p in range(self.game.P))

    def families_in(self, v: int) -> list[int]:
        return [f for f in range(self.num_players) if self.occupies(f, v)]

    def mob_in(self, v: int) -> bool:
        return self.mob_v == v and self.mob_n > 0 and self.mob_road == -1

    def empty(self, v: int) -> bool:
        """No token at all in v (persons of any status, soldiers, peasants)."""
        if self.mob_in(v):
            return False
        if any(sum(self.sold[f][v]) for f in range(self.num_players)):
            return False
        return not any(self.loc[p] == v and self.onroad[p] == -1 and self.fam[p] >= 0 for p in range(self.game.P))

    def master(self, v: int) -> int:
        """F1: MOB if Peasants hold v; else the owner if it occupies v; else most Soldiers plus free persons (ties:
        earliest in turn order); -1 if nobody."""
        if self.mob_in(v):
            return MOB
        o = self.owner[v]
        if o >= 0 and self.occupies(o, v):
            return o
        best, best_n = -1, 0
        for f in self.order():
            k = self.soldiers_at(f, v) + len(self.free_at(f, v))
            if k > best_n:
                best, best_n = f, k
        return best

    def controls(self, f: int, v: int) -> bool:
        """F1: owns v and occupies it, or v lies in a fief held by f whose capital f occupies."""
        if self.owner[v] != f:
            return False
        if self.occupies(f, v):
            return True
        y = self.game.map.village_fief[v]
        return self.fief_family(y) == f and self.capital[y] >= 0 and self.occupies(f, self.capital[y])

    def enfeoffed(self, v: int) -> bool:
        y = self.game.map.village_fief[v]
        return self.fief_family(y) >= 0 and self.capital[y] >= 0

    def enemies(self, f: int, q: int) -> bool:
        return f != q and not self.allied[f][q]

    def united(self, f: int, q: int) -> bool:
        """F1: at least one living couple joins the two families."""
        if f == q:
            return False
        return any(self.fam[p] == f and self.spouse[p] >= 0 and self.fam[self.spouse[p]] == q
                   for p in range(self.game.P))

    def fiefs_held(self, f: int) -> int:
        return sum(1 for y in range(self.game.NF) if self.fief_family(y) == f)

    def power(self, f: int) -> int:
        """F50: titles of its persons (prisoners too), pending and retained fief titles, plus floor(cash/50)."""
        pts = self.game.ruleset.points
        total = 0
        for y in range(self.game.NF):
            if self.fief_family(y) == f:
                total += pts[self.game.map.fief_rank[y]]
        for p in self.persons_of(f):
            total += pts["king"] * (p == self.king) + pts["queen"] * (p == self.queen)
            total += pts["prince"] * (p == self.prince)
            if self.bishop[p] >= 0:
                total += pts["bishop"] + pts["cardinal"] * self.cardinal[p]
        return total + self.cash[f] // pts["florins_per_point"]

    def tokens_total(self, f: int) -> int:
        """Soldiers (roads included) plus persons of f on the board: F49's elimination test."""
        n = sum(sum(self.sold[f][v]) for v in range(self.game.V))
        n += sum(a[4] for a in self.assaults if a[0] == f)
        q, k = self.qg_leader(), self.kg_leader()
        n += max(self.qg, 0) if q >= 0 and self.fam[q] == f and self.captor[q] == -1 else 0
        n += max(self.kg, 0) if k >= 0 and self.fam[k] == f and self.captor[k] == -1 else 0
        return n + len(self.persons_of(f))

    def cardinals(self) -> int:
        return sum(self.cardinal)

    # ==================================================================================================
    # who acts
    # ==================================================================================================
    def _actor(self, fr: list[int]) -> int:
        k = fr[0]
        if k in (FR_DEAL, FR_DICE):
            return CHANCE
        if k == FR_JUSTICE:
            return self._justice_asked(fr)[fr[2]]
        if k == FR_ANSWER:
            return fr[2]
        if k == FR_CONSENT:
            return fr[2]
        if k == FR_BATTLE:
            return self._battle_actor(fr)
        if k == FR_NEGO:
            return self.order()[fr[2]]
        if k == FR_ELECT:
            return fr[3]
        return fr[1]

    # ==================================================================================================
    # settle: run automatic steps until a decision or the end
    # ==================================================================================================
    def _settle(self) -> None:
        guard = 0
        while self.phase != OVER:
            guard += 1
            if guard > 100_000:  # pragma: no cover
                raise StateError("the rules loop without a decision")
            if not self.stack:
                self._drive()
                continue
            fr = self.stack[-1]
            if not self._auto(fr):
                return

    def _push(self, *fields: int) -> None:
        self.stack.append(list(fields))

    # ==================================================================================================
    # the phase driver (F8)
    # ==================================================================================================
    def _drive(self) -> None:
        n = self.num_players
        if self.phase == SETUP:
            if self.step < n:  # F7: in seat order
                self._push(FR_SETUP, self.step, 0, -1)
                self.step += 1
            else:
                self.turn, self.phase, self.step = 1, CARDS, 0
        elif self.phase == CARDS:
            order = self.order()
            if self.step == 0:
                self.step = 1
                self._push(FR_DEAL, 0)  # F10
            elif self.step - 1 < len(order):
                self._push(FR_CARDTURN, order[self.step - 1], self.game.ruleset.card_actions)  # F11
                self.step += 1
            else:
                self.phase, self.step = INCOME, 0
        elif self.phase == INCOME:
            self._income()
            self.phase, self.step = PURCHASES, 0
        elif self.phase == PURCHASES:
            order = self.order()
            if self.step < len(order):
                self._push(FR_PURCHASE, order[self.step], -1, 0, -1, -1)  # F22
                self.step += 1
            else:
                self.phase, self.step = MOVEMENT, 0
        elif self.phase == MOVEMENT:
            order = self.order()
            if self.step < len(order):
                self.refused = []
                self._push(FR_MOVE, order[self.step], 0, 0)  # F25
                self.step += 1
            else:
                self.phase, self.step = COMBAT, 0
        elif self.phase == COMBAT:
            self._drive_combat()
        elif self.phase == NEGOTIATION:
            if self.step == 0:  # F41 (1): inheritance
                if not self._next_inheritance():
                    self.step = 1
            elif self.step == 1:  # F41 (2): proposal rounds
                self.step = 2
                if self.game.ruleset.negotiation_rounds > 0:
                    self._push(FR_NEGO, 0, 0, 0)
            elif self.step == 2:  # F41 (3): the election
                self.step = 3
                if self.king < 0:
                    self.cand = [-1] * n
                    self.votes = [0] * self.game.P
                    self._push(FR_ELECT, 0, 0, -1, 0)
            else:
                self.phase, self.step = END_TURN, 0
        elif self.phase == END_TURN:
            self._end_turn()

    def _combat_order(self) -> list[int]:
        """F29.1-2: villages in the order of their first declaration, each village's battles in declaration order."""
        return sorted(range(len(self.assaults)), key=lambda i: (self.stamp[self.assaults[i][1]], i))

    def _drive_combat(self) -> None:
        seqs = self._combat_order()
        i, half = divmod(self.step, 2)
        if i >= len(seqs):
            self._end_combat_phase()
            return
        a = self.assaults[seqs[i]]
        v = a[1]
        if half == 0:
            self.step += 1
            self._start_battle(seqs[i])
        else:
            self.step += 1
            last = i + 1 == len(seqs) or self.assaults[seqs[i + 1]][1] != v
            if last:
                self._end_village_combat(v)

    def _end_combat_phase(self) -> None:
        # attackers left on roads (a battle skipped because nobody was left to fight) enter the village
        for p in range(self.game.P):
            if self.fam[p] >= 0 and self.onroad[p] >= 0:
                self.onroad[p] = -1
        for a in self.assaults:
            if a[0] != MOB and a[4]:
                self.sold[a[0]][a[1]][3] += a[4]
                a[4] = 0
        if self.mob_road >= 0:
            self.mob_road = -1
        self.assaults = []
        V = self.game.V
        self.stamp, self.garrison, self.first_owner = [INF_TURN] * V, [0] * V, [-1] * V
        self.mob_held, self.battle_lost, self.won_by = [False] * V, [False] * V, [-1] * V
        for v in range(V):
            self._check_owner(v)
        self._free_unescorted()
        self.phase, self.step = NEGOTIATION, 0

    # ==================================================================================================
    # automatic frame steps; True when something changed
    # ==================================================================================================
    def _auto(self, fr: list[int]) -> bool:
        k = fr[0]
        if k == FR_DEAL:
            if all(len(self.hands[f]) >= self.game.ruleset.hand_size for f in self.order()):
                self.stack.pop()
                return True
            return False
        if k == FR_CARDTURN:
            if fr[2] <= 0:
                self.stack.pop()
                return True
            return False
        if k == FR_JUSTICE:
            if fr[2] >= len(self._justice_asked(fr)):
                self.stack.pop()
                return True
            return False
        if k == FR_DICE:
            if len(self.dice) >= fr[1]:
                self.stack.pop()
                self._after_dice(fr)
                return True
            return False
        if k == FR_GROUP:
            return self._auto_group(fr)
        if k == FR_RETREAT:
            return self._auto_retreat(fr)
        if k == FR_BATTLE:
            return self._auto_battle(fr)
        if k == FR_ELECT:
            return self._auto_elect(fr)
        if k == FR_CITYSOLDIER:
            if not self._gen_legal(fr):  # F38: "if it can do neither, the City stays empty"
                self.stack.pop()
                return True
            return False
        if k == FR_LOSSPICK:
            if fr[2] <= 0:
                self.stack.pop()
                return True
            return False
        if k == FR_ANSWER and self.fam_gone(fr[2]):
            self.stack.pop()
            return True
        return False

    def fam_gone(self, f: int) -> bool:
        return f >= self.num_players or not self.alive[f]

    # ==================================================================================================
    # legal actions per frame
    # ==================================================================================================
    def _gen_legal(self, fr: list[int]) -> list[int]:
        L = self.game.layout
        k = fr[0]
        if k == FR_SETUP:
            if fr[2] == 0:  # F7.2: a man, face up
                return [L.a("person", p) for p in range(self.game.P) if self.male(p) and self.fam[p] < 0]
            return [L.a("village", v) for v in range(self.game.V) if self.empty(v)]
        if k == FR_CARDTURN:
            return self._legal_cardturn(fr)
        if k == FR_TARGET:
            return self._card_targets(fr[1], fr[2], fr[3], fr[4])
        if k == FR_BIRTH:
            return [L.word("STOP")] + [L.a("transfer", y) for y in self._transferable(fr[1], fr[2])]
        if k == FR_JUSTICE:
            f = self._justice_asked(fr)[fr[2]]
            out = [L.word("END")]
            if self._card_of_kind("justice") in self.hands[f]:
                out += [L.a("person", p) for p in self._justice_targets(fr[1])]
            return out
        if k == FR_ANSWER:
            if fr[3] == A_ASK:
                return [L.word("REFUSE")] + [L.a("hand_over", c) for c in self.hands[fr[2]]]
            return [L.word("ACCEPT"), L.word("REFUSE")]
        if k == FR_CONSENT:
            return [L.word("ACCEPT"), L.word("REFUSE")]
        if k == FR_PURCHASE:
            return self._legal_purchase(fr)
        if k == FR_MOVE:
            return self._legal_move(fr)
        if k == FR_GROUP:
            return self._legal_group(fr)
        if k == FR_EVAC:
            out = [L.word("END")]
            if self.free_at(fr[1], fr[2]) and self._destinations(fr[1], fr[2], 1, 0):
                out.append(L.a("group", fr[2]))
            return out
        if k == FR_RETREAT:
            return [L.word("STOP")] + [L.a("village", w) for w in self._destinations(fr[1], fr[2], 2, fr[3])]
        if k == FR_BATTLE:
            return self._legal_battle(fr)
        if k == FR_LOSSPICK:
            return [L.a("person", p) for p in self._fighting_persons(fr[1], fr[3], fr[4])]
        if k == FR_TITLE or k == FR_HEIR:
            return [L.a("person", p) for p in self._decode_mask(fr[3])]
        if k == FR_CITYSOLDIER:
            return self._legal_city_soldier(fr)
        if k == FR_NEGO:
            return self._legal_nego(fr)
        if k == FR_AMOUNT:
            lo, hi = self._amount_range(fr)
            return [L.a("amount", m) for m in range(lo, hi + 1)]
        if k == FR_TRANSFER:
            holder = self.title[fr[2]]
            return [L.a("person", b) for b in self.persons_of(fr[1]) if self.free(b) and b != holder]
        if k == FR_ELECT:
            return self._legal_elect(fr)
        raise StateError(f"no decision in frame {fr}")  # pragma: no cover

    @staticmethod
    def _decode_mask(mask: int) -> list[int]:
        return [i for i in range(mask.bit_length()) if mask >> i & 1]

    # ==================================================================================================
    # applying an action
    # ==================================================================================================
    def _apply(self, fr: list[int], kind: str, x: int) -> None:
        L = self.game.layout
        word = WORDS[x].replace(" ", "_").upper() if kind == "word" else ""
        k = fr[0]
        if k == FR_SETUP:
            if fr[2] == 0:
                fr[3], fr[2] = x, 1
            else:  # F7.2: the person, 8 Soldiers and a Castle; 300 florins
                rs, seat, p = self.game.ruleset, fr[1], fr[3]
                self.fam[p], self.loc[p] = seat, x
                self.sold[seat][x][0] += rs.start_soldiers
                self.castle[x] = rs.start_castles > 0
                self.owner[x] = seat
                self.cash[seat] += rs.start_cash
                self.stack.pop()
        elif k == FR_DEAL:
            order = self.order()
            i = fr[1]
            for j in range(len(order)):
                f = order[(i + j) % len(order)]
                if len(self.hands[f]) < self.game.ruleset.hand_size:
                    self.hands[f].append(x)
                    self.hands[f].sort()
                    fr[1] = (i + j + 1) % len(order)
                    break
        elif k == FR_CARDTURN:
            self._do_cardturn(fr, kind, x)
        elif k == FR_TARGET:
            self._do_target(fr, kind, x)
        elif k == FR_BIRTH:
            if word == "STOP":
                self.stack.pop()
            else:
                self._push(FR_TRANSFER, fr[1], x)
        elif k == FR_JUSTICE:
            if word == "END":
                fr[2] += 1
            else:  # F15.3: the executed person dies; the window closes
                f = self._justice_asked(fr)[fr[2]]
                self.hands[f].remove(self._card_of_kind("justice"))
                self.stack.pop()
                self._kill([x])
        elif k == FR_DICE:
            self.dice.append(x + 1)
        elif k == FR_ANSWER:
            self.stack.pop()
            self._do_answer(fr, kind, x, word)
        elif k == FR_CONSENT:
            self.answer = 1 if word == "ACCEPT" else 0
            self.stack.pop()
        elif k == FR_PURCHASE:
            self._do_purchase(fr, kind, x, word)
        elif k == FR_MOVE:
            self._do_move(fr, kind, x, word)
        elif k == FR_GROUP:
            self._do_group(fr, kind, x, word)
        elif k == FR_EVAC:
            if word == "END":
                self.stack.pop()
            else:
                self._push(FR_GROUP, fr[1], fr[2], 0, 0, 0, 0, 0, 0, 1, -1, 0)
        elif k == FR_RETREAT:
            self._do_retreat(fr, kind, x, word)
        elif k == FR_BATTLE:
            self._do_battle(fr, kind, x, word)
        elif k == FR_LOSSPICK:
            fr[2] -= 1
            self._kill([x], in_battle=True)
        elif k == FR_TITLE:
            self.stack.pop()
            self._set_title(fr[2], x)
        elif k == FR_HEIR:
            self.stack.pop()
            self._receive_title(fr[2], x, fr[4])
        elif k == FR_CITYSOLDIER:
            self.stack.pop()
            f, city = fr[1], fr[2]
            if word == "BUY_SOLDIER":
                self.cash[f] -= self.game.ruleset.prices["soldier"]
            else:
                self._take_soldier(f, x)
            self.sold[f][city][0] += 1
        elif k == FR_NEGO:
            self._do_nego(fr, kind, x, word)
        elif k == FR_AMOUNT:
            self._do_amount(fr, x)
        elif k == FR_TRANSFER:
            self.stack.pop()
            self.title[fr[2]] = x  # F24
        elif k == FR_ELECT:
            self._do_elect(fr, kind, x, word)

    # ==================================================================================================
    # D. Cards phase (F10-F17)
    # ==================================================================================================
    def _legal_cardturn(self, fr: list[int]) -> list[int]:
        """F11: play, discard, give, ask, or end; F47: always offered, even with an empty hand."""
        L, f = self.game.layout, fr[1]
        out = [L.word("END")]
        hs = self.game.ruleset.hand_size
        for c in self.hands[f]:
            out.append(L.a("discard", c))
            if self._card_targets(f, c, 0, -1):
                out.append(L.a("play", c))
            for q in range(self.num_players):
                if self.alive[q] and self.united(f, q) and len(self.hands[q]) < hs:
                    out.append(L.a("give", c * L.MAX_FAMILIES + q))
        if len(self.hands[f]) < hs:
            for q in range(self.num_players):
                if self.alive[q] and self.united(f, q) and self.hands[q]:
                    out.append(L.a("ask", q))
        return out

    def _do_cardturn(self, fr: list[int], kind: str, x: int) -> None:
        f = fr[1]
        L = self.game.layout
        if kind == "word":  # end
            self.stack.pop()
            return
        fr[2] -= 1
        if kind == "play":
            self.hands[f].remove(x)
            self._push(FR_TARGET, f, x, 0, -1)
        elif kind == "discard":  # F11: face down, rejoins the deck at the next shuffle
            self.hands[f].remove(x)
            self.discards_seen[f].append(x)
        elif kind == "give":
            c, q = divmod(x, L.MAX_FAMILIES)
            self.seen_cards[q].append(c)  # F53.11: the receiver sees the offered card
            self._push(FR_ANSWER, f, q, A_GIVE, c, 0, 0)
        elif kind == "ask":
            self._push(FR_ANSWER, f, x, A_ASK, 0, 0, 0)

    def _do_answer(self, fr: list[int], kind: str, x: int, word: str) -> None:
        a, b, what = fr[1], fr[2], fr[3]
        if word == "REFUSE":
            return
        if what == A_GIVE:  # F11
            if fr[4] in self.hands[a]:
                self.hands[a].remove(fr[4])
                self.hands[b].append(fr[4])
                self.hands[b].sort()
        elif what == A_ASK:
            self.hands[b].remove(x)
            self.hands[a].append(x)
            self.hands[a].sort()
            self.seen_cards[a].append(x)
        elif what == A_MARRY:
            self._marry(fr[4], fr[5])
        elif what == A_ALLY:  # F43
            self.allied[a][b] = self.allied[b][a] = True
        elif what in (A_RELEASE, A_RANSOM):  # F42: p's escrow first, then cash
            p, m = fr[4], fr[5]
            if self.fam[p] < 0 or self.captor[p] < 0:
                return
            pf, cap = self.fam[p], self.captor[p]
            if self.escrow[p] + self.cash[pf] < m:
                return
            from_escrow = min(self.escrow[p], m)
            self.escrow[p] -= from_escrow
            self.cash[pf] -= m - from_escrow
            self.cash[cap] += m
            self._release(p)
            self.conduct[p] = cap  # F35.4: safe conduct from the former captor

    # ---- what a card may be played on (F12) ----------------------------------------------------------
    def _card_targets(self, f: int, c: int, stage: int, arg: int) -> list[int]:
        g, L = self.game, self.game.layout
        kind = g.kind[c]
        NF, V = g.NF, g.V
        if kind in ("lord", "lady"):
            p = g.ruleset.cards[c].person
            if self.fam[p] >= 0 or len(self.persons_of(f)) >= g.ruleset.max_persons:
                return []
            out = [L.a("village", v) for v in self._placement_villages(f)]
            if self._prince_allowed(f, p):
                out.append(L.word("MAKE_PRINCE"))
            return out
        if kind == "darc":  # F12: own free Lady, unmarried, holding no title
            return [L.a("person", p) for p in self.persons_of(f) if self.free(p) and not self.male(p)
                    and self.spouse[p] < 0 and not self.crowned(p)]
        if kind == "bishop":
            if any(self.bishop[p] == g.ruleset.cards[c].bishopric for p in range(g.P) if self.fam[p] >= 0):
                return []  # pragma: no cover - the card is in a hand, so its Bishop is not on the board
            return [L.a("person", p) for p in self.persons_of(f) if self.free(p) and self.male(p)
                    and self.spouse[p] < 0 and p not in (self.king, self.prince) and self.bishop[p] < 0]
        if kind == "tithe":
            return [L.a("person", p) for p in self.persons_of(f) if self.bishop[p] >= 0
                    and self.tithe[self.bishop[p]] < 0]
        if kind == "tax":
            return [L.a("fief", y) for y in range(NF) if self.title[y] >= 0 and self.fam[self.title[y]] == f
                    and self.tax[y] < 0]
        if kind == "escape":
            if stage == 0:
                return [L.a("village", v) for v in range(V) if self._own_prisoners_at(f, v)]
            return [L.a("village", v) for v in range(V) if not self.mob_in(v) and self.mob_v != v and
                    not any(self.has_tokens(q, v) for q in range(self.num_players) if q != f)]
        if kind in ("plague", "bad_weather", "famine"):
            lst = {"plague": None, "bad_weather": self.bad_weather, "famine": self.famine}[kind]
            return [L.a("fief", y) for y in range(NF) if lst is None or lst[y] < 0]
        if kind in ("good_weather", "good_harvest"):
            lst = self.bad_weather if kind == "good_weather" else self.famine
            return [L.a("fief", y) for y in range(NF) if lst[y] >= 0]
        if kind == "assassin":
            return [L.a("person", p) for p in range(g.P) if self.fam[p] >= 0]
        if kind == "peasant_revolt":
            if self.revolt_card >= 0:
                return []
            if stage == 0:
                return [L.a("fief", y) for y in range(NF) if self.famine[y] >= 0 and self._revolt_villages(y)]
            return [L.a("village", v) for v in self._revolt_villages(arg)]
        return []  # justice: only in the window (F15)

    def _revolt_villages(self, y: int) -> list[int]:
        vs = self.game.map.fief_villages[y]
        if self.bad_weather[y] >= 0:  # F16: under Bad Weather only an empty village
            return [v for v in vs if self.empty(v) and not self._road_tokens(v)]
        return [v for v in vs if not self._road_tokens(v)]

    def _road_tokens(self, v: int) -> bool:
        return any(self.fam[p] >= 0 and self.loc[p] == v and self.onroad[p] >= 0 for p in range(self.game.P))

    def _own_prisoners_at(self, f: int, v: int) -> list[int]:
        return [p for p in range(self.game.P) if self.fam[p] == f and self.captor[p] >= 0 and self.loc[p] == v]

    def _placement_villages(self, f: int) -> list[int]:
        """F13.1: the first non-empty tier of (1) own Castle/City villages, (2) occupied villages, (3) allied
        families' villages, (4) unowned villages holding no token."""
        V = range(self.game.V)
        tiers = ([v for v in V if self.owner[v] == f and (self.castle[v] or self.city[v]) and not self.mob_in(v)],
                 [v for v in V if self.occupies(f, v)],
                 [v for v in V if self.owner[v] >= 0 and self.allied[f][self.owner[v]] and not self.mob_in(v)],
                 [v for v in V if self.owner[v] < 0 and self.empty(v)])
        for t in tiers:
            if t:
                return t
        return []

    def _prince_allowed(self, f: int, p: int) -> bool:
        """F40.2: a King lives, his wife is the Queen, neither is a prisoner, no Prince; a man of their families."""
        k, q = self.king, self.queen
        return (self.male(p) and self.prince < 0 and k >= 0 and q >= 0 and self.spouse[k] == q
                and self.free(k) and self.free(q) and f in (self.fam[k], self.fam[q]))

    def _do_target(self, fr: list[int], kind_: str, x: int) -> None:
        g = self.game
        f, c, stage = fr[1], fr[2], fr[3]
        kind = g.kind[c]
        if kind in ("lord", "lady"):
            self.stack.pop()
            p = g.ruleset.cards[c].person
            self.fam[p], self.captor[p], self.onroad[p], self.used[p] = f, -1, -1, 0
            self.spouse[p], self.escrow[p] = -1, 0
            if kind_ == "word":  # F40.2: made Prince, beside the King
                self.loc[p] = self.loc[self.king] if self.onroad[self.king] < 0 else self.onroad[self.king]
                self.prince = p
            else:
                self.loc[p] = x
            for y in range(g.NF):  # F13.3: retained titles pass to the newborn
                if self.retained[y] == f:
                    self.retained[y] = -1
                    self._set_title(y, p)
            self._check_owner(self.loc[p])
            if self._transferable(f, p):
                self._push(FR_BIRTH, f, p)  # F13.4
        elif kind == "darc":
            self.stack.pop()
            self.darc[x] = True
        elif kind == "bishop":
            self.stack.pop()
            self.bishop[x] = g.ruleset.cards[c].bishopric
        elif kind == "tithe":
            self.stack.pop()
            self.tithe[self.bishop[x]] = c
        elif kind == "tax":
            self.stack.pop()
            self.tax[x] = c
        elif kind == "escape":
            if stage == 0:
                fr[3], fr[4] = 1, x
            else:  # F12: all the family's prisoners there, freed together on the chosen village
                self.stack.pop()
                for p in self._own_prisoners_at(f, fr[4]):
                    self._release(p)
                    self.loc[p], self.onroad[p] = x, -1
                self._check_owner(x)
                self._check_owner(fr[4])
        elif kind == "plague":
            self.stack.pop()
            self._plague(x)
        elif kind == "assassin":  # F15
            self.stack.pop()
            self._push(FR_JUSTICE, f, 0)
            self._kill([x])
        elif kind == "bad_weather":
            self.stack.pop()
            self.bad_weather[x] = c
        elif kind == "famine":
            self.stack.pop()
            self.famine[x] = c
        elif kind in ("good_weather", "good_harvest"):  # both cards are discarded
            self.stack.pop()
            (self.bad_weather if kind == "good_weather" else self.famine)[x] = -1
        elif kind == "peasant_revolt":
            if stage == 0:
                fr[3], fr[4] = 1, x
            else:  # F17.1: three dice of Peasants
                self.stack.pop()
                self.dice = []
                self._push(FR_DICE, g.ruleset.revolt_dice, D_REVOLT, x, f, c)

    def _justice_asked(self, fr: list[int]) -> list[int]:
        """F15.1: every other non-eliminated family, in turn order starting left of the assassin."""
        n, a = self.num_players, fr[1]
        return [(a + i) % n for i in range(1, n) if self.alive[(a + i) % n]]

    def _justice_targets(self, a: int) -> list[int]:
        """F15.2: free persons of the assassin's family, except the King, the Prince and the Regent."""
        return [p for p in self.persons_of(a) if self.free(p) and p != self.king and p != self.prince
                and not (p == self.queen and self.regent)]

    def _plague(self, y: int) -> None:
        """F14: halve each family's Soldiers per village (ordinary, then Queen's, then King's Guard); then a die
        for every person in the fief."""
        for v in self.game.map.fief_villages[y]:
            for f in range(self.num_players):
                qg, kgd = self.guards_at(f, v)
                n = sum(self.sold[f][v]) + qg + kgd
                self._remove_soldiers(f, v, n // 2)
        persons = [p for p in range(self.game.P) if self.fam[p] >= 0 and self.loc[p] >= 0
                   and self.game.map.village_fief[self.loc[p]] == y]
        if persons:
            self.dice = []
            self._push(FR_DICE, len(persons), D_PLAGUE, y, 0, 0)

    def _remove_soldiers(self, f: int, v: int, n: int, road_first: bool = False) -> int:
        """Remove n Soldiers of f in v: ordinary first (road ones first when asked), then Queen's Guard, then
        King's Guard (F14, F33.3). Returns how many could not be removed."""
        if road_first and n > 0:
            for a in self.assaults:
                if a[0] == f and a[1] == v and a[2] >= 0:
                    t = min(a[4], n)
                    a[4] -= t
                    n -= t
        for u in (3, 2, 1, 0):  # F2-D3: the most-travelled Soldiers fall first
            t = min(self.sold[f][v][u], n)
            self.sold[f][v][u] -= t
            n -= t
        qg, kgd = self.guards_at(f, v, road=True)
        if n > 0 and qg > 0:
            t = min(qg, n)
            self.qg -= t
            n -= t
        if n > 0 and kgd > 0:
            t = min(kgd, n)
            self.kg -= t
            n -= t
        return n

    def _after_dice(self, fr: list[int]) -> None:
        purpose = fr[2]
        dice, self.dice = self.dice, []
        if purpose == D_PLAGUE:
            y = fr[3]
            persons = [p for p in range(self.game.P) if self.fam[p] >= 0 and self.loc[p] >= 0
                       and self.game.map.village_fief[self.loc[p]] == y]
            dead = [p for p, d in zip(persons, dice) if d < self.game.ruleset.plague_survive_from]
            self._kill(dead)
        elif purpose == D_REVOLT:
            self._revolt(fr[3], fr[4], fr[5], sum(dice))
        elif purpose == D_CALM:
            self._calm_result(fr, dice[0])
        elif purpose == D_BATTLE:
            self._battle_losses(dice)

    def _revolt(self, v: int, f: int, c: int, n: int) -> None:
        """F17: the mob appears; an immediate battle if the village holds tokens (the mob attacking)."""
        self.revolt_card, self.mob_ctrl = c, f
        self.mob_v, self.mob_n, self.mob_road = v, min(n, self.game.ruleset.limits["peasants"]), -1
        defenders = [q for q in range(self.num_players) if self.has_tokens(q, v)]
        if defenders:
            self._push(FR_BATTLE, v, MOB, -1, B_START, 0, 1, 0, 0, 0, -1, 0, 0, 0, 0, 0)
        else:
            self._mob_takes(v)

    def _mob_takes(self, v: int) -> None:
        """F17.3: Mills, Wine Presses and a Castle go back to the supply (a City never); a village not
        enfeoffed becomes unowned."""
        self.mills[v] = self.presses[v] = 0
        self.castle[v] = False
        if not self.enfeoffed(v):
            self.owner[v] = -1

    # ==================================================================================================
    # E. Income and purchases (F20-F24)
    # ==================================================================================================
    def _income(self) -> None:
        """F20-F21: computed for all families at once; a prisoner's share goes to his escrow."""
        g, rs = self.game, self.game.ruleset
        inc = rs.income
        n = self.num_players
        gain = [0] * n
        esc = [0] * g.P

        def pay(f: int, amount: int, person: int = -1) -> None:
            if f < 0 or not self.alive[f] or amount <= 0:
                return
            if person >= 0 and self.fam[person] == f and self.captor[person] >= 0:
                esc[person] += amount
            else:
                gain[f] += amount

        for v in range(g.V):
            f = self.owner[v]
            if f < 0:
                continue
            y = g.map.village_fief[v]
            earns = self.occupies(f, v) or (self.fief_family(y) == f and self.capital[y] >= 0
                                            and self.occupies(f, self.capital[y]))
            if not earns:
                continue
            holder = self.title[y] if self.fief_family(y) == f else -1  # F21: the fief's income is its holder's
            fixed = inc["castle"] * self.castle[v] + inc["city"] * self.city[v]
            pay(f, fixed, holder)
            crops = 0 if self.famine[y] >= 0 else inc["mill"] * self.mills[v] + inc["wine_press"] * self.presses[v]
            b = g.map.village_bishopric[v]
            bishop = next((p for p in range(g.P) if self.bishop[p] == b and self.fam[p] >= 0), -1)
            if self.tithe[b] >= 0 and bishop >= 0:
                pay(self.fam[bishop], crops, bishop)  # F20.2: in the Lords' stead
            else:
                pay(f, crops, holder)
        for y in range(g.NF):  # F20.3: Tax
            if self.tax[y] < 0 or self.famine[y] >= 0:
                continue
            f = self.fief_family(y)
            if f < 0:
                continue
            ok = sum(1 for v in g.map.fief_villages[y] if not self.mob_in(v) and not any(
                self.enemies(f, q) and self.soldiers_at(q, v) > 0 for q in range(n)))
            pay(f, inc["tax_per_village"] * ok, self.title[y])
        # F20.4: pensions; during a Regency both go to the Regent
        if self.regent and self.queen >= 0:
            pay(self.fam[self.queen], inc["king_pension"] + inc["queen_pension"], self.queen)
        else:
            if self.king >= 0:
                pay(self.fam[self.king], inc["king_pension"], self.king)
            if self.queen >= 0:
                pay(self.fam[self.queen], inc["queen_pension"], self.queen)
        for f in range(n):
            self.cash[f] += gain[f]
        for p in range(g.P):
            self.escrow[p] += esc[p]
        self.tax = [-1] * g.NF  # F20.5: then every Tax and Tithe card is discarded
        self.tithe = [-1] * len(self.tithe)

    def _legal_purchase(self, fr: list[int]) -> list[int]:
        L, f = self.game.layout, fr[1]
        if fr[3] == 0:
            out = [L.word("END")]
            for i in range(len(BUY_ITEMS)):
                if self._purchase_targets(f, i, 1, -1, -1):
                    out.append(L.a("buy", i))
            return out
        return self._purchase_targets(f, fr[2], fr[3], fr[4], fr[5])

    def _ordinary_on_board(self, f: int) -> int:
        return sum(sum(self.sold[f][v]) for v in range(self.game.V)) + sum(
            a[4] for a in self.assaults if a[0] == f)

    def _purchase_targets(self, f: int, item: int, stage: int, a1: int, a2: int) -> list[int]:
        """F22: the places an item may go; for the immediate items the single word "end" stands for "here"."""
        g, rs, L = self.game, self.game.ruleset, self.game.layout
        pr, lim, cash = rs.prices, rs.limits, self.cash[f]
        V = range(g.V)
        name = BUY_ITEMS[item]
        if name == "soldier":
            if cash < pr["soldier"] or self._ordinary_on_board(f) >= lim["soldiers_per_family"]:
                return []
            return [L.a("village", v) for v in V if not self.mob_in(v) and (
                (self.owner[v] == f and (self.castle[v] or self.city[v])) or self.free_at(f, v))]
        if name in ("king's guard", "queen's guard"):
            leader, strength, cap = ((self.kg_leader(), self.kg, lim["kings_guard"]) if name == "king's guard"
                                     else (self.qg_leader(), self.qg, lim["queens_guard"]))
            ok = (cash >= pr["soldier"] and leader >= 0 and self.fam[leader] == f and self.free(leader)
                  and 0 <= strength < cap)
            return [L.word("END")] if ok else []
        if name == "peasant":
            ok = cash >= pr["peasant"] and self.mob_n > 0 and self.mob_n < lim["peasants"]
            return [L.word("END")] if ok else []
        if name in ("wine press", "mill"):
            key = "wine_press" if name == "wine press" else "mill"
            total = sum(self.presses) if key == "wine_press" else sum(self.mills)
            if cash < pr[key] or total >= lim["wine_presses" if key == "wine_press" else "mills"]:
                return []
            return [L.a("village", v) for v in V if self.controls(f, v) and not self.mob_in(v)
                    and self.mills[v] + self.presses[v] < lim["improvements_per_village"]]
        if name == "castle":
            if cash < pr["castle"] or sum(self.castle) >= lim["castles"]:
                return []
            return [L.a("village", v) for v in V if self.controls(f, v) and not self.castle[v] and not self.city[v]
                    and not self.mob_in(v)]
        if name == "cardinal":
            if cash < pr["cardinal"] or self.cardinals() >= rs.red_cards["cardinal"]:
                return []
            return [L.a("person", p) for p in self.persons_of(f) if self.free(p) and self.bishop[p] >= 0
                    and not self.cardinal[p]]
        if name == "fief title":  # F23
            if stage == 1:
                return [L.a("fief", y) for y in range(g.NF) if self._can_enfeoff(f, y)]
            if stage == 2:
                return [L.a("person", p) for p in self.persons_of(f) if self.free(p)]
            return [L.a("village", v) for v in self._capital_choices(f, a1)]
        return []  # pragma: no cover

    def _can_enfeoff(self, f: int, y: int) -> bool:
        g = self.game
        if self.fief_family(y) >= 0 or self.cash[f] < g.fief_price[y]:
            return False
        vs = g.map.fief_villages[y]
        if not all(self.owner[v] == f and self.occupies(f, v) for v in vs):
            return False
        if not any(self.free(p) for p in self.persons_of(f)):
            return False
        if not self._capital_choices(f, y):
            return False
        return True

    def _capital_choices(self, f: int, y: int) -> list[int]:
        vs = self.game.map.fief_villages[y]
        cities = [v for v in vs if self.city[v]]
        if cities:
            return cities  # F23: an existing City is the capital
        if sum(self.city) >= self.game.ruleset.limits["cities"]:
            return []
        return [v for v in vs if self.castle[v] and self.owner[v] == f]

    def _do_purchase(self, fr: list[int], kind: str, x: int, word: str) -> None:
        g, rs = self.game, self.game.ruleset
        f = fr[1]
        if fr[3] == 0:
            if kind == "word":
                self.stack.pop()
                return
            fr[2], fr[3] = x, 1
            return
        name = BUY_ITEMS[fr[2]]
        pr = rs.prices
        done = True
        if name == "soldier":
            self.cash[f] -= pr["soldier"]
            self.sold[f][x][0] += 1
            self._check_owner(x)
        elif name == "king's guard":
            self.cash[f] -= pr["soldier"]
            self.kg += 1
        elif name == "queen's guard":
            self.cash[f] -= pr["soldier"]
            self.qg += 1
        elif name == "peasant":
            self.cash[f] -= pr["peasant"]
            self.mob_n += 1
        elif name == "wine press":
            self.cash[f] -= pr["wine_press"]
            self.presses[x] += 1
        elif name == "mill":
            self.cash[f] -= pr["mill"]
            self.mills[x] += 1
        elif name == "castle":
            self.cash[f] -= pr["castle"]
            self.castle[x] = True
        elif name == "cardinal":
            self.cash[f] -= pr["cardinal"]
            self.cardinal[x] = True
        elif name == "fief title":
            if fr[3] == 1:
                fr[3], fr[4], done = 2, x, False
            elif fr[3] == 2:
                fr[3], fr[5], done = 3, x, False
                choices = self._capital_choices(f, fr[4])
                if len(choices) == 1:
                    self._enfeoff(f, fr[4], fr[5], choices[0])
                    done = True
            else:
                self._enfeoff(f, fr[4], fr[5], x)
        if done:
            fr[2], fr[3], fr[4], fr[5] = -1, 0, -1, -1

    def _enfeoff(self, f: int, y: int, p: int, v: int) -> None:
        """F23: pay, the Castle becomes a City (the capital), every village of the fief is the holder's."""
        g = self.game
        self.cash[f] -= g.fief_price[y]
        if not self.city[v]:
            self.castle[v], self.city[v] = False, True
        self.capital[y] = v
        self.title[y] = p
        self.pending[y] = self.retained[y] = -1
        for w in g.map.fief_villages[y]:
            self.owner[w] = f

    def _transferable(self, f: int, b: int) -> list[int]:
        """F24: fief titles a free person of f may give to b, keeping a crown of rank >= the title's."""
        if not self.free(b) or self.fam[b] != f:
            return []
        out = []
        for y in range(self.game.NF):
            a = self.title[y]
            if a >= 0 and a != b and self.fam[a] == f and self.free(a) and \
                    self.crown_rank(a, without=y) >= self.game.fief_rank[y]:
                out.append(y)
        return out

    # ==================================================================================================
    # F. Movement (F25-F27)
    # ==================================================================================================
    def bw(self, v: int) -> bool:
        return self.bad_weather[self.game.map.village_fief[v]] >= 0

    def _road_closed(self, f: int, x: int, w: int) -> bool:
        """F26.6: a road into x holding another family's (or the mob's) assaulting tokens is closed for leaving x."""
        if self.mob_v == x and self.mob_road == w and self.mob_n > 0:
            return True
        return any(self.fam[p] >= 0 and self.fam[p] != f and self.loc[p] == x and self.onroad[p] == w
                   and self.captor[p] == -1 for p in range(self.game.P))

    def _destinations(self, f: int, x: int, mode: int, refmask: int) -> list[int]:
        """Villages a group of f may step to from x: mode 0 a step (F25-F26), 1 evacuation, 2 retreat (F27)."""
        if self.bw(x):
            return []  # F16: nothing starts from a Bad Weather fief
        o = self._exit_blocked(f, x)
        if o >= 0 and not (mode == 0 and any(self.conduct[p] == o for p in self._movers(f, x))):
            return []  # F26.4: refused once, f may not ask to leave x again this turn (F35.4: safe conduct may)
        out = []
        for w in self.game.map.adj[x]:
            if self._road_closed(f, x, w):
                continue
            if mode == 0:
                if w in self.refused or (self.mob_in(w) and self.bw(w)):
                    continue
            else:
                if refmask >> w & 1 or self.mob_in(w) or (self.mob_v == w and self.mob_n > 0):
                    continue
            out.append(w)
        return out

    def _exit_consent_from(self, f: int, x: int) -> int:
        """F26.4: the family whose consent f needs to step out of x (a Castle or City village owned by another
        family that occupies it; that owner is master(x), and answers even while the mob attacks x), else -1."""
        o = self.owner[x]
        if (self.castle[x] or self.city[x]) and o >= 0 and o != f and self.occupies(o, x):
            return o
        return -1

    def _exit_blocked(self, f: int, x: int) -> int:
        """F26.4: the owner of x when f was refused leaving x this turn and still needs its consent, else -1."""
        o = self._exit_consent_from(f, x)
        return o if o >= 0 and self.exit_refused[f][x] else -1

    def _conduct_group(self, fr: list[int]) -> int:
        """F35.4: the former captor whose villages the group of frame fr leaves and crosses without consent: in its
        family's movement turn, a group only of persons under safe conduct from that one family (their Guards go
        with them), with no ordinary Soldier and no prisoner, since those tokens would still need consent; else -1."""
        persons = self._decode_mask(fr[4])
        if fr[9] or not persons or fr[5] or fr[6] or fr[7] or fr[8]:
            return -1
        held = {self.conduct[p] for p in persons}
        return held.pop() if len(held) == 1 else -1

    def _in_conduct(self, pmask: int) -> bool:
        """F35.4: a person under safe conduct is in the group, so the group may not declare an assault."""
        return any(self.conduct[p] >= 0 for p in self._decode_mask(pmask))

    def _no_declaration(self, f: int, w: int) -> bool:
        """A step to w that declares no assault: w holds no Peasants, or f joins its own road assault there."""
        a = self._assault_of(f, w)
        return not self.mob_in(w) or (a is not None and a[2] >= 0)

    def _step_persons(self, f: int, x: int) -> list[int]:
        """Movers of f in x that may be in a step: after a refused exit (F26.4) only persons under safe conduct
        from x's owner (F35.4); a person under safe conduct only if a step from x need declare no assault."""
        o = self._exit_blocked(f, x)
        dests = self._destinations(f, x, 0, 0)
        return [p for p in self._movers(f, x) if (o < 0 or self.conduct[p] == o)
                and (self.conduct[p] < 0 or any(self._no_declaration(f, w) for w in dests))]

    def _movers(self, f: int, x: int) -> list[int]:
        """Free persons of f in x that may still lead a step (F25: used < allowance)."""
        rs = self.game.ruleset
        here = self.free_at(f, x)
        darc = any(self.darc[p] and self.used[p] < rs.darc_allowance for p in here)
        cap = rs.darc_allowance if darc else rs.allowance
        return [p for p in here if self.used[p] < cap]

    def _assault_of(self, f: int, v: int) -> list[int] | None:
        for a in self.assaults:
            if a[0] == f and a[1] == v:
                return a
        return None

    def _legal_move(self, fr: list[int]) -> list[int]:
        g, L, f = self.game, self.game.layout, fr[1]
        out = [L.word("END")]
        for x in range(g.V):
            if self._step_persons(f, x) and self._destinations(f, x, 0, 0):
                out.append(L.a("group", x))
            if self.occupies(f, x) and not self.bw(x) and self._assault_of(f, x) is None \
                    and not any(self.conduct[p] >= 0 for p in self.free_at(f, x)):  # F35.4: no assault declared
                for q in range(self.num_players):  # F26.5: inside assault
                    if q != f and self.occupies(q, x):
                        out.append(L.a("inside", x * L.MAX_FAMILIES + q))
        if self._mob_can_move(fr):
            x = self.mob_v
            for w in g.map.adj[x]:
                occupied = any(self.has_tokens(q, w) for q in range(self.num_players))
                if not (self.bw(w) and occupied) and not self._road_closed(MOB, x, w):
                    out.append(L.a("mob", w))
            if fr[2] > 0:
                out.append(L.word("MOB_STOPS"))
        return out

    def _mob_can_move(self, fr: list[int]) -> bool:
        """F18.2: the controller moves the mob up to 2 steps; F18.4: not once he is eliminated."""
        return (fr[1] == self.mob_ctrl and self.mob_n > 0 and self.mob_road == -1 and self.mob_v >= 0
                and fr[2] < 2 and fr[3] == 0 and not self.bw(self.mob_v))

    def _do_move(self, fr: list[int], kind: str, x: int, word: str) -> None:
        L, f = self.game.layout, fr[1]
        if kind == "word" and word == "END":
            self._mob_stop(fr)
            self.stack.pop()
            for p in self.persons_of(f):  # F35.4: the safe conduct lasts the family's next movement turn
                self.conduct[p] = -1
            for v in range(self.game.V):  # F9.3: every village is checked once at the end of the turn
                self._check_owner(v)
            self._free_unescorted()
        elif kind == "word":  # mob stops
            self._mob_stop(fr)
        elif kind == "group":
            self._push(FR_GROUP, f, x, 0, 0, 0, 0, 0, 0, 0, -1, 0)
        elif kind == "inside":
            v, q = divmod(x, L.MAX_FAMILIES)
            self._declare(f, v, -1, q)
        elif kind == "mob":
            if any(self.has_tokens(q, x) for q in range(self.num_players)):
                fr[3] = 1  # F18.2: entering an occupied village is a road assault and ends its move
                frm = self.mob_v
                self.mob_v, self.mob_road = x, frm
                self._declare(MOB, x, frm, -1)
            else:
                self.mob_v = x
                fr[2] += 1
                if fr[2] >= 2:
                    self._mob_stop(fr)

    def _mob_stop(self, fr: list[int]) -> None:
        if fr[2] > 0 and fr[3] == 0 and self.mob_n > 0 and self.mob_road == -1:
            fr[3] = 1
            if not any(self.has_tokens(q, self.mob_v) for q in range(self.num_players)):
                self._mob_takes(self.mob_v)  # F18.2: stopping in an empty village takes it
        fr[3] = 1 if fr[2] > 0 else fr[3]

    # ---- a group and its step (F25) ------------------------------------------------------------------
    # FR_GROUP: [kind, family, from, stage, persons mask, k0, k1, k2, prisoners mask, mode, destination, refused]
    # stages: 0 persons, 1-3 soldiers by counter, 4 prisoners, 5 destination, 6 waiting for entry consent,
    # 7 refused (turn back or assault), 8 ask consent or assault, 9 waiting for exit consent (F26.4),
    # 10 exit granted, entering
    def _allowance(self, pmask: int) -> int:
        rs = self.game.ruleset
        return rs.darc_allowance if any(self.darc[p] for p in self._decode_mask(pmask)) else rs.allowance

    def _legal_group(self, fr: list[int]) -> list[int]:
        L = self.game.layout
        f, x, stage, pmask, mode = fr[1], fr[2], fr[3], fr[4], fr[9]
        if stage == 0:
            cands = self.free_at(f, x) if mode else self._step_persons(f, x)
            out = [L.a("person", p) for p in cands if not pmask >> p & 1]
            if pmask and (mode or all(self.used[p] < self._allowance(pmask) for p in self._decode_mask(pmask))):
                out.append(L.word("PERSONS_DONE"))
            return out
        if stage in (1, 2, 3):
            u = stage - 1
            avail = sum(self.sold[f][x]) if mode else self.sold[f][x][u]
            return [L.a("soldiers", u * L.K + k) for k in range(avail + 1)]
        if stage == 4:
            out = [L.word("PRISONERS_DONE")]
            A = self._allowance(pmask)
            out += [L.a("prisoner", p) for p in range(self.game.P) if self.captor[p] == f and self.loc[p] == x
                    and self.onroad[p] == -1 and not fr[8] >> p & 1 and (mode or self.used[p] < A)
                    and (mode or self._exit_blocked(f, x) < 0)]  # F26.4: only a safe-conducted group leaves
            return out
        if stage == 5:
            out = [L.a("village", w) for w in self._destinations(f, x, mode, fr[11])
                   if mode or not self._in_conduct(pmask) or self._no_declaration(f, w)]  # F35.4
            if mode:
                out.append(L.word("STOP"))
            return out
        w = fr[10]
        a = self._assault_of(f, w)
        can_assault = not self.bw(w) and (a is None or a[2] >= 0) and not (self._in_conduct(pmask) and a is None)
        assault_word = L.word("JOIN_ASSAULT") if a is not None else L.word("ASSAULT")
        if stage == 8:
            return [L.word("ASK_CONSENT")] + ([assault_word] if can_assault else [])
        if stage == 7:
            return [L.word("TURN_BACK")] + ([assault_word] if can_assault else [])
        return []  # pragma: no cover

    def _auto_group(self, fr: list[int]) -> bool:
        f, x, stage, mode = fr[1], fr[2], fr[3], fr[9]
        if stage in (1, 2, 3):
            u = stage - 1
            skip = (mode and u > 0) or (not mode and (u >= self._allowance(fr[4]) or self.sold[f][x][u] == 0)) \
                or (mode and sum(self.sold[f][x]) == 0) or (not mode and self._exit_blocked(f, x) >= 0)
            if skip:
                fr[3] += 1
                return True
            return False
        if stage == 4:
            if len(self._legal_group(fr)) == 1:
                fr[3] = 5
                return True
            return False
        if stage == 5 and not mode and not self._destinations(f, x, 0, 0):  # pragma: no cover - guarded by legality
            self.stack.pop()
            return True
        if stage == 9 and self.answer >= 0:
            granted, self.answer = self.answer, -1
            if granted:
                fr[3] = 10
                self._do_group(fr, "village", fr[10], "")
            else:  # F26.4: the step is not made and costs nothing; no new request to leave x this turn
                self.exit_refused[f][x] = True
                self.stack.pop()
            return True
        if stage == 6 and self.answer >= 0:
            granted, self.answer = self.answer, -1
            w = fr[10]
            if granted:
                self.stack.pop()
                self._step(fr, w)
                return True
            if mode:  # F27.1: a refusal lets it choose another destination or stop
                fr[11] |= 1 << w
                fr[3] = 5
                return True
            self.refused.append(w)  # F53.4
            if self.bw(w):  # F16: under Bad Weather a refused group turns back
                self.stack.pop()
                return True
            fr[3] = 7
            return True
        return False

    def _free_entry(self, f: int, w: int) -> bool:
        """F26.2: no consent when w holds no other family's token, or f is its owner or its master."""
        if not any(self.has_tokens(q, w) for q in range(self.num_players) if q != f):
            return True
        m = self.master(w)
        return self.owner[w] == f or m == f or m < 0

    def _do_group(self, fr: list[int], kind: str, x: int, word: str) -> None:
        L = self.game.layout
        f, stage, mode = fr[1], fr[3], fr[9]
        if stage == 0:
            if word == "PERSONS_DONE":
                fr[3] = 1
            else:
                fr[4] |= 1 << x
        elif stage in (1, 2, 3):
            u, k = divmod(x, L.K)
            fr[5 + u] = k
            fr[3] += 1
        elif stage == 4:
            if word == "PRISONERS_DONE":
                fr[3] = 5
            else:
                fr[8] |= 1 << x
        elif stage in (5, 10):
            if word == "STOP":
                self.stack.pop()
                return
            w = x
            fr[10] = w
            o = self._exit_consent_from(f, fr[2])
            if stage == 5 and o >= 0 and self._conduct_group(fr) != o:
                # F26.4: exit consent for each step out (F35.4 needs none); entering goes on once granted
                fr[3] = 9
                self.answer = -1
                self._push(FR_CONSENT, f, o, fr[2])
                return
            if mode == 0 and self.mob_in(w):  # F26.1: a road assault on the mob
                self.stack.pop()
                self._declare(f, w, fr[2], -1, fr)
            elif self._free_entry(f, w) or (self.owner[w] >= 0 and self._conduct_group(fr) == self.owner[w]):
                self.stack.pop()  # (F35.4: safe conduct crosses the former captor's villages without consent)
                self._step(fr, w)
            elif mode == 0 and not self.bw(w):
                fr[3] = 8
            else:
                self._ask_consent(fr, w)
        elif stage in (7, 8):
            w = fr[10]
            if word == "ASK_CONSENT":
                self._ask_consent(fr, w)
            elif word == "TURN_BACK":  # F53.4: no allowance spent, the village may not be tried again
                self.stack.pop()
            else:  # assault or join one's own road assault (F26.3, F53.13)
                self.stack.pop()
                self._declare(f, w, fr[2], -1, fr)

    def _ask_consent(self, fr: list[int], w: int) -> None:
        fr[3] = 6
        self.answer = -1
        self._push(FR_CONSENT, fr[1], self.master(w), w)

    def _group_parts(self, fr: list[int]) -> tuple[list[int], list[int], list[int]]:
        return self._decode_mask(fr[4]), [fr[5], fr[6], fr[7]], self._decode_mask(fr[8])

    def _step(self, fr: list[int], w: int) -> None:
        """Move the group of frame fr from its village to w (F25; evacuation keeps the counters, F27.1)."""
        f, x, mode = fr[1], fr[2], fr[9]
        persons, ks, prisoners = self._group_parts(fr)
        stop = self.bw(w)  # F16: entering a Bad Weather fief uses the whole allowance
        full = self.game.ruleset.darc_allowance
        for p in persons + prisoners:
            self.loc[p] = w
            if not mode:
                self.used[p] = full if stop else self.used[p] + 1
        if mode:  # evacuation: any Soldiers, counters unchanged
            left = ks[0]
            for u in range(4):
                t = min(left, self.sold[f][x][u])
                self.sold[f][x][u] -= t
                self.sold[f][w][u] += t
                left -= t
        else:
            for u in range(3):
                if ks[u]:
                    self.sold[f][x][u] -= ks[u]
                    self.sold[f][w][3 if stop else u + 1] += ks[u]
        self._free_unescorted()  # F53.10

    def _declare(self, f: int, w: int, frm: int, target: int, fr: list[int] | None = None) -> None:
        """F26.3 / F26.5: declare an assault (time-stamped); the group waits on the road; then evacuation."""
        joining = self._assault_of(f, w) if f != MOB else None
        if self.stamp[w] == INF_TURN:  # the first assault on w (F29.1, F30.1, F30.5)
            self.seq += 1
            self.stamp[w] = self.seq
            self.garrison[w] = sum(1 << q for q in range(self.num_players) if self.occupies(q, w))
            self.first_owner[w] = self.owner[w]
            self.mob_held[w] = self.mob_in(w)
        victim = target if target >= 0 else self.master(w)
        if joining is None:
            self.assaults.append([f, w, frm, target, 0])
            rec = self.assaults[-1]
        else:
            rec = joining
        if f != MOB and 0 <= victim < self.num_players and self.allied[f][victim]:
            self.allied[f][victim] = self.allied[victim][f] = False  # F26.7
        if fr is not None:  # the group stands on the road frm -> w; its movement is over
            persons, ks, prisoners = self._group_parts(fr)
            full = self.game.ruleset.darc_allowance
            for p in persons + prisoners:
                self.loc[p], self.onroad[p], self.used[p] = w, frm, full
            for u in range(3):
                self.sold[f][frm][u] -= ks[u]
                rec[4] += ks[u]
            self._free_unescorted()
        if target >= 0:
            victim = target
        if joining is None and 0 <= victim < self.num_players and self.free_at(victim, w):
            self._push(FR_EVAC, victim, w)  # F27.1

    # ---- retreat (F27.2) -----------------------------------------------------------------------------
    # FR_RETREAT: [kind, family, village, refused mask, waiting (1 entry consent, 2 exit consent), destination]
    def _do_retreat(self, fr: list[int], kind: str, x: int, word: str) -> None:
        f, v = fr[1], fr[2]
        if word == "STOP":
            self.stack.pop()
            return
        fr[5] = x
        o = self._exit_consent_from(f, v)
        if o >= 0:  # F26.4 (F27.2 chooses as F27.1: with exit consent)
            fr[4] = 2
            self.answer = -1
            self._push(FR_CONSENT, f, o, v)
            return
        if self._free_entry(f, x):
            self.stack.pop()
            self._retreat_to(f, v, x)
        else:
            fr[4] = 1
            self.answer = -1
            self._push(FR_CONSENT, f, self.master(x), x)

    def _auto_retreat(self, fr: list[int]) -> bool:
        if fr[4] == 2 and self.answer >= 0:  # F26.4: the exit answer
            granted, self.answer = self.answer, -1
            f, x = fr[1], fr[5]
            fr[4] = 0
            if not granted:  # the step is not made; only "stop" is left (F2-D10)
                self.exit_refused[f][fr[2]] = True
            elif self._free_entry(f, x):
                self.stack.pop()
                self._retreat_to(f, fr[2], x)
            else:
                fr[4] = 1
                self.answer = -1
                self._push(FR_CONSENT, f, self.master(x), x)
            return True
        if fr[4] and self.answer >= 0:
            granted, self.answer = self.answer, -1
            fr[4] = 0
            if granted:
                self.stack.pop()
                self._retreat_to(fr[1], fr[2], fr[5])
            else:
                fr[3] |= 1 << fr[5]
            return True
        return False

    def _retreat_to(self, f: int, v: int, w: int) -> None:
        """All its tokens there, one step together (F27.2)."""
        for p in range(self.game.P):
            if self.loc[p] == v and self.onroad[p] == -1 and (self.fam[p] == f and self.captor[p] == -1
                                                               or self.captor[p] == f):
                self.loc[p] = w
        for u in range(4):
            self.sold[f][w][u] += self.sold[f][v][u]
            self.sold[f][v][u] = 0

    # ==================================================================================================
    # G. Combat (F28-F34)
    # FR_BATTLE: [kind, village, attacker (family or MOB), assault index, stage, cursor, round, inside,
    #             defence pips, attack pips, leader, defence mask (bit 6 = mob), calm done, join mask,
    #             defence dice, result (0 on, 1 attack won, 2 defence won)]
    # ==================================================================================================
    def _row(self, v: int) -> int:
        pips = self.game.ruleset.pips_per_loss
        return pips["city"] if self.city[v] else pips["castle"] if self.castle[v] else pips["open"]

    def _start_battle(self, i: int) -> None:
        """F29.2: skip or resolve without a battle when nobody is left to fight."""
        f, v, frm, target, _ = self.assaults[i]
        inside = frm < 0
        if f == MOB:
            if not (self.mob_v == v and self.mob_n > 0):
                return
        elif not self._side_tokens(f, v, road=not inside):
            return
        if inside:
            if not self.free_at(target, v):
                return
        else:
            others = self.mob_in(v) or any(self.occupies(q, v) for q in range(self.num_players) if q != f)
            m = self.master(v)
            if not others or m == f or (0 <= m < self.num_players and f != MOB and self.allied[f][m]):
                self._enter_from_road(f, v)
                return
        self._push(FR_BATTLE, v, f, i, B_START, 0, 1, int(inside), 0, 0, -1, 0, 0, 0, 0, 0)

    def _enter_from_road(self, f: int, v: int) -> None:
        if f == MOB:
            if self.mob_v == v:
                self.mob_road = -1
            return
        for p in range(self.game.P):
            if self.loc[p] == v and self.onroad[p] >= 0 and (self.fam[p] == f and self.captor[p] < 0
                                                              or self.captor[p] == f):
                self.onroad[p] = -1
        for a in self.assaults:
            if a[0] == f and a[1] == v:
                self.sold[f][v][3] += a[4]
                a[4] = 0

    def _side_persons(self, f: int, v: int, road: bool) -> list[int]:
        return self.free_at(f, v, road)

    def _side_soldiers(self, f: int, v: int, road: bool) -> int:
        n = sum(self.sold[f][v])
        if road:
            n += sum(a[4] for a in self.assaults if a[0] == f and a[1] == v and a[2] >= 0)
        q, k = self.guards_at(f, v, road)
        return n + q + k

    def _side_tokens(self, f: int, v: int, road: bool) -> int:
        """Fighting tokens of f (F1): Soldiers plus fighting persons, each 1 (d'Arc is one token, F33.4)."""
        return self._side_soldiers(f, v, road) + sum(1 for p in self._side_persons(f, v, road)
                                                     if self.force_of_person(p) > 0)

    def _force(self, f: int, v: int, road: bool) -> int:
        if f == MOB:
            return self.mob_n if self.mob_v == v else 0
        return self._side_soldiers(f, v, road) + sum(self.force_of_person(p) for p in self._side_persons(f, v, road))

    def _fighting_persons(self, f: int, v: int, road: int) -> list[int]:
        return [p for p in self._side_persons(f, v, bool(road)) if self.force_of_person(p) > 0]

    def _def_families(self, fr: list[int]) -> list[int]:
        """Defending families still in the village, leader first, then turn order (F31.2)."""
        v = fr[1]
        fams = [q for q in self.order() if fr[11] >> q & 1 and self.has_tokens(q, v)]
        if fr[10] in fams:
            fams.remove(fr[10])
            fams.insert(0, fr[10])
        return fams

    def _def_force(self, fr: list[int]) -> int:
        if fr[11] >> MOB & 1:
            return self._force(MOB, fr[1], False)
        return sum(self._force(q, fr[1], False) for q in self._def_families(fr))

    def _att_force(self, fr: list[int]) -> int:
        return self._force(fr[2], fr[1], not fr[7])

    def dice_for(self, force: int) -> int:
        """F28: 0 -> 0, 1-6 -> 1, 7-12 -> 2, 13+ -> 3 (thresholds are ruleset data)."""
        th = self.game.ruleset.dice_thresholds
        return sum(1 for t in th if force >= t)

    def _battle_actor(self, fr: list[int]) -> int:
        st = fr[4]
        if st == B_JOIN:
            return next(q for q in self.order() if fr[13] >> q & 1)
        if st == B_DEF:
            return self._def_families(fr)[fr[5]]
        if st == B_AIM_DEF:
            return fr[10]
        return fr[2]  # B_CALM, B_ATT, B_AIM_ATT

    def _calm_bishops(self, fr: list[int]) -> list[int]:
        """F19: the attacking family's free Bishops among its tokens there."""
        return [p for p in self._side_persons(fr[2], fr[1], not fr[7]) if self.bishop[p] >= 0]

    def _auto_battle(self, fr: list[int]) -> bool:
        v, att = fr[1], fr[2]
        st = fr[4]
        if st == B_START:
            self._setup_sides(fr)
            fr[4] = B_JOIN if fr[13] else B_CALM
            return True
        if st == B_JOIN:
            if not fr[13]:
                fr[4] = B_CALM
                if bin(fr[11]).count("1") >= 2:  # a combined defence (F53.17)
                    self._garrison_protection(fr)
                return True
            return False
        if fr[15] == 0 and st not in (B_ROLL, B_LOSS, B_END) and (self._att_force(fr) == 0 or self._def_force(fr) == 0):
            fr[4] = B_END  # F31.4
            return True
        if st == B_CALM:
            if fr[6] == 1 and not fr[12] and fr[10] == MOB and att != MOB and self._calm_bishops(fr):
                return False
            fr[4], fr[5] = B_DEF, 0
            return True
        if st == B_DEF:
            if fr[10] != MOB and fr[10] not in self._def_families(fr):  # F31.2: the next family leads
                fams = self._def_families(fr)
                if not fams:
                    fr[4] = B_END
                    return True
                fr[10] = fams[0]
                if att != MOB and not fr[7]:  # a road assault's defence (F30.2) was combined
                    self._garrison_protection(fr)
            if fr[10] == MOB or fr[5] >= len(self._def_families(fr)):
                fr[4] = B_ATT
                return True
            return False
        if st == B_ATT:
            if att == MOB:
                fr[4] = B_AIM_DEF
                return True
            return False
        if st == B_AIM_DEF:
            open_field = not (self.castle[v] or self.city[v])
            if not open_field or fr[10] == MOB or len(self.aims[0]) >= self.dice_for(self._def_force(fr)):
                fr[4] = B_AIM_ATT
                return True
            return False
        if st == B_AIM_ATT:
            open_field = not (self.castle[v] or self.city[v])
            if not open_field or att == MOB or len(self.aims[1]) >= self.dice_for(self._att_force(fr)):
                fr[4] = B_ROLL
                return True
            return False
        if st == B_ROLL:
            dd, ad = self.dice_for(self._def_force(fr)), self.dice_for(self._att_force(fr))
            fr[14] = dd
            fr[4] = B_LOSS
            self.dice = []
            self._push(FR_DICE, dd + ad, D_BATTLE, 0, 0, 0)
            return True
        if st == B_LOSS:  # losses done (and chosen); a new round
            self.aims = [[], []]
            fr[6] += 1
            fr[4], fr[5] = B_DEF, 0
            if self._att_force(fr) == 0 or self._def_force(fr) == 0:
                fr[4] = B_END
            return True
        if st == B_END:
            self.stack.pop()
            self._end_battle(fr)
            return True
        return False  # pragma: no cover

    def _setup_sides(self, fr: list[int]) -> None:
        """F30: sides, leader and protection."""
        v, att, inside = fr[1], fr[2], fr[7]
        row, open_ = self._row(v), self.game.ruleset.pips_per_loss["open"]
        fr[9] = open_
        if att == MOB:  # F30.4: every family there defends, protected by a Castle or City
            fams = [q for q in self.order() if self.has_tokens(q, v)]
            fr[11] = sum(1 << q for q in fams)
            fr[10] = self._lead_family(v, fams)
            fr[8] = row
        elif self.mob_in(v):
            fr[11], fr[10] = 1 << MOB, MOB
            fr[8] = self.game.ruleset.pips_per_loss["city"] if self.mob_held[v] and self.city[v] else open_
        elif inside:  # F30.3, F53.3
            target = self.assaults[fr[3]][3]
            fr[11], fr[10], fr[8] = 1 << target, target, row
            fr[9] = row
        else:  # F30.2, F30.5
            m = self.master(v)
            fr[10], fr[11] = m, 1 << m
            fr[8] = row if self.first_owner[v] == m else open_
            fr[13] = sum(1 << q for q in range(self.num_players)
                         if q not in (att, m) and self.garrison[v] >> q & 1 and self.allied[m][q]
                         and self.occupies(q, v) and self._assault_of(q, v) is None)

    def _garrison_protection(self, fr: list[int]) -> None:
        """F53.17 (over F30.5's "the defence leader's family owned V"): in a combined defence the protection belongs
        to every defending family that stood in V at the first assault (V's garrison, F30.1), whichever family leads
        after a retreat; so the defence takes losses on the Castle/City row while such a family leads it."""
        v, lead = fr[1], fr[10]
        protected = self.first_owner[v] == lead or (0 <= lead < self.num_players and self.garrison[v] >> lead & 1)
        fr[8] = self._row(v) if protected else self.game.ruleset.pips_per_loss["open"]

    def _lead_family(self, v: int, fams: list[int]) -> int:
        o = self.owner[v]
        if o in fams and self.occupies(o, v):
            return o
        best, bn = fams[0] if fams else -1, -1
        for q in fams:
            k = self.soldiers_at(q, v) + len(self.free_at(q, v))
            if k > bn:
                best, bn = q, k
        return best

    def _legal_battle(self, fr: list[int]) -> list[int]:
        L = self.game.layout
        st, v, att = fr[4], fr[1], fr[2]
        if st == B_JOIN:
            return [L.word("JOIN_DEFENCE"), L.word("STAY_OUT")]
        if st == B_CALM:
            out = [L.word("NO_ATTEMPT")]
            rs = self.game.ruleset
            for b in self._calm_bishops(fr):
                for k in range(rs.calm_max_steps + 1):
                    if k * rs.calm_step_price <= self.cash[att]:
                        out.append(L.a("calm", b * L.calm_steps + k))
            return out
        if st == B_DEF:
            f = self._def_families(fr)[fr[5]]
            out = [L.word("FIGHT_ON")]
            if self.free_at(f, v) and self._destinations(f, v, 2, 0):
                out.append(L.word("RETREAT"))
            if att != MOB:  # F53.7: nobody surrenders to the mob
                out.append(L.word("SURRENDER"))
            return out
        if st == B_ATT:
            out = [L.word("FIGHT_ON")]
            if fr[10] != MOB:
                out.append(L.word("SURRENDER"))
            return out
        if st in (B_AIM_DEF, B_AIM_ATT):  # F32: any free person of the other side, several dice on one allowed
            if st == B_AIM_DEF:
                targets = self._side_persons(att, v, not fr[7]) if att != MOB else []
            else:
                targets = [p for q in self._def_families(fr) for p in self._side_persons(q, v, False)]
            return [L.word("AIM_DONE")] + [L.a("aim", p) for p in targets]
        return []  # pragma: no cover

    def _do_battle(self, fr: list[int], kind: str, x: int, word: str) -> None:
        st, v, att = fr[4], fr[1], fr[2]
        rs = self.game.ruleset
        if st == B_JOIN:
            q = self._battle_actor(fr)
            fr[13] &= ~(1 << q)
            if word == "JOIN_DEFENCE":
                fr[11] |= 1 << q
        elif st == B_CALM:
            fr[12] = 1
            if kind == "calm":  # F19: pay, then one die
                b, k = divmod(x, self.game.layout.calm_steps)
                self.cash[att] -= k * rs.calm_step_price
                self.dice = []
                self._push(FR_DICE, 1, D_CALM, b, k, 0)
        elif st == B_DEF:
            f = self._def_families(fr)[fr[5]]
            if word == "FIGHT_ON":
                fr[5] += 1
            elif word == "RETREAT":
                self._push(FR_RETREAT, f, v, 0, 0, -1)
            else:
                self._surrender(fr, f, defence=True)
        elif st == B_ATT:
            if word == "SURRENDER":
                self._surrender(fr, att, defence=False)
                fr[15], fr[4] = 2, B_END
            else:
                fr[4] = B_AIM_DEF
        elif st in (B_AIM_DEF, B_AIM_ATT):
            if word == "AIM_DONE":
                fr[4] = B_AIM_ATT if st == B_AIM_DEF else B_ROLL
            else:
                self.aims[0 if st == B_AIM_DEF else 1].append(x)

    def _surrender(self, fr: list[int], f: int, defence: bool) -> None:
        """F31: its Soldiers are removed (Guards too, lost), its free persons captured by the other side's
        leader; the prisoners it escorted pass to that family."""
        v = fr[1]
        road = not defence and not fr[7]
        other = fr[2] if defence else fr[10]
        self._remove_soldiers(f, v, 10 ** 6, road_first=road)
        for p in self._side_persons(f, v, road):
            self._capture(p, other, v)
        for p in range(self.game.P):
            if self.captor[p] == f and self.loc[p] == v:
                if self.fam[p] == other:
                    self._release(p)
                    self.onroad[p] = -1
                else:
                    self.captor[p], self.onroad[p] = other, -1
        if defence:
            self.battle_lost[v] = True
            fr[11] &= ~(1 << f)
            if not self._def_families(fr):
                fr[15], fr[4] = 1, B_END

    def _capture(self, p: int, captor: int, v: int) -> None:
        if captor == MOB or captor < 0:
            self._kill([p], in_battle=True)
            return
        if self.fam[p] == captor:
            return
        self.captor[p], self.loc[p], self.onroad[p] = captor, v, -1

    def _calm_result(self, fr: list[int], die: int) -> None:
        b, k = fr[3], fr[4]
        battle = self.stack[-1]
        if die + k >= self.game.ruleset.calm_success:  # the revolt is over
            self._mob_gone()
            battle[15], battle[4] = 1, B_END
            battle[2] = self.fam[b]
            self.calm_bishop = b
        else:  # F19: stoned to death
            self._kill([b], in_battle=True)

    def _mob_gone(self) -> None:
        """F17.4: when the last Peasant is eliminated, the card is discarded."""
        self.mob_n, self.mob_v, self.mob_road, self.mob_ctrl, self.revolt_card = 0, -1, -1, -1, -1

    def _battle_losses(self, dice: list[int]) -> None:
        """F32-F33: aimed dice first, then table losses on both sides at once."""
        fr = self.stack[-1]
        v, att = fr[1], fr[2]
        rs = self.game.ruleset
        dd = fr[14]
        ddice, adice = dice[:dd], dice[dd:]
        killed = []
        for dice_, aims in ((ddice, self.aims[0]), (adice, self.aims[1])):
            for d, p in zip(dice_, aims):
                if d >= rs.aimed_kill_face and p not in killed:
                    killed.append(p)
        def_sum = sum(ddice[len(self.aims[0]):])
        att_sum = sum(adice[len(self.aims[1]):])
        to_att = def_sum // fr[9]
        to_def = att_sum // fr[8]
        if killed:
            if any(self.fam[p] != att for p in killed):
                self.battle_lost[v] = True
            self._kill(killed, in_battle=True)
        # allocation first (simultaneous), then removal
        road = not fr[7]
        plans = []
        if att == MOB:
            plans.append((MOB, min(to_att, self.mob_n), False))
        else:
            plans.append((att, to_att, road))
        if fr[11] >> MOB & 1:
            plans.append((MOB, min(to_def, self.mob_n), False))
        else:
            fams = self._def_families(fr)
            left = {q: self._side_tokens(q, v, False) for q in fams}
            share = {q: 0 for q in fams}
            for _ in range(to_def):  # F33.2: to the family with the most fighting tokens left
                cands = [q for q in fams if left[q] > 0]
                if not cands:
                    break
                q = max(cands, key=lambda q: (left[q], q == fr[10], -fams.index(q)))
                left[q] -= 1
                share[q] += 1
            for q in fams:
                if share[q]:
                    self.battle_lost[v] = True
                    plans.append((q, share[q], False))
        for f, n, rd in plans:
            if f == MOB:
                self.mob_n -= n
                if self.mob_n <= 0:
                    self._mob_gone()
                continue
            rest = self._remove_soldiers(f, v, n, road_first=rd)
            if rest > 0:
                fp = self._fighting_persons(f, v, rd)
                if rest >= len(fp):
                    self._kill(fp, in_battle=True)
                else:  # F33.3: its player chooses which
                    self._push(FR_LOSSPICK, f, rest, v, int(rd))

    def _end_battle(self, fr: list[int]) -> None:
        """F34: winner, captures, escorted prisoners, entering the village."""
        v, att, inside = fr[1], fr[2], fr[7]
        road = not inside
        if fr[15] == 1:
            winner = "att"
        elif fr[15] == 2:
            winner = "def"
        else:
            a, d = self._att_force(fr) > 0, self._def_force(fr) > 0
            winner = "att" if a and not d else "def" if d and not a else ""
        def_fams = [q for q in range(self.num_players) if fr[11] >> q & 1]
        leader = fr[10]
        if winner == "att":
            for q in def_fams:
                for p in self.free_at(q, v):
                    self._capture(p, att, v)
        elif winner == "def" and att != MOB:
            for p in self._side_persons(att, v, road):
                self._capture(p, leader, v)
        # F34.2: prisoners of a family with nothing left there die
        for q in range(self.num_players):
            if (q == att or q in def_fams) and not self._side_persons(q, v, True) and \
                    self._side_soldiers(q, v, True) == 0:
                dead = [p for p in range(self.game.P) if self.captor[p] == q and self.loc[p] == v]
                if dead:
                    self._kill(dead, in_battle=True)
        if att != MOB:
            if winner != "def":
                self._enter_from_road(att, v)
            if winner == "att":
                self.won_by[v] = att
                calm = self.calm_bishop
                if calm >= 0:
                    self.calm_bishop = -1
                    y = self.game.map.village_fief[v]
                    if self.capital[y] == v and self.fief_family(y) != att:  # F18.5
                        self._set_title(y, calm)
                        for w in self.game.map.fief_villages[y]:
                            self.owner[w] = att
        else:
            if self.mob_n > 0 and self.mob_v == v:
                self.mob_road = -1
        self._free_unescorted()

    def _end_village_combat(self, v: int) -> None:
        """F34.4 with F53.2: a battle decides ownership; improvements lost with a beaten defence."""
        old = self.owner[v]
        y = self.game.map.village_fief[v]
        if self.mob_in(v) and not any(self.has_tokens(q, v) for q in range(self.num_players)):
            self._mob_takes(v)
        elif self.won_by[v] >= 0 and self.occupies(self.won_by[v], v):
            hf = self.fief_family(y)
            if not (hf >= 0 and self.capital[y] >= 0 and v != self.capital[y]):
                self._set_owner(v, self.won_by[v])
        else:
            self._check_owner(v)
        if self.owner[v] != old and self.battle_lost[v]:
            self.mills[v] = self.presses[v] = 0

    # ==================================================================================================
    # owning villages (F9) and titles
    # ==================================================================================================
    def _check_owner(self, v: int) -> None:
        """F9.2: unless v is an enfeoffed non-capital village, an owner not occupying v loses it to master(v)
        when another family occupies it; an empty village keeps its owner."""
        y = self.game.map.village_fief[v]
        hf = self.fief_family(y)
        if hf >= 0 and self.capital[y] >= 0 and v != self.capital[y]:
            self.owner[v] = hf
            return
        if self.mob_in(v):
            return
        o = self.owner[v]
        if o >= 0 and self.occupies(o, v):
            return
        if any(self.occupies(q, v) for q in range(self.num_players) if q != o):
            self._set_owner(v, self.master(v))

    def _set_owner(self, v: int, f: int) -> None:
        if f < 0 or f == MOB or self.owner[v] == f:
            return
        self.owner[v] = f
        y = self.game.map.village_fief[v]
        if self.capital[y] == v and self.fief_family(y) >= 0 and self.fief_family(y) != f:
            self._capital_taken(y, f, v)

    def _capital_taken(self, y: int, f: int, v: int) -> None:
        """F34.4: the title passes to a free person of the new owner who is there, else any, else retained."""
        cands = self.free_at(f, v) or [p for p in self.persons_of(f) if self.free(p)]
        for w in self.game.map.fief_villages[y]:
            self.owner[w] = f
        if not cands:
            self.title[y], self.pending[y], self.retained[y] = -1, -1, f
        elif len(cands) == 1:
            self._set_title(y, cands[0])
        else:
            self.title[y], self.pending[y], self.retained[y] = -1, -1, f  # held by f while it chooses
            self._push(FR_TITLE, f, y, sum(1 << p for p in cands))

    def _set_title(self, y: int, p: int) -> None:
        self.title[y], self.pending[y], self.retained[y] = p, -1, -1

    # ==================================================================================================
    # H. deaths, prisoners, the crown (F35-F40)
    # ==================================================================================================
    def _kill(self, persons: list[int], in_battle: bool = False) -> None:
        """F37: what a death does at once (several deaths are simultaneous)."""
        g = self.game
        places = []
        for p in persons:
            if self.fam[p] < 0:
                continue
            f = self.fam[p]
            places.append(self.loc[p])
            titles = self.fief_titles(p)
            self.seq += 1
            for y in titles:  # pending for its family until the next inheritance
                self.title[y] = -1
                self.pending[y] = f
                self.pend_spouse[y] = self.fam[self.spouse[p]] if self.spouse[p] >= 0 else -1
                self.pend_seq[y] = self.seq
            if titles:  # F21: escrow follows the highest fief title
                best = max(titles, key=lambda y: (g.fief_rank[y], -y))
                self.esc_wait[best] += self.escrow[p]
            else:
                self.cash[f] += self.escrow[p]
            self.escrow[p] = 0
            if self.bishop[p] >= 0:
                self.tithe[self.bishop[p]] = -1
            self.bishop[p], self.cardinal[p], self.darc[p] = -1, False, False
            s = self.spouse[p]
            if s >= 0:
                self.spouse[s] = -1
            self.spouse[p] = -1
            self.fam[p], self.loc[p], self.onroad[p], self.captor[p], self.used[p] = -1, -1, -1, -1, 0
            self.conduct[p] = -1
            self.wed[p] = False
            if p == self.king:
                self._king_dies()
            if p == self.queen:
                self._queen_loses_crown()
            if p == self.prince:
                self.prince = -1
            for q in range(g.P):  # prisoners it held are handled by escort rules
                pass
        if not in_battle:
            for v in places:
                if v >= 0:
                    self._check_owner(v)
            self._free_unescorted()

    def _king_dies(self) -> None:
        """F39.1-2."""
        if self.prince >= 0:
            self.king, self.prince = self.prince, -1
            if self.queen >= 0:
                self.regent = True
                self.regency_end = self.turn + self.game.ruleset.regency_turns - 1
            else:
                self.regent = False
                w = self.spouse[self.king]
                if w >= 0:  # F53.6
                    self.queen, self.qg = w, self.game.ruleset.limits["queens_guard"]
        else:
            self.king = -1
            if self.queen >= 0:
                self.regent, self.regency_end = True, INF_TURN
            else:
                self.kg = -1

    def _queen_loses_crown(self) -> None:
        """F39.5-6: the Queen card returns, or goes to the young King's wife; a Regency she held ends."""
        was_regent = self.regent
        self.queen, self.qg, self.regent = -1, -1, False
        if was_regent:
            if self.king < 0:
                self.kg = -1
            else:
                w = self.spouse[self.king]
                if w >= 0:
                    self.queen, self.qg = w, self.game.ruleset.limits["queens_guard"]

    def _end_regency(self) -> None:
        """F39.3: the King's Guard joins the young King; his wife, if any, takes the Queen card."""
        self.regent = False
        w = self.spouse[self.king] if self.king >= 0 else -1
        if w >= 0 and w != self.queen:
            qg = self.qg
            self.queen, self.qg = w, qg if qg >= 0 else self.game.ruleset.limits["queens_guard"]

    def _release(self, p: int) -> None:
        """F35.3: freed in place; escrow goes to its family's cash (F21)."""
        if self.captor[p] < 0:
            return
        self.captor[p] = -1
        if self.fam[p] >= 0:
            self.cash[self.fam[p]] += self.escrow[p]
            self.escrow[p] = 0

    def _free_unescorted(self) -> None:
        """F35.2 / F53.10: a prisoner whose captor has no free token left where it stands is freed."""
        for p in range(self.game.P):
            c = self.captor[p]
            if self.fam[p] < 0 or c < 0:
                continue
            v = self.loc[p]
            if self.onroad[p] >= 0:
                ok = bool(self.free_at(c, v, road=True)) or any(
                    a[0] == c and a[1] == v and a[4] > 0 for a in self.assaults)
            else:
                ok = self.alive[c] and self.occupies(c, v)
            if not ok or not self.alive[c]:
                self._release(p)
                self.onroad[p] = -1

    def _marry(self, x: int, y: int) -> None:
        """F44 (and F40.1, F39.5, F53.5)."""
        if self.fam[x] < 0 or self.fam[y] < 0 or self.spouse[x] >= 0 or self.spouse[y] >= 0:
            return
        self.spouse[x], self.spouse[y] = y, x
        self.wed[x] = self.wed[y] = True
        man, woman = (x, y) if self.male(x) else (y, x)
        if self.queen == woman and self.king != man:  # F39.5: a widowed Queen loses the crown on marrying
            self._queen_loses_crown()
        if man == self.king:
            if self.regent:  # F53.5: the young King marries; the Regency ends
                self.regent = False
            old_qg = self.qg
            if self.queen >= 0 and self.queen != woman:
                self.queen = -1
            self.queen = woman
            self.qg = old_qg if old_qg >= 0 else self.game.ruleset.limits["queens_guard"]

    # ==================================================================================================
    # inheritance (F38)
    # ==================================================================================================
    def _next_inheritance(self) -> bool:
        """Resolve the next pending title (order of death, higher rank, fief order); False when none is left."""
        g = self.game
        pend = [y for y in range(g.NF) if self.pending[y] >= 0]
        if not pend:
            return False
        y = min(pend, key=lambda y: (self.pend_seq[y], -g.fief_rank[y], y))
        f = self.pending[y]
        own = self.persons_of(f)
        spouse_f = self.pend_spouse[y]
        if own:  # F38.1
            self._offer_title(f, y, own, f)
        elif spouse_f >= 0 and self.alive[spouse_f] and self.persons_of(spouse_f):  # F38.2
            self._offer_title(spouse_f, y, self.persons_of(spouse_f), f)
        elif self.king >= 0 and not self.regent and self.free(self.king):  # F38.3
            self._offer_title(self.fam[self.king], y, [self.king], f)
        elif self.regent and self.queen >= 0:
            cands = [self.queen] + ([self.king] if self.king >= 0 else [])
            self._offer_title(self.fam[self.queen], y, cands, f)
        else:  # F38.4
            self.pending[y] = -1
            self.retained[y] = f
            self.cash[f] += self.esc_wait[y]
            self.esc_wait[y] = 0
        return True

    def _offer_title(self, chooser: int, y: int, cands: list[int], old: int) -> None:
        self.pending[y] = -1
        self.retained[y] = chooser  # held while the choice is made
        if len(cands) == 1:
            self._receive_title(y, cands[0], old)
        else:
            self._push(FR_HEIR, chooser, y, sum(1 << p for p in cands), old)

    def _receive_title(self, y: int, p: int, old: int) -> None:
        g = self.game
        f = self.fam[p]
        self._set_title(y, p)
        if 0 <= old < self.num_players and self.esc_wait[y]:
            self.cash[f] += self.esc_wait[y]
        self.esc_wait[y] = 0
        if f != old:  # F38: the old family's Soldiers leave the fief; a Soldier for each City
            for v in g.map.fief_villages[y]:
                if 0 <= old < self.num_players:
                    self.sold[old][v] = [0, 0, 0, 0]
                self.owner[v] = f
            cap = self.capital[y]
            if cap >= 0 and not self.has_tokens(f, cap):
                self._push(FR_CITYSOLDIER, f, cap)

    def _legal_city_soldier(self, fr: list[int]) -> list[int]:
        L, f, city = self.game.layout, fr[1], fr[2]
        rs = self.game.ruleset
        out = []
        if self.cash[f] >= rs.prices["soldier"] and self._ordinary_on_board(f) < rs.limits["soldiers_per_family"]:
            out.append(L.word("BUY_SOLDIER"))
        out += [L.a("village", v) for v in range(self.game.V) if v != city and self.controls(f, v)
                and sum(self.sold[f][v]) > 0]
        return out

    def _take_soldier(self, f: int, v: int) -> None:
        for u in range(4):
            if self.sold[f][v][u]:
                self.sold[f][v][u] -= 1
                return

    # ==================================================================================================
    # I. Negotiations (F41-F45)
    # FR_NEGO: [kind, round, index in turn order, a proposal was made this round]
    # ==================================================================================================
    def _marriageable(self, p: int) -> bool:
        """F44: unmarried, not a Bishop or Cardinal, not the Lady d'Arc (prisoners may marry)."""
        return self.fam[p] >= 0 and self.spouse[p] < 0 and self.bishop[p] < 0 and not self.darc[p]

    def _legal_nego(self, fr: list[int]) -> list[int]:
        g, L = self.game, self.game.layout
        f = self.order()[fr[2]]
        out = [L.word("END")]
        for x in self.persons_of(f):
            if not self._marriageable(x):
                continue
            for y in range(g.P):
                if self.fam[y] >= 0 and self.fam[y] != f and self._marriageable(y) and self.male(x) != self.male(y) \
                        and self.alive[self.fam[y]]:
                    out.append(L.a("marry", x * g.P + y))
        for q in range(self.num_players):
            if q == f or not self.alive[q]:
                continue
            out.append(L.a("unally" if self.allied[f][q] else "ally", q))
            if self.cash[f] >= g.ruleset.money_unit:
                out.append(L.a("gift", q))
        for p in range(g.P):
            if self.fam[p] >= 0 and self.captor[p] == f and self.alive[self.fam[p]]:
                out.append(L.a("release", p))
            if self.fam[p] == f and self.captor[p] >= 0:
                out.append(L.a("ransom", p))
        for y in range(g.NF):
            a = self.title[y]
            if a >= 0 and self.fam[a] == f and any(y in self._transferable(f, b) for b in self.persons_of(f)):
                out.append(L.a("transfer", y))
        return out

    def _do_nego(self, fr: list[int], kind: str, x: int, word: str) -> None:
        g, L = self.game, self.game.layout
        order = self.order()
        f = order[fr[2]]
        if kind != "word":
            fr[3] = 1
        fr[2] += 1  # move on first (F41), so the frame can go before the proposal's own decisions
        if fr[2] >= len(order):
            fr[1] += 1
            fr[2] = 0
            if fr[1] >= g.ruleset.negotiation_rounds or not fr[3]:
                self.stack.pop()
            fr[3] = 0
        if kind == "marry":
            a, b = divmod(x, g.P)
            self._push(FR_ANSWER, f, self.fam[b], A_MARRY, a, b, 0)
        elif kind == "ally":
            self._push(FR_ANSWER, f, x, A_ALLY, 0, 0, 0)
        elif kind == "unally":
            self.allied[f][x] = self.allied[x][f] = False
        elif kind == "gift":
            self._push(FR_AMOUNT, f, 0, x, 0)
        elif kind == "release":
            self._push(FR_AMOUNT, f, 1, x, 0)
        elif kind == "ransom":
            self._push(FR_AMOUNT, f, 2, x, 0)
        elif kind == "transfer":
            self._push(FR_TRANSFER, f, x)

    def _amount_range(self, fr: list[int]) -> tuple[int, int]:
        """F42 amounts, in money units, bounded by the ruleset's max_transfer (F2-D5)."""
        rs = self.game.ruleset
        cap = rs.max_transfer // rs.money_unit
        f, what, t = fr[1], fr[2], fr[3]
        if what == 0:
            return 1, min(cap, self.cash[f] // rs.money_unit)
        p = t
        can = (self.escrow[p] + self.cash[self.fam[p]]) // rs.money_unit
        return 0, min(cap, can)

    def _do_amount(self, fr: list[int], x: int) -> None:
        self.stack.pop()
        m = x * self.game.ruleset.money_unit
        f, what, t = fr[1], fr[2], fr[3]
        if what == 0:  # gift: moves at once
            self.cash[f] -= m
            self.cash[t] += m
        elif what == 1:  # the captor offers to release p for m
            self._push(FR_ANSWER, f, self.fam[t], A_RELEASE, t, m, 0)
        else:  # p's family offers m for p
            self._push(FR_ANSWER, f, self.captor[t], A_RANSOM, t, m, 0)

    # ---- the election (F45) --------------------------------------------------------------------------
    # FR_ELECT: [kind, stage (0 candidacy, 1 voting, 2 anointing), index, actor, tally of consents]
    def _voters(self) -> list[int]:
        """F45.2 / F53.15: free persons who are crowned or Bishops, by family in turn order then person id."""
        return [p for f in self.order() for p in self.persons_of(f) if self.free(p)
                and (self.crowned(p) or self.bishop[p] >= 0)]

    def _anointers(self) -> list[int]:
        return [p for f in self.order() for p in self.persons_of(f) if self.free(p) and self.bishop[p] >= 0]

    def _eligible(self, f: int) -> list[int]:
        return [p for p in self.persons_of(f) if self.free(p) and self.male(p) and self.crowned(p)
                and self.bishop[p] < 0]

    def _auto_elect(self, fr: list[int]) -> bool:
        order = self.order()
        st, i = fr[1], fr[2]
        if st == 0:
            if i < len(order):
                if fr[3] != order[i]:
                    fr[3] = order[i]
                    return True
                return False
            if all(c < 0 for c in self.cand):
                self.stack.pop()
                return True
            fr[1], fr[2] = 1, 0
            return True
        if st == 1:
            voters = self._voters()
            if i < len(voters):
                if fr[3] != self.fam[voters[i]]:
                    fr[3] = self.fam[voters[i]]
                    return True
                return False
            counts = sorted(((self.votes[p], p) for p in self.cand if p >= 0), reverse=True)
            top = counts[0]
            elected = top[0] >= self.game.ruleset.min_votes and (len(counts) == 1 or counts[1][0] < top[0])
            if not elected:
                self.stack.pop()
                return True
            fr[1], fr[2], fr[4] = 2, 0, 0
            self.votes = [0] * self.game.P
            self.votes[top[1]] = -1  # marks the elected candidate
            return True
        anointers = self._anointers()
        if i < len(anointers):
            if fr[3] != self.fam[anointers[i]]:
                fr[3] = self.fam[anointers[i]]
                return True
            return False
        self.stack.pop()
        elected = self.votes.index(-1)
        self.votes = [0] * self.game.P
        if fr[4] >= 1000 or fr[4] >= self.game.ruleset.bishops_to_anoint:
            self._anoint(elected)
        return True

    def _legal_elect(self, fr: list[int]) -> list[int]:
        L = self.game.layout
        st = fr[1]
        if st == 0:
            return [L.word("END")] + [L.a("candidate", p) for p in self._eligible(fr[3])]
        if st == 1:
            return [L.word("ABSTAIN")] + [L.a("vote", p) for p in self.cand if p >= 0]
        return [L.word("ACCEPT"), L.word("REFUSE")]

    def _do_elect(self, fr: list[int], kind: str, x: int, word: str) -> None:
        st = fr[1]
        if st == 0:
            if kind == "candidate":
                self.cand[fr[3]] = x
        elif st == 1:
            if kind == "vote":
                self.votes[x] += 1
        else:
            if word == "ACCEPT":
                p = self._anointers()[fr[2]]
                fr[4] += 1000 if self.cardinal[p] else 1  # F45.4: one Cardinal, or two Bishops
        fr[2] += 1

    def _anoint(self, p: int) -> None:
        """F45.5: the King card; his wife Queen; the Guard; a Regency ends; retained titles pass to him."""
        rs = self.game.ruleset
        old_kg = self.kg if self.regent else -1
        if self.queen >= 0 and self.queen != self.spouse[p]:
            self.regent = False
            self.queen, self.qg = -1, -1  # F39.4: she loses the Queen card unless she is his wife
        self.regent = False
        self.king = p
        self.kg = old_kg if old_kg >= 0 else rs.limits["kings_guard"]
        w = self.spouse[p]
        if w >= 0 and self.queen != w:
            self.queen, self.qg = w, rs.limits["queens_guard"]
        for y in range(self.game.NF):
            if self.retained[y] >= 0 and self.retained[y] != self.fam[p]:
                old = self.retained[y]
                self.retained[y] = -1
                self._receive_title(y, p, old)

    # ==================================================================================================
    # K. End of the turn and of the game (F8, F48-F51)
    # ==================================================================================================
    def _end_turn(self) -> None:
        rs, g = self.game.ruleset, self.game
        n = self.num_players
        before = [f for f in range(n) if self.alive[f]]
        if self.step == 0:
            for f in before:  # (a) F49
                if self.tokens_total(f) == 0:
                    self._eliminate(f)
            if self.stack:  # F49: who receives a retained title is chosen before the victory check (b)
                self.step = 1  # (whoever chooses is alive, so ``before`` is not needed when this resumes)
                return
        alive = [f for f in range(n) if self.alive[f]]
        over = False
        if not rs.scored_turns:  # (b) F48
            w = self._victors()
            if w:
                self.winners, over = w, True
            elif len(alive) == 1:
                self.winners, over = alive, True
            elif not alive:
                self.winners, over = [f for f in before], True
        if not over and self.regent and self.king >= 0 and self.turn >= self.regency_end:  # (c) F39
            self._end_regency()
        if not over and rs.scored_turns:  # (d) F50
            if self.turn % 5 == 0 or len(alive) < 2:
                for f in alive:
                    self.tally[f] += self.power(f)
            if self.turn >= rs.scored_turns or len(alive) < 2:
                best = max((self.tally[f] for f in alive), default=0)
                self.winners, over = [f for f in alive if self.tally[f] == best], True
        if not over and not rs.scored_turns and rs.turn_limit and self.turn >= rs.turn_limit:  # (e) F51
            best = max(self.power(f) for f in alive)
            self.winners, over = [f for f in alive if self.power(f) == best], True
        if over:
            self.phase = OVER
            self.stack = []
            return
        # (f) counters reset, the First Player card passes
        for p in range(g.P):
            self.used[p] = 0
        self.exit_refused = [[False] * g.V for _ in range(n)]  # F26.4: "this turn"
        for f in range(n):
            for v in range(g.V):
                s = self.sold[f][v]
                self.sold[f][v] = [sum(s), 0, 0, 0]
        nxt = self.first
        for i in range(1, n + 1):
            if self.alive[(self.first + i) % n]:
                nxt = (self.first + i) % n
                break
        self.first = nxt
        self.turn += 1
        self.phase, self.step = CARDS, 0

    def _victors(self) -> list[int]:
        """F48: solo winners (King or Queen card and 3 fiefs) first; else the King's and Queen's families."""
        solo = []
        for f in range(self.num_players):
            if not self.alive[f]:
                continue
            royal = (self.king >= 0 and self.fam[self.king] == f) or (self.queen >= 0 and self.fam[self.queen] == f)
            if royal and self.fiefs_held(f) >= 3:
                solo.append(f)
        if solo:
            return solo
        if self.king >= 0 and self.queen >= 0:
            k, q = self.fam[self.king], self.fam[self.queen]
            if k != q and self.alive[k] and self.alive[q] and self.united(k, q) and \
                    self.fiefs_held(k) + self.fiefs_held(q) >= 4:
                return sorted([k, q])
        return []

    def _eliminate(self, f: int) -> None:
        """F49: hand to the deck pool, money to the bank, alliances end, retained titles to the King (during a
        Regency, the Regent or the young King, her family's choice as F38.3) or the supply, villages unowned, a mob
        it controlled stops."""
        self.alive[f] = False
        self.hands[f] = []
        self.cash[f] = 0
        for q in range(self.num_players):
            self.allied[f][q] = self.allied[q][f] = False
        for y in range(self.game.NF):
            if self.retained[y] == f or self.pending[y] == f:
                self.retained[y] = self.pending[y] = -1
                self.esc_wait[y] = 0
                if self.regent and self.queen >= 0:  # F38.3: her family chooses the Regent or the young King
                    heirs = [self.queen] + ([self.king] if self.king >= 0 else [])
                    self._offer_title(self.fam[self.queen], y, heirs, f)
                elif self.king >= 0 and self.free(self.king):
                    self._receive_title(y, self.king, f)
        for v in range(self.game.V):
            if self.owner[v] == f:
                self.owner[v] = -1
            self.sold[f][v] = [0, 0, 0, 0]
        for p in range(self.game.P):
            if self.captor[p] == f:
                self._release(p)
        if self.mob_ctrl == f:
            self.mob_ctrl = -1

    # ==================================================================================================
    # serialisation and observation (F46)
    # ==================================================================================================
    def to_dict(self) -> dict:
        d = {"format": STATE_FORMAT, "players": self.num_players}
        for name in _FIELDS:
            d[name] = _copy(getattr(self, name))
        return d

    @classmethod
    def from_dict(cls, d: dict, game: Game) -> "State":
        from engine.checker import Checker
        c = Checker("state", StateError, sep=".")
        c.obj(d, "", ("format", "players") + _FIELDS, ("format", "players") + _FIELDS)
        if d["format"] != STATE_FORMAT:
            c.fail("format", f"expected {STATE_FORMAT!r}, got {d['format']!r}")
        if d["players"] != game.num_players:
            c.fail("players", f"expected {game.num_players}, got {d['players']!r}")
        st = cls(game)
        for name in _FIELDS:
            ref = getattr(st, name)
            _check_shape(c, d[name], ref, name)
            setattr(st, name, _copy(d[name]))
        return st

    def observation(self, seat: int) -> dict:
        """F46: exactly what ``seat`` may know: its own hand, discards and cards it saw change hands; others'
        hands only as counts; the deck only as a count. Everything else is public."""
        if not isinstance(seat, int) or isinstance(seat, bool) or not 0 <= seat < self.num_players:
            raise StateError(f"seat: expected an integer in [0, {self.num_players}), got {seat!r}")
        d = self.to_dict()
        d["hand_counts"] = [len(h) for h in self.hands]
        d["deck_count"] = len(self.deck())
        d["hands"] = [h if q == seat else [] for q, h in enumerate(d["hands"])]
        d["discards_seen"] = [h if q == seat else [] for q, h in enumerate(d["discards_seen"])]
        d["seen_cards"] = [h if q == seat else [] for q, h in enumerate(d["seen_cards"])]
        for fr in d["stack"]:  # a card offered in a gift is seen only by the two families (F46)
            if fr[0] == FR_ANSWER and fr[3] == A_GIVE and seat not in (fr[1], fr[2]):
                fr[4] = -1
        d["seat"] = seat
        d["current_player"] = self.current_player()
        return d

    def information_state_string(self, seat: int) -> str:
        return json.dumps(self.observation(seat), sort_keys=True, separators=(",", ":"))

    def __str__(self) -> str:
        # the text picture lives above this module (fief2/render.py, which imports the state's names); it is
        # installed by the package (fief2/__init__.py) so imports flow one way
        return _TEXT_PICTURE[0](self) if _TEXT_PICTURE else repr(self)

    def __repr__(self) -> str:
        return f"<fief2.State turn={self.turn} phase={PHASE_NAMES[self.phase]} player={self.current_player()}>"


def _copy(v: Any) -> Any:
    if isinstance(v, list):
        return [_copy(x) for x in v]
    return v


def _check_shape(c: Any, v: Any, ref: Any, path: str) -> None:
    """A state field has the type of the fresh state's field: same nesting, ints or bools (lists may grow)."""
    if isinstance(ref, bool):
        c.boolean(v, path)
    elif isinstance(ref, int):
        c.integer(v, path, -INF_TURN, 10 ** 12)
    elif isinstance(ref, list):
        c.array(v, path, max_len=10_000)
        if ref and len(v) != len(ref) and path not in ("stack", "assaults", "winners", "refused", "dice"):
            c.fail(path, f"expected an array of {len(ref)} items, got {len(v)}")
        for i, x in enumerate(v):
            proto = ref[i] if i < len(ref) else (ref[0] if ref else x)
            if isinstance(x, list):
                c.array(x, f"{path}[{i}]", max_len=10_000)
                for j, y in enumerate(x):
                    if isinstance(y, list):
                        for k_, z in enumerate(y):
                            c.integer(z, f"{path}[{i}][{j}][{k_}]", -INF_TURN, 10 ** 12)
                    elif isinstance(y, bool):
                        pass
                    else:
                        c.integer(y, f"{path}[{i}][{j}]", -INF_TURN, 10 ** 12)
            elif isinstance(proto, bool):
                c.boolean(x, f"{path}[{i}]")
            else:
                c.integer(x, f"{path}[{i}]", -INF_TURN, 10 ** 12)


def new_game(players: int = 4, ruleset: Ruleset | None = None, game_map: Map | None = None,
             scored_turns: int | None = None, turn_limit: int | None = None) -> State:
    """A new game at its first decision (F7: seat 0 picks its first Lord)."""
    game_map = game_map or load_map()
    ruleset = ruleset or load_ruleset(game_map=game_map)
    if scored_turns is not None or turn_limit is not None:
        ruleset = ruleset.with_options(scored_turns, turn_limit)
    st = State(Game(ruleset, game_map, players))
    st._settle()
    return st


_TEXT_PICTURE: list = []  # the function str(state) draws with (fief2.render.render_text, installed by the package)


def install_text_picture(render) -> None:
    """Make ``str(state)`` draw with ``render`` (called once by the package with :func:`fief2.render.render_text`)."""
    _TEXT_PICTURE[:] = [render]
