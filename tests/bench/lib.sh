# Helpers sourced by the training benches (kge.sh, mf.sh, w2v.sh); not a
# bench itself (run.sh skips it).
#   median          the median of the numbers on stdin (one a line; 0 if none)
#   ratio A B       A / B to 2 decimals, "nan" if B <= 0
#   check NAME R T  prints whether ratio R meets the target R >= T; sets fail=1 if not
#   bench_env "$0"  cd to the repository, BIN, the Lua paths (below)

median() { sort -g | awk '{a[NR]=$1} END {if (NR) print a[int((NR+1)/2)]; else print 0}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (b > 0) printf "%.2f", a / b; else print "nan"}'; }
check() { # name ratio target
    if [ "$2" != nan ] && awk -v r="$2" -v t="$3" 'BEGIN {exit !(r + 0 >= t + 0)}'; then
        echo "  $1: ${2}x (target >= ${3}x) ok"
    else echo "  $1: ${2}x (target >= ${3}x) BELOW TARGET"; fail=1; fi
}
# bench_env "$0": from the repository root (CRESCENT_ROOT, else two levels
# above the script), BIN is crescent and lua5.4 finds crescent's modules
# (run.sh exports the same when it runs the bench).
bench_env() {
    cd "${CRESCENT_ROOT:-$(dirname "$1")/../..}" || exit 1
    BIN=${CRESCENT_BIN:-$PWD/crescent}
    export LUA_PATH="${LUA_PATH:-$PWD/lua/?.lua;$PWD/lua/?/init.lua;;}" LUA_CPATH="${LUA_CPATH:-$PWD/build/lua/?.so;;}"
    export OPENBLAS_NUM_THREADS=1
}
