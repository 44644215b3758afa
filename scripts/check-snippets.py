#!/usr/bin/env python3
"""Checks that every Swift block of the documentation compiles and, when it is a program, runs.

Every ```swift block of README.md, docs/*.md and the DocC catalogs (Sources/*/*.docc/**/*.md)
becomes one executable target of the nested package Examples/Snippets (its Package.swift and
Sources/ are written by this script and not committed). The package depends on this one by path,
is built with warnings as errors, and every snippet is run; a snippet that fails to build, exits
with a non-zero status or prints something other than its stated output fails the check.

A snippet is the block alone, so it must be complete (imports, models). An HTML comment right
before the block (blank lines allowed in between) changes that:

    <!-- snippet: continues -->            the block continues the previous Swift block of the
                                           same file: that block's code comes first
    <!-- snippet: name history -->         names the block, so that a later one can say
    <!-- snippet: continues history -->    which block it continues (in any documentation file)
    <!-- snippet: output -->               the next fenced block after this one (```text) is
                                           exactly what the program prints
    <!-- snippet: no-run -->               compile only (declarations, or a program that needs
                                           something the documentation does not give it)
    <!-- snippet: skip -->                 not a snippet (a fragment that cannot compile)
    <!-- snippet: fails -->                the block must NOT compile: the next fenced block
                                           (```text) holds text that one of the compiler's errors
                                           says, and every error must be in the block's own lines
                                           (the documentation of a compiler message and its fix)

Options combine: `<!-- snippet: name sync, continues history, output -->`.

    scripts/check-snippets.py               # extract, build, run
    scripts/check-snippets.py --list        # the snippets with their file and line
    scripts/check-snippets.py --extract     # only write the package's sources
    scripts/check-snippets.py README_7      # build and run the snippets whose target starts so
"""
import glob
import os
import re
import shutil
import subprocess
import sys
import time

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
PACKAGE = os.path.join(ROOT, "Examples", "Snippets")
FENCE = re.compile(r"^(\s*)(```+)\s*(\S*)\s*$")
MARKER = re.compile(r"^\s*<!--\s*snippet:\s*(.*?)\s*-->\s*$")
RUN_TIMEOUT = 60


class Snippet:
    def __init__(self, path, line, code, options):
        self.path = path
        self.line = line
        self.code = code
        self.options = options
        self.name = None
        self.continues = None
        self.output = None
        self.error = None
        self.target = None

    @property
    def location(self):
        return f"{os.path.relpath(self.path, ROOT)}:{self.line}"


def documentation_files():
    files = [os.path.join(ROOT, "README.md")]
    files += sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))
    files += sorted(glob.glob(os.path.join(ROOT, "Sources", "*", "*.docc", "**", "*.md"), recursive=True))
    return files


def parse_options(text, location):
    options = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        words = item.split()
        if words[0] in ("continues", "name") and len(words) <= 2:
            options[words[0]] = words[1] if len(words) == 2 else "previous"
        elif words[0] in ("output", "no-run", "skip", "fails") and len(words) == 1:
            options[words[0]] = True
        else:
            sys.exit(f"{location}: unknown snippet option '{item}'")
    if options.get("fails") and ("output" in options or "no-run" in options or "name" in options):
        sys.exit(f"{location}: a snippet that fails has no output, runs not and is continued by none")
    if options.get("name") == "previous":
        sys.exit(f"{location}: 'name' needs a name")
    return options


def fenced_blocks(path):
    """The fenced blocks of a file: (info string, text, options of the marker before it, line)."""
    lines = open(path, encoding="utf-8").read().split("\n")
    blocks = []
    marker = None
    index = 0
    while index < len(lines):
        line = lines[index]
        match = MARKER.match(line)
        fence = FENCE.match(line)
        if match:
            marker = (index + 1, match.group(1))
        elif fence:
            indent, ticks, info = fence.groups()
            start = index + 1
            body = []
            index += 1
            while index < len(lines) and not lines[index].strip().startswith(ticks):
                text = lines[index]
                body.append(text[len(indent) :] if text.startswith(indent) else text.lstrip())
                index += 1
            options = parse_options(marker[1], f"{os.path.relpath(path, ROOT)}:{marker[0]}") if marker else {}
            blocks.append((info, "\n".join(body), options, start))
            marker = None
        elif line.strip():
            marker = None
        index += 1
    return blocks


