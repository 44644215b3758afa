"""Reads `perf script` output; for the samples whose call stack contains PATTERN, prints the
functions with the most self time and the most inclusive time (names demangled)."""
import collections
import subprocess
import sys

pattern = sys.argv[1]
top = int(sys.argv[2]) if len(sys.argv) > 2 else 25

samples, current = [], None
for line in sys.stdin:
    line = line.rstrip("\n")
    if not line.strip():
        if current is not None:
            samples.append(current)
        current = None
        continue
    if not line.startswith((" ", "\t")):
        current = []
        continue
    fields = line.strip().split(" ", 1)
    symbol = fields[1] if len(fields) > 1 else "?"
    symbol = symbol.rsplit(" (", 1)[0]
    if "+0x" in symbol:
        symbol = symbol.rsplit("+0x", 1)[0]
    if current is not None:
        current.append(symbol)
if current:
    samples.append(current)

selected = [s for s in samples if s and any(pattern in frame for frame in s)]
if not selected:
    sys.exit(f"no sample has '{pattern}' on its stack")
self_time = collections.Counter(s[0] for s in selected)
inclusive = collections.Counter()
for s in selected:
    for frame in set(s):
        inclusive[frame] += 1
names = sorted(set(self_time) | {f for f, _ in inclusive.most_common(top)})
try:
    demangled = subprocess.run(
        ["swift", "demangle", "--simplified"], input="\n".join(names), capture_output=True, text=True
    ).stdout.split("\n")
except OSError:
    demangled = names
readable = dict(zip(names, demangled))
total = len(selected)
print(f"{total} of {len(samples)} samples are inside '{pattern}'")
print("self time:")
for frame, count in self_time.most_common(top):
    print(f"  {100 * count / total:5.1f}%  {readable.get(frame, frame)[:140]}")
print("inclusive time:")
for frame, count in inclusive.most_common(top):
    print(f"  {100 * count / total:5.1f}%  {readable.get(frame, frame)[:140]}")
