#!/usr/bin/env bash
# Runs a short fuzzing session of every Go fuzz target (make fuzz): the
# targets are found with go test -list, so a new Fuzz function is fuzzed
# without being named here.
#
#   scripts/fuzz.sh                 each target for FUZZTIME (30s)
#   FUZZTIME=5s scripts/fuzz.sh     a quick pass
#   scripts/fuzz.sh FuzzLane ...    only the targets named
#
# Minimizing is capped at 2 s an input: by default Go minimizes each new
# interesting input for up to 60 s, and with FuzzDirectReader's 20 KB Parquet
# seeds that took a whole 30 s session (it looked like a stall at 16 execs).
# FuzzDirectReader gets twice FUZZTIME by default (FUZZTIME_FuzzDirectReader)
# for the same large seeds.
set -euo pipefail
cd "$(dirname "$0")/.."
export GOEXPERIMENT="${GOEXPERIMENT:-simd}"
fuzztime="${FUZZTIME:-30s}"
slow="$fuzztime"
[[ "$fuzztime" =~ ^([0-9]+)s$ ]] && slow="$((BASH_REMATCH[1] * 2))s"
: "${FUZZTIME_FuzzDirectReader:=$slow}"

# go test -list prints a package's matching names, then "ok <package> ...".
list=$(go test -list '^Fuzz' ./...)
targets=() names=()
while read -r first second _; do
  case "$first" in
    Fuzz*) names+=("$first") ;;
    ok)
      for n in "${names[@]}"; do targets+=("$second $n"); done
      names=()
      ;;
  esac
done <<<"$list"
if ((${#targets[@]} == 0)); then
  echo "fuzz: no fuzz targets found" >&2
  exit 1
fi

for t in "${targets[@]}"; do
  pkg=${t% *} name=${t#* }
  if (($#)) && [[ " $* " != *" $name "* ]]; then
    continue
  fi
  v="FUZZTIME_$name"
  d="${!v:-$fuzztime}"
  echo "fuzz: $name ($pkg) for $d"
  go test -run '^$' -fuzz "^$name\$" -fuzztime "$d" -fuzzminimizetime 2s "$pkg"
done
