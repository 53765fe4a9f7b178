#!/usr/bin/env bash
# make test-vm: boots Debian bookworm's stock kernel in qemu (TCG) with a
# small initramfs holding the RDMA modules, rdma-core, perftest,
# infiniband-diags and ibtool, creates two SoftRoCE (rxe) devices on a veth
# pair and checks ibtool's verbs commands and the kernel umad transport
# against the C tools in one guest run (scripts/vm/guest-init.sh). ibtool is
# built with CGO_ENABLED=0, as "go install" builds it on a host without a C
# toolchain.
#
# Installs what it needs on the host when missing (needs root then), keeps
# the extracted kernel and modules in $IBTOOL_VM_CACHE (default
# ${XDG_CACHE_HOME:-$HOME/.cache}/ibtool-vm), builds the initramfs in a
# temporary directory and kills qemu after $IBTOOL_VM_TIMEOUT seconds
# (default 300). Exits non-zero when a check fails; each step of the guest
# setup says why where it is done (here and in guest-init.sh).
# IBTOOL_VM_QUICK=1 skips the bandwidth runs and the verbs package tests
# (for iterating on the other checks).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
cache=${IBTOOL_VM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ibtool-vm}
vm_timeout=${IBTOOL_VM_TIMEOUT:-300}
t0=$(date +%s)

say() { printf 'test-vm: %s\n' "$*"; }
die() { printf 'test-vm: FAIL: %s\n' "$*" >&2; exit 1; }
elapsed() { echo $(($(date +%s) - t0)); }

# --- host packages -----------------------------------------------------------
# package -> a file it installs (checked instead of dpkg state, which is
# quicker and also right when the tool came some other way).
declare -A need=(
	[qemu-system-x86]=/usr/bin/qemu-system-x86_64
	[busybox-static]=/bin/busybox
	[cpio]=/usr/bin/cpio
	[kmod]=/usr/sbin/depmod
	[xz-utils]=/usr/bin/xz
	[iproute2]=/usr/bin/rdma
	[rdma-core]=/usr/share/doc/rdma-core
	[ibverbs-providers]=/etc/libibverbs.d/rxe.driver
	[ibverbs-utils]=/usr/bin/ibv_devinfo
	[libibverbs-dev]=/usr/include/infiniband/verbs.h
	[perftest]=/usr/bin/ib_write_bw
	[infiniband-diags]=/usr/sbin/ibstat
)
missing=()
for pkg in "${!need[@]}"; do
	[ -e "${need[$pkg]}" ] || missing+=("$pkg")
done
# The dynamic busybox package also installs /bin/busybox.
if [ -e /bin/busybox ] && ldd /bin/busybox >/dev/null 2>&1; then
	missing+=(busybox-static)
