#!/usr/bin/env bash
# Runs check.mjs (LangChain.js structured output and tool calls) against
# inferno serve on the repository's tiny model. Needs node and npm; the
# packages are installed from package-lock.json into node_modules here.
set -euo pipefail
cd "$(dirname "$0")"
root=$(cd ../.. && pwd)
tmp=$(mktemp -d)
pid=
cleanup() {
  if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  rm -rf "$tmp"
}
trap cleanup EXIT
npm ci --no-audit --no-fund --loglevel=error
(cd "$root" && go build -o "$tmp/inferno" ./cmd/inferno)
port=$((20000 + RANDOM % 20000))
"$tmp/inferno" serve "$root/testdata/golden/tiny-q8_0.gguf" --addr "127.0.0.1:$port" --threads 2 >"$tmp/serve.log" 2>&1 &
pid=$!
for _ in $(seq 100); do
  if curl -sf "http://127.0.0.1:$port/health" >/dev/null; then break; fi
  if ! kill -0 "$pid" 2>/dev/null; then cat "$tmp/serve.log" >&2; exit 1; fi
  sleep 0.2
done
INFERNO_URL="http://127.0.0.1:$port/v1" node check.mjs
