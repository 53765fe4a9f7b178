#!/bin/sh
# Prints the package's changelog in Debian's format, one entry for this
# build: changelog.sh VERSION MAINTAINER COMMIT. The package is native (its
# version has no Debian revision), so this installs as
# usr/share/doc/ibtool/changelog.gz. The changes themselves are the git
# history, which the entry points to by commit. The date is
# SOURCE_DATE_EPOCH's, so that two builds of one commit are identical.
set -eu
version=$1 maintainer=$2 commit=$3
date=$(LC_ALL=C date -u -R -d "@${SOURCE_DATE_EPOCH:?SOURCE_DATE_EPOCH is not set}")
cat <<ENTRY
ibtool ($version) unstable; urgency=medium

  * Built from ibtool's source at git commit $commit; the project's git
    history lists the changes.

 -- $maintainer  $date
ENTRY
