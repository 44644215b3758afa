#!/bin/sh
# The latency from a commit returning in one process to the change set arriving in another
# process that has the same file open: the crash child's `pace` mode writes, its `follow` mode
# listens. Usage: scripts/multiprocess-latency.sh [debug|release] [STEPS]
set -eu
configuration=${1:-release}
steps=${2:-300}
swift build -c "$configuration" --product persistence-crash-child >/dev/null
child="$(swift build -c "$configuration" --show-bin-path)/persistence-crash-child"
directory=$(mktemp -d)
trap 'rm -rf "$directory"' EXIT
file="$directory/latency.json"
"$child" "$file" pace 1 >/dev/null
mkfifo "$directory/hold"
"$child" "$file" follow >"$directory/follow.out" <"$directory/hold" &
follower=$!
exec 3>"$directory/hold"
while ! grep -q open "$directory/follow.out" 2>/dev/null; do sleep 0.05; done
"$child" "$file" pace "$steps" >"$directory/pace.out"
sleep 0.5
kill "$follower"
python3 - "$directory/pace.out" "$directory/follow.out" <<'PY'
import sys
acks = [int(l.split()[2]) for l in open(sys.argv[1]) if l.startswith("ack ")]
seen = {}
for l in open(sys.argv[2]):
    if l.startswith("seen "):
        count, t = map(int, l.split()[1:3])
        seen.setdefault(count, t)
# The k-th write makes 1 + k entries (the first run wrote one).
lat = sorted((seen[k + 2] - t) / 1e6 for k, t in enumerate(acks) if k + 2 in seen)
if not lat:
    sys.exit("no change set arrived")
print(f"{len(lat)} of {len(acks)} commits seen; latency ms: min {lat[0]:.3f}, median {lat[len(lat)//2]:.3f}, "
      f"p99 {lat[min(len(lat)-1, int(len(lat)*0.99))]:.3f}, max {lat[-1]:.3f}")
PY
