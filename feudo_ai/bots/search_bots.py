"""The search bots: "ismcts" (the product), the frozen baselines "ismcts-v1", "ismcts-v2" and "pimc", and the Python
references "ismcts-py" and "pimc-py". Each plays :func:`feudo_ai.search.advise`'s answer with the settings of its
named profile (``feudo_ai/data/profiles.json``) resolved for the game's number of players by
:func:`feudo_ai.settings.resolve`, the spec's parameters as overrides."""

from __future__ import annotations

from engine.state import Phase

from feudo_ai.settings import FIELDS, MAX_ITERATIONS, MAX_SECONDS, SearchOptions, resolve

from feudo_ai.search import c_backend
from feudo_ai.search.reuse import TreeMemory

from .base import AdviceBot
from .clock import GameClock
from .greedy import GreedyBot

_LIMITS = ("iterations", "seconds", "deadline")
BANK_CAP = 4.0  # decisions' budgets added to one search at most (bank)
_OPTIONS_PLAYERS = 4  # the player count of a bot's :attr:`options` (the most settings follow it)


def _picks_left(state) -> int:
    """The cards the player to act still has to pick in its secret selection (R6: Army Cards, then one Trading
    Card), from its own observation."""
    seat = state.current_player()
    obs = state.observation(seat)
    army = state.game.ruleset.army_cards_selected
    return max(1, army + 1 - int(obs["selected_count"][seat]))


