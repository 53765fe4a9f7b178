#!/usr/bin/env bash
# Demo: start a simulated fabric (ibsim + OpenSM on tiny.net), run a few
# ibtool commands against it, and tear everything down again, also on
# failure or Ctrl-C. Needs no terminal and no stdin. Run it with `make demo`.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ibtool=${IBTOOL:-$root/bin/ibtool}
umad2sim=/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so
PATH=$PATH:/usr/sbin:/sbin

# DEMO_TOPO (a net file within ibsim's default limits, e.g.
# testdata/topologies/fattree-50.net), else the repository's tiny.net.
topo=${DEMO_TOPO:-$root/testdata/topologies/tiny.net}

die() { echo "demo: $*" >&2; exit 1; }
[ -x "$ibtool" ] || die "$ibtool not built (run make build)"
for tool in ibsim opensm; do
	command -v $tool >/dev/null || die "$tool not installed (run make deps)"
done
[ -f "$umad2sim" ] || die "$umad2sim missing (run make deps)"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/ibtool-demo.XXXXXX")
sock=ibtdemo$$
ibsim_pid= osm_pid= cmd_pid=

stop() { # pid: SIGTERM, SIGKILL after 2 s
	local pid=$1 i
	[ -n "$pid" ] || return 0
	kill -TERM "$pid" 2>/dev/null || return 0
	for i in $(seq 20); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
}
cleanup() {
	local rc=$?
	stop "$cmd_pid"
	stop "$osm_pid"
	stop "$ibsim_pid"
	if [ $rc -ne 0 ]; then
		for log in osm.log ibsim.log; do
			[ -s "$tmp/$log" ] && { echo "--- tail of $log"; tail -n 15 "$tmp/$log"; } >&2
		done
	fi
	rm -rf "$tmp"
	echo "demo: fabric stopped"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

echo "demo: starting ibsim on $topo (IBSIM_SOCKNAME=$sock)"
# -n: no console, so ibsim does not read (and spin on) an empty stdin.
IBSIM_SOCKNAME=$sock ibsim -s -n "$topo" </dev/null >"$tmp/ibsim.log" 2>&1 &
ibsim_pid=$!
for i in $(seq 100); do
	grep -q "@$sock:ctl" /proc/net/unix && break
	kill -0 $ibsim_pid 2>/dev/null || die "ibsim exited"
	sleep 0.1
done
grep -q "@$sock:ctl" /proc/net/unix || die "ibsim did not open its socket"

echo "demo: starting OpenSM"
# -d2 flushes OpenSM's log after every line, so we see SUBNET UP at once.
# umad2sim writes ./sys-<pid>/, hence the cd.
(cd "$tmp" && exec env LD_PRELOAD=$umad2sim IBSIM_SOCKNAME=$sock OSM_TMP_DIR="$tmp" OSM_CACHE_DIR="$tmp" \
	opensm -d2 -f "$tmp/osm.log" </dev/null >"$tmp/osm.out" 2>&1) &
osm_pid=$!
for i in $(seq 300); do
	grep -q "SUBNET UP" "$tmp/osm.log" 2>/dev/null && break
	kill -0 $osm_pid 2>/dev/null || die "OpenSM exited"
	sleep 0.1
done
grep -q "SUBNET UP" "$tmp/osm.log" || die "subnet not up after 30 s"
echo "demo: subnet up"

export IBSIM_SOCKNAME=$sock IBTOOL_TRANSPORT=ibsim
run() {
	echo
	echo "\$ ibtool $*"
	local rc=0
	# In the background, so that a signal to this script is handled at once.
	timeout 20 "$ibtool" "$@" </dev/null &
	cmd_pid=$!
	wait $cmd_pid || rc=$?
	cmd_pid=
	if [ $rc -ne 0 ]; then
		echo "(note: 'ibtool $*' exited with $rc)"
	fi
}
# The main job: discover the fabric, then look at it from a few sides.
run ibnetdiscover
run iblinkinfo
run ibstat
run smpquery portinfo 2 1
run perfquery 2 1
run saquery 2
echo
