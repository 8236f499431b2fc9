"""The server's caps on the searches of a hosted match's bots: the same as on an Advisor call's.

A bot seat's spec (``ismcts:seconds=30:threads=8``) sets its search; on a server it must not take more than a
``Suggest`` call may. :class:`BotLimits` holds the server's caps (``feudo serve --max-seconds``,
``--max-iterations``, ``--max-threads``, ``--max-nodes``, ``--search-nice``) and:

- :meth:`BotLimits.check` refuses, at ``CreateMatch``, a seat whose settings (resolved for the match's players by
  :func:`feudo_ai.settings.resolve`, as the bot itself resolves them) pass a cap: ``RESOURCE_EXHAUSTED`` naming
  the seat and the setting, e.g. ``seats[1]: threads=8 is beyond this server's cap 2 (--max-threads)``; a time
  budget below 1 ms is ``INVALID_ARGUMENT``;
- :meth:`BotLimits.bounded` bounds each search as it starts: what a bot adds on its own (the budget it banked by
  following its plan, a per-game clock's slice) is cut to the caps, every search ends by ``max_seconds``, its
  node pool is at most ``max_nodes`` a thread, and its threads run ``nice`` steps nicer, as the Advisor's do.
  A search within the caps gives the advice it gives anywhere else (same seed and iterations: same advice);
- :meth:`BotLimits.check_files` refuses, before the bot is made, a spec whose ``evaluation`` names a model file
  other than the ones the operator allowed (``feudo serve --evaluation FILE``, :attr:`BotLimits.
  evaluation_files`): a client's spec never makes the server open a file of its choosing (``INVALID_ARGUMENT``).

Plain Python: the wire builds one from its :class:`~feudo_ai.wire.advisor.ServiceConfig`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from feudo_ai.settings import SearchOptions

from .errors import InvalidArgument, ResourceExhausted

MIN_SECONDS = 0.001  # the smallest time budget of a search (as for an Advisor call)


@dataclass(frozen=True)
class BotLimits:
    """Caps of one bot search (the flags named in messages are ``feudo serve``'s)."""

    max_seconds: float = 60.0
    max_iterations: int = 2_000_000
    max_threads: int = 2
    max_nodes: int = 500_000
    nice: int = 10  # the bots' search threads run this much nicer than the threads answering calls
    # model files a bot spec may name in evaluation= (feudo serve --evaluation FILE), exactly as written there
    evaluation_files: tuple[str, ...] = ()

    def check_files(self, spec: object, where: str) -> None:
        """A bot spec's ``evaluation``, if it names a file, is one of :attr:`evaluation_files`; checked on the
        spec's text, so a refused path is never opened. :raises InvalidArgument: naming ``where``."""
        from feudo_ai.bots.registry import parse_bot_spec
        from feudo_ai.settings import Evaluation

        try:
            _, params = parse_bot_spec(str(spec))
        except ValueError:
            return  # a malformed spec: make_bot names the fault
        value = params.get("evaluation")
        if value is None or str(value) in {m.value for m in Evaluation} or str(value) in self.evaluation_files:
            return
        allowed = ", ".join(self.evaluation_files) or "none"
        raise InvalidArgument(f"{where}: evaluation: expected {', '.join(m.value for m in Evaluation)} or a model "
                              f"file this server allows (feudo serve --evaluation; allowed: {allowed}), got "
                              f"{str(value)!r}")

    def check(self, setup, max_search_threads: int | None = None) -> None:
        """Every bot seat of ``setup`` (a :class:`~feudo_ai.matches.spec.MatchSetup` whose bots are known good)
        within the caps. :raises ResourceExhausted: a setting beyond a cap; :raises InvalidArgument: a time
        budget below :data:`MIN_SECONDS`; both naming the seat and the setting."""
        from feudo_ai.bots import make_bot
        from feudo_ai.bots.base import AdviceBot

        for p in setup.bot_seats:
            bot = make_bot(setup.seats[p], 0)
            if not isinstance(bot, AdviceBot):
                continue  # no search (greedy, random)
            opts = bot.options_for(setup.players) if hasattr(bot, "options_for") else bot.options
            self._check_options(f"seats[{p}]", opts, max_search_threads)

    def _check_options(self, where: str, opts: SearchOptions, max_search_threads: int | None) -> None:
        threads_cap = self.max_threads if max_search_threads is None else min(self.max_threads, max_search_threads)
        beyond = [("threads", opts.threads, threads_cap, "--max-threads"),
                  ("iterations", opts.iterations, self.max_iterations, "--max-iterations"),
                  ("seconds", opts.seconds, self.max_seconds, "--max-seconds"),
                  ("max_nodes", opts.max_nodes, self.max_nodes, "--max-nodes")]
        if opts.seconds is not None and opts.seconds < MIN_SECONDS:
            raise InvalidArgument(f"{where}: seconds: expected at least {MIN_SECONDS:g} (1 ms), got {opts.seconds:g}")
        for name, value, cap, flag in beyond:
            if value is not None and value > cap:
                raise ResourceExhausted(f"{where}: {name}={value:g} is beyond this server's cap {cap:g} ({flag})")

    def bounded(self, opts: SearchOptions, players: int) -> SearchOptions:
        """``opts`` of a search starting now, within the caps (see the module)."""
        changes: dict = {"nice": max(opts.nice, self.nice)}
        if opts.threads > self.max_threads:
            changes["threads"] = threads = self.max_threads
        else:
            threads = opts.threads
        iterations = opts.budget  # the iteration limit in force (the default budget when none is given)
        if iterations is not None:
            iterations = max(min(iterations, self.max_iterations), threads)
            changes["iterations"] = iterations
        if opts.seconds is not None and opts.seconds > self.max_seconds:
            changes["seconds"] = self.max_seconds
        deadline = time.monotonic() + self.max_seconds  # every search ends by the time cap
        changes["deadline"] = deadline if opts.deadline is None else min(opts.deadline, deadline)
        if opts.backend == "c":
            # the pool the search would size for itself (an iteration budget: 8 nodes an iteration; a time
            # budget: as many as the time cap allows), at most max_nodes a thread
            nodes = opts.max_nodes
            if nodes is None:
                from feudo_ai.search.c_backend import _default_nodes

                per_thread = -(-iterations // threads) if iterations is not None else None
                timed = opts.seconds is not None or opts.deadline is not None
                nodes = _default_nodes(per_thread or 0, timed or per_thread is None, players, opts.worlds, threads)
            changes["max_nodes"] = max(min(nodes, self.max_nodes), opts.worlds + 1, 16)
        return opts.replace(**changes)
