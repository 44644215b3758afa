#!/usr/bin/env bash
# Builds the API documentation of LiveObjects, Persistence and LiveObjectsSync with the
# toolchain's own `docc` (no package plugin), warnings as errors:
#
#     scripts/build-docs.sh                  # .build/documentation/<Module>.doccarchive
#     scripts/build-docs.sh --preview        # the LiveObjects pages at http://localhost:8080
#     scripts/build-docs.sh --preview Persistence
#
# `swift package dump-symbol-graph` builds the package (debug, reusing the build of `swift build`
# or `swift test`) and writes the symbol graphs; each module's catalog is
# Sources/<Module>/<Module>.docc. The archives are for static hosting: serve one folder, e.g.
# `python3 -m http.server -d .build/documentation/LiveObjects.doccarchive 8000`, and open
# http://localhost:8000/documentation/liveobjects (on macOS, opening the .doccarchive in Xcode
# works too). Set DOCC to choose the docc executable.
set -euo pipefail
cd "$(dirname "$0")/.."

modules=(LiveObjects Persistence LiveObjectsSync)

find_docc() {
    if [ -n "${DOCC:-}" ]; then echo "$DOCC"; return; fi
    if command -v docc >/dev/null; then command -v docc; return; fi
    if command -v xcrun >/dev/null; then xcrun --find docc; return; fi
    local swift
    swift=$(command -v swift)
    swift=$(readlink -f "$swift" 2>/dev/null || echo "$swift")
    echo "$(dirname "$swift")/docc"
}
docc=$(find_docc)
if [ ! -x "$docc" ]; then
    echo "Error: no docc found (looked in PATH, xcrun and beside swift); set DOCC" >&2
    exit 1
fi

preview=""
if [ "${1:-}" = "--preview" ]; then
    preview=${2:-LiveObjects}
fi

output=$(swift package dump-symbol-graph 2>&1) || { echo "$output" >&2; exit 1; }
graphs=$(echo "$output" | sed -n 's/^Files written to //p' | tail -1)
if [ ! -d "$graphs" ]; then
    echo "$output" >&2
    echo "Error: swift package dump-symbol-graph wrote no symbol graphs" >&2
    exit 1
fi

# LiveObjects re-exports LiveObjectsStore (`Schema`, `Property`, `PropertyValue`, `ObjectKey`,
# `LiveObjectsError`, ...): its graph is extracted again with the re-exported symbols in it,
# which `swift package dump-symbol-graph` leaves out. The build it reads is the one just made.
extract=(swift-symbolgraph-extract)
if command -v xcrun >/dev/null; then extract=(xcrun swift-symbolgraph-extract -sdk "$(xcrun --show-sdk-path)"); fi
target=$(swiftc -print-target-info | sed -n 's/^ *"triple": "\(.*\)",*$/\1/p' | head -1)
reexported=$(mktemp -d)
trap 'rm -rf "$reexported"' EXIT
# Its messages are shown only when it fails: for this module it prints "circular reference" and
# succeeds.
output=$("${extract[@]}" -module-name LiveObjects -target "$target" -I "$(swift build --show-bin-path)/Modules" \
    -Xcc -fmodule-map-file=Sources/CPrefetch/include/module.modulemap -minimum-access-level public \
    -skip-inherited-docs -experimental-allowed-reexported-modules=LiveObjectsStore -output-dir "$reexported" 2>&1) ||
    { echo "$output" >&2; exit 1; }
cp "$reexported"/LiveObjects*.symbols.json "$graphs/"

work=.build/documentation
mkdir -p "$work"
for module in "${modules[@]}"; do
    if [ -n "$preview" ] && [ "$module" != "$preview" ]; then continue; fi
    # A module's own graph, and the graphs of its extensions to other modules (Module@Other).
    rm -rf "$work/$module.symbols"
    mkdir -p "$work/$module.symbols"
    cp "$graphs/$module.symbols.json" "$work/$module.symbols/"
    find "$graphs" -name "$module@*.symbols.json" -exec cp {} "$work/$module.symbols/" \;
    arguments=(
        "Sources/$module/$module.docc"
        --additional-symbol-graph-dir "$work/$module.symbols"
        --fallback-display-name "$module" --fallback-bundle-identifier "liveobjects.$module"
        --warnings-as-errors
    )
    if [ -n "$preview" ]; then
        exec "$docc" preview "${arguments[@]}"
    fi
    rm -rf "$work/$module.doccarchive"
    "$docc" convert "${arguments[@]}" --transform-for-static-hosting --output-path "$work/$module.doccarchive"
done
if [ -z "$preview" ]; then
    echo "Documentation in $work: ${modules[*]/%/.doccarchive}"
fi
