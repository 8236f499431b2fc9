"""Protocol version 1 (protobuf package ``feudo.v1``): stubs generated at build time from ``proto/feudo/v1/``.

``pip install .`` and ``pip install -e .`` run protoc (grpcio-tools) and write ``game_pb2.py``, ``advisor_pb2.py``,
their ``*_pb2_grpc.py`` service stubs and typed ``*_pb2.pyi`` here; they are never committed. The generated
modules import each other as ``from feudo.v1 import game_pb2``, which is why this package is top-level.
"""

import importlib.util as _util

if _util.find_spec(__name__ + ".advisor_pb2") is None:  # pragma: no cover - depends on the build
    raise ImportError("feudo.v1: the protobuf stubs are not generated; run `pip install -e .` (or `pip install .`) "
                      "in the repository root")
