"""Build script: compiles the Cython extensions (engine core, search core) and generates the gRPC/protobuf stubs
during the package build.

The stubs (``*_pb2.py``, ``*_pb2_grpc.py`` and typed ``*_pb2.pyi``) are generated from every ``proto/**/*.proto``
by grpcio-tools (a build requirement) into the package named by each file's path: ``proto/feudo/v1/`` into
``feudo.v1``, ``proto/tabletop/v1/`` into ``tabletop.v1``, ``proto/fief2/v1/`` into ``fief2.v1`` (a subpackage of
the rules package), so the generated imports (``from feudo.v1 import game_pb2``, ``from tabletop.v1 import
tabletop_pb2``) resolve as they are: into the build directory for ``pip install .``, into the source tree for
``pip install -e .`` (ignored by git, never committed). Each package is listed in pyproject.toml.

Set ``FEUDO_DEBUG=1`` to build with Cython bounds checks, wrap-around and initialisation checks on (the
tests of the core are meant to be run against such a build too). No generated ``.c`` file is committed.
"""

import os
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent


def extensions():
    pyx = sorted(p for pkg in ("engine", "feudo_ai", "fief2") for p in (HERE / pkg).glob("*.pyx"))
    if not pyx:
        return []
    import numpy
    from Cython.Build import cythonize

    debug = os.environ.get("FEUDO_DEBUG", "") not in ("", "0")
    directives = {
        "language_level": 3,
        "boundscheck": debug,
        "wraparound": debug,
        "initializedcheck": debug,
        "cdivision": not debug,
    }
    exts = [
        Extension(
            f"{p.parent.name}.{p.stem}",
            [str(p.relative_to(HERE))],
            include_dirs=[numpy.get_include()],
            extra_compile_args=["-O0", "-g"] if debug else ["-O3"],
            define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
        )
        for p in pyx
    ]
    return cythonize(exts, compiler_directives=directives, quiet=True)


def generate_stubs(out_dir: Path) -> list[Path]:
    """Run protoc (grpcio-tools) on every ``proto/**/*.proto``; returns the files written under ``out_dir``."""
    import grpc_tools
    from grpc_tools import protoc

    protos = HERE / "proto"
    files = sorted(str(p.relative_to(protos)) for p in protos.rglob("*.proto"))
    if not files:
        return []
    out_dir.mkdir(parents=True, exist_ok=True)
    well_known = Path(grpc_tools.__file__).resolve().parent / "_proto"
    args = ["grpc_tools.protoc", f"-I{protos}", f"-I{well_known}", f"--python_out={out_dir}",
            f"--grpc_python_out={out_dir}", f"--pyi_out={out_dir}", *files]
    if protoc.main(args) != 0:
        raise RuntimeError(f"protoc failed on {', '.join(files)}")
    written = []
    for f in files:
        stem = Path(f).with_suffix("")
        written += [out_dir / f"{stem}_pb2.py", out_dir / f"{stem}_pb2_grpc.py", out_dir / f"{stem}_pb2.pyi"]
    return written


class BuildPyWithStubs(build_py):
    """``build_py`` that generates the protobuf stubs first (into the source tree for editable installs)."""

    def run(self) -> None:
        editable = bool(getattr(self, "editable_mode", False))
        self._stubs = generate_stubs(HERE if editable else Path(self.build_lib))
        super().run()

    def get_outputs(self, include_bytecode: bool = True) -> list[str]:
        return super().get_outputs(include_bytecode) + [str(p) for p in getattr(self, "_stubs", [])]


setup(ext_modules=extensions(), cmdclass={"build_py": BuildPyWithStubs})
