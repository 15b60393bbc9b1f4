#!/usr/bin/env bash
# portblock.sh ACTION … — a network partition on loopback for the fault tests: the packets
# between clients and one server port are dropped in both directions, established
# connections included, with no RST or FIN (to both ends the connection looks open and
# silent). Used by kafka-cluster.sh (`cut N`: a broker's client ports) and by
# integration/faults/blockport_test.go (the private database servers of faults.sh).
#
#   portblock.sh drop ADDR PORT   drop what goes to ADDR:PORT and what comes back from it
#   portblock.sh restore PORT     let it through again (a no-op when it was not dropped)
#   portblock.sh dropped PORT     true while PORT is dropped
#
# How: this kernel has no iptables and no tc drop action (act_gact), but tc's u32 classifier
# and mirred action exist. Two u32 filters on lo's egress hook (a clsact qdisc) redirect the
# matching packets to one end of a veth pair (tfdrop0) whose other end, without an address,
# discards them (they are not addressed to it). Both ends are up: a redirect to a down device
# fails in the sender's own stack, which TCP sees, so it neither retransmits nor times out as
# it does when a packet is lost on the way.
#
# Several blocks coexist (tests run side by side): each port has its own two filter
# priorities (20000 + 2 × (PORT mod 10000), and the next), a block only ever adds and removes
# its own, and the qdisc and the veth pair go when the last filter does. A lock serializes
# the changes. Needs root (directly or through sudo -n).

source "$(dirname "${BASH_SOURCE[0]}")/env.sh"

DROP_DEV=tfdrop0

prios() { echo $((20000 + 2 * ($1 % 10000))) $((20001 + 2 * ($1 % 10000))); }

check_port() {
  [[ ${1:-} =~ ^[0-9]+$ ]] && (($1 > 0 && $1 < 65536)) || die "portblock: not a port: '${1:-}'"
}

restore() {
  local prio
  for prio in $(prios "$1"); do
    as_root tc filter del dev lo egress prio "$prio" 2>/dev/null || true
  done
  # The last block gone: remove the qdisc and the veth pair too.
  if [[ -z $(tc filter show dev lo egress 2>/dev/null) && -z $(tc filter show dev lo ingress 2>/dev/null) ]]; then
    as_root tc qdisc del dev lo clsact 2>/dev/null || true
    as_root ip link del "$DROP_DEV" 2>/dev/null || true
  fi
}

drop() {
  local addr=$1 port=$2 p0 p1
  read -r p0 p1 <<<"$(prios "$port")"
  restore "$port" # a leftover of an interrupted run
  ip link show "$DROP_DEV" >/dev/null 2>&1 || as_root ip link add "$DROP_DEV" type veth peer name tfdrop1
  as_root ip link set "$DROP_DEV" up
  as_root ip link set tfdrop1 up
  [[ $(tc qdisc show dev lo) == *clsact* ]] || as_root tc qdisc add dev lo clsact
  as_root tc filter add dev lo egress prio "$p0" protocol ip u32 \
    match ip dst "$addr/32" match ip dport "$port" 0xffff action mirred egress redirect dev "$DROP_DEV"
  as_root tc filter add dev lo egress prio "$p1" protocol ip u32 \
    match ip src "$addr/32" match ip sport "$port" 0xffff action mirred egress redirect dev "$DROP_DEV"
}

command -v tc >/dev/null || die "portblock: needs tc (iproute2)"
mkdir -p "$STATE_DIR"
exec 9>"$STATE_DIR/.portblock.lock"
flock -w 60 9 || die "portblock: another portblock.sh holds $STATE_DIR/.portblock.lock"

case ${1:-} in
drop)
  [[ ${2:-} =~ ^[0-9]+(\.[0-9]+){3}$ ]] || die "portblock: not an IPv4 address: '${2:-}'"
  check_port "${3:-}"
  drop "$2" "$3"
  ;;
restore)
  check_port "${2:-}"
  restore "$2"
  ;;
dropped)
  check_port "${2:-}"
  [[ $(tc filter show dev lo egress prio "$(prios "$2" | cut -d' ' -f1)" 2>/dev/null) == *mirred* ]]
  ;;
*) die "usage: portblock.sh drop ADDR PORT | restore PORT | dropped PORT" ;;
esac
