"""Build script: compiles the Cython extensions (engine core, search core) during the package build.

Set ``FEUDO_DEBUG=1`` to build with Cython bounds checks, wrap-around and initialisation checks on (the
tests of the core are meant to be run against such a build too). No generated ``.c`` file is committed.
"""

import os
from pathlib import Path

from setuptools import Extension, setup

HERE = Path(__file__).resolve().parent


def extensions():
    pyx = sorted(p for pkg in ("engine", "feudo_ai") for p in (HERE / pkg).glob("*.pyx"))
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


setup(ext_modules=extensions())
