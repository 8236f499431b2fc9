"""The arena: bot-vs-bot tournaments (``feudo arena``), from one process to a Ray cluster.

    from feudo_ai.arena import TournamentConfig, run_tournament
    run = run_tournament(TournamentConfig(bots=("ismcts:iterations=2000", "greedy", "random"), players=2,
                                          games=20, seed=7), out="results/")
    print(run.summary["pairings"], run.summary["ratings"]["ladder"])

Modules, bottom-up: :mod:`.schedule` (configuration, deals, tables, seat rotation), :mod:`.remote` (the
Advisor-backed entrant), :mod:`.entrants` (bots from entrant specs, the checks before any game), :mod:`.runner`
(playing a game; local, process-pool and Ray backends), :mod:`.results` (win rates, Wilson intervals, openskill
ratings, the output directory), :mod:`.charts` (the PNG), :mod:`.progress` (rich tables and the progress bar),
:mod:`.tournament` (the driver), :mod:`.cli` (the subcommand).
"""

from .results import ResultStore, strip_timing, summarize, wilson
from .schedule import ArenaError, GameSpec, Schedule, TournamentConfig, build_schedule
from .tournament import ArenaRun, run_tournament

__all__ = ["ArenaError", "ArenaRun", "GameSpec", "ResultStore", "Schedule", "TournamentConfig", "build_schedule",
           "run_tournament", "strip_timing", "summarize", "wilson"]
