"""The C backend of :func:`feudo_ai.advise` (``SearchOptions(backend="c")``, the default): MO-ISMCTS and the
determinized PIMC baseline of :mod:`feudo_ai._search` on a game's compiled table (Feudo:
:mod:`feudo_ai._feudo_game`; Fief 2: :mod:`feudo_ai._fief2_game`), built by the game's adapter
(:mod:`feudo_ai.search.games`), root-parallel over threads.

    import feudo_ai
    advice = feudo_ai.advise(state, options=feudo_ai.SearchOptions(iterations=20000, threads=2, seed=1))

Callers go through :func:`feudo_ai.advise` (which completes a whole selection and answers out of turn);
:func:`search_prepared` is one search from a prepared position (:func:`feudo_ai.search.position.prepare`) where the
seat is to act, and :func:`search` the same from any position, with the same options and the same
:class:`~feudo_ai.search.answer.Advice`.

``algorithm="ismcts"`` is the algorithm of :mod:`feudo_ai.ismcts` (one tree per player, EXP3 at a secret
selection while another player still selects after the chooser, UCB1 with availability counts elsewhere,
including the last selector's picks; the same evaluation), with the trees in a C node pool and the loop running
with the GIL released, so ``threads=N`` workers (own trees, own RNG seeded by
:func:`~feudo_ai.search.answer.derive_seed`) run at once; their root statistics are summed. ``algorithm="pimc"``
samples ``worlds`` worlds per worker and runs plain UCT on each as a perfect-information game (every selection
visible to every player), iteration i in world i mod ``worlds``; the worlds' root visits are summed (votes), and
its principal variation is read from the first world's tree. It shares the playouts and evaluation, so pairing
the two measures the algorithms alone.

Honesty: the C search is given the prepared root, the seat's view (opponents' unrevealed selections removed),
and the game's ``hide`` blanks those fields again in the root the search keeps, and its
``determinize`` overwrites them before every world is drawn, so the result depends only on what the seat may
know, the options and the seed (Fief 2 alike: the other families' hands, :mod:`feudo_ai.search.games.fief2`).
``sampler="weighted"`` draws the opponents' cards with the prior of
:class:`feudo_ai.sampler.WeightedSampler` instead of uniformly; the public constraints hold exactly either way.

Default evaluation: ``playout="truncated"`` with ``playout_turns=0``: playout actions to the end of the current
turn (attacks excepted: only winnable ones are launched), then the softmax of
:func:`feudo_ai.evaluate.position_score` (in C). Evaluating the leaf directly (``"eval"``) cannot tell secret
selections apart early in a turn (nothing has happened yet when the leaf is evaluated), while a random rest of
the turn resolves the reveals, moves and attacks they lead to. ``"random"`` plays to the end of the game (R19
returns). Why these defaults, and the measured speed and strength: ``docs/search.md``.

The node pool holds ``max_nodes`` nodes per worker (64 bytes each, 80 in 6-player games); the trees grow by
about 4 nodes an iteration, and the default pool is sized to the budget (8 per iteration, or
:data:`TIMED_MAX_NODES` for a timed search). A full pool never stops the search; with ``recycle`` (off by
default) its least-travelled half is freed and the trees go on growing, else they stop growing; ``advice.stats.pool_full`` says whether it filled,
``advice.stats.recycled`` how often it was recycled.

``early_stop`` (off by default) ends a search once its answer is settled: every 16 iterations a worker compares
the visits of the seat's two most visited root actions with the iterations it has left (its share of an iteration
limit exactly, or its rate so far times the time left), and stops when no spending of them could change the most
visited action (``advice.stats.stopped_by == "decided"``). With an iteration limit and one thread the answer is the
one the whole budget gives (the statistics are those of fewer iterations); with several threads each worker
settles its own tree. A secret selection (the whole selection planned by one tree) always spends its budget.
"""

from __future__ import annotations

import os
import sys
import threading

from feudo_ai.settings import MAX_NODES, MAX_SEARCH_BYTES, Algorithm, SearchOptions, node_bytes

from .answer import Advice, deadline_of, derive_seed, now, search_advice, split_budget
from .cancel import forward_cancel
from .games import adapter_for
from .reuse import TreeMemory

try:  # the compiled extensions are optional: without them the Python reference backend still runs
    from feudo_ai import _search
except ImportError as _e:  # pragma: no cover - depends on the build
    _search = None
    _IMPORT_ERROR: ImportError | None = _e
else:
    _IMPORT_ERROR = None

TIMED_MAX_NODES = 8_000_000  # node pool of a worker of a timed search (64 bytes a node: 512 MB)


def available() -> bool:
    return _search is not None


