# The two commands a newcomer runs: `make demo` and `make test`.
GO      ?= go
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT  ?= $(shell git rev-parse HEAD 2>/dev/null)
LDFLAGS := -X main.version=$(VERSION) -X main.commit=$(COMMIT)
STATICCHECK_VERSION ?= v0.8.2
DEADCODE_VERSION ?= v0.52.0

# make install / make uninstall: PREFIX places the binary ($(PREFIX)/bin) and
# the unit ($(PREFIX)/lib/systemd/system, a directory systemd reads for
# /usr/local and /usr alike); the configuration lives in /etc/supersessiond
# whatever the prefix. DESTDIR stages everything under another root.
PREFIX  ?= /usr/local
DESTDIR ?=
BINDIR  := $(PREFIX)/bin
UNITDIR := $(PREFIX)/lib/systemd/system
BASHCOMPDIR := $(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR  := $(PREFIX)/share/zsh/site-functions
CONFDIR := /etc/supersessiond

# make deb: nfpm at a pinned version, through `go run`; the package lands in
# DEB_OUT. A Debian version must start with a digit: a tag (v1.2.0-3-gabc)
# gives 1.2.0+3+gabc, an untagged commit 0.0.0~git<date>.<commit>.
NFPM_VERSION ?= v2.45.2
DEB_OUT      ?= bin
DEB_ARCH     ?= $(shell $(GO) env GOARCH)
DEB_VERSION  ?= $(shell v='$(VERSION)'; case "$$v" in (v[0-9]*|[0-9]*.[0-9]*) echo "$$v" | sed "s/^v//" | tr - + ;; \
	(*) echo "0.0.0~git$$(git log -1 --format=%cd --date=format:%Y%m%d 2>/dev/null || echo 0).$$v" | tr - . ;; esac)

.PHONY: all build test demo demo-db demo-stop bench prereqs lint fmt clean install uninstall deb

all: build

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o bin/supersessiond ./cmd/supersessiond

prereqs:
	@scripts/prereqs.sh

# The whole suite against throwaway PostgreSQL clusters the tests start.
test: prereqs
	$(GO) vet ./...
	$(GO) test -race -count=1 -timeout 20m ./...
	$(GO) test -count=1 -timeout 10m -run 'TestBlockKeysCorpusCross|TestBlockedSweepFindsEveryPair' ./heuristics

# The main job end to end on a throwaway PostgreSQL with a demo agent database.
demo: prereqs build
	$(GO) run ./cmd/supersessiond-demo --binary bin/supersessiond $(DEMO_FLAGS)

# The demo database left running, for the README's Auditing walk-through.
demo-db: prereqs build
	$(GO) run ./cmd/supersessiond-demo --binary bin/supersessiond --keep

demo-stop:
	$(GO) run ./cmd/supersessiond-demo --stop

# The figures of the README's Performance section, at the issue's scale
# (about seven minutes on two cores; with BENCH_FLAGS="--attributes 10000000" about eight and
# 15 GB of free disk). BENCH_FLAGS adds or overrides flags.
BENCH_FLAGS ?=
bench: prereqs build
	$(GO) build -o bin/supersessiond-bench ./cmd/supersessiond-bench
	bin/supersessiond-bench --binary bin/supersessiond --attributes 1000000 --baseline-aspects 300 \
		--documents 1000000 --deleted-share 0.1 --events 2000 --classify-rate 500 --classify-for 20s $(BENCH_FLAGS)

lint:
	$(GO) vet ./...
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) ./...
	@# Dead production code: internal/testkit is test support, reachable only from tests.
	@out="$$($(GO) run golang.org/x/tools/cmd/deadcode@$(DEADCODE_VERSION) ./... | grep -v '^internal/testkit/')"; \
		test -z "$$out" || { echo "$$out"; echo "deadcode: unreachable production code above"; exit 1; }
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (gofmt -l $$(git ls-files '*.go'); exit 1)

fmt:
	gofmt -w $$(git ls-files '*.go')

# agent.yaml as installed, by make install and by the package: the example in
# shadow mode, which says so at its top. $(1) is the file to write.
define shadow_agent_yaml
	{ echo '# Installed by supersessiond in shadow mode (the default below is otherwise'; \
	  echo '# false): nothing in the agent'"'"'s data changes until you have audited the'; \
	  echo '# proposals and set shadowMode: false. The example beside this file'; \
	  echo '# documents every key with its default.'; \
	  echo '#'; \
	  sed 's|^    shadowMode: false$$|    shadowMode: true|' agent.yaml.example; } > $(1)
	grep -q '^    shadowMode: true$$' $(1)
