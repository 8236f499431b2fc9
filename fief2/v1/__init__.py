"""Fief 2's wire protocol, version 1 (protobuf package ``fief2.v1``): stubs generated at build time from
``proto/fief2/v1/`` (``game_pb2``, ``advisor_pb2``, ``matches_pb2``, their ``*_pb2_grpc`` service stubs and typed
``*_pb2.pyi``), never committed. protoc names a Python module after its ``.proto`` path, and Buf's layout puts
package ``fief2.v1`` in ``proto/fief2/v1/``, so the stubs live in this subpackage of the rules package; importing
them imports :mod:`fief2` (the rules) too, which they do not use.
"""

import importlib.util as _util

if _util.find_spec(__name__ + ".advisor_pb2") is None:  # pragma: no cover - depends on the build
    raise ImportError("fief2.v1: the protobuf stubs are not generated; run `pip install -e .` (or `pip install .`) "
                      "in the repository root")
