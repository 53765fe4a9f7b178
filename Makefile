# ibtool: build, test against the simulator, demo, install, package.

PREFIX  ?= /usr/local
DESTDIR ?=
GO      ?= go
VERSION := $(shell git describe --always --dirty 2>/dev/null || echo unknown)
LDFLAGS := -X github.com/ibtool/ibtool/internal/cli/cmdutil.Version=$(VERSION) -X main.version=$(VERSION)
# The binaries are stripped (-s -w: no symbol table or DWARF, 10 -> 7 MB)
# and built without the build machine's paths (-trimpath). Neither changes
# what a run maps. Not -buildmode=pie: the dynamic loader would relocate
# every pointer of the binary at every start (perfquery --help: 250 more
# page faults, 1.1 MB more RSS, twice the CPU time; docs/performance.md).
BUILDFLAGS ?= -trimpath -ldflags "-s -w $(LDFLAGS)"
# What make deb builds with, as Debian wants its binaries: position
# independent (the Go linker makes one with RELRO and BIND_NOW without
# cgo), naming libc as a PIE must for lintian (the debpkg tag imports
# internal/dynlibc), stripped, and with an empty build ID, so that two
# builds of one source are byte-identical. The PIE costs each start what
# the comment above says.
RELEASE_BUILDFLAGS := -trimpath -buildmode=pie -tags debpkg -ldflags "-s -w -buildid= -bindnow $(LDFLAGS)"
GOBUILD = CGO_ENABLED=0 $(GO) build $(BUILDFLAGS)

# Where make install puts things. The classic-name links (perfquery,
# ibstat, ibv_devinfo, ...) go to a directory of their own, so they do not
# shadow infiniband-diags' and rdma-core's tools: put LINKDIR first in PATH
# to use them, or install them elsewhere with LINKDIR=... (LINKDIR= for none).
BINDIR  ?= $(PREFIX)/bin
LINKDIR ?= $(PREFIX)/lib/ibtool/bin
# ibtool-verbs, the binary ibtool runs its verbs commands in, goes to
# ../lib/ibtool from BINDIR, where ibtool looks for it (or beside ibtool).
HELPERDIR = $(PREFIX)/lib/ibtool
MANDIR  ?= $(PREFIX)/share/man/man8
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR  ?= $(PREFIX)/share/zsh/site-functions
FISHCOMPDIR ?= $(PREFIX)/share/fish/vendor_completions.d
# The classic-name links' target: the installed binary, relative to LINKDIR.
LINKTARGET   = "$$(realpath -ms --relative-to=$(LINKDIR) $(BINDIR)/ibtool)"
# The exporter's systemd unit (its ExecStart is rewritten to BINDIR).
SYSTEMDUNITDIR ?= $(PREFIX)/lib/systemd/system

# The simulated fabric the tests and the demo need (Debian/Ubuntu packages),
# the verbs header the layout tests check ibtool's structures against (also
# as the AArch64 cross compiler sees it), qemu-user, which runs the arm64
# build on the simulated fabric, groff, which checks the man pages,
# dpkg-deb for make deb and lintian, which checks the package, Prometheus,
# whose promtool and server the exporter's tests run, bash-completion,
# which loads the completions, Graphviz, which lays out topology's dot
# output in its test, PyYAML, which reads its topology.yaml, and chromium,
# in which the diagnosis' HTML page is tested.
SIM_FILES    := /usr/bin/ibsim /usr/sbin/opensm /usr/sbin/smpquery /usr/include/infiniband/verbs.h \
	/usr/bin/aarch64-linux-gnu-gcc /usr/aarch64-linux-gnu/include/pthread.h /usr/bin/qemu-aarch64 \
	/usr/bin/groff /usr/bin/dpkg-deb /usr/bin/lintian /usr/bin/promtool /usr/bin/prometheus \
	/usr/share/bash-completion/bash_completion /usr/bin/dot /usr/lib/python3/dist-packages/yaml/__init__.py \
	/usr/bin/chromium