def require() -> None:
    """:raises ImportError: the compiled search is not built (naming the command that builds it)."""
    if _search is None:
        raise ImportError(f"feudo_ai._search is not built ({_IMPORT_ERROR}); run "
                          f"`python setup.py build_ext --inplace` in the repository root")


def search(position, seat: int | None = None, options: SearchOptions | None = None, *,
           cancel: threading.Event | None = None) -> Advice:
    """One C search for ``seat`` (default: the player to act, who must be ``seat``) in ``position`` (a reference
    :class:`engine.State`, an :class:`engine.core.CoreState` or a prepared position): its
    :class:`~feudo_ai.search.answer.Advice`, whose plan is the seat's principal variation. ``options.backend`` is
    ignored (this is the C backend).

    :param cancel: a :class:`threading.Event` or a :class:`feudo_ai._search.CancelFlag`; the search stops within
        a few milliseconds of it being set.
    :raises ValueError: a bad option or seat. :raises ImportError: the extensions are not built.
    """
    adapter = adapter_for(position)
    seat = adapter.check_to_act(position, seat)
    return search_prepared(adapter.prepare(position, seat), options, cancel=cancel)


def search_prepared(prepared, options: SearchOptions | None = None, *,
                    cancel: threading.Event | None = None, memory: TreeMemory | None = None) -> Advice:
    """One C search from ``prepared`` (its seat to act): see :func:`search`. With ``options.reuse_tree`` and a
    ``memory`` (:class:`~feudo_ai.search.reuse.TreeMemory` of the seat) the seat's tree starts from the subtree
    of its previous search below the labels observed since (when the memory knows them), and the memory keeps
    the new trees."""
    require()
    started = now()
    opts = SearchOptions() if options is None else options
    if not isinstance(opts, SearchOptions):
        raise ValueError(f"options: expected SearchOptions, got {type(opts).__name__}")
    opts.validate()
    if cancel is not None and not isinstance(cancel, (_search.CancelFlag, threading.Event)):
        raise ValueError(f"cancel: expected a threading.Event, got {type(cancel).__name__}")
    probe, seat = prepared.root, prepared.seat
    # the game's settings go to the game's table (built by its adapter), the search's to the workers: each side
    # reads only its own
    adapter = adapter_for(prepared)
    game = adapter.search_game(prepared, opts)
    iterations = opts.budget
    deadline = deadline_of(opts, started)
    flag = cancel if isinstance(cancel, _search.CancelFlag) else _search.CancelFlag()
    if opts.max_nodes is not None and opts.threads * opts.max_nodes * node_bytes(game.num_players) > MAX_SEARCH_BYTES:
        # the options checked this for nodes of up to 4 players; a game of more takes more bytes a node
        raise ValueError(f"max_nodes: {opts.threads} threads x {opts.max_nodes:,} nodes x "
                         f"{node_bytes(game.num_players)} bytes ({game.num_players} players) exceeds the memory limit "
                         f"of a search ({MAX_SEARCH_BYTES / 2**30:g} GiB)")
    reuse = opts.reuse_tree and memory is not None
    if reuse and memory.seat != seat:
        raise ValueError(f"memory: a tree memory of seat {memory.seat}, the search is seat {seat}'s")
    path = memory.path(probe) if reuse else None
    saved = memory.trees if path is not None and len(memory.trees) == opts.threads else None
    legal = set(probe.legal_actions())
    # a selection's later picks are read from the same tree (its principal variation): its search spends it all
    early_stop = bool(opts.early_stop) and prepared.decision != "selection"
    workers = []
    for i in range(opts.threads):
        iters = split_budget(iterations, opts.threads, i) or 0
        pool = opts.max_nodes if opts.max_nodes is not None else _default_nodes(iters, deadline is not None,
                                                                                game.num_players, opts.worlds,
                                                                                opts.threads)
        tree = saved[i] if saved is not None else None
        if tree is not None:
            start = tree.find(path)
            # a path the seat's tree does not have, or one that ends where the tree expects other actions (the
            # memory was not told the game's actions): start afresh
            if start < 0 or not {a for a, _ in tree.children(start)} <= legal:
                tree = None
            elif opts.max_nodes is None:
                pool = min(pool + tree.size_at(start), MAX_SEARCH_BYTES // node_bytes(game.num_players) //
                           opts.threads)
        workers.append(_search.SearchWorker(
            game, derive_seed(opts.seed, i), iterations=iters, deadline=deadline if deadline is not None else 0.0,
            max_nodes=pool, playout=str(opts.playout), playout_turns=opts.playout_turns, c=float(opts.c),
            exp3_gamma=float(opts.exp3_gamma), cancel=flag, algorithm=str(opts.algorithm), worlds=opts.worlds,
            prior_weight=float(opts.prior_weight), prior_temperature=float(opts.prior_temperature),
            recycle=bool(opts.recycle), tree=tree, path=path if tree is not None else None,
            early_stop=early_stop))
    watched = cancel if isinstance(cancel, threading.Event) else None  # a CancelFlag is read by C directly
    with forward_cancel(watched, flag.set):
        if opts.threads == 1 and not opts.nice:
            workers[0].run()
        else:
            pool = [threading.Thread(target=_run_worker, args=(w, opts.nice)) for w in workers]
            for t in pool:
                t.start()
            for t in pool:
                t.join()
    if reuse:
        memory.saved([w.saved_tree() for w in workers], probe)
    root: dict[int, tuple[int, float]] = {}
    for w in workers:
        for a, (v, r) in w.root_stats().items():
            mv, mr = root.get(a, (0, 0.0))
            root[a] = (mv + v, mr + r)
    counts: list[int] | None = None
    worlds = 0
    for w in workers:
        c, nw = w.belief_counts()
        counts = c if counts is None else [x + y for x, y in zip(counts, c)]
        worlds += nw
    per = [w.stats() for w in workers]
    best = max(root, key=lambda a: (root[a][0], root[a][1] / root[a][0], -a)) if root else None
    return search_advice(
        probe, seat, opts, root, _pv(workers[0], probe, seat, best), adapter.beliefs(prepared, game, counts, worlds),
        prepared.decision, iterations=sum(s["iterations"] for s in per), nodes=sum(s["nodes"] for s in per),
        elapsed=now() - started, search_seconds=max(s["elapsed"] for s in per),
        stopped_by=per[0]["stopped_by"], pool_full=any(s["pool_full"] for s in per),
        max_depth=max(s["max_depth"] for s in per), worlds=worlds,
        worker_iterations=tuple(s["iterations"] for s in per), recycled=sum(s["recycled"] for s in per),
        reused_nodes=sum(s["reused"] for s in per))


