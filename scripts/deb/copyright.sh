#!/bin/sh
# Prints usr/share/doc/ibtool/copyright (Debian's machine-readable format,
# copyright-format 1.0) for the staged package: copyright.sh STAGE.
#
# A Go binary carries the code of every module it links, and their licenses
# (BSD, MIT: reproduce the notice; Apache-2.0: the NOTICE file) ask for
# their notices to travel with the binary. So the file lists, for every
# executable in STAGE, the Go toolchain and each module "go version -m"
# names, with the license text found in that module (Apache-2.0 by
# reference to /usr/share/common-licenses, as Debian policy 12.5 asks).
# Run from the repository (go resolves the modules in its module cache).
set -eu
stage=$1

bins=$(find "$stage" -path "$stage/DEBIAN" -prune -o -type f -perm -u+x -print | LC_ALL=C sort)
binaries=
for b in $bins; do
	[ "$(head -c 4 "$b" | od -An -c | tr -d ' ')" = '177ELF' ] && binaries="$binaries $b"
done
[ -n "$binaries" ] || { echo "copyright.sh: no binaries in $stage" >&2; exit 1; }

# indent turns text into a field's continuation lines (blank lines as " .").
indent() { sed -e 's/[[:space:]]*$//' -e 's/^$/./' -e 's/^/ /'; }

# license_of prints the short name of the license in file $1, or fails:
# a license not recognised here is to be added by hand, never guessed.
license_of() {
	if grep -q 'Apache License' "$1" && grep -q 'Version 2.0' "$1"; then
		echo Apache-2.0
	elif grep -q 'Redistribution and use in source and binary forms' "$1"; then
		if grep -q 'Neither the name' "$1"; then echo BSD-3-Clause; else echo BSD-2-Clause; fi
	elif grep -q 'Permission is hereby granted, free of charge' "$1"; then
		echo MIT
	else
		echo "copyright.sh: unknown license in $1: add it to scripts/deb/copyright.sh" >&2
		return 1
	fi
}

# paragraph prints the Files paragraph of one piece of linked code:
# paragraph FILES-PATTERN DIR COMMENT (DIR holds its LICENSE and NOTICE).
# A second license file (LICENSE.libyaml beside LICENSE, say) covers part
# of the code: its license joins the first ("Apache-2.0 and MIT"), its
# text follows.
paragraph() {
	files=$1 dir=$2 comment=$3
	lics=$(ls "$dir" | grep -E -i '^(licen[cs]e|copying)([._-].*)?$' | LC_ALL=C sort) ||
		{ echo "copyright.sh: no license file in $dir" >&2; exit 1; }
	names= texts=
	for lic in $lics; do
		name=$(license_of "$dir/$lic")
		case " $names " in *" $name "*) ;; *) names="$names $name" ;; esac
		texts="$texts $dir/$lic"
	done
	notice=
	[ -f "$dir/NOTICE" ] && notice=$dir/NOTICE
	holders=$(cat $texts $notice | grep -E '^[[:space:]]*Copyright' | grep -v '[[{]' | sed 's/^[[:space:]]*//' | LC_ALL=C sort -u)
	[ -n "$holders" ] || holders="the authors of ${files%/\*}"
	echo
	echo "Files: $files"
	echo "Copyright:"
	echo "$holders" | indent
	echo "License:$names" | sed 's/ \([^ ]\)/ and \1/2g'
	first=true
	for text in $texts; do
		$first || echo " ."
		first=false
		if [ "$(license_of "$text")" = Apache-2.0 ]; then
			echo " On Debian systems, the full text of the Apache License, Version 2.0,"
			echo " is in /usr/share/common-licenses/Apache-2.0."
		else
			indent < "$text"
		fi
	done
	echo "Comment: $comment"
	if [ -n "$notice" ]; then
		echo " Its NOTICE file:"
		indent < "$notice"
	fi
}

cat <<HEAD
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: ibtool
Source: https://github.com/ibtool/ibtool
HEAD

# ibtool itself.
if [ -f LICENSE ]; then
	paragraph '*' . "ibtool's own code"
else
	echo "copyright.sh: warning: the repository has no LICENSE; the package says ibtool's license is not chosen yet" >&2
	cat <<OWN

Files: *
Copyright: the ibtool developers
License: not-chosen
 The ibtool developers have not yet chosen a license for ibtool's own code.
OWN
fi

# The Go toolchain's standard library and runtime, and each module linked.
info=$(go version -m $binaries)
if echo "$info" | grep -q '^[[:space:]]*=>'; then
	echo "copyright.sh: a replaced module (go.mod replace): say where its license is" >&2
	exit 1
fi
toolchain=$(echo "$info" | awk 'NR==1 {print $2}')
paragraph "go/src/*" "$(go env GOROOT)" "the Go standard library and runtime ($toolchain), linked into every binary"
mods=$(echo "$info" | awk '$1=="dep" {print $2 "@" $3}' | LC_ALL=C sort -u)
for mod in $mods; do
	dir=$(go list -m -f '{{.Dir}}' "$mod")
	[ -n "$dir" ] || { echo "copyright.sh: module $mod is not in the module cache (go mod download)" >&2; exit 1; }
	paragraph "${mod%@*}/*" "$dir" "Go module ${mod%@*} ${mod#*@}, linked into the binaries"
done
