#!/bin/bash
# Lane round trips with and without polling, quiet and beside two busy loops
# (docs/protocol.md, "Polling"): this tree (polling with back-off), this
# tree with ARKTOS_LANE_SPIN=0, and an older tree in $OLD (default
# /tmp/old; made with `git worktree add /tmp/old e366cb3` and
# `make build`, which builds with GOEXPERIMENT=simd there), two rounds.
# Prints the lane lines of each run; the full logs stay in /tmp/lat-*.log.
set -u
cd "$(dirname "$0")/../.."
OLD=${OLD:-/tmp/old}
PY=.venv/bin/python
for round in 1 2; do
 for load in quiet busy; do
  for cfg in new off old; do
   [ "$cfg" = old ] && [ ! -d "$OLD" ] && continue
   if [ "$load" = busy ]; then yes > /dev/null & Y1=$!; yes > /dev/null & Y2=$!; sleep 0.5; fi
   log=/tmp/lat-$round-$load-$cfg
   case $cfg in
    new) $PY bench/transfer/run.py --latency-only --out "$log" > "$log.log" 2>&1 ;;
    off) ARKTOS_LANE_SPIN=0 $PY bench/transfer/run.py --latency-only --out "$log" > "$log.log" 2>&1 ;;
    old) PYTHONPATH="$OLD/python/src" $PY "$OLD/bench/transfer/run.py" --latency-only --out "$log" > "$log.log" 2>&1 ;;
   esac
   if [ "$load" = busy ]; then kill $Y1 $Y2; wait $Y1 $Y2 2>/dev/null; fi
   echo "== $round $load $cfg"
   grep -E "get_config \(lane\)|reduce sum \(1000 int64, lane\)|raw zmq echo|upload 100 int64 \(lane\)" "$log.log" |
     sed -E 's/- Small request round trip from //; s/ \(2000 requests.*//'
  done
 done
done
