#!/usr/bin/env bash
# Profiles one workload of one system with perf (CPU-clock sampling, call graphs) and prints
# where the time inside the workload goes: self time and inclusive time per function.
#
#   Benchmarks/Scripts/profile.sh WORKLOAD [SYSTEM] [N] [RUNS]
#   Benchmarks/Scripts/profile.sh pk_lookup liveobjects 1000000 10
#
# Needs perf and python3. Only samples whose stack passes through the system's method for
# the workload are counted, so data generation and loading do not show.
set -euo pipefail
workload=${1:?workload}
system=${2:-liveobjects}
n=${3:-1000000}
runs=${4:-10}
here=$(cd "$(dirname "$0")" && pwd)
bench="$here/../.build/release/liveobjects-bench"
swift build -c release --package-path "$here/.." >/dev/null
# The method name as it appears in the mangled symbol of the system's class.
case "$workload" in
  insert_all) method=6insert ;;
  pk_lookup) method=pkLookup ;;
  filter_unindexed) method=filterUnindexed ;;
  filter_indexed_eq) method=filterIndexedEq ;;
  indexed_eq_count) method=indexedEqCount ;;
  to_many) method=toMany ;;
  inverse) method=C7inverse ;;
  freeze) method=C6freeze ;;
  save) method=C4save ;;
  # LiveObjects' timed part of load is Realm.open, which runs as a task of its own: the samples
  # under loadFile are the untimed reading of the objects afterwards.
  load) if [ "$system" = liveobjects ]; then method=11FileStorageC4open_13configuration; else method=loadFile; fi ;;
  *) echo "no profile pattern for $workload" >&2; exit 2 ;;
esac
data=$(mktemp)
trap 'rm -f "$data"' EXIT
perf record -q -F 1500 -g -o "$data" "$bench" --n "$n" --runs "$runs" --filter "$workload" --system "$system" >/dev/null
perf script -i "$data" 2>/dev/null | python3 "$here/fold.py" "$method" 25