SIM_PACKAGES := ibsim-utils opensm infiniband-diags libibverbs-dev gcc-aarch64-linux-gnu libc6-dev-arm64-cross \
	qemu-user groff-base dpkg lintian prometheus bash-completion graphviz python3-yaml chromium
SUDO         := $(if $(filter 0,$(shell id -u)),,sudo)

.PHONY: all deps build cross man completions test test-vm demo install uninstall deb clean bench lossbench fuzz soak

all: build

deps:
	@missing=; for f in $(SIM_FILES); do [ -e $$f ] || missing="$$missing $$f"; done; \
	if [ -n "$$missing" ]; then \
		echo "missing:$$missing; installing $(SIM_PACKAGES)"; \
		$(SUDO) apt-get update && \
		$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y $(SIM_PACKAGES); \
	fi

# No cgo: libibverbs is loaded at run time (internal/verbs), so no binary
# needs a C toolchain nor rdma-core's headers to build. Loading it links a
# binary dynamically to libc, which every start pays, so ibtool is
# statically linked and runs its verbs commands in ibtool-verbs.
build:
	$(GOBUILD) -o bin/ibtool ./cmd/ibtool
	$(GOBUILD) -o bin/ibtool-verbs ./cmd/ibtool-verbs
	$(GOBUILD) -o bin/ibtool-exporter ./cmd/ibtool-exporter

# The header-free build and the arm64 cross build (make test runs this).
cross:
	CGO_ENABLED=0 $(GO) build -o /dev/null ./cmd/ibtool
	CGO_ENABLED=0 $(GO) build -o /dev/null ./cmd/ibtool-verbs
	CGO_ENABLED=0 GOARCH=arm64 $(GO) build -o /dev/null ./cmd/ibtool
	CGO_ENABLED=0 GOARCH=arm64 $(GO) build -o /dev/null ./cmd/ibtool-exporter
	CGO_ENABLED=0 GOARCH=arm64 $(GO) build -o /dev/null ./cmd/ibtool-verbs
	GOARCH=arm64 $(GO) vet ./internal/verbs

# Man pages (section 8) from the command tree, into docs/man.
man:
	$(GO) run ./cmd/ibtool-man -version "$(VERSION)" docs/man

# Shell completion scripts, into bin/completions.
completions: build
	mkdir -p bin/completions
	bin/ibtool completion bash > bin/completions/ibtool
	bin/ibtool completion zsh > bin/completions/_ibtool
	bin/ibtool completion fish > bin/completions/ibtool.fish

test: deps cross
	$(GO) vet ./...
	@unformatted=$$(gofmt -l . 2>&1); \
	if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi
	$(GO) test -race -timeout 20m ./...

# Verbs commands and the kernel umad transport in a SoftRoCE qemu guest.
test-vm:
	scripts/vm/test-vm.sh

# Times ibtool against infiniband-diags on generated fat trees, with and
# without added latency, and one invocation at a time on a 5-node fabric
# (the one-shot rows), and writes the results into docs/performance.md
# (see the method there). A subset, e.g.:
#   make bench BENCHFLAGS="-sizes S1000 -latencies 0,1ms -commands ibnetdiscover -runs 3 -oneshot=false"
#   make bench BENCHFLAGS="-oneshot-only"
BENCHFLAGS ?=
bench: deps build
	@[ -x /usr/bin/time ] || { $(SUDO) apt-get update && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y time; }
	$(GO) run ./cmd/ibbench -ibtool bin/ibtool -update docs/performance.md $(BENCHFLAGS)

# Discovery under MAD loss on a simulated 1008-node fat tree (ibsim's Error
# injection): docs/reliability.md records its figures.
lossbench: deps build
	$(GO) run ./cmd/iblossbench -ibtool bin/ibtool -rates 0,3,4,5 -runs 10

