#!/usr/bin/env bash
# Installs what Arktos needs on a fresh Debian machine, skipping what is
# already there: libzmq and libhdf5 (Debian packages), Go modules, a pinned staticcheck,
# and a Python virtual environment .venv with the arktos package (editable)
# and its test tools.
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
dpkg -s libzmq3-dev >/dev/null 2>&1 || need_apt+=(libzmq3-dev)
# libhdf5 (the serial build, with its pkg-config file): hdf5io's cgo binding.
dpkg -s libhdf5-dev >/dev/null 2>&1 || need_apt+=(libhdf5-dev)
command -v pkg-config >/dev/null 2>&1 || need_apt+=(pkg-config)
command -v gcc >/dev/null 2>&1 || need_apt+=(gcc)
python3 -c 'import venv, ensurepip' >/dev/null 2>&1 || need_apt+=(python3-venv)
if ((${#need_apt[@]})); then
  echo "setup: installing Debian packages: ${need_apt[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

if ! command -v go >/dev/null 2>&1; then
  echo "setup: Go is not installed; install Go 1.26 or newer (https://go.dev/doc/install) and run again" >&2
  exit 1
fi
go mod download

# staticcheck, pinned (make staticcheck finds it in GOBIN, else GOPATH/bin).
staticcheck_version=v0.8.2
gobin=$(go env GOBIN)
[ -n "$gobin" ] || gobin="$(go env GOPATH | cut -d: -f1)/bin"
if ! "$gobin/staticcheck" -version 2>/dev/null | grep -qF "(${staticcheck_version#v})"; then
  echo "setup: installing staticcheck $staticcheck_version into $gobin"
  go install "honnef.co/go/tools/cmd/staticcheck@$staticcheck_version"
fi

stamp=.venv/.arktos-setup
if [ ! -x .venv/bin/python ] || [ python/pyproject.toml -nt "$stamp" ]; then
  echo "setup: preparing the Python environment in .venv"
  [ -x .venv/bin/python ] || python3 -m venv .venv
  .venv/bin/python -m pip install -q --upgrade pip
  .venv/bin/python -m pip install -q -e 'python[test,notebook]'
  touch "$stamp"
fi
