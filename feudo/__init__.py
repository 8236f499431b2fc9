"""The Feudo AI wire protocol: Python stubs generated from ``proto/feudo/`` (see :mod:`feudo.v1`)."""
