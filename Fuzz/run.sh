#!/usr/bin/env bash
# Builds the fuzz targets with libFuzzer and AddressSanitizer, then runs one of them, or each in
# turn.
#
#   Fuzz/run.sh                          # every target, 1,000,000 runs each
#   Fuzz/run.sh predicate                # one target, until stopped
#   Fuzz/run.sh snapshot -runs=100000    # libFuzzer options after the target
#   Fuzz/run.sh build                    # build only
#
# Targets: predicate, snapshot, journal, shell (see Fuzz/README.md). Builds go to Fuzz/out
# (ignored by git); new corpus entries go to Fuzz/out/corpus/TARGET, with the committed seeds of
# Fuzz/corpus/TARGET read too; crashing inputs are written to Fuzz/out/crash-*.
set -euo pipefail
cd "$(dirname "$0")/.."

targets=(predicate snapshot journal shell)
out=Fuzz/out
mkdir -p "$out"
# The gold linker warns about every local sanitizer symbol it cannot export: noise.
quiet() { "$@" 2> >(grep -v "Cannot export local symbol" >&2); }
# The C modules are found by their module maps: CPrefetch is one inline function (no library);
# CCRC32C is compiled into a static library of its own.
flags=(-O -swift-version 6 -package-name LiveObjects -sanitize=fuzzer,address -parse-as-library -I "$out"
    -I Sources/CPrefetch/include -I Sources/CCRC32C/include)

# The C library of CCRC32C, rebuilt when its source is newer than it.
build_crc32c() {
    local library="$out/libCCRC32C.a"
    if [[ -f $library && ! Sources/CCRC32C/CCRC32C.c -nt $library ]]; then
        return
    fi
    echo "building CCRC32C" >&2
    clang -O2 -fsanitize=address -I Sources/CCRC32C/include -c Sources/CCRC32C/CCRC32C.c -o "$out/CCRC32C.o"
    ar rcs "$library" "$out/CCRC32C.o"
}

# One module as a static library, rebuilt when a source is newer than it.
build_module() {
    local name=$1
    local library="$out/lib$name.a"
    if [[ -f $library && -z $(find "Sources/$name" -name '*.swift' -newer "$library" | head -1) ]]; then
        return
    fi
    echo "building $name" >&2
    # shellcheck disable=SC2046
    quiet swiftc "${flags[@]}" -wmo -module-name "$name" -emit-library -static -emit-module \
        -emit-module-path "$out/$name.swiftmodule" -o "$library" $(find "Sources/$name" -name '*.swift' | sort)
}

build_target() {
    local target=$1
    build_crc32c
    build_module LiveObjectsStore
    build_module LiveObjects
    build_module LiveObjectsJSON
    build_module Persistence
    local libraries=(-lPersistence -lLiveObjectsJSON -lLiveObjects -lLiveObjectsStore -lCCRC32C)
    if [[ $target == shell ]]; then
        build_module LiveObjectsShell
        libraries=(-lLiveObjectsShell "${libraries[@]}")
    fi
    echo "building fuzz-$target" >&2
    quiet swiftc "${flags[@]}" -module-name "Fuzz_$target" -L "$out" "${libraries[@]}" \
        Fuzz/Targets/Fixture.swift Fuzz/Targets/RoundTrip.swift "Fuzz/Targets/$target.swift" -o "$out/fuzz-$target"
}

run_target() {
    local target=$1
    shift
    mkdir -p "$out/corpus/$target"
    # Without this the Swift runtime's backtracer handles the crash and libFuzzer writes no file.
    SWIFT_BACKTRACE=enable=no "$out/fuzz-$target" -workers=1 -artifact_prefix="$out/" \
        "$@" "$out/corpus/$target" "Fuzz/corpus/$target"
}

case "${1:-all}" in
build)
    for target in "${targets[@]}"; do build_target "$target"; done
    ;;
all)
    shift || true
    for target in "${targets[@]}"; do build_target "$target"; done
    for target in "${targets[@]}"; do run_target "$target" -runs=1000000 "$@"; done
    ;;
predicate | snapshot | journal | shell)
    target=$1
    shift
    build_target "$target"
    run_target "$target" "$@"
    ;;
*)
    echo "usage: Fuzz/run.sh [build | predicate | snapshot | journal | shell] [libFuzzer options]" >&2
    exit 2
    ;;
esac
