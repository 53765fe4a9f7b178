#!/bin/sh
# Prints the DEBIAN/control of the ibtool package: control.sh VERSION ARCH STAGE
# (STAGE is the staged file tree, for Installed-Size). Used by make deb.
set -eu
version=$1 arch=$2 stage=$3
size=$(du -sk --exclude=DEBIAN "$stage" | cut -f1)
cat <<CONTROL
Package: ibtool
Version: $version
Architecture: $arch
Maintainer: ibtool developers <ibtool@localhost>
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
 load libibverbs at run time.
CONTROL
