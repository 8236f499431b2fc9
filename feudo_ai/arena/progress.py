"""What the user sees: the results table (rich), and while playing a progress bar with ETA over the running
table."""

from __future__ import annotations

from typing import Any

from rich.console import Console, Group
from rich.live import Live
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, \
    TimeRemainingColumn
from rich.table import Table


def results_table(summary: dict, title: str | None = None) -> Table:
    """Pairings: win rate, Wilson 95%, the win rate's deal-clustered standard error, mean VP a seat and finishing
    places (first/second/...)."""
    table = Table(title=title, title_justify="left", show_lines=False)
    table.add_column("pairing")
    table.add_column("bot")
    table.add_column("games", justify="right")
    table.add_column("score", justify="right")
    table.add_column("win rate", justify="right")
    table.add_column("Wilson 95%", justify="right")
    table.add_column("fair", justify="right")
    table.add_column("SE by deal", justify="right")
    table.add_column("VP", justify="right")
    table.add_column("places", justify="right")
    for p in summary["pairings"]:
        for i, row in enumerate(p["entrants"]):
            rate = "-" if row["win_rate"] is None else f"{row['win_rate']:.3f}"
            lo, hi = row["wilson95"]
            se, vp, places = row["standard_error"]["deal_clustered"], row["vp_mean"], row["places"]
            table.add_row(p["name"] if i == 0 else "", row["bot"] + (f" x{row['seats']}" if row["seats"] > 1 else ""),
                          f"{p['games']}/{p['games_scheduled']}" if i == 0 else "", f"{row['score']:g}", rate,
                          f"[{lo:.3f}, {hi:.3f}]", f"{row['fair_share']:.2f}", "-" if se is None else f"{se:.3f}",
                          "-" if vp is None else f"{vp:.1f}", "-" if places is None else "/".join(map(str, places)),
                          end_section=i == len(p["entrants"]) - 1)
    return table


def ladder_table(summary: dict) -> Table:
    table = Table(title="Ratings", caption=summary["ratings"]["model"], title_justify="left",
                  caption_justify="left")
    for col in ("rank", "bot", "mu", "sigma", "ordinal", "win rate / seat", "seats"):
        table.add_column(col, justify="left" if col == "bot" else "right")
    overall = {o["bot"]: o for o in summary["overall"]}
    for r in summary["ratings"]["ladder"]:
        o = overall[r["bot"]]
        rate = "-" if o["win_rate_per_seat"] is None else f"{o['win_rate_per_seat']:.3f}"
        table.add_row(str(r["rank"]), r["bot"], f"{r['mu']:.2f}", f"{r['sigma']:.2f}", f"{r['ordinal']:.2f}", rate,
                      str(o["seats_played"]))
    return table


def print_results(summary: dict, console: Console | None = None) -> None:
    console = console or Console()
    cfg = summary["config"]
    head = (f"{cfg['players']} players, {cfg['format']}, seed {cfg['seed']}: {summary['games_played']} of "
            f"{summary['games_scheduled']} games ({summary['deals']} deals x {summary['seatings_per_deal']} "
            f"seatings per pairing)")
    console.print(results_table(summary, title=head))
    console.print(ladder_table(summary))
    t = summary["timing"]
    if t["seconds_per_game"] is not None:
        console.print(f"{t['seconds_per_game']:.2f} s per game (one worker), "
                      f"{summary['searched_decisions_per_game']} searched decisions per game")


class LiveProgress:
    """A progress bar with ETA above the running results table, redrawn as games finish (on stderr)."""

    def __init__(self, total: int, already: int, enabled: bool = True, console: Console | None = None):
        self.console = console or Console(stderr=True)
        self.enabled = enabled
        self.progress = Progress(TextColumn("[bold]arena"), BarColumn(), MofNCompleteColumn(),
                                 TextColumn("games"), TimeElapsedColumn(), TextColumn("ETA"),
                                 TimeRemainingColumn(), console=self.console)
        self.task = self.progress.add_task("games", total=total, completed=already)
        self.table: Any = Table()
        self.live: Live | None = None

    def __enter__(self) -> "LiveProgress":
        if self.enabled:
            self.live = Live(Group(self.progress, self.table), console=self.console, refresh_per_second=4,
                             transient=True)
            self.live.__enter__()
        return self

    def update(self, summary: dict) -> None:
        self.progress.update(self.task, completed=summary["games_played"])
        if self.live is not None:
            self.table = results_table(summary, title="running results")
            self.live.update(Group(self.progress, self.table))

    def __exit__(self, *exc) -> None:
        if self.live is not None:
            self.live.__exit__(*exc)
            self.live = None