def _run_worker(worker, nice: int) -> None:
    """Run one C worker on this (its own) thread, ``nice`` steps nicer than the thread that started it."""
    if nice:
        lower_thread_priority(nice)
    worker.run()


def lower_thread_priority(nice: int) -> bool:
    """Make the calling thread ``nice`` steps nicer (at most 19). Linux only, where a nice value belongs to a
    thread (``setpriority`` of its thread id); elsewhere it would slow the whole process, so nothing is done.
    Returns whether the priority was lowered. A thread cannot raise it back without privileges, hence the
    workers' own threads."""
    if not nice or not sys.platform.startswith("linux"):
        return False
    tid = threading.get_native_id()
    try:
        os.setpriority(os.PRIO_PROCESS, tid, min(19, os.getpriority(os.PRIO_PROCESS, tid) + nice))
    except OSError:
        return False
    return True


def _default_nodes(iterations: int, timed: bool, players: int, worlds: int, threads: int = 1) -> int:
    """A pool that does not fill within the budget: an iteration adds a few nodes (about 4 on average: the
    expanded edge, chance outcomes and the other trees' nodes of the edges walked), so an iteration budget
    gets 8 per iteration; a timed search gets :data:`TIMED_MAX_NODES` (512 MB a worker). Either way the
    threads' pools together stay within :data:`feudo_ai.settings.MAX_SEARCH_BYTES` (a full pool is recycled, or
    stops the trees growing, never the search)."""
    cap = min(TIMED_MAX_NODES if timed else MAX_NODES, MAX_SEARCH_BYTES // node_bytes(players) // threads)
    if not timed:
        return min(cap, max(1024, 8 * iterations + players + worlds + 16))
    return cap if not iterations else min(cap, max(1024, 8 * iterations + 64))


def _pv(worker, probe, seat: int, best: int | None) -> list[tuple[int, str]]:
    """The seat's most visited actions while it keeps acting (worker 0's tree of the seat)."""
    if best is None:
        return []
    pv = [(best, probe.action_to_string(best))]
    node = next((ch for a, _, _, ch in worker.children(worker.root_index(seat)) if a == best), None)
    state = probe.clone()
    a = best
    for _ in range(40):
        if node is None:
            break
        state.apply_action(a)
        if state.is_terminal() or state.is_chance_node() or state.current_player() != seat:
            break
        legal = state.legal_actions()
        kids = [(v, -b, b, ch) for b, v, _, ch in worker.children(node) if b in legal and v > 0]
        if len(legal) == 1:
            a = legal[0]
            node = next((ch for b, _, _, ch in worker.children(node) if b == a), None)
        elif kids:
            _, _, a, node = max(kids)
        else:
            break
        pv.append((a, state.action_to_string(a)))
    return pv
