#!/bin/busybox sh
# /init of the ibtool test VM (built by scripts/vm/test-vm.sh). Sets up two
# SoftRoCE devices, rxe0 on veth0 (10.99.0.1) and rxe1 on veth1
# (10.99.0.2), with policy routing so traffic between them really crosses
# the veth pair, then compares ibtool with the C tools. Every check prints
# one line starting with PASS, FAIL, SKIP or TODO; bandwidth figures are on
# lines starting with "BW "; the last line is "VMTEST DONE".

/bin/busybox --install -s /bin
export PATH=/usr/bin:/usr/sbin:/bin:/sbin HOME=/ TERM=dumb
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /tmp
hostname ibtool-vm
# This busybox runs its own applets before anything in PATH: iproute2's ip
# by its full name.
IP=/usr/sbin/ip

SIZE=65536     # bytes per RDMA WRITE, the same for both tools
ITERS=1000     # writes per bandwidth run
DEPTH=128      # writes in flight (perftest's default)
MIN_RATIO=0.80 # ibtool rdma_bw / ib_write_bw

now() { cut -d' ' -f1 /proc/uptime; }
stamp() { echo "== $* (guest time $(now)s)"; }
PASS() { echo "PASS $*"; }
FAIL() { echo "FAIL $*"; }
SKIP() { echo "SKIP $*"; }
finish() {
	echo "VMTEST DONE"
	sync
	reboot -f
}
# same NAME: compares /tmp/c.out (C tool) with /tmp/g.out (ibtool), and
# their exit codes.
same() {
	if [ "$cx" = "$gx" ] && cmp -s /tmp/c.out /tmp/g.out; then
		PASS "$1"
	else
		FAIL "$1 (exit $cx vs $gx)"
		diff -u /tmp/c.out /tmp/g.out | head -40
	fi
}
# compare NAME C-COMMAND... -- IBTOOL-COMMAND...
compare() {
	name=$1
	shift
	c=""
	while [ "$1" != "--" ]; do
		c="$c $1"
		shift
	done
	shift
	$c >/tmp/c.out 2>&1
	cx=$?
	"$@" >/tmp/g.out 2>&1
	gx=$?
	same "$name"
}

stamp "guest up"
for m in $(cat /modules/order); do
	insmod "/modules/$m" || FAIL "insmod $m"
done

# --- network: veth pair, policy routing --------------------------------------
$IP link set lo up
$IP link add veth0 type veth peer name veth1
$IP addr add 10.99.0.1/24 dev veth0
$IP addr add 10.99.0.2/24 dev veth1
$IP link set veth0 up
$IP link set veth1 up
for f in all default lo veth0 veth1; do
	echo 1 >/proc/sys/net/ipv4/conf/$f/accept_local
	echo 0 >/proc/sys/net/ipv4/conf/$f/rp_filter
done
# Locally generated traffic from one address to the other leaves through
# that address's veth; the local table comes after these rules, so the
# kernel does not short-cut through lo (rxe would drop such packets).
$IP route add 10.99.0.2 dev veth0 src 10.99.0.1 table 100
$IP route add 10.99.0.1 dev veth1 src 10.99.0.2 table 101
$IP rule add pref 10 iif lo from 10.99.0.1 to 10.99.0.2 lookup 100
$IP rule add pref 11 iif lo from 10.99.0.2 to 10.99.0.1 lookup 101
$IP rule add pref 100 lookup local
$IP rule del pref 0 lookup local

rdma link add rxe0 type rxe netdev veth0 || FAIL "rdma link add rxe0"
rdma link add rxe1 type rxe netdev veth1 || FAIL "rdma link add rxe1"
for i in $(seq 100); do
	grep -q ACTIVE /sys/class/infiniband/rxe0/ports/1/state 2>/dev/null &&
		grep -q ACTIVE /sys/class/infiniband/rxe1/ports/1/state 2>/dev/null && break
	sleep 0.1
done
grep -q ACTIVE /sys/class/infiniband/rxe1/ports/1/state 2>/dev/null || {
	FAIL "rxe ports did not become active"
	finish
}