class ISMCTSBot(AdviceBot):
    """Bot "ismcts": plays :func:`feudo_ai.advise`'s answer with the C MO-ISMCTS and the ``product`` profile
    resolved for the game's number of players (greedy playout moves, to the end of the game in 2 players, there
    with the tree's action prior, and one more turn in 3 and 4; in 4 players the wide margin of the hand-made
    evaluation). Its parameters are settings by name (:data:`feudo_ai.settings.FIELDS`: ``iterations``,
    ``seconds``, ``threads``, ``c``, ...), over the profile's in every game
    (``ismcts:playout_greedy=0:playout_turns=0`` turns the greedy playouts off, a ``margin_weight`` or
    ``prior_weight`` holds in every game); the seed comes from the bot's own generator. Bot parameters besides:

    - ``follow_plan`` (default true): play the rest of a planned turn (the advice's plan: the seat's actions
      until new information arrives) without searching again, while the seat's observation is the one the plan
      expected; false searches every decision afresh (as "ismcts-v1" does; a selection's picks are always
      followed);
    - ``bank`` (default true): the budget (``iterations`` or ``seconds``) of each decision played from the plan
      is added to the next search (at most :data:`BANK_CAP` decisions' worth at once), so over a game the bot
      thinks as long as one that searches every decision;
    - ``game_seconds``: a per-game clock, the seat's total thinking time in one game, spread over its decisions
      by :class:`feudo_ai.bots.clock.GameClock` (instead of ``iterations``/``seconds``).

    :attr:`options` holds its settings in a 4-player game; :meth:`options_for` gives a game's."""

    name = "ismcts"
    profile = "product"
    fallback_bot = GreedyBot  # when the game clock has run out: the greedy player's move, no search  # the named profile of its settings (feudo_ai/data/profiles.json)
    follow_plan = True
    bank = True
    frozen = False  # a frozen baseline: no bot parameter beyond the search settings

    def __init__(self, seed: int = 0, *, follow_plan: bool | None = None, bank: bool | None = None,
                 game_seconds: float | None = None, clock=None, **params):
        c_backend.require()
        super().__init__(seed)
        params.pop("seed", None)
        for fixed in ("algorithm", "backend"):
            if fixed in params:
                raise ValueError(f"unknown {self.name} parameter {fixed} (fixed by the bot)")
        if resolve(self.profile).algorithm != "pimc" and "worlds" in params:
            raise ValueError(f"unknown {self.name} parameter worlds (pimc only)")
        if self.frozen and (follow_plan is not None or bank is not None or game_seconds is not None):
            raise ValueError(f"{self.name} is a frozen baseline: follow_plan, bank and game_seconds are not "
                             f"parameters of it")
        for name, value in (("follow_plan", follow_plan), ("bank", bank)):
            if value is not None:
                if not isinstance(value, bool):
                    raise ValueError(f"{name}: expected true or false, got {value!r}")
                setattr(self, name, value)
        self._memory = None  # the seat's TreeMemory (reuse_tree), made at its first search
        self._bank = 0.0  # decisions' budgets saved by following the plan (or by early_stop), not spent yet
        self._granted = None  # the options of the search under way (bank: what an early stop saves is booked)
        self._prepaid = 0  # picks of the current selection whose budget its search already had
        self.overrides = dict(params)  # the spec's settings, over the profile's in every game
        # fail at construction, not at the first decision
        self.options = resolve(self.profile, _OPTIONS_PLAYERS, self.overrides)
        self.clock = None
        if game_seconds is not None:
            if any(k in params for k in _LIMITS):
                raise ValueError("game_seconds: give either a per-game clock or a per-decision limit "
                                 "(iterations/seconds/deadline), not both")
            self.clock = GameClock(game_seconds, clock=clock)
        elif clock is not None:
            raise ValueError("clock: only with game_seconds")

    def choose(self, state) -> int:
        if self.clock is None:
            return super().choose(state)
        self.clock.begin(state)
        try:
            return super().choose(state)
        finally:
            self.clock.end()

    def options_for(self, players: int) -> SearchOptions:
        """The bot's search settings in a game of ``players``: its profile resolved for that game with the spec's
        parameters over it (:func:`feudo_ai.settings.resolve`; no limit banked or clocked).

        :raises ValueError: if ``players`` is not a positive integer."""
        if players == _OPTIONS_PLAYERS:
            return self.options
        return resolve(self.profile, players, self.overrides)

    def search_options(self, state):
        base = self.options if state is None else self.options_for(state.num_players)
        if self.clock is None:
            return self._banked(base, state)
        if self.clock.exhausted(state):
            return None
        return self.clock.options_for(state, base)

    def tree_memory(self, seat: int, options):
        """``reuse_tree``: the seat's trees kept from its previous search (:mod:`feudo_ai.search.reuse`)."""
        if not options.reuse_tree:
            return None
        if self._memory is None or self._memory.seat != seat:
            self._memory = TreeMemory(seat)
        return self._memory

    def observe(self, state, action: int) -> None:
        if self._memory is not None:
            self._memory.observe(state, action)

    def searched(self, state, advice) -> None:
        if self.clock is not None:
            self.clock.stop()  # a game clock books what the search spent, whatever stopped it
            return
        granted, self._granted = self._granted, None
        if not (self.bank and granted is not None and granted.early_stop):
            return
        if advice.stats.stopped_by not in ("decided", None):
            return  # the search spent its budget (or was cancelled): nothing saved
        # early_stop: the budget a settled answer (or a forced decision, not searched) left unspent goes to the
        # bank, in decisions' budgets as the plan's are
        base = self.options_for(state.num_players)
        if granted.seconds is not None and base.seconds:
            self._bank += max(0.0, granted.seconds - advice.stats.elapsed) / base.seconds
        elif granted.budget is not None and base.budget:
            self._bank += max(0, granted.budget - advice.stats.iterations) / base.budget

    def on_followed(self, state) -> None:
        if self.bank and self.clock is None:
            if self._prepaid > 0:
                self._prepaid -= 1  # a selection's pick, already spent by the selection's search
            else:
                self._bank += 1.0

    def picks_ahead(self, state) -> int:
        """The seat's further decisions that the search of this one plans whole and pays for in advance: the
        rest of a secret selection (R6) in Feudo."""
        if getattr(state, "phase", None) == Phase.SELECT:
            return _picks_left(state) - 1
        return 0

    def _banked(self, opts: SearchOptions, state=None) -> SearchOptions:
        """``bank``: the budget of the decisions played from a plan goes to the next search (at most
        :data:`BANK_CAP` decisions' worth at once), so the bot thinks as long in a game as one that searches every
        decision, spent where the plan ends (new information) rather than on the plan's continuation. A secret
        selection (R6: its picks are one decision, planned at once) is paid in advance: its search gets the
        budget of all its picks (the first Army Card's and one for each other card to pick)."""
        extra = 0.0
        self._prepaid = 0
        self._granted = opts  # (replaced below when the bank adds to it) what searched() books a saving against
        if self.bank and state is not None:
            self._prepaid = self.picks_ahead(state)
            extra = float(self._prepaid)
        if not self._bank and not extra:
            return opts
        extra = min(self._bank + extra, BANK_CAP)
        self._bank = max(0.0, self._bank - extra)
        if opts.seconds is not None:
            self._granted = opts.replace(seconds=min(opts.seconds * (1.0 + extra), MAX_SECONDS))
        elif opts.budget is not None:
            self._granted = opts.replace(iterations=min(int(round(opts.budget * (1.0 + extra))), MAX_ITERATIONS))
        return self._granted  # (a deadline only: nothing to bank)


