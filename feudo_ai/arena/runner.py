"""Playing scheduled games, in this process, over local processes, or on a Ray cluster.

:func:`play_game_job` plays one :class:`~feudo_ai.arena.schedule.GameSpec` from scratch and returns a plain dict
(picklable, JSON-ready): its outcome, the game record and timings. It depends on nothing but the job, so every
backend gives the same games for the same seeds (for bots with deterministic budgets: a ``seconds`` budget makes a
search depend on the machine's speed and load, on any backend).

A backend's :meth:`run` yields results as games finish, in any order; the caller orders them by game index.
Ctrl-C (KeyboardInterrupt in the main process) stops a backend at once: queued games are cancelled, games in
progress are abandoned (they were not finished, so nothing is lost: a resume plays them again).
"""

from __future__ import annotations

import abc
import multiprocessing
import os
import signal
import socket
import time
import traceback
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from typing import Any, Iterable, Iterator

from engine import load_map, load_ruleset, new_fast_game, play_game

from .entrants import close_entrant, make_entrant
from .schedule import ArenaError, TournamentConfig

BACKENDS = ("local", "ray")

Job = tuple[dict, dict]  # (config.to_dict(), game_spec.to_dict())


_rules_cache: dict[str, Any] = {}


def _ruleset(config: TournamentConfig):
    key = config.fingerprint()
    if key not in _rules_cache:
        _rules_cache.clear()
        _rules_cache[key] = load_ruleset(config.ruleset).with_options(
            turns=config.turns, virulent_plague=config.virulent or None,
            strategy_only=config.strategy_only or None)
    return _rules_cache[key]


def play_game_job(job: Job) -> dict:
    """Play one scheduled game; the result dict holds the outcome, the record (``record``) and ``timing``.

    A game that fails (e.g. a remote Advisor gone mid-game) returns ``{"index", "error", "traceback"}`` instead:
    the driver stops the tournament with that message, keeping the finished games.
    """
    try:
        return _play(job)
    except Exception as e:  # noqa: BLE001 - reported by the driver, with the game's index
        return {"index": job[1]["index"], "error": f"{type(e).__name__}: {e}", "traceback": traceback.format_exc()}


def _play_other_game(config: TournamentConfig, g: dict) -> dict:
    """One scheduled game of a game other than Feudo (feudo_ai/games.py); the same result fields, ``vp`` holding
    the game's points (Fief 2: each family's power, F50)."""
    from feudo_ai.games import get_game

    entry = get_game(config.game)
    players, seed = config.players, g["deal_seed"]
    state = entry.new_state(players, seed, turn_limit=config.turns)
    bots = [make_entrant(spec, s, game=config.game) for spec, s in zip(g["bots"], g["bot_seeds"])]
    searched, think = [0] * players, [0.0] * players

    def chooser(p: int):
        def choose(st) -> int:
            if len(st.legal_actions()) > 1:
                searched[p] += 1
            t0 = time.perf_counter()
            action = bots[p](st)
            think[p] += time.perf_counter() - t0
            return action

        return choose

    started = time.perf_counter()
    record, final = entry.play([chooser(p) for p in range(players)], state, seed)
    seconds = time.perf_counter() - started
    out = entry.outcome(final)
    return {**g, "returns": final.returns(), "vp": out["points"], "winners": out["winners"], "turns": out["turns"],
            "tiebreak_turns": out["tiebreak_turns"], "actions": len(record.actions), "searched_decisions": searched,
            "timing": {"seconds": round(seconds, 4), "seat_seconds": [round(t, 4) for t in think],
                       "worker": os.getpid()},
            "record": record.to_dict()}


def _play(job: Job) -> dict:
    config = TournamentConfig.from_dict(job[0])
    g = job[1]
    if config.game != "feudo":
        return _play_other_game(config, g)
    players = config.players
    seed = g["deal_seed"]
    state = new_fast_game(_ruleset(config), players, seed=seed, game_map=load_map(config.map, seed=seed),
                          backend=config.engine)
    bots = [make_entrant(spec, s) for spec, s in zip(g["bots"], g["bot_seeds"])]
    searched = [0] * players
    think = [0.0] * players

    def chooser(p: int):
        bot = bots[p]

        def choose(st) -> int:
            if len(st.legal_actions()) > 1:
                searched[p] += 1
            t0 = time.perf_counter()
            action = bot(st)
            think[p] += time.perf_counter() - t0
            return action

        return choose

    observers = [b.observe for b in bots if callable(getattr(b, "observe", None))]

    def tell(st, action: int) -> None:
        """Every bot that follows the game (tree reuse) is told each action; it keeps only its seat's view."""
        for observe in observers:
            observe(st, action)

    started = time.perf_counter()
    try:
        record, final = play_game([chooser(p) for p in range(players)], state, seed=seed, on_action=tell)
    finally:
        for bot in bots:
            close_entrant(bot)  # a remote bot's channel
    seconds = time.perf_counter() - started
    record.bots = list(g["bots"])
    return {**g, "returns": final.returns(), "vp": list(final.vp), "winners": list(final.winners),
            "turns": final.turn, "tiebreak_turns": final.tiebreak, "actions": len(record.actions),
            "searched_decisions": searched,
            "timing": {"seconds": round(seconds, 4), "seat_seconds": [round(t, 4) for t in think],
                       "worker": os.getpid()},
            "record": record.to_dict()}


