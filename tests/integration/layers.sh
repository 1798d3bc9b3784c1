#!/usr/bin/env bash
# The layer rules of ARCHITECTURE.md that the include graph shows, checked on
# the sources (rule 4 on the build's objects):
#   1. no file in src/lua reaches a src/net header, directly or through
#      other headers (the bindings reach the wire only through the PS job
#      client);
#   2. nothing in src/net includes a src/ps header (net is framing,
#      compression and authentication; the PS owns its messages);
#   3. no include cycle among the modules of src/ps, a module being X.c with
#      X.h, and a header that has no .c of its own (X_impl.h, X_core.h, ...)
#      counted in the module whose name prefixes it: X.c including Y.h and
#      Y.c including X.h (or a header of X's) is a cycle;
#   4. no call cycle among the files of src/ps (X.c calling a function of
#      Y.c and Y.c one of X.c), read off the built objects with nm.
# Prints every violation with the path that makes it; exit 1 if any.
# LAYERS_SRC: the tree to check (default: the repository's src).
set -u
root=${CRESCENT_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
src=${LAYERS_SRC:-$root/src}
[ -d "$src" ] || { echo "layers: no source tree at $src"; exit 1; }
cd "$src" || exit 1

# One line per include edge: "file included", paths relative to src, only
# includes that name a file of the tree ("dir/x.h" from the -Isrc root, or a
# file beside the includer).
edges=$(for f in $(find . -name '*.[ch]' | sed 's|^\./||' | sort); do
    sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f" | while read -r inc; do
        if [ -f "$inc" ]; then echo "$f $inc"
        elif [ -f "$(dirname "$f")/$inc" ]; then echo "$f $(dirname "$f")/$inc"; fi
    done
done)

# Rules 1 and 2 (awk: breadth-first search from every file of a folder,
# printing the first path that reaches a forbidden folder).
reach=$(echo "$edges" | awk '
    { out[$1] = out[$1] " " $2; files[$1] = 1 }
    function path_to(start, bad,    q, head, tail, seen, prev, cur, n, i, nx, p) {
        head = tail = 0; q[tail++] = start; seen[start] = 1
        while (head < tail) {
            cur = q[head++]
            n = split(out[cur], nx, " ")
            for (i = 1; i <= n; i++) {
                if (nx[i] in seen) continue
                seen[nx[i]] = 1; prev[nx[i]] = cur; q[tail++] = nx[i]
                if (index(nx[i], bad) == 1) {
                    p = nx[i]
                    for (cur = nx[i]; cur != start; ) { cur = prev[cur]; p = cur " -> " p }
                    return p
                }
            }
        }
        return ""
    }
    END {
        for (f in files) {
            if (index(f, "lua/") == 1 && (p = path_to(f, "net/")) != "")
                print "src/lua reaches src/net: " p
            if (index(f, "net/") == 1 && (p = path_to(f, "ps/")) != "")
                print "src/net includes src/ps: " p
        }
    }' | sort)

# Cycles of a graph given as lines "from to why" (awk depth-first search):
# one line per cycle found, "PREFIX: why, why, ...".
cycles_of() {
    awk -v prefix="$1" '
    { if (!(($1, $2) in has)) { has[$1, $2] = 1; adj[$1] = adj[$1] " " $2; w = $0; sub(/^[^ ]+ [^ ]+ /, "", w); via[$1, $2] = w }
      mods[$1] = 1; mods[$2] = 1 }
    END { for (m in mods) if (!(m in state)) dfs(m, 0) }
    function dfs(m, depth,    n, nx, i, j, p) {
        state[m] = 1; stack[depth] = m
        n = split(adj[m], nx, " ")
        for (i = 1; i <= n; i++) {
            if ((nx[i] in state) && state[nx[i]] == 1) {
                p = ""
                for (j = 0; j <= depth; j++) if (stack[j] == nx[i]) break
                for (; j <= depth; j++) p = p (p == "" ? "" : ", ") via[stack[j], (j < depth ? stack[j + 1] : nx[i])]
                print prefix ": " p
            } else if (!(nx[i] in state)) dfs(nx[i], depth + 1)
        }
        state[m] = 2
    }' | sort -u
}

# Rule 3: the module graph of src/ps.
cfiles=$(ls ps/*.c 2>/dev/null | sed 's|^ps/||; s|\.c$||')
cycles=$(echo "$edges" | awk -v cfiles="$cfiles" '
    BEGIN { n = split(cfiles, c, "\n"); for (i = 1; i <= n; i++) cfile[c[i]] = 1 }
    function module(f,    b, m, best) {
        if (index(f, "ps/") != 1) return ""
        b = f; sub(/^ps\//, "", b); sub(/\.[ch]$/, "", b)
        if (b in cfile) return b
        best = ""
        for (m in cfile) if (index(b, m "_") == 1 && length(m) > length(best)) best = m
        return best != "" ? best : b
    }
    { a = module($1); b = module($2); if (a != "" && b != "" && a != b) print a, b, $1 " includes " $2 }' |
    cycles_of "include cycle in src/ps")

# Rule 4: the same for what the objects of src/ps call of each other (a
# function declared in a shared header and defined in another file is a
# dependency the include graph does not show), when the build is there.
obj=${CRESCENT_BUILD:-$root/build}/src/ps
if ls "$obj"/*.o >/dev/null 2>&1; then
    calls=$(for o in "$obj"/*.o; do
        m=$(basename "$o" .o)
        nm --defined-only -g "$o" | awk -v m="$m" '$2 ~ /^[TDBR]$/ { print "D", m, $3 }'
        nm -u "$o" | awk -v m="$m" '{ print "U", m, $2 }'
    done | awk '$1 == "D" { def[$3] = $2; next } { use[NR] = $2 " " $3 }
        END { for (i in use) { split(use[i], u, " "); if ((u[2] in def) && def[u[2]] != u[1]) print u[1], def[u[2]], u[1] ".c calls " u[2] "() of " def[u[2]] ".c" } }' |
        sort | awk '!seen[$1 " " $2]++' | cycles_of "call cycle in src/ps")
    cycles=$(printf '%s\n%s' "$cycles" "$calls" | sed '/^$/d')
else
    echo "layers: no objects in $obj, call cycles not checked"
fi

status=0
[ -n "$reach" ] && { echo "$reach"; status=1; }
[ -n "$cycles" ] && { echo "$cycles"; status=1; }
[ $status -eq 0 ] && echo "layers: src/lua does not reach src/net, src/net does not include src/ps, no include or call cycle in src/ps"
exit $status
