#!/bin/sh
# Prints the DEBIAN/control of the ibtool package:
#   control.sh VERSION ARCH MAINTAINER STAGE
# (STAGE is the staged file tree). Used by make deb.
set -eu
version=$1 arch=$2 maintainer=$3 stage=$4
# Installed-Size as dpkg-gencontrol counts it: each file's size in KiB,
# rounded up, and 1 per directory or link; from the files' sizes, not the
# blocks they take here, so it does not depend on the file system.
size=$(find "$stage" -path "$stage/DEBIAN" -prune -o -mindepth 1 -printf '%y %s\n' |
	awk '{ n += ($1 == "f") ? int(($2 + 1023) / 1024) : 1 } END { print n + 0 }')
exporter=
if [ -e "$stage/usr/bin/ibtool-exporter" ]; then
	exporter='
 .
 ibtool-exporter serves the fabric'"'"'s counters and link state to Prometheus;
 its systemd unit is installed but not enabled: choose its address and
 authentication, then run "systemctl enable --now ibtool-exporter".'
fi
cat <<CONTROL
Package: ibtool
Version: $version
Architecture: $arch
Maintainer: $maintainer
Installed-Size: $size
Depends: libc6
Recommends: libibverbs1, ibverbs-providers
Suggests: infiniband-diags
Section: net
Priority: optional
Homepage: https://github.com/ibtool/ibtool
Description: InfiniBand diagnostics in one binary
 ibtool discovers InfiniBand fabrics, queries nodes, ports and counters,
 dumps routing tables and checks links, with the options and output of
 infiniband-diags' tools and JSON output besides. It installs beside
 infiniband-diags: the links named like the classic tools (perfquery,
 ibstat, ...) are in /usr/lib/ibtool/bin; put that directory first in
 PATH to use them. The verbs commands (ibv_devices, ibv_devinfo, rdma_bw)
 load libibverbs at run time.$exporter
CONTROL
