#!/usr/bin/env bash
# Runs every example of README.md and docs/*.md against the built binary
# (see docs_extract.lua for the tags). Every ```sh / ```lua block must be an
# example or be listed, with its reason, in docs_skip.lua: a block that is
# neither fails the test (so is a skip entry that matches nothing). Each
# markdown file gets its own temp directory, so `file` blocks are visible to
# later blocks of the same file. Lines of an example ending in "--> text"
# say what its output must show (in order). A failing example prints
# file:line and its output.
set -u
ROOT=${CRESCENT_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
BIN=${CRESCENT_BIN:-$ROOT/crescent}
LUA=$(command -v lua5.4 || command -v lua) || { echo "lua5.4 not installed"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT   # every example runs under timeout, which ends what it started
mkdir -p "$tmp/bin"; ln -s "$BIN" "$tmp/bin/crescent"
export PATH="$tmp/bin:$PATH" CRESCENT_HISTORY=
total=0 failed=0 skipped=0
for doc in "$ROOT"/README.md "$ROOT"/docs/*.md; do
    [ -f "$doc" ] || continue
    rel=${doc#"$ROOT"/}
    work="$tmp/$(basename "$doc" .md)"; mkdir -p "$work/.blocks"
    ln -s "$ROOT/examples" "$work/examples"   # examples run "from the repository root"
    list=$("$LUA" "$ROOT/tests/integration/docs_extract.lua" "$doc" "$work/.blocks" "$rel" \
        "$ROOT/tests/integration/docs_skip.lua") || { failed=$((failed + 1)); continue; }
    while IFS=$'\x1f' read -r line kind args file; do
        [ -n "$line" ] || continue
        case $kind in
        skip) skipped=$((skipped + 1)); echo "skip $rel:$line: $args"; continue ;;
        unrun) failed=$((failed + 1))
               echo "FAIL $rel:$line: a runnable block ($args) is not run: tag it <!-- doc-test: ... --> or list it in tests/integration/docs_skip.lua with the reason"
               continue ;;
        stale) failed=$((failed + 1)); echo "FAIL $rel: docs_skip.lua lists a block that is not there: $args"; continue ;;
        esac
        total=$((total + 1))
        out="$work/.blocks/out.$total"
        case $kind in
        file) cp "$file" "$work/$args"; continue ;;
        setup) (cd "$work" && timeout 120 bash -ec "$args") </dev/null >"$out" 2>&1; rc=$? ;;
        run) cp "$file" "$work/example_$line.lua"
             (cd "$work" && eval "timeout 120 crescent run example_$line.lua $args") </dev/null >"$out" 2>&1; rc=$? ;;
        continue) name=${args%% *}; rest=${args#"$name"}
             cat "$file" >>"$work/$name"
             (cd "$work" && eval "timeout 120 crescent run $name $rest") </dev/null >"$out" 2>&1; rc=$? ;;
        repl) (cd "$work" && eval "timeout 120 crescent repl $args") <"$file" >"$out" 2>"$out.err"; rc=$?
              # the REPL keeps going after an error: any error output fails the example
              if [ $rc -eq 0 ] && grep -qE '^(stdin:|crescent:|.*stack traceback)' "$out.err"; then rc=1; fi
              cat "$out.err" >>"$out" ;;
        sh) (cd "$work" && timeout 300 bash -e "$file") </dev/null >"$out" 2>&1; rc=$? ;;
        *) echo "$rel:$line: unknown doc-test kind '$kind'"; rc=1; : >"$out" ;;
        esac
        # "--> text" comments in an example are lines its output must show, in order
        if [ $rc -eq 0 ] && [ "$file" != - ] && ! "$LUA" "$ROOT/tests/integration/docs_expect.lua" "$file" "$out" 2>>"$out"; then rc=1; fi
        if [ $rc -ne 0 ]; then
            failed=$((failed + 1))
            echo "FAIL $rel:$line ($kind $args): exit $rc"; tail -20 "$out" | sed 's/^/    /'
        else
            echo "ok   $rel:$line ($kind)"
        fi
    done <<<"$list"
done
# a skip-list page that no longer exists is a stale entry too
for gone in $("$LUA" - "$ROOT/tests/integration/docs_skip.lua" "$ROOT" <<'LUA'
for doc in pairs(dofile(arg[1])) do
  local f = io.open(arg[2] .. "/" .. doc)
  if f then f:close() else print(doc) end
end
LUA
); do failed=$((failed + 1)); echo "FAIL docs_skip.lua lists $gone, which does not exist"; done
echo "$total examples, $failed failed, $skipped skipped (docs_skip.lua)"
[ "$total" -gt 0 ] || { echo "no tagged examples found"; exit 1; }
[ "$failed" -eq 0 ]