def collect():
    snippets = []
    names = {}
    for path in documentation_files():
        blocks = fenced_blocks(path)
        previous = None
        for position, (info, text, options, line) in enumerate(blocks):
            if info != "swift":
                continue
            snippet = Snippet(path, line, text, options)
            if options.get("skip"):
                continue
            if "output" in options or "fails" in options:
                following = blocks[position + 1] if position + 1 < len(blocks) else None
                kind = "output" if "output" in options else "fails"
                if following is None or following[0] == "swift" or not following[1].strip():
                    sys.exit(f"{snippet.location}: '{kind}' but no text block follows")
                if kind == "output":
                    snippet.output = following[1]
                else:
                    snippet.error = following[1].strip()
            if "continues" in options:
                if options["continues"] == "previous":
                    if previous is None:
                        sys.exit(f"{snippet.location}: continues a previous block, but there is none")
                    snippet.continues = previous
                else:
                    if options["continues"] not in names:
                        sys.exit(f"{snippet.location}: continues '{options['continues']}', not named before")
                    snippet.continues = names[options["continues"]]
            if "name" in options:
                if options["name"] in names:
                    sys.exit(f"{snippet.location}: the name '{options['name']}' is taken")
                names[options["name"]] = snippet
            stem = re.sub(r"\W", "", os.path.splitext(os.path.basename(path))[0].replace("-", "_"))
            snippet.target = f"{stem}_{len([s for s in snippets if s.path == path]) + 1}"
            snippets.append(snippet)
            if not options.get("fails"):
                previous = snippet
    return snippets


def full_code(snippet):
    parts = []
    while snippet is not None:
        parts.append(f"// {snippet.location}\n{snippet.code}")
        snippet = snippet.continues
    return "\n\n".join(reversed(parts)) + "\n"


def lines(text):
    return [line.rstrip() for line in text.strip("\n").split("\n")] if text.strip() else []


def expected_output(snippet):
    """What a program prints: the output of every block it continues (which print nothing unless
    they state their output), then its own."""
    chain = []
    while snippet is not None:
        chain.append(snippet)
        snippet = snippet.continues
    return [line for part in reversed(chain) for line in lines(part.output or "")]


MANIFEST = """// swift-tools-version: 6.0
// Generated by scripts/check-snippets.py from the documentation; do not edit.
import PackageDescription

let liveObjects = "{identity}"  // a package depended on by path is known by its folder's name

let package = Package(
    name: "Snippets",
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    dependencies: [.package(path: "../..")],
    targets: [{targets}
    ],
    swiftLanguageModes: [.v6]
)
"""

TARGET = """
        .executableTarget(
            name: "{name}",
            dependencies: [
                .product(name: "LiveObjects", package: liveObjects),
                .product(name: "Persistence", package: liveObjects),
                .product(name: "LiveObjectsSync", package: liveObjects),
            ]
        ),"""


def write_manifest(snippets):
    """The package's manifest, listing the targets (SwiftPM caches a manifest by its text, so it
    is written only when it changes)."""
    manifest = MANIFEST.format(
        identity=os.path.basename(ROOT).lower(),
        targets="".join(TARGET.format(name=snippet.target) for snippet in snippets))
    path = os.path.join(PACKAGE, "Package.swift")
    if not os.path.exists(path) or open(path, encoding="utf-8").read() != manifest:
        with open(path, "w", encoding="utf-8") as file:
            file.write(manifest)


def extract(snippets):
    """Writes the package: its manifest, which lists the snippets that compile (those that must
    fail are added for their own check), and one main.swift per snippet."""
    os.makedirs(PACKAGE, exist_ok=True)
    write_manifest([snippet for snippet in snippets if not snippet.error])
    sources = os.path.join(PACKAGE, "Sources")
    shutil.rmtree(sources, ignore_errors=True)
    for snippet in snippets:
        os.makedirs(os.path.join(sources, snippet.target))
        header = f"// Generated by scripts/check-snippets.py from {snippet.location}; do not edit.\n"
        with open(os.path.join(sources, snippet.target, "main.swift"), "w", encoding="utf-8") as file:
            file.write(header + full_code(snippet))


ERROR = re.compile(r"^.*?/main\.swift:(\d+):\d+: error: (.*)$")


