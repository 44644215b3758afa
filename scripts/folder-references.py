#!/usr/bin/env python3
"""Counts references between the folders of Sources/LiveObjects: for each folder, how many
times its files name a type declared in another folder. A rough picture of the layering
(ARCHITECTURE.md): names are matched as words, comments are skipped, and a name declared in
two folders counts for the first one found.

    scripts/folder-references.py            # every pair of folders
    scripts/folder-references.py Store      # what Store/ refers to
    scripts/folder-references.py Store -v   # the same, with the names
"""
import collections
import glob
import re
import sys

ROOT = "Sources/LiveObjects"
DECLARATION = re.compile(
    r"^\s*(?:@\w+(?:\([^)]*\))?\s+)*(?:(?:public|package|internal|private|fileprivate|final|indirect)\s+)*"
    r"(?:class|struct|enum|protocol|actor|typealias)\s+(\w+)",
    re.M,
)


def main():
    only = sys.argv[1] if len(sys.argv) > 1 else None
    verbose = "-v" in sys.argv
    files = collections.defaultdict(list)
    for path in sorted(glob.glob(ROOT + "/**/*.swift", recursive=True)):
        files[path[len(ROOT) + 1 :].split("/")[0]].append(path)
    owner = {}
    for folder, paths in sorted(files.items()):
        for path in paths:
            for name in DECLARATION.findall(open(path).read()):
                owner.setdefault(name, folder)
    counts = collections.Counter()
    names = collections.Counter()
    for folder, paths in files.items():
        if only and folder != only:
            continue
        for path in paths:
            text = re.sub(r"//.*", "", open(path).read())
            for word in re.findall(r"\b[A-Z]\w*\b", text):
                target = owner.get(word)
                if target and target != folder:
                    counts[(folder, target)] += 1
                    names[(folder, target, word)] += 1
    for (source, target), n in sorted(counts.items()):
        print(f"{source:14} -> {target:14} {n:5}")
        if verbose:
            for (s, t, word), m in sorted(names.items()):
                if (s, t) == (source, target):
                    print(f"{'':18}{word} {m}")


if __name__ == "__main__":
    main()
