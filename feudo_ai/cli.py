"""The ``feudo`` command line: self-play, rendering and replaying games.

Every subcommand has ``--help``. Errors (bad files, bad flags, illegal records) print one line on stderr and
exit with status 2; there is no traceback for anything a user can cause.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Sequence

from engine import (DataFileError, FeudoError, GameMap, GameRecord, Phase, State, StateError, load_map, load_ruleset,
                    new_fast_game, play_game)
from engine.actions import PLAYER_NAMES
from engine.board import find_castle_site
from engine.core import BACKENDS

from engine.render import map_ascii, map_svg, position_svg, render_text, svg_to_png
from feudo_ai.arena.cli import add_parser as add_arena_parser
from feudo_ai.bots import BOTS, make_bot
from feudo_ai.experimental.train import add_parser as add_train_parser
from feudo_ai.games import DEFAULT_GAME, GAME_NAMES, get_game
from feudo_ai.people.companion import CompanionSession
from feudo_ai.people.narrate import narrate
from feudo_ai.people.play import HumanSession, LocalTable, default_console
from feudo_ai.settings import resolve
from feudo_ai.wire.cli import add_commands  # feudo serve, feudo advise (the gRPC services)


def _add_game_options(p: argparse.ArgumentParser, game: bool = False) -> None:
    if game:
        p.add_argument("--game", choices=GAME_NAMES, default=DEFAULT_GAME,
                       help="the game: feudo (default) or fief2 (Fief 2: bots random, greedy, easy, medium; "
                            "--turns sets its turn limit, F51)")
    p.add_argument("--players", type=int, default=4,
                   help="number of players, 2-4 (Fief 2: 3-6) (default 4)")
    p.add_argument("--seed", type=int, default=1, help="seed of everything random (default 1)")
    p.add_argument("--ruleset", default=None, help="ruleset name or JSON file (default: the packaged 'basic')")
    p.add_argument("--map", dest="map_file", default=None,
                   help="map name or JSON file (default: the packaged 'default' assembly, boards ordered by seed)")
    p.add_argument("--turns", type=int, default=None, help="R20 longer game: number of turns (e.g. 15 or 20)")
    p.add_argument("--virulent", action="store_true", help="R20 optional rule: Virulent Plague")
    p.add_argument("--strategy-only", action="store_true", help="R20 optional rule: Only Strategy and Tactics")
    p.add_argument("--backend", choices=BACKENDS, default="auto",
                   help="rules implementation: the compiled core when built ('auto', the default: the reference "
                        "with a warning otherwise), 'core' or 'reference'")


def _ruleset(args: argparse.Namespace):
    if args.turns is not None and not 1 <= args.turns <= 100:
        raise ValueError(f"--turns: expected an integer in [1, 100], got {args.turns}")
    ruleset = load_ruleset(args.ruleset)
    return ruleset.with_options(turns=args.turns, virulent_plague=args.virulent or None,
                                strategy_only=args.strategy_only or None)


def _bots(spec: str, players: int, seed: int) -> list:
    names = [s.strip() for s in spec.split(",") if s.strip()]
    if not names:
        raise ValueError("--bots: expected a comma-separated list of bot names")
    if len(names) == 1:
        names = names * players
    if len(names) != players:
        raise ValueError(f"--bots: expected 1 or {players} names, got {len(names)}")
    return [make_bot(name, seed * 1000 + p) for p, name in enumerate(names)]


def _other_game(args: argparse.Namespace, feudo_only: tuple[str, ...] = ()):
    """The game entry of ``--game`` when it is not Feudo (None for Feudo), after refusing the Feudo-only flags
    given with it (each error names its flag)."""
    game = getattr(args, "game", DEFAULT_GAME) or DEFAULT_GAME
    if game == DEFAULT_GAME:
        return None
    entry = get_game(game)
    flags = {"ruleset": "--ruleset", "map_file": "--map", "virulent": "--virulent",
             "strategy_only": "--strategy-only", "server": "--server", "match": "--match", "token": "--token",
             "resume": "--resume"}
    for attr in feudo_only:
        value = getattr(args, attr, None)
        if value not in (None, False):
            raise ValueError(f"{flags[attr]}: a Feudo option, not for --game {entry.name}")
    if getattr(args, "backend", "auto") != "auto":
        raise ValueError(f"--backend: the compiled core is Feudo's; --game {entry.name} plays its reference rules")
    if args.turns is not None and not 1 <= args.turns <= 1000:
        raise ValueError(f"--turns: expected an integer in [1, 1000] (the turn limit, F51), got {args.turns}")
    entry.check_players(args.players)
    return entry


def _game_bots(entry, spec: str, players: int, seed: int) -> list:
    names = [s.strip() for s in spec.split(",") if s.strip()]
    if not names:
        raise ValueError("--bots: expected a comma-separated list of bot names")
    if len(names) == 1:
        names = names * players
    if len(names) != players:
        raise ValueError(f"--bots: expected 1 or {players} names, got {len(names)}")
    return [entry.make_bot(name, seed * 1000 + p) for p, name in enumerate(names)]


def _selfplay_game(entry, args: argparse.Namespace) -> int:
    """``feudo selfplay --game NAME`` for a game other than Feudo (see :mod:`feudo_ai.games`)."""
    if args.games < 1:
        raise ValueError("--games: expected a positive integer")
    verbose = args.games == 1 and not args.json
    _game_bots(entry, args.bots, args.players, args.seed)  # reject bad bots before playing
    save_paths = _save_paths(args.save, args.games)
    results, errors = [], []
    started = time.perf_counter()
    for i in range(args.games):
        seed = args.seed + i
        try:
            state = entry.new_state(args.players, seed, turn_limit=args.turns)
            bots = _game_bots(entry, args.bots, args.players, seed)
            if verbose:
                print(f"{entry.title}, seed {seed}. Players: "
                      + ", ".join(f"family {p} = {b.name}" for p, b in enumerate(bots)))
            printer = _GameTurnPrinter() if verbose else None
            counted = [0]

            def chooser(bot):
                def choose(st):
                    if len(st.legal_actions()) > 1:
                        counted[0] += 1
                    return bot(st)
                return choose

            record, final = entry.play([chooser(b) for b in bots], state, seed, on_action=printer)
            if save_paths:
                with open(save_paths[i], "w", encoding="utf-8") as f:
                    f.write(record.to_json())
            out = entry.outcome(final)
            decisions = counted[0]
            results.append({"seed": seed, "turns": out["turns"], "actions": len(record.actions),
                            "decisions": decisions, "points": out["points"], "winners": out["winners"]})
            if verbose:
                print(final)
                print(f"Winner{'s' if len(out['winners']) > 1 else ''}: "
                      f"{', '.join(f'family {w}' for w in out['winners'])}  {entry.points_name} {out['points']}")
        except (FeudoError, RuntimeError) as e:
            errors.append(f"seed {seed}: {e}")
    elapsed = time.perf_counter() - started
    wins = [0.0] * args.players
    for r in results:
        for w in r["winners"]:
            wins[w] += 1.0 / len(r["winners"])
    summary = {
        "game": entry.name,
        "games": len(results),
        "players": args.players,
        "bots": [b.strip() for b in args.bots.split(",")],
        "seed": args.seed,
        "errors": len(errors),
        "turns_mean": statistics.fmean(r["turns"] for r in results) if results else 0,
        "turns_max": max((r["turns"] for r in results), default=0),
        "shared_wins": sum(1 for r in results if len(r["winners"]) > 1),
        "decisions_per_game": statistics.fmean(r["decisions"] for r in results) if results else 0,
        "actions_per_game": statistics.fmean(r["actions"] for r in results) if results else 0,
        "wins_by_seat": wins,
        f"{entry.points_name}_mean": [statistics.fmean(r["points"][p] for r in results)
                                      for p in range(args.players)] if results else [],
        "seconds": round(elapsed, 3),
        "games_per_s": round(len(results) / elapsed, 2) if elapsed > 0 else None,
    }
    return _report(summary, errors, args.json, verbose)


class _GameTurnPrinter:
    """Prints a non-Feudo bot game as it goes (an omniscient spectator): each decision in words, the board at the
    start of each turn."""

    def __init__(self):
        self.turn = -1

    def __call__(self, state, action: int) -> None:
        if state.turn != self.turn:
            if self.turn >= 0:
                print(state)
                print()
            self.turn = state.turn
            print(f"=== Turn {state.turn} ===" if state.turn else "=== Setup ===")
        who = state.current_player()
        if who >= 0 and len(state.legal_actions()) > 1:
            print(f"  family {who}: {state.action_to_string(action)}")


def cmd_selfplay(args: argparse.Namespace) -> int:
    entry = _other_game(args, ("ruleset", "map_file", "virulent", "strategy_only"))
    if entry is not None:
        return _selfplay_game(entry, args)
    ruleset = _ruleset(args)
    if args.games < 1:
        raise ValueError("--games: expected a positive integer")
    verbose = args.games == 1 and not args.json
    # Configuration errors (players, map, bots) are the same for every game: reject them before playing.
    new_fast_game(ruleset, args.players, seed=args.seed, game_map=load_map(args.map_file, seed=args.seed),
                  backend=args.backend)
    _bots(args.bots, args.players, args.seed)
    save_paths = _save_paths(args.save, args.games)
    results = []
    errors: list[str] = []
    started = time.perf_counter()
    for i in range(args.games):
        seed = args.seed + i
        try:
            game_map = load_map(args.map_file, seed=seed)
            state = new_fast_game(ruleset, args.players, seed=seed, game_map=game_map, backend=args.backend)
            bots = _bots(args.bots, args.players, seed)
            printer = _TurnPrinter() if verbose else None
            if verbose:
                print("Players: " + ", ".join(f"{PLAYER_NAMES[p]} = {b.name}" for p, b in enumerate(bots)))
            record, final = play_game(bots, state, seed=seed, on_action=printer)
            record.bots = [b.name for b in bots]
            if printer:
                printer.finish(final)
            if save_paths:
                record.save(save_paths[i])
            decisions = sum(1 for s_action in _decisions(record))
            results.append({"seed": seed, "turns": final.turn, "tiebreak_turns": final.tiebreak,
                            "actions": len(record.actions), "decisions": decisions, "vp": final.vp,
                            "winners": final.winners})
        except FeudoError as e:
            errors.append(f"seed {seed}: {e}")
    elapsed = time.perf_counter() - started
    wins = [0.0] * args.players
    for r in results:
        for w in r["winners"]:
            wins[w] += 1.0 / len(r["winners"])
    summary = {
        "games": len(results),
        "players": args.players,
        "bots": [b.strip() for b in args.bots.split(",")],
        "seed": args.seed,
        "errors": len(errors),
        "turns_mean": statistics.fmean(r["turns"] for r in results) if results else 0,
        "turns_max": max((r["turns"] for r in results), default=0),
        "tiebreak_games": sum(1 for r in results if r["tiebreak_turns"]),
        "shared_wins": sum(1 for r in results if len(r["winners"]) > 1),
        "decisions_per_game": statistics.fmean(r["decisions"] for r in results) if results else 0,
        "actions_per_game": statistics.fmean(r["actions"] for r in results) if results else 0,
        "wins_by_seat": wins,
        "vp_mean": [statistics.fmean(r["vp"][p] for r in results) for p in range(args.players)] if results else [],
        "seconds": round(elapsed, 3),
        "games_per_s": round(len(results) / elapsed, 2) if elapsed > 0 else None,
    }
    return _report(summary, errors, args.json, verbose)


def _report(summary: dict, errors: list[str], as_json: bool, verbose: bool) -> int:
    """Print a selfplay summary (JSON, or key: value lines after a summary-only run); the exit status."""
    if errors:
        summary["first_errors"] = errors[:5]
    if as_json:
        print(json.dumps(summary, indent=2))
    elif not verbose:
        for key, value in summary.items():
            print(f"{key}: {value}")
    return 1 if errors else 0


def _save_paths(save: str | None, games: int) -> list[str]:
    """Where each game's record goes: ``--save g.json`` itself for one game, ``g-1.json``, ``g-2.json``, ... for
    several. Every file is created (empty) now, so an unwritable path fails before any game is played."""
    if not save:
        return []
    base = Path(save)
    paths = [str(base)] if games == 1 else [str(base.with_name(f"{base.stem}-{i + 1}{base.suffix or '.json'}"))
                                            for i in range(games)]
    for path in paths:
        try:
            with open(path, "w", encoding="utf-8"):
                pass
        except OSError as e:
            raise ValueError(f"--save: cannot write {path} ({e.strerror or e})") from None
    return paths


def _decisions(record: GameRecord):
    state = record.initial_state()
    for a in record.actions:
        if not state.is_chance_node():
            yield a
        state.apply_action(a)


class _TurnPrinter:
    """Prints a bot game as it goes (an omniscient spectator): every action with its fights and plague casualties
    (:func:`feudo_ai.people.narrate.narrate`), and the board with its legend at the end of each turn."""

    def __init__(self):
        self.turn = -1
        self.pending: tuple[State, int] | None = None

    def _flush(self, after: State) -> None:
        if self.pending is not None:
            before, action = self.pending
            for line in narrate(before, action, after, reveal_all=True):
                print(f"  [{Phase(before.phase).name.lower()}] {line}" if not line.startswith("  ") else f"  {line}")
            self.pending = None

    def __call__(self, state: State, action: int) -> None:
        self._flush(state)
        if state.turn != self.turn:
            if self.turn >= 1:
                print(state)
                print()
            self.turn = state.turn
            print(f"=== Turn {state.turn} ===" if state.turn else "=== Setup ===")
        self.pending = (state.clone(), action)

    def finish(self, state: State) -> None:
        self._flush(state)
        print(state)
        names = [state.game.player_name(p) for p in state.winners]
        print(f"Winner{'s' if len(names) > 1 else ''}: {', '.join(names)}  VP {state.vp}")


def _load_position(path: str, at: int | None) -> State:
    """A position from a file: a state (``feudo-state/1``) or a game record (``feudo-record/1``, replayed to
    ``at`` actions, default all)."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise ValueError(f"{path}: cannot read ({e.strerror})") from None
    try:
        fmt = json.loads(text).get("format")
    except (ValueError, AttributeError, RecursionError):
        fmt = None
    if fmt == "feudo-state/1":
        if at is not None:
            raise ValueError("--at: only for game records, not for a state file")
        return State.from_json(text)
    record = GameRecord.load(path)
    if at is None:
        return record.replay()
    if not 0 <= at <= len(record.actions):
        raise ValueError(f"--at: expected an action count in [0, {len(record.actions)}], got {at}")
    state = record.initial_state()
    for a in record.actions[:at]:
        state.apply_action(a)
    return state


