"""Results: win rates with Wilson intervals, openskill ratings, the JSON summary and the output directory.

Scores are R19 returns: 1 for a sole win, 1/k for a k-way shared win, 0 otherwise. An entrant's score in a game
is the sum of its seats' returns (an entrant filling three seats of "A vs 3 B" scores 1 when any of them wins),
so at every table the entrants' scores add up to the number of games.

Everything here is computed from the finished games in game-index order, never in the order they finished: the
same games give the same summary whatever the backend, the number of workers, or interruptions and resumes.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any, Iterable

from openskill.models import PlackettLuce

from .schedule import CONFIG_FORMAT, ArenaError, Schedule, TournamentConfig

SUMMARY_FORMAT = "feudo-arena-summary/1"


def wilson(successes: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval of a proportion (95% for z=1.96); fractional successes (shared wins) allowed."""
    if n <= 0:
        return (0.0, 1.0)
    p = min(1.0, max(0.0, successes / n))
    den = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / den
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return (max(0.0, centre - half), min(1.0, centre + half))


def _r(x: float, nd: int = 4) -> float:
    return round(float(x), nd)


def entrant_scores(result: dict, entrants: int) -> list[float]:
    """Each entrant's score (sum of its seats' returns) in one finished game."""
    scores = [0.0] * entrants
    for seat, e in enumerate(result["seats"]):
        scores[e] += result["returns"][seat]
    return scores


def places(result: dict) -> list[int]:
    """Each seat's finishing place in one finished game (1 is first): the winners share first place, the other
    seats follow by VP, equal VP sharing the better place (1, 2, 2, 4)."""
    key = [(1, 0) if ret > 0 else (0, vp) for ret, vp in zip(result["returns"], result["vp"])]
    return [1 + sum(1 for other in key if other > mine) for mine in key]


def standard_errors(scores: list[float], deals: list[int]) -> dict[str, float | None]:
    """Standard errors of the mean of one entrant's per-game ``scores`` (each in [0, 1]), whose games were
    played on ``deals``.

    ``binomial``: sqrt(p (1 - p) / n), the one the Wilson interval assumes: every game an independent draw.
    ``deal_clustered``: the games summed by deal, sqrt(k / (k - 1) * sum_d (S_d - n_d p)^2) / n over the k deals
    (the cluster-robust estimate): a seat-rotated schedule plays each deal from every seat, so the games of a
    deal are not independent draws, and where a deal decides much of its games' outcome this one is the larger.
    None with no game, or (clustered) fewer than two deals.
    """
    n = len(scores)
    if n == 0:
        return {"binomial": None, "deal_clustered": None}
    p = sum(scores) / n
    by_deal: dict[int, list[float]] = {}
    for deal, score in zip(deals, scores):
        by_deal.setdefault(deal, []).append(score)
    k = len(by_deal)
    clustered = None
    if k >= 2:
        spread = sum((sum(d) - len(d) * p) ** 2 for d in by_deal.values())
        clustered = _r(math.sqrt(k / (k - 1) * spread) / n)
    return {"binomial": _r(math.sqrt(max(0.0, p * (1 - p)) / n)), "deal_clustered": clustered}


def _seat_figures(games: list[dict], entrant: int, players: int) -> dict[str, Any]:
    """An entrant's mean VP and finishing places (counts of first, second, ... over its seats) in ``games``;
    None for both if a game has no VP recorded."""
    if any("vp" not in r for r in games):
        return {"vp_mean": None, "places": None}
    vp, counts = [], [0] * players
    for r in games:
        place = places(r)
        for seat, e in enumerate(r["seats"]):
            if e == entrant:
                vp.append(r["vp"][seat])
                counts[place[seat] - 1] += 1
    return {"vp_mean": _r(sum(vp) / len(vp), 3) if vp else None, "places": counts}


def ratings(config: TournamentConfig, results: list[dict]) -> list[dict]:
    """openskill Plackett-Luce ratings from every game, in game-index order.

    Each seat is a team of one, ranked by R19 outcome (the winners share rank 1, everyone else rank 2). An entrant
    filling several seats of one game is rated once per seat from its rating before the game, and takes the mean
    of those updates (one entrant, several simultaneous observations).
    """
    model = PlackettLuce()
    mu = [model.mu] * len(config.bots)
    sigma = [model.sigma] * len(config.bots)
    for r in results:
        teams = [[model.rating(mu=mu[e], sigma=sigma[e])] for e in r["seats"]]
        ranks = [1 if ret > 0 else 2 for ret in r["returns"]]
        new = model.rate(teams, ranks=ranks)
        acc: dict[int, list[tuple[float, float]]] = {}
        for seat, e in enumerate(r["seats"]):
            acc.setdefault(e, []).append((new[seat][0].mu, new[seat][0].sigma))
        for e, ups in acc.items():
            mu[e] = sum(u[0] for u in ups) / len(ups)
            sigma[e] = sum(u[1] for u in ups) / len(ups)
    out = [{"bot": config.bots[e], "mu": _r(mu[e], 3), "sigma": _r(sigma[e], 3),
            "ordinal": _r(mu[e] - 3 * sigma[e], 3)} for e in range(len(config.bots))]
    out.sort(key=lambda x: (-x["ordinal"], x["bot"]))
    for rank, row in enumerate(out, 1):
        row["rank"] = rank
    return out


