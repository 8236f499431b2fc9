"""The one way to ask for advice: :func:`advise` (``feudo_ai.advise``).

    import feudo_ai
    from engine import new_fast_game
    state = new_fast_game(players=4, seed=7)
    ...                                                  # play to a decision of seat 2
    advice = feudo_ai.advise(state, seat=2, options=feudo_ai.SearchOptions(iterations=20000, seed=1))
    print(advice)                                        # the whole decision, alternatives, beliefs, stats

Every caller (bots, CLI, the Advisor service, the arena, benchmarks) goes through :func:`advise`, with settings
from the one vocabulary (:class:`feudo_ai.settings.SearchOptions`, resolved from named profiles by
:func:`feudo_ai.settings.resolve`), and gets one answer (:class:`~feudo_ai.search.answer.Advice`) whichever search
runs it: the C MO-ISMCTS / PIMC (``backend="c"``, :mod:`feudo_ai.search.c_backend`) or the readable Python
reference (``backend="python"``, :mod:`feudo_ai.search.python_backend`). The position is prepared once
(:func:`feudo_ai.search.position.prepare`: the seat's view, its decision, and on first use the compiled root) and
every search of the call starts from it. Design and measured figures: ``docs/search.md``.

Whole decisions. In the Strategy phase the answer is the seat's complete secret selection (R6: three Army Cards
and one Trading Card, :attr:`Advice.plan` holds the four picks); elsewhere it is the seat's planned sequence of
decisions until new information arrives (another player acts, or chance), e.g. a reveal, the token's move, the
marches of a Trading Card, an attack with its joiners. The selection is simultaneous in the real game but
sequential in the engine, so a seat whose selection is pending may ask while another seat is "to act": the
players before it in seat order who have not finished are treated as having selected (their picks are then drawn
by the determinization like any hidden selection), which changes nothing they could see.
"""

from __future__ import annotations

import threading
from dataclasses import replace

from feudo_ai.settings import Backend, SearchOptions

from . import c_backend, python_backend
from .answer import Advice, PlannedAction, deadline_of, derive_seed, now
from .games import adapter_for
from .position import Position, PreparedPosition
from .reuse import TreeMemory

__all__ = ["advise"]


def advise(position: Position | PreparedPosition, seat: int | None = None, options: SearchOptions | None = None, *,
           cancel: threading.Event | None = None, memory: TreeMemory | None = None) -> Advice:
    """Advice for ``seat`` (default: the player to act) in ``position``.

    :param position: a full :class:`engine.State` or ``CoreState`` (projected to the seat's observation first), an
        :class:`~feudo_ai.search.ObservedPosition` (a seat's observation), or a
        :class:`~feudo_ai.search.PreparedPosition` (:func:`~feudo_ai.search.prepare`: built once, e.g. by a
        service that also checked it).
    :param seat: a seat whose decision is pending: the player to act, or in the Strategy phase any seat that has
        not finished its secret selection.
    :param options: :class:`~feudo_ai.settings.SearchOptions` (default: ``SearchOptions()``, 5,000 iterations of
        the C MO-ISMCTS; the product's are ``feudo_ai.settings.resolve("product", players)``).
    :param cancel: a :class:`threading.Event`; setting it stops the search within milliseconds (the answer is then
        the best found so far, ``stats.stopped_by == "cancelled"``).
    :param memory: with ``options.reuse_tree``, the seat's :class:`~feudo_ai.search.reuse.TreeMemory` (kept by a
        bot from one decision to the next): the first search starts from the seat's previous tree where the
        memory knows the way, and leaves its own tree there.
    :raises ValueError: a bad option, seat or a position where the seat has nothing to decide.
    :raises StateError: an inconsistent position.
    :raises ImportError: ``backend="c"`` without the compiled extensions.
    """
    started = now()
    opts = SearchOptions() if options is None else options
    if not isinstance(opts, SearchOptions):
        raise ValueError(f"options: expected SearchOptions, got {type(opts).__name__}")
    opts.validate()
    if cancel is not None and not isinstance(cancel, threading.Event):
        raise ValueError(f"cancel: expected a threading.Event, got {type(cancel).__name__}")
    adapter = adapter_for(position)
    if str(opts.backend) not in adapter.backends:
        raise ValueError(f"backend: {adapter.name} is searched by the {' or '.join(adapter.backends)} backend, "
                         f"got {opts.backend}")
    prepared = adapter.prepare(position, seat)
    seat, decision = prepared.seat, prepared.decision

    # The whole decision: the first search's principal variation; a decision that asks the seat for more after it
    # (a selection cut short by a small budget) is completed by searching again after the plan so far (the seat's
    # own actions, known to it), then, when time is up, by the adapter's completion.
    run = c_backend.search_prepared if opts.backend == Backend.C else python_backend.search_prepared
    deadline = deadline_of(opts, started)
    plan: list[PlannedAction] = []
    first: Advice | None = None
    current = prepared
    searches = iterations = nodes = max_depth = worlds = 0
    stopped_by = None
    pool_full = False
    recycled = 0
    while True:
        it = opts.budget
        if searches and it is not None:
            it = max(opts.threads, it // 4)
        sub = opts.replace(iterations=it, seconds=None, deadline=deadline, seed=derive_seed(opts.seed, searches))
        if memory is not None and opts.reuse_tree and opts.backend == Backend.C:
            # the memory follows the game: only the search from the decision itself reads and keeps its trees
            one = run(current, sub, cancel=cancel, memory=memory if not searches else None)
        else:
            one = run(current, sub, cancel=cancel)
        searches += 1
        st = one.stats
        iterations += st.iterations
        nodes += st.nodes
        stopped_by = st.stopped_by
        pool_full = pool_full or st.pool_full
        recycled += st.recycled
        max_depth = max(max_depth, st.max_depth)
        worlds += st.worlds_sampled
        if first is None:
            first = one
        plan.extend(one.plan)
        rest = adapter.unfinished(current, [p.action for p in one.plan])
        if rest is None:
            break
        if stopped_by == "cancelled" or (deadline is not None and now() >= deadline):
            break
        current = adapter.after(rest, seat)
    if rest is not None:
        # a cancelled or out-of-time search still answers a whole decision
        plan.extend(adapter.complete(rest, seat))
    elapsed = now() - started
    assert first is not None
    stats = replace(first.stats, algorithm=str(opts.algorithm), backend=str(opts.backend), iterations=int(iterations),
                    nodes=int(nodes), elapsed=elapsed, iterations_per_s=iterations / elapsed if elapsed > 0 else None,
                    stopped_by=stopped_by, limited=stopped_by in ("time", "cancelled"), pool_full=pool_full,
                    max_depth=int(max_depth), worlds_sampled=int(worlds), seed=opts.seed, searches=searches,
                    recycled=int(recycled))
    return replace(first, seat=seat, decision=decision, best=plan[0].action, best_text=plan[0].text,
                   plan=tuple(plan), stats=stats)