class Backend(abc.ABC):
    """Runs jobs, yielding results as they finish. ``close()`` frees what it started (idempotent)."""

    name = "backend"
    workers = 1

    @abc.abstractmethod
    def run(self, jobs: Iterable[Job]) -> Iterator[dict]:
        """Yield each job's result as it finishes (any order)."""

    def close(self) -> None:
        pass

    def __enter__(self) -> "Backend":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class InProcessBackend(Backend):
    """One game after the other in this process (``--jobs 1``): no start-up cost, easiest to debug."""

    name = "local"

    def run(self, jobs: Iterable[Job]) -> Iterator[dict]:
        for job in jobs:
            yield play_game_job(job)


def _ignore_sigint() -> None:
    # Ctrl-C reaches the whole foreground process group; only the main process decides what it means.
    signal.signal(signal.SIGINT, signal.SIG_IGN)


class LocalBackend(Backend):
    """Games in parallel over ``jobs`` local processes (concurrent.futures)."""

    name = "local"

    def __init__(self, jobs: int, fresh_workers: bool = False):
        if not isinstance(jobs, int) or jobs < 1:
            raise ArenaError(f"--jobs: expected a positive integer, got {jobs!r}")
        self.workers = jobs
        # gRPC (remote entrants) does not survive fork() once used: such workers start from a fresh interpreter
        self.context = multiprocessing.get_context("forkserver") if fresh_workers else None
        self._pool: ProcessPoolExecutor | None = None

    def run(self, jobs: Iterable[Job]) -> Iterator[dict]:
        self._pool = ProcessPoolExecutor(self.workers, mp_context=self.context, initializer=_ignore_sigint)
        pending: set[Future] = set()
        queue = iter(jobs)
        window = 2 * self.workers  # a few queued games per worker: the rest waits here, cheap to cancel

        def top_up() -> None:
            while len(pending) < window:
                job = next(queue, None)
                if job is None:
                    return
                pending.add(self._pool.submit(play_game_job, job))  # type: ignore[union-attr]

        top_up()
        while pending:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for fut in done:
                yield fut.result()
            top_up()
        self.close()

    def close(self) -> None:
        pool, self._pool = self._pool, None
        if pool is None:
            return
        terminate = getattr(pool, "terminate_workers", None)  # Python 3.14+
        processes = list(getattr(pool, "_processes", {}).values())  # before 3.14: no public way to stop them
        pool.shutdown(wait=False, cancel_futures=True)
        if callable(terminate):
            try:
                terminate()
            except Exception:  # noqa: BLE001 - already stopped
                pass
        for p in processes:
            if p.is_alive():
                p.terminate()
        for p in processes:
            p.join(timeout=5)


class RayBackend(Backend):
    """Games as Ray tasks (one CPU each): a local Ray instance, or the cluster at ``address``.

    The cluster's nodes need this package installed (the same version): a task imports ``feudo_ai`` and plays
    the game exactly as the local backend does, so the results are the same for the same seeds.
    """

    name = "ray"

    def __init__(self, address: str | None = None, jobs: int | None = None):
        try:
            import ray  # the optional ray extra: only this backend needs it
        except ImportError:
            raise ArenaError("--backend ray: Ray is not installed (pip install 'feudo-ai[ray]')") from None
        self._ray = ray
        self._started = False
        if address:
            _probe_ray(address)
        if not ray.is_initialized():
            kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False}
            if address:
                kwargs["address"] = address
            elif jobs:
                kwargs["num_cpus"] = jobs
            try:
                ray.init(**kwargs)
            except (ConnectionError, RuntimeError, ValueError) as e:
                raise ArenaError(f"--address {address}: cannot connect to Ray: {e}") from None
            self._started = True
        self.workers = int(ray.cluster_resources().get("CPU", 1))
        self._remote = ray.remote(num_cpus=1)(play_game_job)
        self._refs: list = []

    def run(self, jobs: Iterable[Job]) -> Iterator[dict]:
        ray = self._ray
        queue = iter(jobs)
        window = 2 * self.workers
        pending: list = []

        def top_up() -> None:
            while len(pending) < window:
                job = next(queue, None)
                if job is None:
                    return
                pending.append(self._remote.remote(job))

        top_up()
        self._refs = pending
        while pending:
            done, rest = ray.wait(pending, num_returns=1)
            pending[:] = rest
            for ref in done:
                yield ray.get(ref)
            top_up()

    def close(self) -> None:
        ray = self._ray
        for ref in self._refs:
            try:
                ray.cancel(ref, force=True)
            except Exception:  # noqa: BLE001 - finished or already cancelled
                pass
        self._refs = []
        if self._started:
            self._started = False
            ray.shutdown()


def _probe_ray(address: str, timeout: float = 5.0) -> None:
    """Refuse an unreachable cluster address at once (ray.init would retry for minutes)."""
    if address in ("auto", "local"):
        return
    target = address.split("://", 1)[-1]
    host, sep, port = target.rpartition(":")
    if not sep or not port.isdigit():
        raise ArenaError(f"--address {address}: expected host:port, ray://host:port or auto")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout).close()
    except OSError as e:
        raise ArenaError(f"--address {address}: cannot reach Ray ({e.strerror or e})") from None


def make_backend(name: str, jobs: int | None = None, address: str | None = None,
                 fresh_workers: bool = False) -> Backend:
    if name not in BACKENDS:
        raise ArenaError(f"--backend: expected one of {', '.join(BACKENDS)}, got {name!r}")
    if name == "ray":
        return RayBackend(address, jobs)
    if address:
        raise ArenaError("--address: only with --backend ray")
    jobs = jobs if jobs is not None else (os.cpu_count() or 1)
    if not isinstance(jobs, int) or jobs < 1:
        raise ArenaError(f"--jobs: expected a positive integer, got {jobs!r}")
    return InProcessBackend() if jobs == 1 else LocalBackend(jobs, fresh_workers)
