#!/usr/bin/env bash
# An emulated cluster on one machine: N network namespaces ("hosts"), each
# joined to a bridge in the root namespace by a veth pair, with addresses
# that exist only inside them (10.77.S.1 ... 10.77.S.N, /24; S is
# CR_NETNS_SUBNET, default 0; the root namespace has 10.77.S.254).
#
#   netns.sh up N [--rate RATE] [--prefix P]   create hosts P1..PN (default crh)
#   netns.sh down [--prefix P]                 remove them, the bridge, and
#                                              every process still inside
#   netns.sh exec I CMD...                     run CMD on host I
#   netns.sh addr I                            print host I's address
#
# --rate (e.g. 1gbit, 100mbit) shapes both directions of every host's link
# with tbf (this kernel has no netem: bandwidth can be limited, delay not).
# Host names P1..PN resolve inside the hosts through /etc/netns/P<I>/hosts.
# The prefix (CR_NETNS_PREFIX or --prefix) must stay short: interface
# names are at most 15 characters.
# Needs root. Safe to run `down` any number of times.
set -u
prefix=${CR_NETNS_PREFIX:-crh}
net=10.77.${CR_NETNS_SUBNET:-0}

usage() { sed -n '2,/^set/p' "$0" | grep '^#' | sed 's/^# \{0,1\}//' >&2; exit 2; }

opts() {
    while [ $# -gt 0 ]; do
        case "$1" in
        --rate) rate=$2; shift 2 ;;
        --prefix) prefix=$2; shift 2 ;;
        *) echo "netns.sh: unknown option '$1'" >&2; exit 2 ;;
        esac
    done
}

br() { echo "${prefix}br"; }

shape() { # dev rate: tbf with a burst of 1 ms at that rate (at least 32 KiB)
    tc qdisc replace dev "$1" root tbf rate "$2" burst 256kb latency 50ms
}

up() {
    local n=$1 i ns
    shift
    rate=
    opts "$@"
    case "$n" in '' | *[!0-9]*) echo "netns.sh: up needs a host count" >&2; exit 2 ;; esac
    [ "$n" -ge 1 ] && [ "$n" -le 200 ] || { echo "netns.sh: 1 to 200 hosts" >&2; exit 2; }
    down >/dev/null 2>&1
    ip link add "$(br)" type bridge || exit 1
    ip addr add "$net.254/24" dev "$(br)"
    ip link set "$(br)" up
    mkdir -p /etc/netns
    for i in $(seq 1 "$n"); do
        ns=$prefix$i
        ip netns add "$ns" || exit 1
        ip link add "${ns}h" type veth peer name "${ns}b" || exit 1
        ip link set "${ns}h" netns "$ns"
        ip -n "$ns" link set "${ns}h" name eth0
        ip -n "$ns" addr add "$net.$i/24" dev eth0
        ip -n "$ns" link set eth0 up
        ip -n "$ns" link set lo up
        ip link set "${ns}b" master "$(br)" up
        if [ -n "$rate" ]; then
            shape "${ns}b" "$rate" || exit 1
            ip netns exec "$ns" tc qdisc replace dev eth0 root tbf rate "$rate" burst 256kb latency 50ms || exit 1
        fi
        mkdir -p "/etc/netns/$ns"
        {
            echo "127.0.0.1 localhost"
            for j in $(seq 1 "$n"); do echo "$net.$j $prefix$j"; done
        } >"/etc/netns/$ns/hosts"
        echo "$ns" >"/etc/netns/$ns/hostname"
    done
}

down() {
    opts "$@"
    local ns pids
    for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^$prefix[0-9]+$"); do
        pids=$(ip netns pids "$ns" 2>/dev/null)
        [ -n "$pids" ] && kill -9 $pids 2>/dev/null
        ip netns del "$ns"
        rm -rf "/etc/netns/$ns"
    done
    ip link del "$(br)" 2>/dev/null
    return 0
}

cmd=${1:-}
[ -n "$cmd" ] || usage
shift
case "$cmd" in
up) up "$@" ;;
down) down "$@" ;;
exec) i=$1; shift; exec ip netns exec "$prefix$i" "$@" ;;
addr) echo "$net.$1" ;;
*) usage ;;
esac