class ISMCTSV1Bot(ISMCTSBot):
    """Bot "ismcts-v1": the MO-ISMCTS bot as it was frozen at commit bf7be3f, a baseline. Its settings are
    pinned (profile ``ismcts-v1``, 5,000 iterations when no limit is given) so later changes of the defaults never
    alter it, and it searches every decision afresh (only a secret selection's picks follow its plan)."""

    name = "ismcts-v1"
    profile = "ismcts-v1"
    follow_plan = False
    bank = False
    frozen = True


class ISMCTSV2Bot(ISMCTSBot):
    """Bot "ismcts-v2": the product's "ismcts" bot as it was frozen as a baseline (commit 675d4c0): its settings are
    pinned for every player count (profile ``ismcts-v2``, 5,000 iterations when no limit is given) so later changes
    of the defaults or of the ``product`` profile never alter it; it plays as "ismcts" did then (plan following, the
    bank, an optional per-game clock). Parameters over its settings are taken as "ismcts" takes them."""

    name = "ismcts-v2"
    profile = "ismcts-v2"


class PIMCBot(ISMCTSBot):
    """Bot "pimc": determinized UCT in C, the classic baseline (default 5000 iterations over 8 worlds):
    ``worlds`` worlds sampled from the seat's observation, plain UCT on each as a perfect-information game
    (every selection visible to every player), root visits summed. Same playouts and evaluation as
    "ismcts", so a pairing of the two measures the algorithms only. Frozen like "ismcts-v1": its options are
    pinned (profile ``pimc``) and it searches every decision afresh."""

    name = "pimc"
    profile = "pimc"
    follow_plan = False
    bank = False
    frozen = True


class _ReferenceBot(AdviceBot):
    profile = "reference"

    def __init__(self, seed: int = 0, **params):
        super().__init__(seed)
        params.pop("seed", None)
        for fixed in ("algorithm", "backend"):
            if fixed in params:
                raise ValueError(f"unknown {self.name} parameter {fixed} (fixed by the bot)")
        bad = sorted(set(params) - set(FIELDS))
        if bad:  # the bot takes settings only, by their one name
            raise ValueError(f"unknown search option(s) {', '.join(bad)}; known: {', '.join(FIELDS)}")
        self.options = resolve(self.profile, None, params)  # fail early on bad parameters


class PyISMCTSBot(_ReferenceBot):
    """Bot "ismcts-py": the Python reference MO-ISMCTS through :func:`feudo_ai.advise` (profile ``reference``: 300
    iterations, the "mixed" playout)."""

    name = "ismcts-py"
    profile = "reference"


class PyPIMCBot(_ReferenceBot):
    """Bot "pimc-py": the Python reference of the determinized UCT baseline (profile ``pimc-reference``: 300
    iterations over 6 worlds)."""

    name = "pimc-py"
    profile = "pimc-reference"