fi
if [ ${#missing[@]} -gt 0 ]; then
	[ "$(id -u)" = 0 ] || die "missing host packages (${missing[*]}); run as root or install them"
	say "installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq </dev/null
	apt-get install -y -qq --no-install-recommends "${missing[@]}" </dev/null >/dev/null
fi
command -v go >/dev/null || die "go is not installed"

# --- kernel and modules (cached) ---------------------------------------------
modules=(ib_core ib_uverbs rdma_rxe ib_umad rdma_ucm veth dummy crc32_generic)
kpkg=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/ {print $2; exit}')
if [ -z "$kpkg" ]; then
	[ "$(id -u)" = 0 ] || die "cannot find Debian's linux-image-amd64 (run apt-get update as root)"
	apt-get update -qq </dev/null
	kpkg=$(apt-cache depends linux-image-amd64 | awk '/Depends: linux-image-[0-9]/ {print $2; exit}')
fi
[ -n "$kpkg" ] || die "cannot find Debian's linux-image-amd64 package"
kdir=$cache/$kpkg
if [ ! -f "$kdir/ready" ]; then
	say "fetching $kpkg (first run; cached in $kdir)"
	dl=$(mktemp -d)
	trap 'rm -rf "$dl"' EXIT
	(cd "$dl" && apt-get download "$kpkg" </dev/null >/dev/null 2>&1) || die "apt-get download $kpkg failed"
	dpkg -x "$dl"/*.deb "$dl/x"
	kver=$(ls "$dl/x/lib/modules")
	depmod -b "$dl/x" "$kver"
	rm -rf "$kdir"
	mkdir -p "$kdir/modules"
	# The uncompressed kernel boots through its PVH entry: no xz
	# decompression under TCG on every run.
	vmlinuz=$dl/x/boot/vmlinuz-$kver
	off=$(LC_ALL=C grep -obUaP '\xfd7zXZ\x00' "$vmlinuz" | head -1 | cut -d: -f1)
	[ -n "$off" ] || die "no xz stream in $vmlinuz"
	tail -c +$((off + 1)) "$vmlinuz" | xz -dc >"$kdir/vmlinux" 2>/dev/null || true
	head -c 4 "$kdir/vmlinux" | grep -q ELF || die "could not extract vmlinux"
	# Load order: dependencies first, each module once.
	declare -A seen=()
	order=()
	moddir=$dl/x/lib/modules/$kver
	add() {
		local path=$1 dep
		[ -n "${seen[$path]:-}" ] && return
		seen[$path]=1
		for dep in $(awk -F': *' -v m="$path" '$1 == m {print $2}' "$moddir/modules.dep"); do
			add "$dep"
		done
		order+=("$path")
	}
	for m in "${modules[@]}"; do
		path=$(grep -E "(^|/)$m\.ko:" "$moddir/modules.dep" | cut -d: -f1 | head -1)
		[ -n "$path" ] || die "module $m not in $kver"
		add "$path"
	done
	for path in "${order[@]}"; do
		cp "$moddir/$path" "$kdir/modules/"
		basename "$path" >>"$kdir/modules/order"
	done
	echo "$kver" >"$kdir/kver"
	touch "$kdir/ready"
	rm -rf "$dl"
	trap - EXIT
	# Older kernels in the cache are stale.
	for old in "$cache"/*/; do
		[ "${old%/}" = "$kdir" ] || rm -rf "$old"
	done
fi
say "kernel $(cat "$kdir/kver") ready after $(elapsed)s"

# --- initramfs ---------------------------------------------------------------
work=$(mktemp -d "${TMPDIR:-/tmp}/ibtool-vm.XXXXXX")
trap 'rm -rf "$work"' EXIT
root=$work/root
mkdir -p "$root"/{bin,sbin,etc,proc,sys,dev,tmp,run,modules,usr/bin,usr/sbin,lib64}

# The header-free build users get from "go install": no cgo, libibverbs
# loaded at run time.
(cd "$repo" && CGO_ENABLED=0 go build -o "$root/usr/bin/ibtool" ./cmd/ibtool) || die "go build failed"
go version -m "$root/usr/bin/ibtool" | grep -q 'CGO_ENABLED=0' || die "ibtool was built with cgo"
# The verbs commands run in ibtool-verbs, where make install puts it.
mkdir -p "$root/usr/lib/ibtool"
(cd "$repo" && CGO_ENABLED=0 go build -o "$root/usr/lib/ibtool/ibtool-verbs" ./cmd/ibtool-verbs) || die "go build failed"
# The verbs package's device tests run in the guest too.
(cd "$repo" && CGO_ENABLED=0 go test -c -o "$root/usr/bin/verbs.test" ./internal/verbs) || die "go test -c failed"

# copy_file copies a file to the same path in the root, following links.
copy_file() {
	local f=$1
	[ -e "$root$f" ] && return
	mkdir -p "$root$(dirname "$f")"
	cp -L "$f" "$root$f"
}
# copy_elf copies an executable or library and the libraries it needs.
copy_elf() {
	local f=$1 lib
	copy_file "$f"
	for lib in $(ldd "$f" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// {print $1}'); do
		copy_file "$lib"
	done
}
cp /bin/busybox "$root/bin/busybox"
for b in /usr/bin/rdma /usr/sbin/ip /usr/bin/ibv_devices /usr/bin/ibv_devinfo /usr/bin/ib_write_bw \
	/usr/sbin/ibstat; do
	copy_elf "$b"
done
copy_elf "$root/usr/bin/ibtool"
copy_elf "$root/usr/lib/ibtool/ibtool-verbs"
copy_elf "$root/usr/bin/verbs.test"
copy_file /usr/sbin/ibstatus
for p in /usr/lib/x86_64-linux-gnu/libibverbs/librxe-*.so; do
	copy_elf "$p"
done
copy_file /etc/libibverbs.d/rxe.driver
copy_file /etc/ld.so.conf
for f in /etc/ld.so.conf.d/*.conf; do copy_file "$f"; done
ldconfig -r "$root" 2>/dev/null || true
cp "$kdir"/modules/* "$root/modules/"
cp "$here/guest-init.sh" "$root/init"
chmod +x "$root/init"
echo 'root:x:0:0:root:/:/bin/sh' >"$root/etc/passwd"
echo 'root:x:0:' >"$root/etc/group"
printf '127.0.0.1 localhost\n10.99.0.1 rxe0-host\n10.99.0.2 rxe1-host\n' >"$root/etc/hosts"
(cd "$root" && find . | cpio -o -H newc --quiet) >"$work/initrd.cpio"
say "initramfs $(($(stat -c %s "$work/initrd.cpio") / 1048576)) MiB ready after $(elapsed)s"

# --- boot ---------------------------------------------------------------------
log=$work/console.log
append="console=ttyS0 tsc=reliable clocksource=tsc panic=-1 quiet loglevel=3"
[ -n "${IBTOOL_VM_CAPTURE:-}" ] && append="$append ibtool.capture=1"
[ -n "${IBTOOL_VM_QUICK:-}" ] && append="$append ibtool.quick=1"
say "booting the guest (timeout ${vm_timeout}s)"
timeout -k 5 "$vm_timeout" qemu-system-x86_64 \
	-accel tcg,thread=multi -cpu max -smp 2 -m 1024 \
	-kernel "$kdir/vmlinux" -initrd "$work/initrd.cpio" \
	-append "$append" \
	-nic none -display none -monitor none -serial stdio -no-reboot </dev/null 2>&1 |
	tr -d '\r' | tee "$log" || true

if [ -n "${IBTOOL_VM_CAPTURE:-}" ]; then
	mkdir -p "$IBTOOL_VM_CAPTURE"
	awk -v dir="$IBTOOL_VM_CAPTURE" '
		/^CAPTURE-BEGIN / { f = dir "/" $2; printf "" > f; next }
		/^CAPTURE-END$/ { close(f); f = ""; next }
		f != "" { print > f }' "$log"
	say "captured outputs in $IBTOOL_VM_CAPTURE"
fi
passed=$(grep -c '^PASS' "$log" || true)
failed=$(grep -c '^FAIL' "$log" || true)
skipped=$(grep -c '^SKIP' "$log" || true)
echo
say "------------------------------------------------------------------"
grep -E '^(PASS|FAIL|SKIP|TODO)' "$log" | sed 's/^/test-vm: /' || true
grep '^BW ' "$log" | sed 's/^/test-vm: /' || true
say "total time $(elapsed)s"
if ! grep -q '^VMTEST DONE' "$log"; then
	die "the guest did not finish (timeout or crash); see the console output above"
fi
echo "test-vm: $passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ] && [ "$passed" -gt 0 ]
