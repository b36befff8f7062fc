#!/usr/bin/env bash
# Runs the client checks (*.mjs but lib.mjs: each ecosystem's official
# clients, one file each) against inferno serve on the repository's tiny
# model, or only the files named as arguments. Needs node and npm; the
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
checks=("$@")
if [ ${#checks[@]} = 0 ]; then
  checks=($(ls *.mjs | grep -v '^lib.mjs$'))
fi
status=0
for c in "${checks[@]}"; do
  echo "== $c"
  INFERNO_URL="http://127.0.0.1:$port/v1" INFERNO_BIN="$tmp/inferno" node "$c" || status=1
done
exit $status
