#!/usr/bin/env bash
# Checks (and where possible installs) what `make test` and `make demo` need:
# Go with the module dependencies, the PostgreSQL server binaries (initdb,
# pg_ctl) the tests and the demo start throwaway clusters with, and promtool
# (Debian's prometheus package) that checks and tests the alert rules, and
# chromium with playwright-core for the review console's browser tests.
set -euo pipefail

say() { printf 'prereqs: %s\n' "$*" >&2; }

if ! command -v go >/dev/null 2>&1; then
  say "Go is not installed or not on PATH: install Go 1.26 or newer (https://go.dev/dl/)"
  exit 1
fi
go mod download

find_pg() {
  if command -v initdb >/dev/null 2>&1 && command -v pg_ctl >/dev/null 2>&1; then
    return 0
  fi
  ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1
}

if [ -n "${SUPERSESSIOND_TEST_DATABASE_URL:-}" ]; then
  say "using SUPERSESSIOND_TEST_DATABASE_URL for tests"
elif ! find_pg; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    say "PostgreSQL server binaries missing: installing with apt-get (postgresql)"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    # The package's post-install may try to start a cluster; without an init
    # system that can fail harmlessly: we only need the binaries.
    apt-get install -y -qq postgresql >/dev/null || find_pg
  else
    say "PostgreSQL server binaries (initdb, pg_ctl) not found on PATH or under /usr/lib/postgresql/*/bin."
    say "Install them (Debian/Ubuntu: sudo apt-get install -y postgresql; macOS: brew install postgresql@15),"
    say "or set SUPERSESSIOND_TEST_DATABASE_URL to a PostgreSQL server where you may create databases."
    exit 1
  fi
  find_pg || { say "PostgreSQL binaries still not found after installing"; exit 1; }
fi

# initdb refuses to run as root: the clusters then run as the postgres user.
if [ "$(id -u)" = 0 ] && [ -z "${SUPERSESSIOND_TEST_DATABASE_URL:-}" ] && ! id postgres >/dev/null 2>&1; then
  say "running as root and there is no 'postgres' user to run throwaway clusters as: creating it"
  useradd --system --no-create-home --shell /usr/sbin/nologin postgres
fi
if [ "$(id -u)" = 0 ] && ! command -v runuser >/dev/null 2>&1; then
  say "running as root needs runuser (util-linux) to start clusters as the postgres user"
  exit 1
fi

# promtool checks and unit-tests deploy/prometheus/alerts.yml. Without it those
# tests are skipped (and say so); everything else runs.
if ! command -v promtool >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    say "promtool missing: installing Debian's prometheus package for it (the alert rules' tests)"
    export DEBIAN_FRONTEND=noninteractive
    # Only the tool is wanted: keep the package from starting a Prometheus
    # server (policy-rc.d exit 101: "action forbidden"); where there is no
    # init system, starting it fails harmlessly anyway.
    if [ ! -e /usr/sbin/policy-rc.d ]; then
      printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
      chmod 0755 /usr/sbin/policy-rc.d
      trap 'rm -f /usr/sbin/policy-rc.d' EXIT
    fi
    apt-get install -y -qq --no-install-recommends prometheus >/dev/null 2>&1 ||
      { apt-get update -qq && apt-get install -y -qq --no-install-recommends prometheus >/dev/null 2>&1; } ||
      command -v promtool >/dev/null 2>&1 ||
      say "installing prometheus failed: the alert rules' tests will be skipped"
  else
    say "promtool not found: the alert rules' tests will be skipped."
    say "Install it (Debian/Ubuntu: sudo apt-get install -y --no-install-recommends prometheus; macOS: brew install prometheus)."
  fi
fi

# Debian's chromium, driven by playwright-core from npm, runs the review
# console's browser tests (internal/console/e2e). No browser is ever
# downloaded: Playwright uses /usr/bin/chromium. Without them those tests are
# skipped (and say so), except under CI=true, where they fail.
if [ ! -x /usr/bin/chromium ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    say "chromium missing: installing Debian's chromium package (the console's browser tests)"
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -qq --no-install-recommends chromium >/dev/null 2>&1 ||
      { apt-get update -qq && apt-get install -y -qq --no-install-recommends chromium >/dev/null 2>&1; } ||
      [ -x /usr/bin/chromium ] ||
      say "installing chromium failed: the console's browser tests will be skipped"
  else
    say "chromium not found at /usr/bin/chromium: the console's browser tests will be skipped."
    say "Install it (Debian/Ubuntu: sudo apt-get install -y chromium)."
  fi
fi
e2e="$(dirname "$0")/../internal/console/e2e"
if command -v npm >/dev/null 2>&1 && command -v node >/dev/null 2>&1; then
  if [ ! -f "$e2e/node_modules/playwright-core/package.json" ] || [ "$e2e/package-lock.json" -nt "$e2e/node_modules/.package-lock.json" ]; then
    say "installing the browser tests' npm packages (npm ci in internal/console/e2e)"
    (cd "$e2e" && npm ci --no-audit --no-fund --loglevel=error >/dev/null) ||
      say "npm ci failed: the console's browser tests will be skipped"
  fi
else
  say "node and npm not found: the console's browser tests will be skipped (install Node.js 20 or newer)."
fi
