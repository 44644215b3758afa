#!/usr/bin/env python3
"""Counts references between the folders of Sources/LiveObjects and Sources/LiveObjectsStore (the
bottom layers, a target of their own; folder names are unique across the two): for each folder, how many
times its files name a type declared in another folder. A rough picture of the layering
(ARCHITECTURE.md): names are matched as words, comments and string literals are skipped.

Only top-level declarations (not indented: `class`, `open class`, `struct`, `enum`,
`protocol`, `actor`, `typealias`, with any attributes and modifiers) name a folder's types; a
nested type is reached through its outer type's name, which is counted. A name declared at the
top level of two folders is ambiguous: it counts for neither, and `-v` lists it.

    scripts/folder-references.py                    # every pair of folders
    scripts/folder-references.py Store              # what Store/ refers to
    scripts/folder-references.py Store -v           # the same, with the names
    scripts/folder-references.py --check BASELINE   # fail on a pair of folders not in BASELINE
    scripts/folder-references.py --write BASELINE   # write the pairs as they are now

The baseline (scripts/folder-references.baseline) lists the pairs that exist today, one
"source -> target" per line; --check fails when a folder starts to refer to a folder it did
not refer to before (a new edge, which ARCHITECTURE.md's "may use" column must allow first).
"""
import collections
import glob
import re
import sys

ROOTS = ["Sources/LiveObjectsStore", "Sources/LiveObjects"]
DECLARATION = re.compile(
    r"^(?:@[\w.]+(?:\([^)]*\))?\s+)*"
    r"(?:(?:public|package|internal|private|fileprivate|final|open|indirect|nonisolated)\s+)*"
    r"(?:class|struct|enum|protocol|actor|typealias)\s+(\w+)",
    re.M,
)
COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
STRING = re.compile(r'"""(?:.|\n)*?"""|"(?:\\.|[^"\\\n])*"')


def count():
    files = collections.defaultdict(list)
    for root in ROOTS:
        for path in sorted(glob.glob(root + "/**/*.swift", recursive=True)):
            files[path[len(root) + 1 :].split("/")[0]].append(path)
    owners = collections.defaultdict(set)
    for folder, paths in sorted(files.items()):
        for path in paths:
            for name in DECLARATION.findall(COMMENT.sub("", open(path).read())):
                owners[name].add(folder)
    ambiguous = sorted(name for name, folders in owners.items() if len(folders) > 1)
    counts = collections.Counter()
    names = collections.Counter()
    for folder, paths in files.items():
        for path in paths:
            text = STRING.sub('""', COMMENT.sub("", open(path).read()))
            for word in re.findall(r"\b[A-Z]\w*\b", text):
                folders = owners.get(word)
                if not folders or len(folders) > 1 or folder in folders:
                    continue
                (target,) = folders
                counts[(folder, target)] += 1
                names[(folder, target, word)] += 1
    return counts, names, ambiguous, owners


def main():
    args = sys.argv[1:]
    counts, names, ambiguous, owners = count()
    if args and args[0] in ("--check", "--write"):
        baseline_path = args[1]
        pairs = sorted(counts)
        if args[0] == "--write":
            with open(baseline_path, "w") as f:
                f.write("# Pairs of folders of Sources/LiveObjects(Store) where the first refers to the second\n")
                f.write("# (scripts/folder-references.py --write). A new pair fails CI: allow it in\n")
                f.write("# ARCHITECTURE.md first, then write the baseline again.\n")
                for source, target in pairs:
                    f.write(f"{source} -> {target}\n")
            return
        known = set()
        for line in open(baseline_path):
            line = line.strip()
            if line and not line.startswith("#"):
                source, target = (part.strip() for part in line.split("->"))
                known.add((source, target))
        new = [pair for pair in pairs if pair not in known]
        for source, target in new:
            words = sorted(w for (s, t, w) in names if (s, t) == (source, target))
            print(f"error: {source}/ now refers to {target}/ ({', '.join(words)}), which {baseline_path} does not list")
        if new:
            sys.exit(1)
        print(f"{len(pairs)} pairs of folders, none new")
        return
    only = args[0] if args and not args[0].startswith("-") else None
    verbose = "-v" in args
    for (source, target), n in sorted(counts.items()):
        if only and source != only:
            continue
        print(f"{source:14} -> {target:14} {n:5}")
        if verbose:
            for (s, t, word), m in sorted(names.items()):
                if (s, t) == (source, target):
                    print(f"{'':18}{word} {m}")
    if verbose and ambiguous:
        print("declared at the top level of two folders (not counted):")
        for name in ambiguous:
            print(f"  {name}: {', '.join(sorted(owners[name]))}")


if __name__ == "__main__":
    main()