def cmd_render(args: argparse.Namespace) -> int:
    if args.position is None:
        if args.seat is not None or args.at is not None:
            raise ValueError("--seat/--at: need a POSITION (a state or game record file)")
        game_map = load_map(args.map_file, seed=args.seed)
        svg = map_svg(game_map) if (args.svg or args.png) else None
        text = None if svg else map_ascii(game_map, coordinates=True)  # the names of places: "Wood C2"
    elif (fief2_record := _fief2_record(args.position)) is not None:  # a Fief 2 game record: its own pictures
        from fief2.render import render_svg as fief2_svg, render_text as fief2_text

        if args.at is not None and not 0 <= args.at <= len(fief2_record.actions):
            raise ValueError(f"--at: expected an action count in [0, {len(fief2_record.actions)}], got {args.at}")
        state = fief2_record.replay(args.at)
        if args.seat is not None and not 0 <= args.seat < state.num_players:
            raise ValueError(f"--seat: expected a seat in [0, {state.num_players}), got {args.seat}")
        svg = fief2_svg(state, seat=args.seat) if (args.svg or args.png) else None
        text = None if svg else fief2_text(state)
    else:
        state = _load_position(args.position, args.at)
        if args.seat is not None and not 0 <= args.seat < state.num_players:
            raise ValueError(f"--seat: expected a seat in [0, {state.num_players}), got {args.seat}")
        svg = position_svg(state, seat=args.seat) if (args.svg or args.png) else None
        text = None if svg else render_text(state)
    if args.png:  # fail before writing anything when PNG output is impossible
        svg_to_png(svg, args.png)
        print(f"wrote {args.png}")
    if args.svg:
        with open(args.svg, "w", encoding="utf-8") as f:
            f.write(svg)
        print(f"wrote {args.svg}")
    if text is not None:
        print(text)
    return 0


