# The two commands a newcomer runs: `make demo` and `make test`.
GO      ?= go
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT  ?= $(shell git rev-parse HEAD 2>/dev/null)
LDFLAGS := -X main.version=$(VERSION) -X main.commit=$(COMMIT)
STATICCHECK_VERSION ?= v0.8.2

.PHONY: all build test demo demo-db demo-stop bench prereqs lint fmt clean

all: build

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o bin/supersessiond ./cmd/supersessiond

prereqs:
	@scripts/prereqs.sh

# The whole suite against throwaway PostgreSQL clusters the tests start.
test: prereqs
	$(GO) vet ./...
	$(GO) test -race -count=1 -timeout 20m ./...

# The main job end to end on a throwaway PostgreSQL with a demo agent database.
demo: prereqs build
	$(GO) run ./cmd/supersessiond-demo --binary bin/supersessiond $(DEMO_FLAGS)

# The demo database left running, for the README's Auditing walk-through.
demo-db: prereqs build
	$(GO) run ./cmd/supersessiond-demo --binary bin/supersessiond --keep

demo-stop:
	$(GO) run ./cmd/supersessiond-demo --stop

# The figures of the README's Performance section, at the issue's scale
# (about five minutes on two cores). BENCH_FLAGS adds or overrides flags.
BENCH_FLAGS ?=
bench: prereqs build
	$(GO) build -o bin/supersessiond-bench ./cmd/supersessiond-bench
	bin/supersessiond-bench --binary bin/supersessiond --attributes 1000000 --baseline-aspects 300 \
		--documents 1000000 --deleted-share 0.1 --events 2000 --classify-rate 500 --classify-for 20s $(BENCH_FLAGS)

lint:
	$(GO) vet ./...
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) ./...
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (gofmt -l $$(git ls-files '*.go'); exit 1)

fmt:
	gofmt -w $$(git ls-files '*.go')

clean:
	rm -rf bin
