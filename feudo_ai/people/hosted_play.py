"""``feudo play --server ADDR``: the person plays one seat of a match hosted by a server (``feudo.v1.Matches``).

    feudo play --server 127.0.0.1:50051 --players 4 --seat 0 --bots ismcts,greedy,pimc   # a new match
    feudo play --server 127.0.0.1:50051 --match ID --seat 0 --token TOKEN               # join or reconnect

The screen and commands are those of local play (:class:`feudo_ai.people.play.HumanSession`); :class:`HostedTable` is
the table it plays on. The bots move on the server; this client follows the match through its WatchMatch
events, which carry exactly what the seat may see (R22): its own picks, the other seats' picks as hidden
entries, everything public. They are replayed into a local position (:class:`engine.history.SeatReplay`: the
seat's exact observation, placeholders for the picks hidden from it, R25) that is drawn on the screen and
narrated action by action (fights, plague casualties). The person's actions go to SubmitAction with the action
count they were chosen at; ``hint`` asks the same server's Advisor (Suggest) with the seat's observation, the
form that holds nothing hidden from it. Reconnecting (``--match/--token`` again) replays the events silently
and resumes at the match's current action count.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

import grpc
from google.protobuf import json_format

from engine import PLAYER_NAMES, new_game
from engine.errors import FeudoError
from engine.history import Entry, SeatReplay
from engine.state import State
from feudo.v1 import game_pb2 as gpb
from feudo.v1 import matches_pb2 as mpb

from feudo_ai.client import AdvisorClient, AdvisorError
from feudo_ai.matches.client import MatchesClient, MatchesError
from feudo_ai.matches.spec import EXTERNAL
from feudo_ai.wire.convert import PositionError, game_from_setup, history_from_entries

from feudo_ai.people.narrate import narrate
from feudo_ai.people.play import HumanSession, Report, Table, TableError, default_console

__all__ = ["HostedTable", "create_match", "play_hosted"]


def _explain(e: MatchesError | AdvisorError, address: str) -> str:
    """One line for a failed call: what went wrong, in the server's words (which name the field)."""
    if e.code == grpc.StatusCode.UNAVAILABLE:
        return f"cannot reach a server at {address} ({e.details})"
    if e.code == grpc.StatusCode.DEADLINE_EXCEEDED:
        return f"the server at {address} did not answer in time"
    return f"{e.code.name}: {e.details}"


def _entry(ev: mpb.MatchEvent) -> Entry:
    e = ev.entry
    hidden = e.WhichOneof("what") == "hidden_pick"
    return Entry(player=e.player if e.HasField("player") else -1, action=None if hidden else e.action,
                 trades=tuple((t.player, t.card) for t in e.trading_cards_revealed), pick=bool(e.pick or hidden))


