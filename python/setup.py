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
to fail when it cannot run. ``make wheel`` (scripts/wheel.sh) sets
ARKTOS_BUNDLE_SERVER to a server it linked statically, which is copied in
instead of built, and ARKTOS_WHEEL_PLATFORM to the manylinux tag it read off
that binary. A wheel with a bundled server is tagged py3-none-<platform>: it
holds a program, not an extension module, so any CPython 3 can use it.

Everything else about the package is in pyproject.toml.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from setuptools import setup
from setuptools.command.bdist_wheel import bdist_wheel
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


def _prebuilt() -> Path | None:
    """The server make wheel built, when it asks for that one to be bundled."""
    path = os.environ.get("ARKTOS_BUNDLE_SERVER")
    if not path:
        return None
    binary = Path(path)
    if not (binary.is_file() and os.access(binary, os.X_OK)):
        raise RuntimeError(f"ARKTOS_BUNDLE_SERVER is {path!r}, which is not an executable file")
    return binary


def _can_build_server() -> bool:
    if _prebuilt() is not None:
        return True
    if os.environ.get("ARKTOS_SKIP_SERVER_BUILD") == "1":
        return False
    return _go() is not None and (REPO / "go.mod").is_file() and (REPO / "cmd" / "arktos-server").is_dir()


class BuildPyWithServer(build_py):
    """build_py, then ``go build`` the server into the built package."""

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return  # editable installs use bin/ of the checkout
        target = Path(self.build_lib).resolve() / "arktos" / "bin" / "arktos-server"
        prebuilt = _prebuilt()
        if prebuilt is not None:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(prebuilt, target)
            print(f"arktos: bundling the server built by make wheel: {prebuilt}")
            return
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


class BdistWheelProgram(bdist_wheel):
    """Tags a wheel that bundles the server py3-none-<platform>."""

    def get_tag(self) -> tuple[str, str, str]:
        python, abi, platform = super().get_tag()
        if not _can_build_server():
            return python, abi, platform
        return "py3", "none", os.environ.get("ARKTOS_WHEEL_PLATFORM") or platform


setup(cmdclass={"build_py": BuildPyWithServer, "bdist_wheel": BdistWheelProgram},
      distclass=BinaryDistribution)
