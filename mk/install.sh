#!/bin/sh
# `make install` / `make uninstall` (see the Makefile).
#   mk/install.sh install ROOT BIN    ROOT = $(DESTDIR)$(PREFIX)
#   mk/install.sh uninstall ROOT
# Layout under ROOT:
#   bin/crescent                   the binary
#   share/crescent/lua/...         Lua modules (crescent.*) and models (models.*)
#   share/crescent/configs/...     consistency policies
#   share/crescent/examples/...    example job scripts
#   share/doc/crescent/...         README.md and docs/*.md
#   share/man/man1/crescent.1      the man page
# The binary finds share/crescent from its own location (src/cli/cli_home.c),
# so `crescent run` works from any directory with no environment variable.
# install records every file it wrote and every directory it created in
# share/crescent/install-manifest; uninstall removes exactly those (files,
# then the directories it created, deepest first, if they are empty).
set -eu
cmd=${1:?usage: install.sh install ROOT BIN | uninstall ROOT}
root=${2:?ROOT missing}
manifest="$root/share/crescent/install-manifest"

# mkdir -p that records the directories it creates (relative to ROOT).
mkdirs() {
    sub=""
    for part in $(echo "$1" | tr / ' '); do
        sub=${sub:+$sub/}$part
        [ -d "$root/$sub" ] && continue
        mkdir "$root/$sub"
        echo "dir $sub" >>"$tmp"
    done
}

put() { # put MODE SRC DEST(relative to ROOT)
    mkdirs "$(dirname "$3")"
    install -m "$1" "$2" "$root/$3"
    echo "file $3" >>"$tmp"
}

case $cmd in
install)
    bin=${3:?BIN missing}
    [ -x "$bin" ] || { echo "install: $bin not built (run make)"; exit 1; }
    [ -d "$root" ] || mkdir -p "$root"
    tmp=$(mktemp)
    trap 'rm -f "$tmp"' EXIT
    # a reinstall keeps the directories the first install created
    [ -f "$manifest" ] && grep '^dir ' "$manifest" >>"$tmp" || true
    put 755 "$bin" bin/crescent
    for f in $(find lua configs examples -type f | sort); do
        put 644 "$f" "share/crescent/$f"
    done
    put 644 README.md share/doc/crescent/README.md
    for f in docs/*.md; do put 644 "$f" "share/doc/crescent/$(basename "$f")"; done
    put 644 docs/crescent.1 share/man/man1/crescent.1
    echo "file share/crescent/install-manifest" >>"$tmp"
    sort -u "$tmp" >"$manifest"
    chmod 644 "$manifest"
    echo "installed crescent in $root (uninstall: make uninstall PREFIX=...)"
    ;;
uninstall)
    [ -f "$manifest" ] || { echo "uninstall: no crescent install in $root ($manifest missing)"; exit 1; }
    list=$(cat "$manifest")
    printf '%s\n' "$list" | grep '^file ' | cut -c6- | while read -r f; do rm -f "$root/$f"; done
    # deepest first; a directory someone else put files in stays
    printf '%s\n' "$list" | grep '^dir ' | cut -c5- | awk '{ print length($0) "\t" $0 }' | sort -rn | cut -f2- |
        while read -r d; do rmdir "$root/$d" 2>/dev/null || true; done
    echo "removed crescent from $root"
    ;;
*) echo "usage: install.sh install ROOT BIN | uninstall ROOT"; exit 2 ;;
esac
