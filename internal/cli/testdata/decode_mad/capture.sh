#!/bin/sh
# capture.sh records the MADs an infiniband-diags 44 tool sends and
# receives, for decode_mad's golden tests.
#
# Usage: capture.sh OUTDIR NAME CMD [ARGS...]
#
# Needs a running ibsim (with OpenSM) reachable as $IBSIM_SOCKNAME. Runs
# CMD with -dddd and keeps, as hex with blocks split by "--":
#   OUTDIR/NAME.cmd   the command line
#   OUTDIR/NAME.txt   the tool's standard output
#   OUTDIR/NAME.send  the MADs libibmad sent, each after its 64-byte umad
#                     header ("send buf")
#   OUTDIR/NAME.mad   the MADs it received ("rcv buf"; saquery's
#                     "SA Response:" on stdout)
#   OUTDIR/NAME.req   saquery's requests ("SA Request:", no umad header)
# and removes the files that came out empty.
set -eu
out=$1 name=$2
shift 2
: "${IBSIM_SOCKNAME:?set IBSIM_SOCKNAME to the simulator's socket name}"
umad2sim=/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so

echo "$*" >"$out/$name.cmd"
prog=$1
shift
LD_PRELOAD=$umad2sim timeout 10 "$prog" -dddd "$@" >"$out/$name.txt" 2>"$out/$name.trace" || true
grab() {
	awk -v want1="$1" -v want2="$2" '
		$0 == want1 || $0 == want2 { if (n++) print "--"; grab = 1; next }
		grab && /^[0-9a-f][0-9a-f][0-9a-f][0-9a-f]( [0-9a-f][0-9a-f][0-9a-f][0-9a-f])* ?$/ { sub(/ $/, ""); print; next }
		{ grab = 0 }
	' "$3" "$4"
}
grab "send buf" "send buf" "$out/$name.trace" /dev/null >"$out/$name.send"
grab "rcv buf" "SA Response:" "$out/$name.trace" "$out/$name.txt" >"$out/$name.mad"
grab "SA Request:" "SA Request:" "$out/$name.txt" /dev/null >"$out/$name.req"
rm -f "$out/$name.trace"
for f in send mad req; do [ -s "$out/$name.$f" ] || rm -f "$out/$name.$f"; done
