#!/usr/bin/env bash
# `make data`: builds the default datasets under data/ (placeholder).
set -eu
echo "no default datasets yet"