class HostedTable(Table):
    """Seat ``seat`` of match ``match_id`` on the server at ``address``, played with the seat's ``token``.
    ``resume``: the actions already played are not printed again (a reconnect), only kept for ``log``.

    :raises TableError: the server cannot be reached, the token is refused, the match is unknown or over."""

    def __init__(self, address: str, match_id: str, seat: int, token: str, *, hint_seconds: float = 1.0,
                 api_token: str | None = None, timeout: float = 30.0, resume: bool = True):
        self.address, self.match_id, self.seat, self.token = address, match_id, seat, token
        self.hint_seconds = hint_seconds
        self.matches = MatchesClient(address, api_token=api_token, timeout=timeout)
        self.advisor = AdvisorClient(address, token=api_token)
        self._events: Any = None
        self._hints = 0
        try:
            obs = self._call(self.matches.observation, match_id, seat, token)
            if obs.finished:
                w = ", ".join(PLAYER_NAMES[p] for p in obs.observation.winners if p < len(PLAYER_NAMES))
                raise TableError(f"match {match_id} is over (won by {w or 'nobody'}, action {obs.action_count}); "
                                 f"nothing left to play")
            if not obs.HasField("setup"):
                raise TableError(f"the server at {address} does not send the match's game (an older server)")
            try:
                self.game = game_from_setup(obs.setup, "setup")
                self.castles = list(obs.castle_sites)
                start = new_game(self.game.ruleset, self.game.num_players, game_map=self.game.map,
                                 castles=self.castles or None)
            except (PositionError, FeudoError) as e:
                raise TableError(f"the server sent a game this client cannot build ({e})") from None
            self.setup = obs.setup
            self.replay = SeatReplay(start, seat)
            self.entries: list[Entry] = []
            # a reconnect replays the events before the current action count silently (``log`` keeps them)
            self.resume_at = obs.action_count if resume else 0
            self.obs: mpb.GetObservationResponse | None = None
            summary = next((m for m in self._call(self.matches.list_matches) if m.match_id == match_id), None)
            self.seats = list(summary.seats) if summary is not None else ["?"] * self.game.num_players
        except BaseException:
            self.close()
            raise

    # -- plumbing ------------------------------------------------------------------------------------------
    def _call(self, fn: Any, *args: Any) -> Any:
        try:
            return fn(*args)
        except MatchesError as e:
            raise TableError(_explain(e, self.address)) from None

    @property
    def action_count(self) -> int:
        """Actions of the match this client has seen."""
        return self.replay.count

    def reconnect_command(self) -> str:
        return (f"feudo play --server {self.address} --match {self.match_id} --seat {self.seat} "
                f"--token {self.token}")

    def close(self) -> None:
        if self._events is not None:
            self._events.close()  # cancels the stream on the server at once
            self._events = None
        self.matches.close()
        self.advisor.close()

    # -- the table -----------------------------------------------------------------------------------------
    @property
    def view(self) -> State:
        return self.replay.state

    def player_names(self) -> list[str]:
        return [("you" if p == self.seat else ("an external player" if s == EXTERNAL else s))
                for p, s in enumerate(self.seats)]

    def _next_event(self, report: Report) -> None:
        """Apply the next event of the match (waits for it)."""
        if self._events is None:
            self._events = self.matches.watch(self.match_id, self.seat, self.token, self.replay.count)
        try:
            ev = next(self._events)
        except StopIteration:
            self._events = None
            raise TableError(f"the server at {self.address} ended the match's event stream (shutting down?)") \
                from None
        except MatchesError as e:
            self._events = None
            raise TableError(_explain(e, self.address)) from None
        if ev.WhichOneof("event") != "entry":  # the end: the last entry has made the position terminal
            if not self.replay.state.is_terminal():
                raise TableError(f"the server says match {self.match_id} is over at action {ev.action_count}, "
                                 f"but this client is at action {self.replay.count}")
            return
        entry = _entry(ev)
        before = self.replay.state.clone()
        try:
            self.replay.push(entry)
        except FeudoError as e:
            raise TableError(f"this client is out of step with match {self.match_id}: {e}") from None
        self.entries.append(entry)
        if entry.hidden:
            lines = [f"{self.game.player_name(entry.player)}: selects a card (hidden)"]
        else:
            lines = narrate(before, entry.action, self.replay.state, viewer=self.seat)
        report(lines, entry.player, self.replay.count > self.resume_at)

    def wait_turn(self, report: Report) -> bool:
        while not self.replay.state.is_terminal():
            if self.replay.state.current_player() == self.seat and self.replay.count >= self.resume_at:
                obs = self._call(self.matches.observation, self.match_id, self.seat, self.token)
                if obs.action_count == self.replay.count and obs.legal_actions:
                    self.obs = obs
                    return True
                if obs.action_count < self.replay.count:
                    raise TableError(f"match {self.match_id} is at action {obs.action_count} on the server, "
                                     f"behind this client ({self.replay.count})")
            self._next_event(report)
        return False

    def choices(self) -> list[tuple[int, str]]:
        return [(a.id, a.text) for a in self.obs.legal_actions] if self.obs is not None else []

    def play(self, action: int, report: Report) -> None:
        if self.obs is None:
            raise TableError("not your turn")
        obs, self.obs = self.obs, None
        # The narration of this action comes with its event, like everyone else's.
        self._call(self.matches.submit, self.match_id, self.seat, self.token, action, obs.action_count)

    def hint(self):
        if self.obs is None:
            raise TableError("nothing to decide now")
        position = gpb.Position(setup=self.setup, observation=self.obs.observation)  # the seat's own view only
        self._hints += 1
        try:
            advice = self.advisor.suggest(position, self.seat, seconds=self.hint_seconds, seed=self._hints)
        except AdvisorError as e:
            raise TableError(_explain(e, self.address)) from None
        return advice

    def save(self, path: str) -> str:
        position = gpb.Position(setup=self.setup, history=history_from_entries(self.entries, self.castles))
        with open(path, "w", encoding="utf-8") as f:
            f.write(json_format.MessageToJson(position))
        return (f"saved the match as {self.game.player_name(self.seat)} saw it ({len(self.entries)} actions; a "
                f"feudo.v1.Position, `feudo advise {path} --seat {self.seat}` reads it) to {path}")

    def leave_message(self, saved: str | None = None) -> str:
        return (f"game left at action {self.replay.count}; the match goes on on the server. To continue: "
                f"{self.reconnect_command()}")


