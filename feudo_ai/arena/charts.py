"""The tournament chart (PNG, matplotlib's Agg renderer: no display needed).

Left: each pairing's win rates with their Wilson 95% intervals and the fair share (a dotted mark). A pairing of
two entrants shows the first one's rate (the other's is the rest); a table of three or more shows every entrant.
Right: the rating ladder, openskill mu with a 2-sigma bar, best ordinal (mu - 3 sigma) at the top.
"""

from __future__ import annotations

import os

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure


def _bars(summary: dict) -> list[tuple[str, dict]]:
    bars = []
    for p in summary["pairings"]:
        rows = p["entrants"]
        shown = rows[:1] if len(rows) == 2 else rows
        for row in shown:
            label = p["name"] if len(rows) == 2 else f"{row['bot']} @ {p['name']}"
            bars.append((f"{label}  (n={p['games']})", row))
    return bars


def draw_chart(summary: dict, path: str | os.PathLike) -> None:
    bars = _bars(summary)
    ladder = summary["ratings"]["ladder"]
    height = max(3.0, 0.45 * max(len(bars), len(ladder)) + 1.6)
    fig = Figure(figsize=(13, height), dpi=110)
    FigureCanvasAgg(fig)
    ax1, ax2 = fig.subplots(1, 2, gridspec_kw={"width_ratios": [3, 2]})

    ys = list(range(len(bars)))[::-1]
    for y, (label, row) in zip(ys, bars):
        rate = row["win_rate"]
        lo, hi = row["wilson95"]
        if rate is not None:
            ax1.barh(y, rate, color="#4c72b0", alpha=0.85, height=0.5)
            ax1.errorbar(rate, y, xerr=[[rate - lo], [hi - rate]], fmt="none", ecolor="black", capsize=4, lw=1.2)
            ax1.text(1.03, y, f"{rate:.2f} [{lo:.2f}, {hi:.2f}]", va="center", fontsize=8)
        ax1.plot([row["fair_share"]] * 2, [y - 0.4, y + 0.4], color="#c44e52", ls=":", lw=1.5)
    ax1.set_yticks(ys)
    ax1.set_yticklabels([b[0] for b in bars], fontsize=8)
    ax1.set_xlim(0, 1.3)  # the right margin holds the numbers
    ax1.set_xticks([0, 0.2, 0.4, 0.6, 0.8, 1.0])
    ax1.set_ylim(-0.7, len(bars) - 0.3)
    ax1.axvline(1.0, color="grey", lw=0.8)
    ax1.set_xlabel("win rate (R19 returns), Wilson 95% interval; dotted: fair share")
    ax1.set_title("Pairings")
    ax1.grid(axis="x", alpha=0.3)

    ys2 = list(range(len(ladder)))[::-1]
    for y, row in zip(ys2, ladder):
        ax2.errorbar(row["mu"], y, xerr=2 * row["sigma"], fmt="o", color="#55a868", ecolor="#55a868", capsize=4)
        ax2.text(row["mu"], y + 0.22, f"{row['mu']:.1f} ± {2 * row['sigma']:.1f}", ha="center", fontsize=8)
    ax2.set_yticks(ys2)
    ax2.set_yticklabels([f"{r['rank']}. {r['bot']}" for r in ladder], fontsize=8)
    ax2.set_ylim(-0.7, len(ladder) - 0.3)
    ax2.set_xlabel("openskill mu ± 2 sigma")
    ax2.set_title("Rating ladder")
    ax2.grid(axis="x", alpha=0.3)

    cfg = summary["config"]
    state = "" if summary["complete"] else f" (stopped: {summary['games_played']} of {summary['games_scheduled']})"
    fig.suptitle(f"feudo arena: {cfg['players']} players, {cfg['format']}, seed {cfg['seed']}, "
                 f"{summary['games_played']} games{state}", fontsize=11)
    fig.tight_layout()
    fig.savefig(path)
