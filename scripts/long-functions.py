#!/usr/bin/env python3
"""Lists the long function bodies of Swift files: every `func`, `init`, `deinit`, `subscript`,
accessor (`get`, `set`, `willSet`, `didSet`, `_read`, `_modify`) and computed property (its
implicit getter) whose body is longer than a limit, longest first.

A body's length is the number of lines from its opening brace to its closing brace, both
included. Comments and string literals (multi-line and raw strings, with their interpolations)
are skipped, so braces inside them do not count; signatures may span lines and carry generic
clauses, `where` clauses, default values and attributes. A nested function is counted on its
own and as part of the body around it.

    scripts/long-functions.py Sources/LiveObjects                    # bodies over 100 lines
    scripts/long-functions.py --limit 60 Sources/LiveObjectsShell   # over 60 lines
    scripts/long-functions.py --check --limit 100 Sources/liveobj   # exit 1 when one is over

A DIR may also be a single Swift file.
"""
import argparse
import os
import re
import sys

DEFAULT_LIMIT = 100
ACCESSORS = {"get", "set", "willSet", "didSet", "_read", "_modify"}
DECLARATION_WORDS = {
    "func", "init", "deinit", "subscript", "var", "let", "case", "typealias", "associatedtype",
    "class", "struct", "enum", "protocol", "extension", "actor", "import", "static",
}
TYPE_WORDS = {"class", "struct", "enum", "protocol", "extension", "actor"}
TOKEN = re.compile(r"[A-Za-z_][A-Za-z_0-9]*|`[^`]*`|->|[=!<>]=|\S", re.S)


def blank(text):
    """The text with comments and string literals replaced by spaces (line breaks kept)."""
    out = []
    i = 0
    n = len(text)
    # The stack of open string literals: (delimiter, hashes, parenthesis depth of the
    # interpolation being read, or -1 while in the literal itself).
    stack = []

    def keep(ch):
        out.append(ch if ch == "\n" else " ")

    while i < n:
        if stack and stack[-1][2] < 0:
            # Inside a string literal.
            quote, hashes, _ = stack[-1]
            close = quote + "#" * hashes
            if text.startswith(close, i):
                stack.pop()
                for ch in close:
                    keep(ch)
                i += len(close)
                continue
            escape = "\\" + "#" * hashes
            if text.startswith(escape, i):
                j = i + len(escape)
                if j < n and text[j] == "(":
                    # An interpolation: code until the matching parenthesis.
                    stack[-1] = (quote, hashes, 0)
                    for ch in text[i : j + 1]:
                        keep(ch)
                    i = j + 1
                    continue
                for ch in text[i : j + 1]:
                    keep(ch)
                i = j + 1
                continue
            keep(text[i])
            i += 1
            continue
        ch = text[i]
        if text.startswith("//", i):
            while i < n and text[i] != "\n":
                keep(text[i])
                i += 1
            continue
        if text.startswith("/*", i):
            depth = 0
            while i < n:
                if text.startswith("/*", i):
                    depth += 1
                    keep("/")
                    keep("*")
                    i += 2
                elif text.startswith("*/", i):
                    depth -= 1
                    keep("*")
                    keep("/")
                    i += 2
                    if depth == 0:
                        break
                else:
                    keep(text[i])
                    i += 1
            continue
        m = re.match(r'(#*)("""|")', text[i:])
        if m and (ch == '"' or (ch == "#" and not re.match(r"#\w", text[i:]))):
            hashes = len(m.group(1))
            quote = m.group(2)
            for c in m.group(0):
                keep(c)
            i += len(m.group(0))
            stack.append((quote, hashes, -1))
            continue
        if stack:
            # Code inside an interpolation: track its parentheses.
            quote, hashes, depth = stack[-1]
            if ch == "(":
                stack[-1] = (quote, hashes, depth + 1)
            elif ch == ")":
                if depth == 0:
                    stack[-1] = (quote, hashes, -1)
                    keep(ch)
                    i += 1
                    continue
                stack[-1] = (quote, hashes, depth - 1)
        out.append(ch)
        i += 1
    return "".join(out)


