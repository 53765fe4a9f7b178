#!/bin/sh
# capture.sh records what the C reference tools (infiniband-diags 44) print
# and the raw reply MADs they decoded, for the golden tests in this package.
#
# Usage: capture.sh OUTDIR NAME CMD [ARGS...]
#
# Needs a running ibsim (with OpenSM) reachable as $IBSIM_SOCKNAME. Writes
#   OUTDIR/NAME.cmd  the command line
#   OUTDIR/NAME.txt  the tool's standard output, byte for byte
#   OUTDIR/NAME.mad  every reply MAD the tool received ("rcv buf" of -dddd),
#                    256 bytes each as hex words, blocks separated by "--"
set -eu
out=$1 name=$2
shift 2
: "${IBSIM_SOCKNAME:?set IBSIM_SOCKNAME to the simulator's socket name}"
umad2sim=/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so
run() { LD_PRELOAD=$umad2sim timeout 10 "$@"; }

echo "$*" >"$out/$name.cmd"
prog=$1
shift
# One run gives both: -dddd traces to stderr and leaves stdout as it is.
run "$prog" -dddd "$@" >"$out/$name.txt" 2>"$out/$name.trace"
awk '
	/^rcv buf$/ { if (n++) print "--"; grab = 16; next }
	grab > 0 { print; grab-- }
' "$out/$name.trace" >"$out/$name.mad"
rm -f "$out/$name.trace"
