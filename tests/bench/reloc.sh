#!/usr/bin/env bash
# Relocation between two nodes (tests/bench/reloc.c): microseconds and
# messages per moved row for localize batches of 1, 100 and 1000 keys, and
# sampled negatives (KGE's pattern: sample, localize, push) on a relocating table
# against a classic one. Three processes; the last line has the medians.
# RELOC_BASE=path/to/another/build/bench/reloc runs that binary (e.g. one
# built from an older commit) alternately with this one, for before/after.
set -u
BIN="$CRESCENT_BUILD/bench/reloc"
[ -x "$BIN" ] || { echo "reloc bench: $BIN missing (make builds it)"; exit 1; }
med() { sort -n | awk '{ v[NR] = $1 } END { print (NR ? v[int((NR + 1) / 2)] : "nan") }'; }
declare -A col
for run in 1 2 3; do
    for who in base this; do
        b=$BIN
        if [ "$who" = base ]; then [ -n "${RELOC_BASE:-}" ] || continue; b=$RELOC_BASE; fi
        out=$("$b" 1 100 1000 2>&1) || { echo "$out"; exit 1; }
        echo "$who: $out" | sed "2,\$s/^/$who: /"
        for bs in 1 100 1000; do
            col[$who.$bs]+="$(sed -n "s/^batch *$bs: *\([0-9.]*\) us.*/\1/p" <<<"$out") "
        done
        col[$who.s]+="$(sed -n 's/.*relocating table \([0-9.]*\) us per sample, classic \([0-9.]*\).*/\1/p' <<<"$out") "
        col[$who.c]+="$(sed -n 's/.*relocating table \([0-9.]*\) us per sample, classic \([0-9.]*\).*/\2/p' <<<"$out") "
    done
done
for who in base this; do
    [ "$who" = base ] && [ -z "${RELOC_BASE:-}" ] && continue
    line="reloc ($who): us per moved row"
    for bs in 1 100 1000; do line+=" batch $bs $(tr ' ' '\n' <<<"${col[$who.$bs]}" | grep . | med),"; done
    s=$(tr ' ' '\n' <<<"${col[$who.s]}" | grep . | med) c=$(tr ' ' '\n' <<<"${col[$who.c]}" | grep . | med)
    echo "$line sampled negatives $s us per sample (classic $c) (medians of 3 runs)"
done
# the bar: sampling on a relocating table within 4x of classic (it was 17-38x when a pull read each
# sampled key with its own round trip)
s=$(tr ' ' '\n' <<<"${col[this.s]}" | grep . | med) c=$(tr ' ' '\n' <<<"${col[this.c]}" | grep . | med)
awk -v s="$s" -v c="$c" 'BEGIN { exit !(s <= 4 * c) }'
