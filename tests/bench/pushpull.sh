#!/usr/bin/env bash
# Parameter-server pull+push round trip vs bare ZeroMQ with the same bytes.
set -u
exec "$CRESCENT_BUILD/bench/pushpull"