def _fief2_record(path: str):
    """A Fief 2 game record (``fief2-game/1``, from ``selfplay --game fief2 --save`` or the arena) or None."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError:
        return None  # said by the Feudo record loader, as for any record
    try:
        fmt = json.loads(text).get("format")
    except (ValueError, AttributeError, RecursionError):
        return None
    if fmt != "fief2-game/1":
        return None
    from fief2 import GameRecord as Fief2Record

    return Fief2Record.from_json(text)


def cmd_replay(args: argparse.Namespace) -> int:
    fief2_record = _fief2_record(args.record)
    if fief2_record is not None:
        final = fief2_record.replay()
        print(final)
        print(f"{len(fief2_record.actions)} actions replayed; winners: "
              f"{', '.join(f'family {w}' for w in final.winners) or 'none yet'}")
        return 0
    record = GameRecord.load(args.record)
    final = record.replay()
    print(final)
    print(f"{len(record.actions)} actions replayed; winners: "
          f"{', '.join(final.game.player_name(p) for p in final.winners) or 'none yet'}")
    return 0


def _play_game(entry, args: argparse.Namespace) -> int:
    """``feudo play --game fief2``: a person against bots in the terminal (feudo_ai/people/fief2_play.py)."""
    from feudo_ai.people.fief2_play import Fief2Session

    if not 0 <= args.seat < args.players:
        raise ValueError(f"--seat: expected a seat in [0, {args.players}), got {args.seat}")
    names = [s.strip() for s in args.bots.split(",") if s.strip()]
    others = args.players - 1
    if len(names) == 1:
        names *= others
    if len(names) != others:
        raise ValueError(f"--bots: expected 1 or {others} bots (one per other seat), got {len(names)}")
    it = iter(names)
    bots = [None if p == args.seat else entry.make_bot(next(it), args.seed * 1000 + p) for p in range(args.players)]
    state = entry.new_state(args.players, args.seed, turn_limit=args.turns)
    return Fief2Session(state, args.seat, bots, args.seed).run()


def cmd_play(args: argparse.Namespace) -> int:
    entry = _other_game(args, ("ruleset", "map_file", "virulent", "strategy_only", "server", "match", "token", "resume"))
    if entry is not None:
        if args.bots == "ismcts":  # Feudo's default, not a Fief 2 bot: Fief 2's default is medium
            args.bots = "medium"
        return _play_game(entry, args)
    args.hint_seconds_given = args.hint_seconds is not None
    if args.hint_seconds is None:
        args.hint_seconds = 1.0
    if args.resume is not None:  # a game saved by `save FILE`: its own players, seat, bots and seed
        if args.server is not None:
            raise ValueError("--resume: a saved local game; a hosted match is rejoined with --match/--token")
        from feudo_ai.people.play import resume_local

        table = resume_local(args.resume, make_bot, backend=args.backend,
                             hint_seconds=args.hint_seconds if args.hint_seconds_given else None)
        print(f"Resuming {args.resume} at action {len(table.record.actions)}", flush=True)
        return HumanSession(table, console=default_console()).run()

    if args.match is not None or args.token is not None:
        if args.server is None or args.match is None or args.token is None:
            raise ValueError("--match/--token: join a hosted match with --server ADDR --match ID --token TOKEN")
    if not args.hint_seconds > 0:
        raise ValueError(f"--hint-seconds: expected a positive number, got {args.hint_seconds}")
    if args.server is not None and args.match is not None:
        if args.seat < 0:
            raise ValueError(f"--seat: expected a seat number, got {args.seat}")
        from feudo_ai.people.hosted_play import play_hosted  # its code: feudo_ai/people/hosted_play.py

        return play_hosted(args, [])
    ruleset = _ruleset(args)
    if not 0 <= args.seat < args.players:
        raise ValueError(f"--seat: expected a seat in [0, {args.players}), got {args.seat}")
    names = [s.strip() for s in args.bots.split(",") if s.strip()]
    others = args.players - 1
    if len(names) == 1:
        names *= others
    if len(names) != others:
        raise ValueError(f"--bots: expected 1 or {others} bots (one per other seat), got {len(names)}")
    if args.server is not None:  # a new match on the server: the bots are checked and run there
        if args.ruleset is not None or args.map_file is not None:
            raise ValueError("--ruleset/--map: a hosted match plays the packaged ruleset and map")
        from feudo_ai.people.hosted_play import play_hosted

        return play_hosted(args, names)
    state = new_fast_game(ruleset, args.players, seed=args.seed, game_map=load_map(args.map_file, seed=args.seed),
                          backend=args.backend)
    it = iter(names)
    bots = [None if p == args.seat else make_bot(next(it), args.seed * 1000 + p) for p in range(args.players)]
    hints = resolve("product", args.players, {"seconds": args.hint_seconds})
    specs = [("you" if p == args.seat else names[p - (p > args.seat)]) for p in range(args.players)]
    table = LocalTable(state, args.seat, bots, args.seed, hints, specs=specs, hint_seconds=args.hint_seconds)
    return HumanSession(table, console=default_console()).run()


def _ask(question: str, default: str) -> str:
    try:
        answer = input(f"{question} [{default}]: ").strip()
    except EOFError:
        answer = ""
    return answer or default


def castle_sites_option(game_map: GameMap, text: str, players: int) -> list[int]:
    """``--castles``: one Castle site per seat, in seat order, comma-separated, each named as the board names it
    ("Hill A1", or its cell "A1") or by its site id (:func:`engine.board.find_castle_site`).
    :raises ValueError: naming the option and the item."""
    items = [x.strip() for x in text.split(",")]
    if len(items) != players:
        raise ValueError(f"--castles: expected {players} Castle sites (one per seat, in seat order, "
                         f"comma-separated), got {len(items)} in {text!r}")
    out = []
    for p, item in enumerate(items):
        try:
            out.append(find_castle_site(game_map, item))
        except ValueError as e:
            raise ValueError(f"--castles: {PLAYER_NAMES[p]}'s site: {e}") from None
    return out


def cmd_companion(args: argparse.Namespace) -> int:
    from engine import new_game

    if args.resume is not None:  # a file written by the companion's `save FILE`
        session = CompanionSession.load(args.resume, hint_seconds=args.hint_seconds, seed=args.seed)
        return session.run()

    if args.players is None:
        args.players = int(_ask("Players (2-4)", "4"))
    if args.seat is None:
        args.seat = int(_ask(f"Your seat (0-{args.players - 1}: {', '.join(PLAYER_NAMES[:args.players])})", "0"))
    if args.castles is None and args.ask_castles:
        args.castles = _ask("Castle sites, one per seat in seat order, e.g. A1,J1 (blank: enter them as events)",
                            "") or None
    ruleset = _ruleset(args)
    if not 0 <= args.seat < args.players:
        raise ValueError(f"--seat: expected a seat in [0, {args.players}), got {args.seat}")
    if not args.hint_seconds > 0:
        raise ValueError(f"--hint-seconds: expected a positive number, got {args.hint_seconds}")
    game_map = load_map(args.map_file, seed=args.seed)
    castles = None if not args.castles else castle_sites_option(game_map, args.castles, args.players)
    try:
        start = new_game(ruleset, args.players, seed=args.seed, game_map=game_map, castles=castles)
    except StateError as e:  # a site taken twice, or two Castles on one board (R21, R24)
        raise ValueError(f"--castles: {e}") from None
    hints = resolve("product", args.players, {"seconds": args.hint_seconds})
    session = CompanionSession(start, args.seat, hints, seed=args.seed)
    return session.run()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="feudo", description="Feudo AI: rules engine, bots and tools.",
        epilog="Difficulty levels, usable wherever a bot is named (--bots, feudo arena, hosted matches): easy "
               "(greedy with random mistakes), medium (greedy), hard (ismcts, 300 iterations a decision), max "
               "(ismcts, 10,000, greedy playouts); each beats the one below (docs/search.md). "
               "ismcts:game_seconds=600 gives a bot a clock for the whole game.")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("selfplay", help="bots play each other; one game is printed turn by turn",
                       description="Bots play each other. With --games 1 (the default) and no --json the game is "
                                   "printed turn by turn; otherwise a summary is printed. --game fief2 plays "
                                   "Fief 2.")
    _add_game_options(p, game=True)
    p.add_argument("--games", type=int, default=1, help="number of games (seeds seed, seed+1, ...)")
    p.add_argument("--bots", default="random",
                   help=f"one bot for all seats or one per seat, comma-separated, each with optional :key=value "
                        f"parameters (e.g. ismcts:iterations=2000); known: {', '.join(sorted(BOTS))}")
    p.add_argument("--json", action="store_true", help="print a JSON summary")
    p.add_argument("--save", default=None,
                   help="save the game record (JSON) to this file; with --games N, to FILE-1.json ... FILE-N.json")
    p.set_defaults(func=cmd_selfplay)

    p = sub.add_parser("render", help="draw a map, a position or a game record (text, --svg, --png)",
                       description="Draw the map (no POSITION), or a position: a state file or a game record "
                                   "(replayed to --at actions; a Fief 2 record is drawn with its own map and "
                                   "tokens). --seat draws that seat's view (its own hidden selection or hand; "
                                   "never another seat's).")
    p.add_argument("position", nargs="?", default=None,
                   help="a state (feudo-state/1) or game record file (a Fief 2 record, fief2-game/1, too)")
    p.add_argument("--at", type=int, default=None, help="records: draw the position after this many actions")
    p.add_argument("--seat", type=int, default=None, help="draw the position as this seat sees it")
    p.add_argument("--map", dest="map_file", default=None, help="no POSITION: map name or JSON file")
    p.add_argument("--seed", type=int, default=1, help="no POSITION: seed of the board order (default 1)")
    p.add_argument("--svg", default=None, help="write an SVG picture to this file")
    p.add_argument("--png", default=None, help="write a PNG picture to this file (cairosvg)")
    p.set_defaults(func=cmd_render)

    p = sub.add_parser("play", help="play one seat against bots in the terminal",
                       description="Play one seat against bots. At your decisions type a choice's number or text, "
                                   "or a part of one naming it alone (baron), or: hint (the search's advice), help "
                                   "(the phase and its rules), undo, board, log, save FILE, quit. --resume FILE goes "
                                   "on with a saved game. With --server the match is hosted by a server (feudo "
                                   "serve): the bots move there, and --match/--token reconnect to it. --game fief2: "
                                   "Fief 2 against its bots (default medium), numbered choices; board, hand, help, "
                                   "quit.")
    _add_game_options(p, game=True)
    p.add_argument("--seat", type=int, default=0, help="your seat, 0-based (default 0: Blue)")
    p.add_argument("--bots", default="ismcts",
                   help="the bots of the other seats in seat order (one name for all), with :key=value parameters")
    p.add_argument("--hint-seconds", type=float, default=None, help="thinking time of `hint` (default 1 s)")
    p.add_argument("--resume", default=None, metavar="FILE",
                   help="go on with a game saved by `save FILE` (its players, seat, bots and seed)")
    p.add_argument("--server", default=None, help="play a match hosted by this server (host:port): a new one with "
                                                  "--players/--bots/--seed, or --match ID --token TOKEN to join")
    p.add_argument("--match", default=None, help="with --server: the match to join or reconnect to")
    p.add_argument("--token", default=None, help="with --match: your seat's token (printed when the match was made)")
    p.set_defaults(func=cmd_play)

    p = sub.add_parser("companion", help="advice during a game on the real board: enter events, ask for hints",
                       description="Follow a game played on the real board as one seat: enter each event as it "
                                   "happens (chance, your selection, the other seats' reveals, moves, attacks...); "
                                   "the other seats' selections stay unknown until revealed. Commands: hint, undo, "
                                   "board, log, save FILE, help, quit. Missing setup flags are asked for.")
    _add_game_options(p)
    p.set_defaults(players=None)
    p.add_argument("--seat", type=int, default=None, help="your seat, 0-based")
    p.add_argument("--castles", default=None,
                   help="the Castles already placed, one per seat in seat order, comma-separated, named as on the "
                        "board (\"Hill A1,Hill J1\" or \"A1,J1\") or by site id; taken as placed in seat order "
                        "(the last seat decides turn 1's order, R5); else enter the placements as events")
    p.add_argument("--ask-castles", action="store_true", help="ask for the Castle sites at start-up")
    p.add_argument("--hint-seconds", type=float, default=1.0, help="thinking time of `hint` (default 1 s)")
    p.add_argument("--resume", default=None, metavar="FILE",
                   help="go on with a game saved by the companion's `save FILE` (its setup and events)")
    p.set_defaults(func=cmd_companion)

    p = sub.add_parser("replay", help="replay a saved game record and print the final position")
    p.add_argument("record", help="a game record JSON file (from selfplay --save; Feudo or Fief 2)")
    p.set_defaults(func=cmd_replay)

    add_commands(sub)
    add_arena_parser(sub)  # feudo arena: its code is in feudo_ai/arena/
    add_train_parser(sub)  # feudo train: the learned evaluation (feudo_ai/experimental/train.py)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return _run(args)
    except BrokenPipeError:  # output piped into e.g. `head`: not an error of ours
        sys.stdout = None  # type: ignore[assignment]  # the reader is gone: nothing more to flush
        return 0


def _run(args: argparse.Namespace) -> int:
    try:
        return args.func(args)
    except BrokenPipeError:
        raise
    except (FeudoError, ValueError, OSError) as e:
        kind = "error" if not isinstance(e, DataFileError) else "bad data file"
        print(f"feudo: {kind}: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
