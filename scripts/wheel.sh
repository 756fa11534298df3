#!/usr/bin/env bash
# Builds dist/arktos-<version>-py3-none-manylinux_2_<N>_x86_64.whl (and the
# arkouda compatibility wheel beside it): the
# Python client with an arktos-server that needs nothing on the user's
# machine beyond glibc (make wheel; python/wheeltest checks the result).
#
# The server is linked statically against libzmq, libsodium (libzmq's CURVE),
# libstdc++ and libhdf5 with its filters (libsz, libaec, zlib). Debian's own
# libzmq.a cannot be used: it was built with GSSAPI, PGM and NORM, and Debian
# ships no static libgssapi_krb5. So libzmq is built here, from Debian's own
# source package (apt-get source checks it against the signed archive), with
# only what Arktos uses: TCP and IPC, and CURVE through libsodium. The
# manylinux tag is read off the binary: the newest glibc symbol version it
# needs (auditwheel show, in the test, agrees or fails).
#
# Everything it builds stays under build/wheel/ (a second run reuses libzmq);
# the Go build has a cache of its own there, because go build's cache does not
# notice a change of PKG_CONFIG_PATH: sharing it would leave the static flags
# in an ordinary `make build`, or the ordinary ones in the wheel's server.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
work=$repo/build/wheel
zmq_version=4.3.4
mkdir -p "$work" dist

need_apt=()
for pkg in cmake ninja-build libsodium-dev libaec-dev zlib1g-dev libhdf5-dev binutils; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need_apt+=("$pkg")
done
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
if ((${#need_apt[@]})); then
  echo "wheel: installing Debian packages: ${need_apt[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

# libzmq, static, from Debian's source package of the libzmq the rest of
# the project builds against (zeromq3 4.3.4 in bookworm).
prefix=$work/libzmq
if [ ! -f "$prefix/lib/libzmq.a" ]; then
  src=$work/src
  rm -rf "$src" && mkdir -p "$src/lists/partial"
  # Debian's source index, in a private apt state: the machine's own apt
  # configuration is left as it is.
  suite=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")
  cat >"$src/deb-src.sources" <<EOF
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: $suite
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
  apt_src=(-o "Dir::Etc::SourceList=$src/deb-src.sources" -o Dir::Etc::SourceParts=/dev/null
           -o "Dir::State::Lists=$src/lists")
  # (as root, apt would hand the download to its _apt user, who cannot write here)
  [ "$(id -u)" -ne 0 ] || apt_src+=(-o APT::Sandbox::User=root)
  echo "wheel: fetching Debian's libzmq source (zeromq3)"
  apt-get "${apt_src[@]}" update -qq
  (cd "$src" && apt-get "${apt_src[@]}" source --download-only -qq zeromq3)
  tarball=$(ls "$src"/zeromq3_*.orig.tar.gz)
  case "$tarball" in *"_${zmq_version}.orig"*) ;; *)
    echo "wheel: expected libzmq $zmq_version, Debian's source is $tarball" >&2; exit 1 ;;
  esac
  tar -xzf "$tarball" -C "$src"
  echo "wheel: building libzmq $zmq_version (static; TCP, IPC, CURVE with libsodium)"
  cmake -S "$src/libzmq-$zmq_version" -B "$src/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DBUILD_SHARED=OFF -DBUILD_STATIC=ON -DBUILD_TESTS=OFF -DWITH_DOCS=OFF -Wno-dev \
    -DENABLE_CPACK=OFF -DENABLE_DRAFTS=OFF -DWITH_LIBSODIUM=ON -DWITH_LIBSODIUM_STATIC=ON \
    -DENABLE_CURVE=ON -DCMAKE_POSITION_INDEPENDENT_CODE=ON -DCMAKE_INSTALL_PREFIX="$prefix" >"$work/libzmq-cmake.log" 2>&1
  ninja -C "$src/build" install >"$work/libzmq-build.log"
  rm -rf "$src"
fi

# pkg-config files naming the static archives: cgo asks pkg-config for
# libzmq (pebbe/zmq4) and hdf5 (hdf5io), and takes its answer as it is.
lib=/usr/lib/x86_64-linux-gnu
pc=$work/pkgconfig
mkdir -p "$pc"
cat >"$pc/libzmq.pc" <<EOF
Name: libzmq
Description: libzmq $zmq_version, static, with libsodium and libstdc++
Version: $zmq_version
Cflags: -I$prefix/include
Libs: $prefix/lib/libzmq.a $lib/libsodium.a -l:libstdc++.a -lpthread -lrt -lm
EOF
hdf5_version=$(pkg-config --modversion hdf5)
cat >"$pc/hdf5.pc" <<EOF
Name: HDF5
Description: libhdf5 $hdf5_version (Debian's serial build), static, with its filters
Version: $hdf5_version
Cflags: $(pkg-config --cflags hdf5)
Libs: $lib/hdf5/serial/libhdf5.a $lib/libsz.a $lib/libaec.a $lib/libz.a -ldl -lm
EOF

server=$work/arktos-server
echo "wheel: building arktos-server (static libzmq, libhdf5, libstdc++)"
GOCACHE=$work/gocache PKG_CONFIG_PATH=$pc CGO_ENABLED=1 GOEXPERIMENT=simd \
  go build -trimpath -ldflags '-s -w -extldflags "-static-libgcc"' -o "$server" ./cmd/arktos-server

# Only glibc's own libraries may be left to load at run time.
needed=$(readelf -d "$server" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort | tr '\n' ' ')
for so in $needed; do
  case "$so" in libc.so.6|libm.so.6|libpthread.so.0|libdl.so.2|librt.so.1|ld-linux-x86-64.so.2) ;; *)
    echo "wheel: arktos-server still needs $so at run time (needs: $needed)" >&2; exit 1 ;;
  esac
done
glibc=$(objdump -T "$server" | grep -o 'GLIBC_2\.[0-9]*' | sort -uV | tail -1)
platform="manylinux_2_${glibc#GLIBC_2.}_x86_64"
echo "wheel: arktos-server needs only $needed(newest symbol $glibc): $platform"

# The wheel: setup.py copies the binary in (ARKTOS_BUNDLE_SERVER) instead of
# running go build, and tags the wheel py3-none-$platform (the package has no
# extension module: any CPython 3 can use it).
# The arkouda compatibility package (pure Python) goes beside it.
python=${PYTHON:-.venv/bin/python}
rm -f dist/arktos-*.whl dist/arktos_arkouda-*.whl
ARKTOS_BUNDLE_SERVER=$server ARKTOS_WHEEL_PLATFORM=$platform \
  "$python" -m pip wheel -q --no-deps -w dist ./python
"$python" -m pip wheel -q --no-deps -w dist ./python/compat
rm -rf python/build python/compat/build
ls dist/arktos-*-py3-none-"$platform".whl dist/arktos_arkouda-*-py3-none-any.whl