def tokens(text):
    """The tokens of blanked text, each with its line number (1-based)."""
    line = 1
    last = 0
    for m in TOKEN.finditer(text):
        line += text.count("\n", last, m.start())
        last = m.start()
        yield m.group(0), line


def bodies(path):
    """(name, first line, body lines) for every body in the file."""
    with open(path, encoding="utf-8") as f:
        toks = list(tokens(blank(f.read())))
    # The matching closing brace of every opening one.
    match = {}
    opened = []
    for index, (tok, _) in enumerate(toks):
        if tok == "{":
            opened.append(index)
        elif tok == "}" and opened:
            match[opened.pop()] = index
    # Enclosing type names, by the index of the brace that opens their body.
    types = {}
    results = []

    def body_start(k):
        """The index of the `{` that opens the body of a declaration whose name ends before
        token k, or None when there is none."""
        depth = 0
        while k < len(toks):
            tok = toks[k][0]
            if tok in "([":
                depth += 1
            elif tok in ")]":
                depth -= 1
            elif depth == 0:
                if tok == "{":
                    return k
                if tok == "}" or tok in DECLARATION_WORDS or tok == "=":
                    return None
            k += 1
        return None

    def owner(k):
        """The dotted names of the types around token k."""
        names = [name for start, name in types.items() if start < k < match.get(start, -1)]
        return ".".join(names)

    for k, (tok, line) in enumerate(toks):
        previous = toks[k - 1][0] if k > 0 else ""
        name = None
        start = None
        if tok in TYPE_WORDS and previous != ".":
            j = k + 1
            parts = []
            while j < len(toks) and (re.match(r"\w", toks[j][0]) or toks[j][0] == "."):
                parts.append(toks[j][0])
                j += 1
            # `class func`, `class var`: members, not a type.
            brace = body_start(j) if parts and parts[0] not in DECLARATION_WORDS else None
            if brace is not None:
                types[brace] = "".join(parts)
            continue
        if tok == "func" and k + 1 < len(toks):
            name = toks[k + 1][0]
            start = body_start(k + 2)
        elif tok in ("init", "deinit", "subscript") and previous != ".":
            name = tok
            start = body_start(k + 1)
        elif tok in ACCESSORS and previous in ("{", "}"):
            # `get {`, `set(newValue) {`, `get async throws {`.
            j = k + 1
            if j < len(toks) and toks[j][0] == "(":
                j += 3
            while j < len(toks) and toks[j][0] in ("async", "throws", "mutating", "nonmutating"):
                j += 1
            if j < len(toks) and toks[j][0] == "{":
                # Named after the property or subscript it belongs to.
                h = k - 1
                while h > 0 and toks[h][0] not in ("var", "subscript"):
                    h -= 1
                holder = toks[h + 1][0] if toks[h][0] == "var" else "subscript"
                name = holder + "." + tok
                start = j
        elif tok == "var" and k + 1 < len(toks):
            # A computed property: `var name: Type {` whose body is not a list of accessors.
            brace = body_start(k + 2)
            if brace is not None and brace + 1 < len(toks) and toks[brace + 1][0] not in ACCESSORS:
                name = toks[k + 1][0]
                start = brace
        if name is None or start is None or start not in match:
            continue
        first = toks[start][1]
        last = toks[match[start]][1]
        around = owner(k)
        results.append(((around + "." if around else "") + name, line, last - first + 1))
    return results


def swift_files(paths):
    for path in paths:
        if os.path.isfile(path):
            yield path
            continue
        for root, dirs, files in os.walk(path):
            dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != ".build")
            for name in sorted(files):
                if name.endswith(".swift"):
                    yield os.path.join(root, name)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--limit", type=int, default=DEFAULT_LIMIT, help="the most lines a body may take")
    parser.add_argument("--check", action="store_true", help="exit 1 when a body is over the limit")
    parser.add_argument("paths", nargs="+", metavar="DIR")
    args = parser.parse_args()
    long = []
    for path in swift_files(args.paths):
        for name, line, length in bodies(path):
            if length > args.limit:
                long.append((length, path, line, name))
    long.sort(key=lambda item: (-item[0], item[1], item[2]))
    for length, path, line, name in long:
        print(f"{path}:{line}: {name}: {length} lines")
    if args.check and long:
        print(f"{len(long)} bodies over {args.limit} lines", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
