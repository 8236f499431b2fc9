"""Protocol version 1 (protobuf package ``tabletop.v1``): seats, tokens, search limits and statistics, actions,
match summaries and record envelopes shared by the games' own packages. Stubs generated at build time
from ``proto/tabletop/v1/``; never committed. The generated modules import it as ``from tabletop.v1 import
tabletop_pb2``, which is why this package is top-level.
"""

import importlib.util as _util

if _util.find_spec(__name__ + ".tabletop_pb2") is None:  # pragma: no cover - depends on the build
    raise ImportError("tabletop.v1: the protobuf stubs are not generated; run `pip install -e .` (or `pip install .`) "
                      "in the repository root")
