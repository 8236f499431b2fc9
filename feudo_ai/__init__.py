"""Feudo AI: bots, search, arena and command line on top of the :mod:`engine` rules engine."""

__version__ = "0.1.0"
