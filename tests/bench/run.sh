#!/usr/bin/env bash
# `make bench`: runs every tests/bench/*.sh in name order. Each script measures
# crescent side by side with its baseline in one run and prints ratios
# (medians of several runs). Results also go to tests/out/bench/NAME.txt.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
export CRESCENT_BIN="$PWD/crescent" CRESCENT_ROOT="$PWD" CRESCENT_BUILD="$PWD/$BUILD"
export LUA_PATH="$PWD/lua/?.lua;$PWD/lua/?/init.lua;;" LUA_CPATH="$PWD/$BUILD/lua/?.so;;"
export OPENBLAS_NUM_THREADS=1
mkdir -p tests/out/bench
status=0
for b in tests/bench/*.sh; do
    case $(basename "$b") in run.sh | lib.sh) continue ;; esac
    [ -n "${BENCH:-}" ] && [[ "$(basename "$b" .sh)" != *"$BENCH"* ]] && continue
    echo "== $(basename "$b" .sh)"
    bash "$b" 2>&1 | tee "tests/out/bench/$(basename "$b" .sh).txt"
    [ "${PIPESTATUS[0]}" -eq 0 ] || { echo "bench $(basename "$b") failed"; status=1; }
done
exit $status
