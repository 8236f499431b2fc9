"""Testing tools for the engine (not used in play): side-by-side differential runs of the reference against
the Cython core (:mod:`engine.testing.differential`) and perft move-generator counts
(:mod:`engine.testing.perft`). Used by ``tests/`` and ``benchmarks/``."""
