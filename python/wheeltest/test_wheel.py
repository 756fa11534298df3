"""The self-contained wheel (make wheel) installs and runs where nothing else is.

Run by ``make wheeltest`` after ``make wheel``: it checks that the bundled
arktos-server loads nothing but glibc's libraries, that auditwheel agrees with
the wheel's manylinux tag, and that the wheel installed into a fresh virtual
environment (no Go on PATH, no ARKTOS_SERVER_BIN, outside the checkout)
starts its own server and uploads, computes, groups and downloads with it;
the arkouda compatibility wheel beside it too.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DIST = REPO / "dist"
# glibc's own libraries (and the dynamic loader): what a manylinux system has.
GLIBC_LIBS = {"libc.so.6", "libm.so.6", "libpthread.so.0", "libdl.so.2", "librt.so.1",
              "ld-linux-x86-64.so.2"}


def _wheel(pattern: str) -> Path:
    found = sorted(DIST.glob(pattern))
    if len(found) != 1:
        pytest.fail(f"expected one {pattern} in {DIST} (make wheel builds it), found {found}")
    return found[0]


@pytest.fixture(scope="module")
def server_wheel() -> Path:
    return _wheel("arktos-*-py3-none-manylinux_*_x86_64.whl")


@pytest.fixture(scope="module")
def bundled_server(server_wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("unzipped")
    with zipfile.ZipFile(server_wheel) as whl:
        info = whl.getinfo("arktos/bin/arktos-server")
        path = Path(whl.extract(info, out))
        assert (info.external_attr >> 16) & 0o111, "the bundled server is not executable in the wheel"
    path.chmod(0o755)
    return path


def test_server_needs_only_glibc(bundled_server: Path) -> None:
    dynamic = subprocess.run(["readelf", "-d", str(bundled_server)], check=True,
                             capture_output=True, text=True).stdout
    needed = set(re.findall(r"\(NEEDED\).*\[(.+)\]", dynamic))
    assert needed and needed <= GLIBC_LIBS, f"arktos-server needs {sorted(needed - GLIBC_LIBS)}"
    # ldd: what the loader would really map, transitively.
    ldd = subprocess.run(["ldd", str(bundled_server)], check=True, capture_output=True, text=True).stdout
    loaded = {line.split()[0].rsplit("/", 1)[-1] for line in ldd.splitlines() if line.strip()}
    assert loaded - {"linux-vdso.so.1"} <= GLIBC_LIBS, ldd


def test_auditwheel_agrees_with_the_tag(server_wheel: Path) -> None:
    auditwheel = Path(sys.executable).with_name("auditwheel")
    shown = subprocess.run([str(auditwheel), "show", str(server_wheel)], check=True,
                           capture_output=True, text=True).stdout
    tag = re.search(r"(manylinux_\d+_\d+_x86_64)\.whl$", server_wheel.name)
    assert tag is not None
    assert f'platform tag: "{tag.group(1)}"' in " ".join(shown.split()), shown


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


USE = textwrap.dedent("""
    import shutil, sys
    import numpy as np
    import arktos as ak
    assert shutil.which("go") is None, "go is on PATH"
    assert "/site-packages/" in ak.__file__, ak.__file__
    binary = ak.find_server_binary()
    assert str(binary).startswith(sys.prefix), binary  # the wheel's own server
    ak.connect(start_server=True)
    keys = np.arange(1_000_000, dtype=np.int64) % 1000
    vals = np.linspace(0.0, 1.0, 1_000_000)
    k, v = ak.array(keys), ak.array(vals)
    doubled = (v * 2.0).to_ndarray()
    assert np.array_equal(doubled, vals * 2.0)
    uk, sums = ak.GroupBy(k).sum(v)
    want = np.zeros(1000)
    np.add.at(want, keys, vals)
    assert np.array_equal(uk.to_ndarray(), np.arange(1000))
    assert np.allclose(sums.to_ndarray(), want, rtol=1e-12, atol=0)
    assert ak.get_config()["numLocales"] == 1
    import arkouda
    assert arkouda.array([1, 2, 3]).sum() == 6
    ak.shutdown()
    print("wheel ok", binary)
""")


def test_wheel_runs_in_a_fresh_venv_without_go(server_wheel: Path, tmp_path: Path) -> None:
    compat = _wheel("arktos_arkouda-*-py3-none-any.whl")
    venv = tmp_path / "venv"
    base = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    subprocess.run([str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check",
                    str(server_wheel), str(compat)], check=True, timeout=600)
    go = shutil.which("go")
    path = [p for p in os.environ.get("PATH", "").split(os.pathsep)
            if p and not (Path(p) / "go").exists()]
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("ARKTOS_", "PYTHON", "GO", "CGO_", "VIRTUAL_ENV"))}
    env.update(PATH=os.pathsep.join([str(venv / "bin"), *path]), ARKTOS_PROGRESS="0",
               ARKTOS_URL=f"tcp://127.0.0.1:{_free_port()}")
    assert go is None or Path(go).parent.as_posix() not in env["PATH"].split(os.pathsep)
    run = subprocess.run([str(python), "-c", USE], cwd=tmp_path, env=env, capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "wheel ok" in run.stdout