endef

# Run `make build` first, as yourself: installing as root builds nothing.
# agent.yaml is installed in shadow mode, as the package installs it, and only
# where there is none: the operator's is never replaced. It is made readable
# by the supersessiond group when that group exists (create the user first).
install:
	@test -x bin/supersessiond || { echo "make install: no bin/supersessiond: run 'make build' first"; exit 1; }
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(UNITDIR) $(DESTDIR)$(CONFDIR) $(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(ZSHCOMPDIR)
	install -m 0755 bin/supersessiond $(DESTDIR)$(BINDIR)/supersessiond
	sed 's|/usr/local/bin/supersessiond|$(BINDIR)/supersessiond|' systemd/supersessiond.service > bin/supersessiond.service
	install -m 0644 bin/supersessiond.service $(DESTDIR)$(UNITDIR)/supersessiond.service
	install -m 0644 agent.yaml.example $(DESTDIR)$(CONFDIR)/agent.yaml.example
	$(call shadow_agent_yaml,bin/agent.yaml)
	@if [ -e $(DESTDIR)$(CONFDIR)/agent.yaml ]; then echo "kept $(DESTDIR)$(CONFDIR)/agent.yaml"; else \
		install -m 0640 bin/agent.yaml $(DESTDIR)$(CONFDIR)/agent.yaml && echo "installed $(DESTDIR)$(CONFDIR)/agent.yaml (shadow mode)"; \
		if getent group supersessiond >/dev/null 2>&1; then \
			chgrp supersessiond $(DESTDIR)$(CONFDIR) $(DESTDIR)$(CONFDIR)/agent.yaml && chmod 0750 $(DESTDIR)$(CONFDIR); \
		else echo "no supersessiond group: make $(DESTDIR)$(CONFDIR) and agent.yaml readable by the daemon's user"; fi; fi
	bin/supersessiond completion bash > bin/supersessiond.bash
	bin/supersessiond completion zsh > bin/_supersessiond
	install -m 0644 bin/supersessiond.bash $(DESTDIR)$(BASHCOMPDIR)/supersessiond
	install -m 0644 bin/_supersessiond $(DESTDIR)$(ZSHCOMPDIR)/_supersessiond

# Leaves the operator's agent.yaml and env in place.
uninstall:
	rm -f $(DESTDIR)$(BINDIR)/supersessiond $(DESTDIR)$(UNITDIR)/supersessiond.service \
		$(DESTDIR)$(CONFDIR)/agent.yaml.example \
		$(DESTDIR)$(BASHCOMPDIR)/supersessiond $(DESTDIR)$(ZSHCOMPDIR)/_supersessiond
	@rmdir $(DESTDIR)$(CONFDIR) 2>/dev/null || true

# The Debian package: binary in /usr/bin, the unit, /etc/supersessiond/agent.yaml
# (a conffile, in shadow mode) and the example beside it. See deploy/deb/nfpm.yaml.
deb:
	rm -rf bin/deb && mkdir -p bin/deb $(DEB_OUT)
	CGO_ENABLED=0 GOOS=linux GOARCH=$(DEB_ARCH) $(GO) build -trimpath -ldflags "-s -w $(LDFLAGS)" -o bin/deb/supersessiond ./cmd/supersessiond
	sed 's|/usr/local/bin/supersessiond|/usr/bin/supersessiond|' systemd/supersessiond.service > bin/deb/supersessiond.service
	$(call shadow_agent_yaml,bin/deb/agent.yaml)
	$(GO) run ./cmd/supersessiond completion bash > bin/deb/supersessiond.bash
	$(GO) run ./cmd/supersessiond completion zsh > bin/deb/_supersessiond
	DEB_BUILD=bin/deb DEB_ARCH=$(DEB_ARCH) DEB_VERSION='$(DEB_VERSION)' \
		$(GO) run github.com/goreleaser/nfpm/v2/cmd/nfpm@$(NFPM_VERSION) package \
		--config deploy/deb/nfpm.yaml --packager deb --target $(DEB_OUT)

clean:
	rm -rf bin
