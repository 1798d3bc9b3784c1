#!/usr/bin/env bash
# make install PREFIX=TMP, then `crescent run` of the installed example MF job
# from another directory with an empty environment (only PATH), on 1 and on 2
# nodes (the spawned nodes are the installed binary too); then make uninstall
# leaves no file and no directory of crescent's behind.
set -u
cd "$(dirname "$0")/../.."
BIN=${CRESCENT_BIN:-$PWD/crescent}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
P=$tmp/prefix
fail() { echo "FAIL: $*"; exit 1; }

make --no-print-directory -s install PREFIX="$P" BIN="$(basename "$BIN")" BUILD="$(basename "${CRESCENT_BUILD:-build}")" >"$tmp/install.log" 2>&1 \
    || { cat "$tmp/install.log"; fail "make install"; }
for f in bin/crescent share/man/man1/crescent.1 share/doc/crescent/getting-started.md \
         share/crescent/lua/crescent/init.lua share/crescent/lua/models/mf.lua \
         share/crescent/configs/consistency/bsp.lua share/crescent/examples/mf.lua; do
    [ -f "$P/$f" ] || fail "install did not write $f"
done
[ -x "$P/bin/crescent" ] || fail "bin/crescent not executable"
man -l "$P/share/man/man1/crescent.1" >/dev/null 2>&1 || groff -man -z "$P/share/man/man1/crescent.1" \
    || fail "man page does not format"

work=$tmp/elsewhere
mkdir -p "$work"
cd "$work" || exit 1
run() { env -i PATH="$P/bin:/usr/bin:/bin" HOME="$work" "$@"; }
run crescent data zipf-mf --rows 300 --cols 60 --cells 6000 --rank 4 --noise 0.1 \
    --test-fraction 0.1 --seed 1 --out data/mf >"$tmp/data.log" 2>&1 || { cat "$tmp/data.log"; fail "crescent data"; }
for n in 1 2; do
    run crescent run "$P/share/crescent/examples/mf.lua" --nodes "$n" --policy ssp:staleness=1 \
        -- epochs=3 batch=1000 quiet=1 >"$tmp/run$n.log" 2>&1 \
        || { cat "$tmp/run$n.log"; fail "crescent run on $n node(s) from $work"; }
    grep -q "test_rmse" "$tmp/run$n.log" || { cat "$tmp/run$n.log"; fail "no test RMSE on $n node(s)"; }
done
# the Lua side sees the installed home (configs from PREFIX/share/crescent)
cat >"$work/home.lua" <<'LUA'
print("HOME=" .. require("crescent.home").dir)
print("PS=" .. package.searchpath("crescent.ps", package.path))
LUA
run crescent run "$work/home.lua" >"$tmp/home.log" 2>&1 || { cat "$tmp/home.log"; fail "home.lua"; }
home=$(realpath "$P/share/crescent")
grep -qx "HOME=$home" "$tmp/home.log" || { cat "$tmp/home.log"; fail "crescent.home is not $home"; }
grep -qx "PS=$home/lua/crescent/ps.lua" "$tmp/home.log" || { cat "$tmp/home.log"; fail "crescent.ps not from $home"; }
cd - >/dev/null || exit 1

make --no-print-directory -s uninstall PREFIX="$P" >"$tmp/uninstall.log" 2>&1 \
    || { cat "$tmp/uninstall.log"; fail "make uninstall"; }
left=$(cd "$P" && find . -mindepth 1 | sort)
[ -z "$left" ] || { echo "$left"; fail "uninstall left the above in PREFIX"; }
# a directory that held other files before install stays, with those files
mkdir -p "$P/bin" && echo keep >"$P/bin/other"
make --no-print-directory -s install PREFIX="$P" BIN="$(basename "$BIN")" BUILD="$(basename "${CRESCENT_BUILD:-build}")" >/dev/null 2>&1 || fail "reinstall"
make --no-print-directory -s uninstall PREFIX="$P" >/dev/null 2>&1 || fail "second uninstall"
[ "$(cd "$P" && find . -mindepth 1 | sort | tr '\n' ' ')" = "./bin ./bin/other " ] || fail "uninstall removed or left more than its own files"
echo "install ok"
