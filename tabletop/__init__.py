"""Game-independent messages of the table-top game services: Python stubs generated from ``proto/tabletop/``
(see :mod:`tabletop.v1`)."""
