// A trace opened in the Perfetto UI (docs/training.md, "Traces"): a CPU
// trace of two dp2 steps rendered by tools/trace-screenshot.sh in headless
// Chromium; the script fails unless the UI shows the trace's tracks, and the
// screenshot must be the UI's full size and not blank. Needs Debian's
// chromium and the UI that `tools/trace-screenshot.sh` installs into the
// build folder (lit features `chromium` and `perfetto-ui`; a test never
// downloads it).
// REQUIRES: chromium, perfetto-ui

// RUN: rm -rf %t && mkdir -p %t
// RUN: llmc train %S/Inputs/train-tiny-dp2.toml --device cpu --steps 4 --trace %t/t.json > %t/train.log
// RUN: BUILD_DIR=%llmc_obj_root timeout 180 %llmc_src_root/tools/trace-screenshot.sh %t/t.json %t/t.png | FileCheck %s
// CHECK: trace_screenshot: {{.*}}t.png: {{[1-9][0-9]*}} track elements, 2 groups expanded, title 'trace.json {{.*}}- Perfetto UI'
// RUN: python3 %S/Inputs/check_report_png.py %t/t.png --min-width 1800 --min-height 1000 | FileCheck %s --check-prefix=PNG
// PNG: 1800x1000, {{[0-9.]+}}% not white
// PNG-NEXT: ok