# Fuzzes every decoder and loader, FUZZTIME (10s) each, and records the
# execs per target in docs/reliability.md. Nightly-style: not in make test.
fuzz:
	FUZZTIME=$${FUZZTIME:-10s} scripts/fuzz.sh

# The exporter's soak (docs/exporter.md) on the 2000-node fabric: 1,000
# scrapes while links go down and up and OpenSM restarts; the figures go
# to stdout. make test runs the same on a 200-node fabric.
SOAKFLAGS ?= -fabric S2000 -scrapes 1000
soak: deps build
	$(GO) run ./cmd/ibbench -soak -exporter bin/ibtool-exporter $(SOAKFLAGS)

demo: deps build
	scripts/demo.sh

install: build man completions
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(HELPERDIR) $(DESTDIR)$(MANDIR) $(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(ZSHCOMPDIR) $(DESTDIR)$(FISHCOMPDIR)
	install -m 0755 bin/ibtool $(DESTDIR)$(BINDIR)/ibtool
	install -m 0755 bin/ibtool-exporter $(DESTDIR)$(BINDIR)/ibtool-exporter
	install -d $(DESTDIR)$(SYSTEMDUNITDIR)
	sed 's|/usr/bin/ibtool-exporter|$(BINDIR)/ibtool-exporter|' contrib/systemd/ibtool-exporter.service > $(DESTDIR)$(SYSTEMDUNITDIR)/ibtool-exporter.service
	chmod 0644 $(DESTDIR)$(SYSTEMDUNITDIR)/ibtool-exporter.service
	install -m 0755 bin/ibtool-verbs $(DESTDIR)$(HELPERDIR)/ibtool-verbs
	install -m 0644 docs/man/*.8 $(DESTDIR)$(MANDIR)/
	install -m 0644 bin/completions/ibtool $(DESTDIR)$(BASHCOMPDIR)/ibtool
	install -m 0644 bin/completions/_ibtool $(DESTDIR)$(ZSHCOMPDIR)/_ibtool
	install -m 0644 bin/completions/ibtool.fish $(DESTDIR)$(FISHCOMPDIR)/ibtool.fish
ifneq ($(LINKDIR),)
	install -d $(DESTDIR)$(LINKDIR)
	bin/ibtool install-links $(DESTDIR)$(LINKDIR)
	@# The links point at the installed binary, not at bin/ or into DESTDIR,
	@# and relatively (../../../bin/ibtool), so the tree can be moved whole.
	cd $(DESTDIR)$(LINKDIR) && for l in *; do \
		if [ -L "$$l" ] && [ "$$(readlink -f "$$l")" = "$$(readlink -f $(CURDIR)/bin/ibtool)" ]; then \
			ln -sfn $(LINKTARGET) "$$l"; fi; \
	done
	@# bash-completion loads completions/<name> when <name> is first completed.
	for l in $$(ls $(DESTDIR)$(LINKDIR)); do \
		[ -e $(DESTDIR)$(BASHCOMPDIR)/$$l ] || ln -s ibtool $(DESTDIR)$(BASHCOMPDIR)/$$l; \
	done
endif

# Removes what install put there: the binary, the links that point at it
# (never a file of the same name), the man pages and completions.
uninstall:
ifneq ($(LINKDIR),)
	@if [ -d $(DESTDIR)$(LINKDIR) ]; then cd $(DESTDIR)$(LINKDIR) && for l in *; do \
		t=$$(readlink "$$l"); if [ -L "$$l" ] && { [ "$$t" = $(LINKTARGET) ] || [ "$$t" = "$(BINDIR)/ibtool" ]; }; then rm -f "$$l"; fi; \
	done; fi
	@cd $(DESTDIR)$(BASHCOMPDIR) 2>/dev/null && for l in *; do \
		if [ -L "$$l" ] && [ "$$(readlink "$$l")" = ibtool ]; then rm -f "$$l"; fi; \
	done || true
	rmdir $(DESTDIR)$(LINKDIR) 2>/dev/null || true
endif
	rm -f $(DESTDIR)$(HELPERDIR)/ibtool-verbs
	rmdir $(DESTDIR)$(HELPERDIR) 2>/dev/null || true
	rm -f $(DESTDIR)$(BINDIR)/ibtool $(DESTDIR)$(MANDIR)/ibtool.8 $(DESTDIR)$(MANDIR)/ibtool-*.8
	rm -f $(DESTDIR)$(BINDIR)/ibtool-exporter $(DESTDIR)$(SYSTEMDUNITDIR)/ibtool-exporter.service
	rm -f $(DESTDIR)$(BASHCOMPDIR)/ibtool $(DESTDIR)$(ZSHCOMPDIR)/_ibtool $(DESTDIR)$(FISHCOMPDIR)/ibtool.fish

# A Debian package of ibtool that installs beside infiniband-diags: no file
# in common (ibtool's links live in /usr/lib/ibtool/bin). Built for the
# host's architecture, from what make install installs (the binaries, the
# systemd units in /usr/lib/systemd/system, man pages, completions), with
# the release build flags, and reproducibly: two builds of one commit are
# byte-identical (every time is SOURCE_DATE_EPOCH, the last commit's by
# default; files in name order; gzip -n; xz in one thread). Set
# DEB_MAINTAINER to who builds it for a site or a distribution.
DEB_ARCH    ?= $(shell $(GO) env GOARCH)
DEB_VERSION ?= 0.1.0~git$(shell git rev-list --count HEAD 2>/dev/null || echo 0).$(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)
DEB_MAINTAINER ?= ibtool developers <ibtool@users.noreply.github.com>
DEB_COMMIT  ?= $(shell git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
DEB_STAGE   := bin/deb/ibtool_$(DEB_VERSION)_$(DEB_ARCH)
DEB         := bin/ibtool_$(DEB_VERSION)_$(DEB_ARCH).deb
DEB_DOC     := $(DEB_STAGE)/usr/share/doc/ibtool

deb: export SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || echo 0)
deb:
	rm -rf $(DEB_STAGE) bin/ibtool_*.deb
	$(MAKE) install PREFIX=/usr DESTDIR=$(CURDIR)/$(DEB_STAGE) ZSHCOMPDIR=/usr/share/zsh/vendor-completions \
		BUILDFLAGS='$(RELEASE_BUILDFLAGS)'
	gzip -9n $(DEB_STAGE)/usr/share/man/man8/*.8
	install -d $(DEB_DOC) $(DEB_STAGE)/DEBIAN
	install -m 0644 README.md docs/*.md $(DEB_DOC)/
	scripts/deb/changelog.sh "$(DEB_VERSION)" "$(DEB_MAINTAINER)" "$(DEB_COMMIT)" | gzip -9n > $(DEB_DOC)/changelog.gz
	scripts/deb/copyright.sh $(DEB_STAGE) > $(DEB_DOC)/copyright
	scripts/deb/maintscripts.sh $(DEB_STAGE)
	scripts/deb/control.sh "$(DEB_VERSION)" "$(DEB_ARCH)" "$(DEB_MAINTAINER)" $(DEB_STAGE) > $(DEB_STAGE)/DEBIAN/control
	cd $(DEB_STAGE) && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | LC_ALL=C sort -z | xargs -0r md5sum > DEBIAN/md5sums
	chmod -R u+w,go-w,a+rX $(DEB_STAGE)
	chmod 0644 $(DEB_STAGE)/DEBIAN/control $(DEB_STAGE)/DEBIAN/md5sums
	find $(DEB_STAGE) -exec touch -h -d @$$SOURCE_DATE_EPOCH {} +
	dpkg-deb --root-owner-group -Zxz --threads-max=1 --build $(DEB_STAGE) $(DEB)
	@echo "$(DEB)"

clean:
	rm -rf bin