def create_match(address: str, players: int, seat: int, bots: list[str], seed: int, *, turns: int | None = None,
                 virulent: bool = False, strategy_only: bool = False, api_token: str | None = None
                 ) -> tuple[str, str]:
    """A new match on the server with ``seat`` external and ``bots`` at the other seats, in seat order; returns
    its id and the seat's token. :raises TableError: refused or unreachable (the server's message)."""
    it = iter(bots)
    seats = [EXTERNAL if p == seat else next(it) for p in range(players)]
    with MatchesClient(address, api_token=api_token) as client:
        try:
            match_id, tokens = client.create_match(players, seats, seed=seed, turns=turns, virulent_plague=virulent,
                                                   strategy_only=strategy_only)
        except MatchesError as e:
            raise TableError(f"the server refused the match: {_explain(e, address)}" if e.code !=
                             grpc.StatusCode.UNAVAILABLE else _explain(e, address)) from None
    return match_id, tokens[seat]


def play_hosted(args: argparse.Namespace, bots: list[str]) -> int:
    """``feudo play --server``: create or join a match, then play it (0: finished, 1: left; 2: an error)."""
    api_token = os.environ.get("FEUDO_ADVISOR_TOKEN") or None
    try:
        if args.match is None:
            match_id, token = create_match(args.server, args.players, args.seat, bots, args.seed, turns=args.turns,
                                           virulent=args.virulent, strategy_only=args.strategy_only,
                                           api_token=api_token)
            print(f"Created match {match_id} on {args.server}; you play seat {args.seat}. Your seat token: {token}",
                  flush=True)
            print(f"To reconnect: feudo play --server {args.server} --match {match_id} --seat {args.seat} "
                  f"--token {token}", flush=True)
        else:
            match_id, token = args.match, args.token
        table = HostedTable(args.server, match_id, args.seat, token, hint_seconds=args.hint_seconds,
                            api_token=api_token, resume=args.match is not None)
    except TableError as e:
        print(f"feudo: error: {e}", file=sys.stderr)
        return 2
    try:
        if table.resume_at:
            print(f"Resuming match {match_id} at action {table.resume_at}", flush=True)
        return HumanSession(table, console=default_console()).run()
    except TableError as e:
        print(f"feudo: error: {e}; to continue later: {table.reconnect_command()}", file=sys.stderr)
        return 2
    finally:
        table.close()
