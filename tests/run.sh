#!/usr/bin/env bash
# Runs every test and prints one summary line, "N passed, N failed, N skipped",
# as the last line. Four kinds, counted together:
#   C unit tests      build/tests/test_*      (each prints "N passed, N failed")
#   busted specs      tests/spec/*_spec.lua   (TAP output: one count per `it`)
#   integration tests tests/integration/*.sh  (one count per script; exit 77 = skipped)
#   cluster tests     tests/cluster/test_*.sh (the same, on emulated hosts; skipped unless root)
# Usage: tests/run.sh [c|spec|integration|cluster ...]   (default: all four)
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
export CRESCENT_BIN="${CRESCENT_BIN:-$PWD/crescent}" CRESCENT_ROOT="$PWD" CRESCENT_BUILD="$PWD/$BUILD"
export LUA_PATH="$PWD/lua/?.lua;$PWD/lua/?/init.lua;$PWD/tests/spec/?.lua;;"
export LUA_CPATH="$PWD/$BUILD/lua/?.so;;"
export OPENBLAS_NUM_THREADS=1
OUT=${TEST_OUT:-$PWD/tests/out}
mkdir -p "$OUT"
pass=0 fail=0 skip=0
failed=()
kinds=${*:-c spec integration cluster}

count_line() { # "N passed, N failed" from the last such line of a file
    grep -E '^[0-9]+ passed, [0-9]+ failed' "$1" | tail -1
}

# scripts LABEL FILES...: one count per script (exit 77 = skipped, with the
# reason on its last line).
scripts() {
    local label=$1 t name start rc secs
    shift
    for t in "$@"; do
        [ -f "$t" ] || continue
        name=$(basename "$t" .sh)
        start=$(date +%s)
        timeout 600 bash "$t" >"$OUT/${label:0:3}_$name.log" 2>&1
        rc=$?
        secs=$(( $(date +%s) - start ))
        if [ $rc -eq 0 ]; then pass=$((pass + 1)); echo "ok   $label $name (${secs}s)"
        elif [ $rc -eq 77 ]; then skip=$((skip + 1)); echo "skip $label $name: $(tail -1 "$OUT/${label:0:3}_$name.log")"
        else fail=$((fail + 1)); failed+=("$label:$name"); echo "FAIL $label $name, exit $rc (see $OUT/${label:0:3}_$name.log)"; tail -15 "$OUT/${label:0:3}_$name.log"; fi
    done
}

for kind in $kinds; do
case $kind in
c)
    for t in "$BUILD"/tests/test_*; do
        [ -x "$t" ] || continue
        name=$(basename "$t")
        timeout 300 "$t" >"$OUT/$name.log" 2>&1
        rc=$?
        line=$(count_line "$OUT/$name.log")
        if [ -n "$line" ]; then
            p=${line%% passed*}; f=${line#*passed, }; f=${f%% failed*}
        else p=0; f=0; fi
        if [ $rc -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi   # crashed or timed out
        pass=$((pass + p)); fail=$((fail + f))
        if [ "$f" -gt 0 ]; then failed+=("c:$name"); echo "FAIL c $name (see $OUT/$name.log)"; grep -E '^(FAIL|  check)' "$OUT/$name.log" | head -20
        else echo "ok   c $name ($p)"; fi
    done ;;
spec)
    for s in tests/spec/*_spec.lua; do
        [ -f "$s" ] || continue
        name=$(basename "$s" .lua)
        if [ -n "${SANITIZE:-}" ]; then
            LD_PRELOAD="$(gcc -print-file-name=libasan.so) $(gcc -print-file-name=libubsan.so)" \
            ASAN_OPTIONS=detect_leaks=0 timeout 300 busted -o TAP "$s" >"$OUT/$name.log" 2>&1
        else
            timeout 300 busted -o TAP "$s" >"$OUT/$name.log" 2>&1
        fi
        rc=$?
        p=$(grep -cE '^ok ' "$OUT/$name.log"); f=$(grep -cE '^not ok ' "$OUT/$name.log")
        if [ $rc -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
        pass=$((pass + p)); fail=$((fail + f))
        if [ "$f" -gt 0 ]; then failed+=("spec:$name"); echo "FAIL spec $name (see $OUT/$name.log)"; grep -A8 -E '^not ok' "$OUT/$name.log" | head -30
        else echo "ok   spec $name ($p)"; fi
    done ;;
integration)
    # Some scripts load core.so into plain lua5.4: under sanitizers its runtime
    # must come first there too. detect_leaks stays on for the crescent binary.
    if [ -n "${SANITIZE:-}" ]; then
        export CRESCENT_LUA="env LD_PRELOAD=$(gcc -print-file-name=libasan.so):$(gcc -print-file-name=libubsan.so) ASAN_OPTIONS=detect_leaks=0 lua5.4"
    else
        export CRESCENT_LUA=lua5.4
    fi
    scripts integration tests/integration/*.sh ;;
cluster)
    scripts cluster tests/cluster/test_*.sh ;;
*) echo "unknown test kind '$kind'"; exit 2 ;;
esac
done

[ ${#failed[@]} -gt 0 ] && echo "failed: ${failed[*]}"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
