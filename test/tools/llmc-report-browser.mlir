// llmc report in a real browser (docs/training.md, "Plots"): two short CPU
// training runs on token shards (val loss every 4 steps), their page rendered
// by headless Chromium, and the screenshot checked: its size, that it is not
// blank, that both runs' curve colours are on it (#0072B2, #D55E00) and that
// the third run's (#009E73) is not. llmc-report.mlir checks the HTML itself
// everywhere; this needs Debian's chromium (the lit feature `chromium`).
// REQUIRES: chromium

// RUN: rm -rf %t && mkdir -p %t
// RUN: python3 %S/Inputs/make_shards.py %S/../../docs/training.md %t/shards
// RUN: sed -e "s|@DIR@|%t/shards|" -e "s|@STEPS@|40|" -e "s|@SHUFFLE@|true|" %S/Inputs/train-shards.toml > %t/fast.toml
// RUN: sed -e "s|learning_rate = 1e-2|learning_rate = 3e-3|" %t/fast.toml > %t/slow.toml
// RUN: llmc train %t/fast.toml --metrics %t/fast.jsonl > %t/fast.log
// RUN: llmc train %t/slow.toml --metrics %t/slow.jsonl > %t/slow.log
// RUN: llmc report %t/fast.jsonl %t/slow.jsonl -o %t/report.html | FileCheck %s --check-prefix=OUT
// OUT: wrote {{.*}}report.html: 2 runs, 6 charts
// RUN: timeout 120 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir=%t/profile --window-size=1200,1300 --screenshot=%t/report.png file://%t/report.html > %t/chromium.log 2>&1
// RUN: python3 %S/Inputs/check_report_png.py %t/report.png --min-width 1200 --min-height 1300 --present '#0072B2,#D55E00' --absent '#009E73' | FileCheck %s --check-prefix=PNG
// PNG: 1200x1300, {{[0-9.]+}}% not white, #0072B2: {{[0-9]+}} px, #D55E00: {{[0-9]+}} px, #009E73: {{[0-9]+}} px
// PNG-NEXT: ok

// The checker itself: a page of one run lacks the second colour.
// RUN: llmc report %t/fast.jsonl -o %t/one.html
// RUN: timeout 120 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir=%t/profile --window-size=1200,1300 --screenshot=%t/one.png file://%t/one.html > %t/chromium-one.log 2>&1
// RUN: not python3 %S/Inputs/check_report_png.py %t/one.png --present '#0072B2,#D55E00' | FileCheck %s --check-prefix=ONE
// ONE: error: expected at least 200 pixels of the curve colour #D55E00, got {{[0-9]+}}
