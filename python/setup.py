"""Build hook: bundle arktos-server with the package.

``pip install ./python`` (a regular, non-editable install from the source
checkout) runs ``go build`` on ``../cmd/arktos-server`` and puts the binary
at ``arktos/bin/arktos-server`` inside the package, so that one install gives
client and server (``ak.Server()``, ``ak.connect(start_server=True)``). When
Go or the Go sources are missing (an sdist, a machine without Go) the
package is built without the binary and says so; ak.Server() then looks in
$ARKTOS_SERVER_BIN and on PATH. Editable installs (``pip install -e``) build
nothing: they use ``bin/arktos-server`` of the checkout (``make build``).

Set ARKTOS_SKIP_SERVER_BUILD=1 to skip the Go build, ARKTOS_REQUIRE_SERVER_BUILD=1
to fail when it cannot run.

Everything else about the package is in pyproject.toml.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
SERVER_PKG = "./cmd/arktos-server"


def _go() -> str | None:
    go = shutil.which("go")
    if go is None and Path("/usr/local/go/bin/go").is_file():
        go = "/usr/local/go/bin/go"
    return go


def _can_build_server() -> bool:
    if os.environ.get("ARKTOS_SKIP_SERVER_BUILD") == "1":
        return False
    return _go() is not None and (REPO / "go.mod").is_file() and (REPO / "cmd" / "arktos-server").is_dir()


class BuildPyWithServer(build_py):
    """build_py, then ``go build`` the server into the built package."""

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return  # editable installs use bin/ of the checkout
        reason = None
        if os.environ.get("ARKTOS_SKIP_SERVER_BUILD") == "1":
            reason = "ARKTOS_SKIP_SERVER_BUILD=1"
        elif _go() is None:
            reason = "Go is not installed (https://go.dev/doc/install)"
        elif not (REPO / "go.mod").is_file():
            reason = f"the Go sources are not at {REPO} (building from an sdist?)"
        if reason is not None:
            message = (f"arktos: not bundling arktos-server: {reason}; ak.Server() will look "
                       "for it in $ARKTOS_SERVER_BIN and on PATH")
            if os.environ.get("ARKTOS_REQUIRE_SERVER_BUILD") == "1":
                raise RuntimeError(message)
            print(message)
            return
        target = Path(self.build_lib).resolve() / "arktos" / "bin" / "arktos-server"
        target.parent.mkdir(parents=True, exist_ok=True)
        command = [str(_go()), "build", "-o", str(target), SERVER_PKG]
        print(f"arktos: bundling the server: {' '.join(command)} (in {REPO})")
        env = dict(os.environ)
        env.setdefault("CGO_ENABLED", "1")  # libzmq through cgo
        env.setdefault("GOEXPERIMENT", "simd")  # the AVX-512 kernels, as the Makefile builds (ops/simd_amd64.go)
        subprocess.run(command, cwd=REPO, env=env, check=True)


class BinaryDistribution(Distribution):
    """A wheel holding a native binary is platform-specific."""

    def has_ext_modules(self) -> bool:
        return _can_build_server()


setup(cmdclass={"build_py": BuildPyWithServer}, distclass=BinaryDistribution)
