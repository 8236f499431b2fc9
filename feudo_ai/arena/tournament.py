"""Running a tournament: check everything, play the pending games on a backend, store them as they finish."""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from .entrants import check_config
from .remote import is_remote
from .results import ResultStore, summarize
from .runner import make_backend
from .schedule import ArenaError, Schedule, TournamentConfig, build_schedule


@dataclass
class ArenaRun:
    """What a tournament run leaves: the summary of every finished game (this run's and a resumed one's)."""

    schedule: Schedule
    summary: dict
    results: list[dict] = field(repr=False)  # finished games by index (records included when not stored)
    interrupted: bool = False
    played_now: int = 0  # games played by this run (not loaded from a resumed directory)
    wall_seconds: float = 0.0
    out: Path | None = None


def _diff(a: TournamentConfig, b: TournamentConfig) -> str:
    for f in dataclasses.fields(TournamentConfig):
        va, vb = getattr(a, f.name), getattr(b, f.name)
        if va != vb:
            return f"{f.name}: {vb!r} there, {va!r} here"
    return ""


def run_tournament(config: TournamentConfig | None = None, *, out: str | Path | None = None,
                   resume: str | Path | None = None, backend: str = "local", jobs: int | None = None,
                   address: str | None = None, progress: bool = False,
                   on_result: Callable[[dict, dict], None] | None = None, chart: bool = True) -> ArenaRun:
    """Play a tournament (or continue the one in ``resume``) and return its summary.

    Everything that can be wrong (entrants, options, rules files, output or resume directory, backend) is an
    :class:`ArenaError` raised before the first game. ``on_result(result, running_summary)`` is called after
    each game is stored. A KeyboardInterrupt (Ctrl-C) stops the run: the finished games are kept (and written
    with a summary to ``out``), and the returned run has ``interrupted=True``.
    """
    store: ResultStore | None = None
    finished: dict[int, dict] = {}
    if resume is not None:
        store = ResultStore(resume)
        if out is not None and Path(out).resolve() != Path(resume).resolve():
            raise ArenaError(f"--out {out}: a resumed tournament is written where it was (--resume {resume})")
        stored = store.load_config()
        if config is not None and config != stored:
            raise ArenaError(f"--resume {resume}: holds another tournament ({_diff(config, stored)})")
        config = stored
    if config is None:
        raise ArenaError("no tournament: give its configuration or a directory to resume")
    schedule = build_schedule(config)
    if store is not None:
        finished = store.load_results(schedule)
    elif out is not None:
        store = ResultStore(out)
        store.check_new()
    check_config(config)
    engine = make_backend(backend, jobs=jobs, address=address, fresh_workers=any(map(is_remote, config.bots)))
    if store is not None and resume is None:
        try:
            store.create(config)
        except ArenaError:
            engine.close()
            raise
    pending = [g for g in schedule.games if g.index not in finished]
    cfg = config.to_dict()
    jobs_iter = ((cfg, g.to_dict()) for g in pending)
    interrupted = False
    failed: dict | None = None
    played = 0
    started = time.perf_counter()
    # rich (~0.07 s to import) loads only when a tournament runs: feudo_ai.cli imports this package (for the arena
    # subcommand's parser) at every start of the `feudo` command
    from .progress import LiveProgress

    live = LiveProgress(len(schedule.games), len(finished), enabled=progress)
    try:
        with engine, live:
            if progress and finished:
                live.update(summarize(schedule, finished.values(), with_ratings=False))
            for result in engine.run(jobs_iter):
                if "error" in result:
                    failed = result
                    break
                kept = store.append(result) if store is not None else result
                finished[result["index"]] = kept
                played += 1
                running = summarize(schedule, finished.values(), with_ratings=False)
                live.update(running)
                if on_result is not None:
                    on_result(kept, running)
    except KeyboardInterrupt:
        interrupted = True
        if store is not None:  # Ctrl-C may land between a game's line and its bookkeeping: the file decides
            finished = store.load_results(schedule)
            played = len(finished) - (len(schedule.games) - len(pending))
    summary = summarize(schedule, finished.values())
    wall = time.perf_counter() - started
    summary["timing"]["wall_seconds"] = round(wall, 2)
    summary["timing"]["workers"] = engine.workers
    summary["timing"]["backend"] = engine.name
    if store is not None:
        store.write_summary(summary)
        if chart:
            from .charts import draw_chart  # matplotlib takes ~0.5 s to import: only when a chart is drawn

            draw_chart(summary, store.chart_path)
    if failed is not None:
        g = schedule.games[failed["index"]]
        kept = f"; {len(finished)} finished games kept (--resume {store.dir} retries)" if store is not None else ""
        raise ArenaError(f"game {g.index} (deal {g.deal}, seats {', '.join(g.bots)}) failed: "
                         f"{failed['error']}{kept}")
    return ArenaRun(schedule, summary, [finished[i] for i in sorted(finished)], interrupted, played, wall,
                    store.dir if store is not None else None)
