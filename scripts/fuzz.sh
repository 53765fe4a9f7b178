#!/bin/sh
# Fuzzes every decoder and loader for FUZZTIME each (`make fuzz`; not in
# `make test`) and writes the execs per target into docs/reliability.md,
# between its fuzz markers. Exits non-zero when a target finds a crasher
# (go test leaves it under the package's testdata/fuzz/ to reproduce).
#
#   FUZZTIME=30s scripts/fuzz.sh          # all targets
#   FUZZTIME=5s scripts/fuzz.sh ./internal/cache   # one package's
set -u
FUZZTIME=${FUZZTIME:-10s}
GO=${GO:-go}
DOC=${DOC:-docs/reliability.md}
pkgs=${*:-./...}
results=$(mktemp)
trap 'rm -f "$results" "$results.log"' EXIT
failed=0
total=0
for pkg in $($GO list -f '{{if or .TestGoFiles .XTestGoFiles}}{{.ImportPath}}{{end}}' $pkgs); do
	dir=$($GO list -f '{{.Dir}}' "$pkg")
	for target in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go | sed 's/^func //' | sort); do
		$GO test -run '^$' -fuzz "^$target\$" -fuzztime "$FUZZTIME" -fuzzminimizetime 2s "$pkg" >"$results.log" 2>&1
		status=$?
		execs=$(grep -o 'execs: [0-9]*' "$results.log" | tail -1 | cut -d' ' -f2)
		short=${pkg#github.com/ibtool/ibtool/}
		if [ $status -ne 0 ] && grep -q 'Failing input written to' "$results.log"; then
			failed=$((failed + 1))
			echo "| $short | $target | ${execs:-0} | CRASHER |" >>"$results"
			echo "fuzz: $short $target found a crasher:" >&2
			tail -20 "$results.log" >&2
		elif [ $status -ne 0 ]; then
			# No input failed: the fuzzer itself gave up, e.g. "context
			# deadline exceeded" when a loaded machine makes it miss its
			# own deadline. Reported, not counted as a crasher.
			reason=$(grep -v '^\(fuzz:\|FAIL\|exit status\|---\)' "$results.log" | head -1 | sed 's/^[[:space:]]*//; s/|/\\|/g')
			echo "| $short | $target | ${execs:-0} | fuzzer stopped: $reason |" >>"$results"
			total=$((total + ${execs:-0}))
		else
			echo "| $short | $target | ${execs:-0} | ok |" >>"$results"
			total=$((total + ${execs:-0}))
		fi
		echo "fuzz: $short $target: ${execs:-0} execs" >&2
	done
done
n=$(wc -l <"$results")
{
	echo "$n targets, $FUZZTIME each, $(date -u +%Y-%m-%d) on $(nproc) CPUs ($(uname -m)); $total execs in all."
	echo
	echo "| package | target | execs | result |"
	echo "|---|---|---|---|"
	cat "$results"
} >"$results.table"
if [ -f "$DOC" ] && grep -q '<!-- fuzz results: start' "$DOC"; then
	awk -v table="$results.table" '
		/<!-- fuzz results: start/ { print; while ((getline line < table) > 0) print line; skip = 1; next }
		/<!-- fuzz results: end/ { skip = 0 }
		!skip { print }' "$DOC" >"$DOC.tmp" && mv "$DOC.tmp" "$DOC"
else
	cat "$results.table"
fi
rm -f "$results.table"
[ $failed -eq 0 ]
