#!/usr/bin/env bash
# Bad input to relocation (docs/management.md): one clear line naming the
# script and line, a non-zero exit, no crash, no orphan node.
set -u
. "$CRESCENT_ROOT/tests/integration/jobs/lib.sh"
expect() { # case, pattern
    run_timed "$JOBS/reloc_bad.lua" -- "$1"
    [ "$rc" -ne 0 ] || fail "$1: exit 0"
    [ "$rc" -lt 128 ] || fail "$1: crashed ($rc)"
    grep -q -- "$2" "$TMP/out" || fail "$1: expected '$2'"
}
expect unknown "reloc_bad.lua:14: job:table{}: manage: unknown technique 'sideways' (classic, relocate, replicate, or a decision script: auto, nups, or the path of a .lua file)"
expect auto "reloc_bad.lua:14: job:table{}: manage: auto: unknown option 'hott' (options: hot, keep, cap, min, share, least, stay, rest, worth)"
expect script "reloc_bad.lua:14: job:table{}: manage: management script file ./no/such/rule.lua"
expect malformed "reloc_bad.lua:14: job:table{}: manage: relocate = must be \"rest\" or a list of keys"
expect relrange "reloc_bad.lua:14: job:table{}: manage: relocate = key 40 (position 2) out of range \[0, 40) of table 'C'"
expect twice "reloc_bad.lua:14: job:table{}: manage: relocate = key 3 (position 3) is listed twice"
expect both "reloc_bad.lua:14: job:table{}: manage: key 2 is in both replicate = and relocate ="
expect norest "reloc_bad.lua:14: job:table{}: manage: relocate = keys needs classic = \"rest\""
expect field "reloc_bad.lua:14: job:table{}: manage: unknown field 'copies'"
expect range "reloc_bad.lua:14: job:table{}: manage: replicate = key 99 (position 2) out of range \[0, 40) of table 'C'"
expect replicate "reloc_bad.lua:14: replicate: table 'C' uses the rule 'assign', which cannot be replicated"
expect later "reloc_bad.lua:17: C:manage: unknown technique 'nope'"
expect laterrange "reloc_bad.lua:20: C:manage: relocate = key -1 (position 2) out of range \[0, 40) of table 'C'"
expect freq "reloc_bad.lua:22: job:table{}: frequencies: expected frequencies: 3 entries for 40 keys"
expect localize "reloc_bad.lua:5: localize: key 45 (position 2) out of range \[0, 40) of table 'C'"
no_orphans || exit 1
exit 0