def summarize(schedule: Schedule, results: Iterable[dict], with_ratings: bool = True) -> dict[str, Any]:
    """The tournament's summary from its finished games (any subset of the schedule; ordered here by index).

    Deterministic fields only, except under ``"timing"`` (wall times depend on the machine). ``with_ratings=False``
    leaves the ladder empty (the running table is redrawn after every game; the ratings are computed at the end).
    Each entrant of a pairing has its score, win rate, Wilson 95% interval and fair share, the standard errors of
    its win rate (:func:`standard_errors`: binomial and deal-clustered), its mean VP a seat and its finishing
    places (:func:`places`; counts of first, second, ... over its seats).
    """
    config = schedule.config
    done = sorted(results, key=lambda r: r["index"])
    n_entrants = len(config.bots)
    pairings = []
    for table in schedule.tables:
        games = [r for r in done if r["table"] == table.index]
        distinct = sorted(set(table.lineup), key=table.lineup.index)
        rows = []
        for e in distinct:
            per_game = [entrant_scores(r, n_entrants)[e] for r in games]
            score = sum(per_game)
            n = len(games)
            lo, hi = wilson(score, n)
            seats = table.lineup.count(e)
            rows.append({"bot": config.bots[e], "seats": seats, "score": _r(score, 3),
                         "win_rate": _r(score / n) if n else None, "wilson95": [_r(lo), _r(hi)],
                         "fair_share": _r(seats / config.players),
                         "standard_error": standard_errors(per_game, [r["deal"] for r in games]),
                         **_seat_figures(games, e, config.players)})
        pairings.append({"table": table.index, "name": table.label(config.bots),
                         "games": len(games), "games_scheduled": schedule.games_per_table,
                         "entrants": rows})
    overall = []
    for e, bot in enumerate(config.bots):
        mine = [r for r in done if e in r["seats"]]
        seats = sum(r["seats"].count(e) for r in mine)
        score = sum(entrant_scores(r, n_entrants)[e] for r in mine)
        per_seat = score / seats if seats else None
        lo, hi = wilson(score, seats) if seats else (0.0, 1.0)
        overall.append({"bot": bot, "games": len(mine), "seats_played": seats, "score": _r(score, 3),
                        "win_rate_per_seat": _r(per_seat) if per_seat is not None else None,
                        "wilson95": [_r(lo), _r(hi)], "fair_share": _r(1 / config.players)})
    seconds = [r["timing"]["seconds"] for r in done if "timing" in r]
    searched = [sum(r["searched_decisions"]) for r in done]
    return {
        "format": SUMMARY_FORMAT,
        "config": config.to_dict(),
        "fingerprint": config.fingerprint(),
        "games_scheduled": len(schedule.games),
        "games_played": len(done),
        "complete": len(done) == len(schedule.games),
        "deals": schedule.deals,
        "seatings_per_deal": len(schedule.tables[0].seatings),
        "pairings": pairings,
        "overall": overall,
        "ratings": {"model": "openskill Plackett-Luce, winners ranked first, ordinal = mu - 3 sigma",
                    "ladder": ratings(config, done) if with_ratings else []},
        "turns_mean": _r(sum(r["turns"] for r in done) / len(done), 3) if done else None,
        "shared_wins": sum(1 for r in done if len(r["winners"]) > 1),
        "searched_decisions_per_game": _r(sum(searched) / len(done), 2) if done else None,
        "timing": {"seconds_per_game": _r(sum(seconds) / len(seconds), 3) if seconds else None,
                   "game_seconds_total": _r(sum(seconds), 2)},
    }


def strip_timing(obj: Any) -> Any:
    """A summary or game result without its machine-dependent fields (to compare runs)."""
    if isinstance(obj, dict):
        return {k: strip_timing(v) for k, v in obj.items() if k not in ("timing", "wall_seconds")}
    if isinstance(obj, list):
        return [strip_timing(v) for v in obj]
    return obj


