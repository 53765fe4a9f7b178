# ibtool: build, test against the simulator, demo, install.

PREFIX  ?= /usr/local
DESTDIR ?=
GO      ?= go
VERSION := $(shell git describe --always --dirty 2>/dev/null || echo unknown)
LDFLAGS := -X github.com/ibtool/ibtool/internal/cli.Version=$(VERSION)

# The simulated fabric the tests and the demo need (Debian/Ubuntu packages).
SIM_FILES    := /usr/bin/ibsim /usr/sbin/opensm /usr/sbin/smpquery /usr/include/infiniband/verbs.h
SIM_PACKAGES := ibsim-utils opensm infiniband-diags libibverbs-dev
SUDO         := $(if $(filter 0,$(shell id -u)),,sudo)

.PHONY: all deps build test test-vm demo install clean bench

all: build

deps:
	@missing=; for f in $(SIM_FILES); do [ -e $$f ] || missing="$$missing $$f"; done; \
	if [ -n "$$missing" ]; then \
		echo "missing:$$missing; installing $(SIM_PACKAGES)"; \
		$(SUDO) apt-get update && \
		$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y $(SIM_PACKAGES); \
	fi

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o bin/ibtool ./cmd/ibtool

test: deps
	$(GO) vet ./...
	@unformatted=$$(gofmt -l . 2>&1); \
	if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi
	$(GO) test -race -timeout 20m ./...

# Verbs commands and the kernel umad transport in a SoftRoCE qemu guest.
test-vm:
	scripts/vm/test-vm.sh

# Times ibtool against infiniband-diags on generated fat trees and writes
# the results into docs/performance.md (see the method there).
bench: deps build
	@[ -x /usr/bin/time ] || { $(SUDO) apt-get update && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y time; }
	$(GO) run ./cmd/ibbench -ibtool bin/ibtool -update docs/performance.md

demo: deps build
	scripts/demo.sh

install: build
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 0755 bin/ibtool $(DESTDIR)$(PREFIX)/bin/ibtool
	$(DESTDIR)$(PREFIX)/bin/ibtool install-links $(DESTDIR)$(PREFIX)/bin
ifneq ($(DESTDIR),)
	@# Staged install: point the links at ibtool relatively, not into DESTDIR.
	cd $(DESTDIR)$(PREFIX)/bin && for l in *; do \
		if [ -L "$$l" ] && [ "$$(readlink -f "$$l")" = "$$(readlink -f ibtool)" ]; then ln -sfn ibtool "$$l"; fi; \
	done
endif

clean:
	rm -rf bin