# gid_index DEV HEXIP: the GID table index of the IPv4-mapped GID.
gid_index() {
	for g in /sys/class/infiniband/$1/ports/1/gids/*; do
		if [ "$(cat "$g" 2>/dev/null)" = "0000:0000:0000:0000:0000:ffff:$2" ]; then
			basename "$g"
			return
		fi
	done
	echo 1
}
GID0=$(gid_index rxe0 0a63:0001)
GID1=$(gid_index rxe1 0a63:0002)
stamp "rxe0 and rxe1 active, IPv4 GIDs at index $GID0 and $GID1"

# With ibtool.capture=1 on the kernel command line (IBTOOL_VM_CAPTURE on the
# host), print the outputs unit tests use as golden data.
capture() {
	echo "CAPTURE-BEGIN $1"
	shift
	"$@" 2>&1
	echo "CAPTURE-END"
}
if grep -q 'ibtool.capture=1' /proc/cmdline; then
	capture rxe_devices.txt ibv_devices
	capture rxe_devices.json ibtool ibv_devices --json
	capture rxe_devinfo.txt ibv_devinfo
	capture rxe_devinfo_v.txt ibv_devinfo -v
	capture rxe_devinfo.json ibtool ibv_devinfo --json
fi

# --- kernel umad transport: GMPs over QP1 (run at the end) ---------------------
# RoCE has no QP0, SM, SA or LIDs: ibtool registers only the GMP classes it
# uses and addresses the peer by its link-local GID (index 0; replies to
# requests sent from the IPv4-mapped GIDs are not matched by ib_mad).
# Clients run under a timeout so that a hang fails fast; servers are
# stopped by their pid.
MADTIME=30
LL0=$(cat /sys/class/infiniband/rxe0/ports/1/gids/0)
# server CMD...: starts a MAD server in the background, output in
# /tmp/srv.out, its pid in $srv.
server() {
	"$@" >/tmp/srv.out 2>&1 &
	srv=$!
	sleep 1 # registered long before that; no way to ask
}
# stop_server NAME: stops $srv; a server that died early is a failure.
stop_server() {
	if kill $srv 2>/dev/null; then
		wait $srv 2>/dev/null
	else
		wait $srv
		FAIL "$1 server exited early (exit $?)"
		cat /tmp/srv.out
	fi
}
# fails_one_line NAME PATTERN CMD...: CMD fails with one line matching
# PATTERN.
fails_one_line() {
	name=$1 pat=$2
	shift 2
	timeout $MADTIME "$@" >/tmp/g.out 2>&1
	gx=$?
	if [ $gx != 0 ] && [ $gx != 124 ] && [ "$(wc -l </tmp/g.out)" = 1 ] && grep -q "$pat" /tmp/g.out; then
		PASS "$name: one line, exit $gx: $(cat /tmp/g.out)"
	else
		FAIL "$name (exit $gx)"
		cat /tmp/g.out
	fi
}
gmp_checks() {
	stamp "GMP checks: rxe0 GID 0 is $LL0"
	server ibtool ibping -S -C rxe0 -P 1
	timeout $MADTIME ibtool ibping -C rxe1 -P 1 -c 5 "$LL0" >/tmp/g.out 2>&1
	gx=$?
	stop_server "ibping -S"
	cat /tmp/g.out
	if [ $gx = 0 ] && [ "$(grep -c "^Pong from $(hostname).* (Gid fe80:" /tmp/g.out)" = 5 ] &&
		grep -q '^5 packets transmitted, 5 received, 0% packet loss' /tmp/g.out; then
		PASS "ibping -c 5 from rxe1 to rxe0's fe80:: GID, answered by ibping -S on rxe0: 5 of 5 pongs"
	else
		FAIL "ibping rxe1 -> ibping -S on rxe0 (exit $gx)"
		cat /tmp/srv.out
	fi

	# The same GID scoped to rxe1, which picks the local port (without
	# -C the default would be rxe0, the GID's own port); a scope that
	# contradicts -C, or a LID, is a one-line error.
	server ibtool ibping -S -C rxe0
	timeout $MADTIME ibtool ibping -c 1 --json "$LL0%rxe1/1" >/tmp/g.out 2>&1
	gx=$?
	stop_server "ibping -S"
	if [ $gx = 0 ] && grep -q '"received": 1' /tmp/g.out; then
		PASS "ibping --json to the scoped GID $LL0%rxe1/1: 1 of 1 pongs"
	else
		FAIL "ibping --json to the scoped GID (exit $gx)"
		cat /tmp/g.out /tmp/srv.out
	fi
	fails_one_line "ibping -C rxe0 to a GID scoped to rxe1" "scoped to local port" \
		ibtool ibping -C rxe0 -c 1 "$LL0%rxe1/1"
	fails_one_line "ibping to a LID on RoCE" "RoCE has no LIDs or directed routes: address the port by GID" \
		ibtool ibping -C rxe1 -c 1 1

	# PerfMgt over QP1: rxe has no PMA, so rxe0's kernel itself answers
	# (status 0x000c), which proves the round trip.
	fails_one_line "perfquery from rxe1 to rxe0's GID (answered by rxe0's kernel: no PMA)" "MAD status 0x000c" \
		ibtool perfquery -C rxe1 "$LL0"

	server ibtool ibsysstat -S -C rxe0
	timeout $MADTIME ibtool ibsysstat -C rxe1 "$LL0" >/tmp/g.out 2>&1
	px=$?
	timeout $MADTIME ibtool ibsysstat -C rxe1 "$LL0" host >/tmp/g2.out 2>&1
	hx=$?
	timeout $MADTIME ibtool ibsysstat -C rxe1 "$LL0" cpu >/tmp/g3.out 2>&1
	cx=$?
	stop_server "ibsysstat -S"
	cat /tmp/g.out /tmp/g2.out /tmp/g3.out
	if [ $px = 0 ] && [ "$(cat /tmp/g.out)" = "sysstat ping succeeded" ] &&
		[ $hx = 0 ] && grep -q "^$(hostname)" /tmp/g2.out &&
		[ $cx = 0 ] && [ "$(grep -c '^cpu [0-9]' /tmp/g3.out)" = "$(grep -c '^processor' /proc/cpuinfo)" ]; then
		PASS "ibsysstat ping, host and cpu from rxe1 to rxe0's fe80:: GID, answered by ibsysstat -S on rxe0"
	else
		FAIL "ibsysstat rxe1 -> ibsysstat -S on rxe0 (exits $px/$hx/$cx)"
		cat /tmp/srv.out
	fi

	# SMPs: the kernel refuses QP0 agents on RoCE.
	fails_one_line "smpquery on RoCE" "RoCE has no QP0" ibtool smpquery -C rxe0 nodeinfo 1
	fails_one_line "smpquery -D on RoCE" "RoCE has no QP0" ibtool smpquery -C rxe0 -D nodeinfo 0
}
if grep -q 'ibtool.quick=1' /proc/cmdline; then
	SKIP "device, bandwidth and verbs package checks (quick run)"
	gmp_checks
	stamp "all checks done"
	finish
fi

# --- ibv_devices, ibv_devinfo ---------------------------------------------------
compare "ibv_devices" ibv_devices -- ibtool ibv_devices
compare "ibv_devinfo" ibv_devinfo -- ibtool ibv_devinfo
compare "ibv_devinfo -v" ibv_devinfo -v -- ibtool ibv_devinfo -v
compare "ibv_devinfo -d rxe1" ibv_devinfo -d rxe1 -- ibtool ibv_devinfo -d rxe1
compare "ibv_devinfo -d rxe0 -i 1 -v" ibv_devinfo -d rxe0 -i 1 -v -- ibtool ibv_devinfo -d rxe0 -i 1 -v
compare "ibv_devinfo -l" ibv_devinfo -l -- ibtool ibv_devinfo -l
ibtool ibv_devinfo --json >/tmp/g.out 2>&1
if grep -q '"hca_id": "rxe0"' /tmp/g.out && grep -q '"hca_id": "rxe1"' /tmp/g.out; then
	PASS "ibv_devinfo --json lists rxe0 and rxe1"
else
	FAIL "ibv_devinfo --json"
	head -20 /tmp/g.out
fi

# Without libibverbs: one line for verbs commands, the rest still works.
IBTOOL_LIBIBVERBS=/nonexistent/libibverbs.so.1 ibtool ibv_devices >/tmp/g.out 2>&1
gx=$?
if [ "$gx" = 255 ] && [ "$(wc -l </tmp/g.out)" = 1 ] && grep -q 'libibverbs is not available' /tmp/g.out &&
	IBTOOL_LIBIBVERBS=/nonexistent/libibverbs.so.1 ibtool --version >/dev/null 2>&1; then
	PASS "without libibverbs: one line, exit 255; other commands run"
else
	FAIL "without libibverbs (exit $gx)"
	cat /tmp/g.out
fi
stamp "device checks done"

# --- bandwidth: ibtool rdma_bw next to perftest's ib_write_bw -----------------
json_num() { sed -n "s/.*\"$1\": \\([0-9.e+-]*\\).*/\\1/p" "$2" | head -1; }
rcvd_pkts() { cat /sys/class/infiniband/rxe0/ports/1/hw_counters/rcvd_pkts 2>/dev/null || echo 0; }

# perftest_bw: one ib_write_bw run, rxe1 -> rxe0; prints BW average.
perftest_bw() {
	ib_write_bw -d rxe0 -x "$GID0" -s $SIZE -n $ITERS -t $DEPTH -p 18515 -F >/tmp/pt-srv.out 2>&1 &
	srv=$!
	sleep 1
	ib_write_bw -d rxe1 -x "$GID1" -s $SIZE -n $ITERS -t $DEPTH -p 18515 -F 10.99.0.1 >/tmp/pt-cli.out 2>&1
	wait $srv
	awk -v s=$SIZE '$1 == s && NF >= 5 {print $4; exit}' /tmp/pt-cli.out
}

# ibtool_bw: one rdma_bw run, rxe1 -> rxe0; prints BW average, checks the
# bytes moved.
ibtool_bw() {
	before=$(rcvd_pkts)
	ibtool rdma_bw -d rxe0 -x "$GID0" -p 4444 --json >/tmp/rb-srv.json 2>/tmp/rb-srv.err &
	srv=$!
	ibtool rdma_bw -d rxe1 -x "$GID1" -s $SIZE -n $ITERS -t $DEPTH -p 4444 --json 10.99.0.1 \
		>/tmp/rb-cli.json 2>/tmp/rb-cli.err
	cli=$?
	wait $srv
	srvx=$?
	after=$(rcvd_pkts)
	want=$((SIZE * ITERS))
	mtu=$(json_num path_mtu_bytes /tmp/rb-cli.json)
	pkts=$((after - before))
	if [ $cli = 0 ] && [ $srvx = 0 ] && [ "$(json_num bytes /tmp/rb-cli.json)" = $want ] &&
		[ "$(json_num bytes /tmp/rb-srv.json)" = $want ] &&
		grep -q '"verified": true' /tmp/rb-cli.json && grep -q '"verified": true' /tmp/rb-srv.json &&
		[ -n "$mtu" ] && [ $pkts -ge $((ITERS * ((SIZE + mtu - 1) / mtu))) ]; then
		echo "ok $pkts" >/tmp/rb-check
	else
		{
			echo "bad: exits $cli/$srvx, rxe0 received $pkts packets"
			cat /tmp/rb-cli.json /tmp/rb-cli.err /tmp/rb-srv.json /tmp/rb-srv.err
		} >/tmp/rb-check
	fi
	json_num bw_average_mb_per_sec /tmp/rb-cli.json
}

best_pt=0
best_ib=0
# The host may be busy (TCG is plain CPU emulation): compare the best of
# each tool over up to five rounds, alternating which one goes first.
for round in 1 2 3 4 5; do
	if [ $((round % 2)) = 1 ]; then
		pt=$(perftest_bw)
		ib=$(ibtool_bw)
	else
		ib=$(ibtool_bw)
		pt=$(perftest_bw)
	fi
	ib=$(awk -v b="$ib" 'BEGIN {if (b != "") printf "%.2f", b}')
	echo "== round $round: ib_write_bw ${pt:-failed} MB/sec, ibtool rdma_bw ${ib:-failed} MB/sec"
	if [ $round = 1 ]; then
		if grep -q '^ok' /tmp/rb-check; then
			PASS "rdma_bw rxe1 -> rxe0 moved $((SIZE * ITERS)) bytes ($ITERS x $SIZE, $(cut -d' ' -f2 /tmp/rb-check) packets at rxe0), server verified the data"
		else
			FAIL "rdma_bw rxe1 -> rxe0"
			cat /tmp/rb-check
		fi
	fi
	best_pt=$(awk -v a="$best_pt" -v b="${pt:-0}" 'BEGIN {print (b > a) ? b : a}')
	best_ib=$(awk -v a="$best_ib" -v b="${ib:-0}" 'BEGIN {print (b > a) ? b : a}')
	ok=$(awk -v i="$best_ib" -v p="$best_pt" -v m=$MIN_RATIO 'BEGIN {print (p > 0 && i / p >= m) ? 1 : 0}')
	[ "$ok" = 1 ] && break
	[ -s /tmp/pt-cli.out ] && ! awk -v s=$SIZE '$1 == s {f = 1} END {exit !f}' /tmp/pt-cli.out && tail -5 /tmp/pt-cli.out
done
ratio=$(awk -v i="$best_ib" -v p="$best_pt" 'BEGIN {if (p > 0) printf "%.2f", i / p; else print "n/a"}')
echo "BW $SIZE-byte RDMA WRITE, $ITERS iterations, depth $DEPTH, rxe1 -> rxe0: ibtool rdma_bw $best_ib MB/sec | perftest ib_write_bw $best_pt MB/sec | ratio $ratio"
if [ "$(awk -v i="$best_ib" -v p="$best_pt" -v m=$MIN_RATIO 'BEGIN {print (p > 0 && i / p >= m) ? 1 : 0}')" = 1 ]; then
	PASS "rdma_bw bandwidth is $ratio of ib_write_bw's (>= $MIN_RATIO)"
else
	FAIL "rdma_bw bandwidth ratio $ratio < $MIN_RATIO"
fi

# The human-readable report, with several SGEs per write.
ibtool rdma_bw -d rxe0 -x "$GID0" -p 4445 >/tmp/rb-srv.txt 2>&1 &
srv=$!
ibtool rdma_bw -d rxe1 -x "$GID1" -s $SIZE -n 100 -e 4 -p 4445 10.99.0.1 >/tmp/rb-cli.txt 2>&1
cli=$?
wait $srv
srvx=$?
cat /tmp/rb-cli.txt
if [ $cli = 0 ] && [ $srvx = 0 ] && grep -q "^ $SIZE .* 6553600 .* yes" /tmp/rb-cli.txt; then
	PASS "rdma_bw text report, 4 SGEs per write"
else
	FAIL "rdma_bw text report (exit $cli/$srvx)"
	cat /tmp/rb-srv.txt
fi
stamp "bandwidth checks done"

# --- kernel umad transport: local CA and port information ----------------------
for tool in ibstat ibstatus; do
	if ! ibtool $tool --help >/dev/null 2>&1; then
		SKIP "$tool: ibtool has no $tool command yet (F1); nothing to compare"
		continue
	fi
	compare "$tool" $tool -- ibtool $tool
	compare "$tool rxe1" $tool rxe1 -- ibtool $tool rxe1
done
if ibtool ibstat --help >/dev/null 2>&1; then
	compare "ibstat -l" ibstat -l -- ibtool ibstat -l
	compare "ibstat -p" ibstat -p -- ibtool ibstat -p
	compare "ibstat -s rxe0" ibstat -s rxe0 -- ibtool ibstat -s rxe0
fi
# The verbs package on real devices: RC send/receive, RDMA write/read,
# concurrent posting, typed post/completion/async errors, Close. Last:
# it takes veth1 down and up.
cd /tmp
IBTOOL_VERBS_TEST_DEVICES=rxe0,rxe1 IBTOOL_VERBS_TEST_GID=$GID0 \
	IBTOOL_VERBS_TEST_NETDEV=veth1 IBTOOL_VERBS_TEST_IP=$IP \
	verbs.test -test.run '^TestDevice[A-Z]' -test.v -test.timeout 120s >/tmp/verbs-test.out 2>&1
vx=$?
cd /
grep -E '^(=== RUN|--- |    device_test)' /tmp/verbs-test.out | sed 's/^/  /'
if [ $vx = 0 ] && [ "$(grep -c '^--- PASS: TestDevice[A-Z]' /tmp/verbs-test.out)" = 4 ]; then
	PASS "verbs package device tests (RC traffic, concurrency, typed errors, async events, Close) on rxe0/rxe1"
else
	FAIL "verbs package device tests (exit $vx)"
	tail -30 /tmp/verbs-test.out
fi
stamp "verbs package tests done"

# The verbs tests took veth1 down and up: the first MAD rxe1 sends after
# that spends about a second in the kernel before the umad write returns
# (the engine's timer has not started: no retry; presumably address
# resolution for the GRH), so the first ping shows about 1000 ms.
gmp_checks
stamp "all checks done"
finish