class ResultStore:
    """A tournament's output directory.

    - ``tournament.json``: the configuration (what ``--resume`` checks and continues);
    - ``games.jsonl``: one line per finished game, appended (and flushed to disk) as each game ends;
    - ``records/game-NNNNN.json``: each finished game's record (``feudo replay`` / ``feudo render`` read it);
    - ``summary.json`` and ``chart.png``: written at the end (and when stopped, for the games so far).

    A game counts as finished once its line is in ``games.jsonl``; the record is written before the line, so a
    run killed between the two leaves at most an orphan record, overwritten when the game is played again.
    """

    def __init__(self, directory: str | os.PathLike):
        self.dir = Path(directory)
        self.config_path = self.dir / "tournament.json"
        self.games_path = self.dir / "games.jsonl"
        self.records_dir = self.dir / "records"
        self.summary_path = self.dir / "summary.json"
        self.chart_path = self.dir / "chart.png"

    # -- set-up ------------------------------------------------------------------------------------------------
    def check_new(self) -> None:
        """Refuse a directory that holds a tournament already (its results are never mixed with another's)."""
        if self.config_path.exists() or self.games_path.exists():
            raise ArenaError(f"--out {self.dir}: already holds a tournament (use --resume {self.dir} to continue "
                             f"it, or another directory)")
        if self.dir.exists() and not self.dir.is_dir():
            raise ArenaError(f"--out {self.dir}: not a directory")

    def create(self, config: TournamentConfig) -> None:
        """A new tournament in this directory (see :meth:`check_new`)."""
        self.check_new()
        try:
            self.records_dir.mkdir(parents=True, exist_ok=True)
            tmp = self.config_path.with_suffix(".tmp")
            tmp.write_text(json.dumps({"format": CONFIG_FORMAT, "fingerprint": config.fingerprint(),
                                       "config": config.to_dict()}, indent=2) + "\n", encoding="utf-8")
            os.replace(tmp, self.config_path)
        except OSError as e:
            raise ArenaError(f"--out {self.dir}: {e.strerror or e}") from None

    def load_config(self) -> TournamentConfig:
        src = f"--resume {self.dir}"
        if not self.config_path.is_file():
            raise ArenaError(f"{src}: no tournament here ({self.config_path.name} missing)")
        try:
            data = json.loads(self.config_path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            raise ArenaError(f"{src}: {self.config_path.name}: unreadable ({e})") from None
        if not isinstance(data, dict) or data.get("format") != CONFIG_FORMAT:
            raise ArenaError(f'{src}: {self.config_path.name}: format: expected "{CONFIG_FORMAT}"')
        config = TournamentConfig.from_dict(data.get("config"), f"{src}: {self.config_path.name}: config")
        if data.get("fingerprint") != config.fingerprint():
            raise ArenaError(f"{src}: {self.config_path.name}: fingerprint does not match its config")
        self.records_dir.mkdir(parents=True, exist_ok=True)
        return config

    def finished_lines(self, src: str | None = None) -> tuple[list[dict], bool]:
        """The lines of ``games.jsonl`` (the finished games, each a dict with its record's path), in order, and
        whether a torn last line was left out (a run killed while writing it: that game is not finished). Reads
        only: :meth:`load_results` is the one that mends the file. No ``games.jsonl``: no lines.

        :param src: what the error messages name first (default: the directory).
        :raises ArenaError: a line before the last that is not JSON, or a line that is not a JSON object."""
        src = str(self.dir) if src is None else src
        if not self.games_path.exists():
            return [], False
        lines = self.games_path.read_text(encoding="utf-8").splitlines()
        parsed: list[dict] = []
        for i, line in enumerate(lines):
            try:
                r = json.loads(line)
            except ValueError:
                if i == len(lines) - 1:
                    return parsed, True
                raise ArenaError(f"{src}: {self.games_path.name} line {i + 1}: not JSON") from None
            if not isinstance(r, dict):
                raise ArenaError(f"{src}: {self.games_path.name} line {i + 1}: expected a JSON object")
            parsed.append(r)
        return parsed, False

    def load_results(self, schedule: Schedule) -> dict[int, dict]:
        """The finished games, checked against the schedule; a torn last line (a killed run) is dropped, and the
        file rewritten without it so the games played next are appended after a whole line.

        :raises ArenaError: a line that is not JSON (but the last) or not a JSON object, or does not match the
            schedule."""
        src = f"--resume {self.dir}"
        lines, torn = self.finished_lines(src)
        results: dict[int, dict] = {}
        for i, r in enumerate(lines):
            idx = r.get("index")
            if not isinstance(idx, int) or not 0 <= idx < len(schedule.games):
                raise ArenaError(f"{src}: games.jsonl line {i + 1}: index not in this tournament")
            expected = schedule.games[idx].to_dict()
            if any(r.get(k) != v for k, v in expected.items()):
                raise ArenaError(f"{src}: games.jsonl line {i + 1}: game {idx} does not match the "
                                 f"schedule (another tournament's results?)")
            results[idx] = r
        if torn:  # rewrite without the torn line before appending after it
            tmp = self.games_path.with_suffix(".tmp")
            tmp.write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
            os.replace(tmp, self.games_path)
        return results

    # -- game by game ------------------------------------------------------------------------------------------
    def record_path(self, index: int) -> Path:
        return self.records_dir / f"game-{index:05d}.json"

    def append(self, result: dict) -> dict:
        """Store a finished game: its record file, then its line. Returns the line's dict (record by path)."""
        record = result["record"]
        path = self.record_path(result["index"])
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(record), encoding="utf-8")
        os.replace(tmp, path)
        line = {k: v for k, v in result.items() if k != "record"}
        line["record"] = str(path.relative_to(self.dir))
        with open(self.games_path, "a", encoding="utf-8") as f:
            f.write(json.dumps(line) + "\n")
            f.flush()
            os.fsync(f.fileno())
        return line

    def write_summary(self, summary: dict) -> None:
        tmp = self.summary_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
        os.replace(tmp, self.summary_path)
