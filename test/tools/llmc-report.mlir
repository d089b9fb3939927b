// llmc report: the metrics of two runs as one self-contained HTML page
// (docs/training.md, "Plots"): six charts, each run in its own colour with a
// legend, val loss dashed with markers, a skipped fp16 step's null norm left
// out; and the refusals.

// RUN: rm -rf %t && mkdir -p %t
// RUN: llmc report %S/Inputs/report/run-a.jsonl %S/Inputs/report/run-b.jsonl -o %t/r.html | FileCheck %s --check-prefix=OUT
// OUT: wrote {{.*}}r.html: 2 runs, 6 charts
// RUN: FileCheck %s --check-prefix=PAGE < %t/r.html
// PAGE:      <!DOCTYPE html>
// PAGE:      <title>run-a, run-b</title>
// PAGE-NOT:  <script
// PAGE-NOT:  src=
// PAGE:      run-a.jsonl</td><td>1-3</td><td>3072</td><td>4.5310</td><td>-</td>
// PAGE:      run-b.jsonl</td><td>1-3</td><td>3072</td><td>4.4000</td><td>4.5000</td><td>8100</td><td>29.0%</td>
// PAGE:      aria-label="Loss"
// PAGE:      data-run="run-a"><title>run-a train</title>
// PAGE:      data-run="run-b"><title>run-b val</title>
// PAGE-NEXT: stroke-dasharray="5 3"
// PAGE:      aria-label="Loss against tokens"
// PAGE:      aria-label="Learning rate"
// PAGE:      aria-label="Gradient norm"
// PAGE:      aria-label="Tokens per second"
// PAGE:      aria-label="MFU"
// PAGE:      </html>
// Two points in run-b's norm line: step 2's null is left out.
// RUN: sed -n '/aria-label="Gradient norm"/,/<\/svg>/p' %t/r.html | grep -A1 'data-run="run-b"' | grep -o '[0-9.]*,[0-9.]* ' | wc -l | FileCheck %s --check-prefix=NORM
// NORM: 2

// RUN: echo '{"step": 1}' > %t/bad.jsonl
// RUN: not llmc report %t/bad.jsonl -o %t/x.html 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: bad.jsonl:1: error: expected a JSON object with a numeric "step" and "loss" (a line of llmc train --metrics), got: {"step": 1}
// RUN: not llmc report %t/bad.jsonl -o %t/bad.jsonl 2>&1 | FileCheck %s --check-prefix=SAME
// SAME: llmc report: -o {{.*}}bad.jsonl is one of the metrics files; write the page elsewhere
// RUN: not llmc report %t -o %t/x.html 2>&1 | FileCheck %s --check-prefix=DIR
// DIR: error: cannot read the metrics file (a directory)
