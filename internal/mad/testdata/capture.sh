#!/bin/sh
# capture.sh records what the C reference tools (infiniband-diags 44) print
# and the raw reply MADs they decoded, for the golden tests in this package.
#
# Usage: capture.sh OUTDIR NAME CMD [ARGS...]
#
# Needs a running ibsim (with OpenSM) reachable as $IBSIM_SOCKNAME. Writes
#   OUTDIR/NAME.cmd  the command line
#   OUTDIR/NAME.txt  the tool's standard output, byte for byte
#   OUTDIR/NAME.mad  every reply MAD the tool received as hex words, blocks
#                    separated by "--"; 256 bytes each, but SA replies only
#                    as long as saquery got them (see below)
#
# Tools built on libibmad's mad_rpc (smpquery, perfquery, ...) trace with
# -dddd to stderr ("rcv buf" and 16 lines of hex). saquery talks to libibumad
# itself: with -dd it writes "SA Request:" and "SA Response:" hex dumps
# (16 lines each) into its standard output, which is split off here.
set -eu
out=$1 name=$2
shift 2
: "${IBSIM_SOCKNAME:?set IBSIM_SOCKNAME to the simulator's socket name}"
umad2sim=/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so
run() { LD_PRELOAD=$umad2sim timeout 10 "$@"; }

echo "$*" >"$out/$name.cmd"
prog=$1
shift
if [ "$prog" = saquery ]; then
	run "$prog" -dd "$@" >"$out/$name.trace" 2>/dev/null || true
	# A dump has as many lines as the MAD has bytes (the SA's reply is
	# as long as its records: 56 header bytes plus AttributeOffset*8 per
	# record), the last one possibly short.
	awk -v txt="$out/$name.txt" '
		/^SA Request:$/ { hex = 0; skip = 1; next }
		/^SA Response:$/ { if (n++) print "--"; hex = 1; skip = 0; next }
		(hex || skip) && /^([0-9a-f][0-9a-f][0-9a-f][0-9a-f] ?)+$/ { if (hex) print; next }
		{ hex = 0; skip = 0; print > txt }
	' "$out/$name.trace" >"$out/$name.mad"
	touch "$out/$name.txt"
	rm -f "$out/$name.trace"
	exit 0
fi
# One run gives both: -dddd traces to stderr and leaves stdout as it is.
run "$prog" -dddd "$@" >"$out/$name.txt" 2>"$out/$name.trace"
awk '
	/^rcv buf$/ { if (n++) print "--"; grab = 16; next }
	grab > 0 { print; grab-- }
' "$out/$name.trace" >"$out/$name.mad"
rm -f "$out/$name.trace"