def check_failures(snippets, build):
    """Builds each snippet that must fail on its own: it fails when it builds, when no error says
    its text, or when an error is outside its own lines (the code it continues must compile)."""
    failures = []
    for snippet in snippets:
        # main.swift is a header line, then the code; the block's own lines are its last ones.
        own = 1 + full_code(snippet).count("\n") - snippet.code.count("\n")
        result = run(build + ["--product", snippet.target], capture_output=True, text=True)
        output = result.stdout + result.stderr
        errors = [(int(m.group(1)), m.group(2)) for m in map(ERROR.match, output.split("\n")) if m]
        if result.returncode == 0:
            failures.append(f"{snippet.location} ({snippet.target}): builds, but the documentation says it fails")
        elif not any(snippet.error in message for _, message in errors):
            failures.append(f"{snippet.location} ({snippet.target}): no error says '{snippet.error}':\n{output}")
        elif any(line < own for line, _ in errors):
            failures.append(f"{snippet.location} ({snippet.target}): an error outside the block's own lines:\n{output}")
        else:
            print(f"fails as documented: {snippet.target} ({snippet.location})", flush=True)
    return failures


def run(command, **arguments):
    print("+ " + " ".join(command), flush=True)
    return subprocess.run(command, **arguments)


def main():
    arguments = sys.argv[1:]
    snippets = collect()
    if "--list" in arguments:
        for snippet in snippets:
            mode = "compile" if snippet.options.get("no-run") else ("run, output" if snippet.output else "run")
            mode = "fails to compile" if snippet.error else mode
            parent = f" (continues {snippet.continues.target})" if snippet.continues else ""
            print(f"{snippet.target:24} {snippet.location:40} {mode}{parent}")
        return
    extract(snippets)
    if "--extract" in arguments:
        return
    prefixes = [argument for argument in arguments if not argument.startswith("-")]
    chosen = [s for s in snippets if not prefixes or any(s.target.startswith(p) for p in prefixes)]
    started = time.monotonic()
    build = ["swift", "build", "--package-path", PACKAGE, "-Xswiftc", "-warnings-as-errors"]
    failing = [s for s in chosen if s.error]
    chosen = [s for s in chosen if not s.error]
    if prefixes:
        for snippet in chosen:
            if run(build + ["--product", snippet.target]).returncode != 0:
                sys.exit(f"error: {snippet.location}: the snippet does not build")
    elif run(build).returncode != 0:
        sys.exit("error: a snippet does not build (the error names Examples/Snippets/Sources/TARGET/main.swift;"
                 " its first line names the documentation file and line)")
    binaries = subprocess.run(build + ["--show-bin-path"], capture_output=True, text=True, check=True).stdout.strip()
    failures = []
    work = os.path.join(PACKAGE, ".build", "run")
    for snippet in chosen:
        if snippet.options.get("no-run"):
            continue
        shutil.rmtree(work, ignore_errors=True)
        os.makedirs(work)
        try:
            result = subprocess.run(
                [os.path.join(binaries, snippet.target)], cwd=work, capture_output=True, text=True,
                timeout=RUN_TIMEOUT)
        except subprocess.TimeoutExpired:
            failures.append(f"{snippet.location} ({snippet.target}): still running after {RUN_TIMEOUT} s")
            continue
        if result.returncode != 0:
            failures.append(
                f"{snippet.location} ({snippet.target}): exit status {result.returncode}\n{result.stdout}{result.stderr}")
        elif snippet.output is not None:
            printed = lines(result.stdout)
            expected = expected_output(snippet)
            if printed != expected:
                failures.append(
                    f"{snippet.location} ({snippet.target}): printed\n" + "\n".join(printed)
                    + "\ninstead of\n" + "\n".join(expected))
        print(f"ran {snippet.target} ({snippet.location})", flush=True)
    shutil.rmtree(work, ignore_errors=True)
    if failing:
        write_manifest([s for s in snippets if not s.error] + failing)
        failures += check_failures(failing, build)
        write_manifest([s for s in snippets if not s.error])
    for failure in failures:
        print(f"error: {failure}", file=sys.stderr)
    if failures:
        sys.exit(1)
    print(f"{len(chosen)} snippets built, {len([s for s in chosen if not s.options.get('no-run')])} run, "
          f"{len(failing)} failed to compile as documented ({time.monotonic() - started:.0f} s)")


if __name__ == "__main__":
    main()
