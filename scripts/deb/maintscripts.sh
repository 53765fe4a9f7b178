#!/bin/sh
# Writes DEBIAN/postinst, prerm and postrm for the systemd units staged in
# STAGE/usr/lib/systemd/system (the exporter's): maintscripts.sh STAGE.
# Nothing when there are none.
#
# The units are installed, not enabled or started: the exporter serves the
# fabric's map to whoever reaches its port, so a site first chooses where
# it listens and how it authenticates, then runs "systemctl enable --now".
# What the scripts do is what debhelper's dh_installsystemd --no-enable
# --no-start writes: reload systemd, restart a running unit on upgrade,
# stop it on removal, forget its state on purge.
set -eu
stage=$1
units=$(cd "$stage" && ls usr/lib/systemd/system/*.service 2>/dev/null | xargs -r -n1 basename | LC_ALL=C sort | tr '\n' ' ')
units=${units% }
[ -n "$units" ] || exit 0
mkdir -p "$stage/DEBIAN"

cat > "$stage/DEBIAN/postinst" <<SCRIPT
#!/bin/sh
set -e
if [ "\$1" = configure ] || [ "\$1" = abort-upgrade ] || [ "\$1" = abort-deconfigure ] || [ "\$1" = abort-remove ]; then
	if [ -d /run/systemd/system ]; then
		systemctl --system daemon-reload >/dev/null || true
		if [ -n "\$2" ]; then
			deb-systemd-invoke try-restart $units >/dev/null || true
		fi
	fi
fi
SCRIPT

cat > "$stage/DEBIAN/prerm" <<SCRIPT
#!/bin/sh
set -e
if [ -d /run/systemd/system ] && [ "\$1" = remove ]; then
	deb-systemd-invoke stop $units >/dev/null || true
fi
SCRIPT

cat > "$stage/DEBIAN/postrm" <<SCRIPT
#!/bin/sh
set -e
if [ -d /run/systemd/system ]; then
	systemctl --system daemon-reload >/dev/null || true
fi
if [ "\$1" = purge ] && command -v deb-systemd-helper >/dev/null; then
	deb-systemd-helper purge $units >/dev/null || true
fi
SCRIPT
chmod 0755 "$stage/DEBIAN/postinst" "$stage/DEBIAN/prerm" "$stage/DEBIAN/postrm"
