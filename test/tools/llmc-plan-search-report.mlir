// The mesh search's report (tools/LlmcPlanSearch.cpp, docs/planning.md "The
// search"): one number for a mesh wherever it is printed, kernel counts that
// agree with the table they sit under, why the ZeRO stage, the winner as a
// [parallel] table that pastes into the run description, and --json.
// GPT-2 tiny on 4 devices (Inputs/search-tiny.toml: 2 layers, so every
// probe is the whole model and the search's numbers are the compile's), on
// the fixed profile of the tests.

// RUN: cp %S/Inputs/search-tiny.toml %t.toml
// RUN: llmc plan %t.toml --device-profile %S/Inputs/search-gpu.toml > %t.out 2> %t.err
// RUN: cat %t.out %t.err | FileCheck %s --check-prefix=SAME

// The ranking's first row, the explanation, the winner's own plan and the
// last progress line give the winner the same step time.
// SAME:      {{^ *}}1 [[WIN:dp4]] [[STEP:[0-9]+\.[0-9]+]] 
// SAME:      why:
// SAME-NEXT:   [[WIN]] wins: [[STEP]] ms per step
// ZeRO-1 of the same mesh was evaluated: it is slower, and dp4 fits without it.
// SAME:        ZeRO: none, because dp4 zero1 takes {{[0-9.]+}} ms (+{{[0-9.]+}} ms) and needs {{.*}} per rank against {{.*}}: the winner fits without sharding its optimizer state
// SAME:      the winner as a run description's [parallel] table (paste it over the file's):
// SAME-NEXT:   [parallel]
// SAME-NEXT:   devices = "cpu:4"
// SAME-NEXT:   dp = 4
// SAME-NEXT:   tp = 1
// SAME-NEXT:   pp = 1
// SAME-NEXT:   cp = 1
// SAME-NEXT:   ep = 1
// SAME-NEXT:   zero = 0
// SAME-NEXT:   # and in [train]: microbatches = 1
// SAME-NEXT:   # and in [memory]: remat = "none"
// SAME:      memory plan of @train_step
// SAME:      the mesh search's estimate of this mesh: [[STEP]] ms (from probe compiles of fewer layers, the ranking's number); this plan compiles every layer: {{[0-9.]+}} ms (+0.0%)
// SAME:      llmc plan: search {{.*}} best so far [[WIN]] at [[STEP]] ms

// The kernels per step are the sum of the table's kernel rows (collectives
// aside). awk adds the kernels column (fifth from the end) of the rows
// between the header and the step.
// RUN: awk '/^    group/ { on = 1; next } /^    predicted step/ { on = 0 } /kernels per step/ { print (sum == $1 ? "counts agree: " : "counts differ: " sum " vs ") $1; exit } on && $1 != "collectives" { sum += $(NF-4) }' %t.out | FileCheck %s --check-prefix=COUNTS
// COUNTS: counts agree: {{[1-9][0-9]*}}

// The [parallel] table pasted over the file's: the same mesh, planned
// without a search, predicts the same step.
// RUN: sed -n '/paste it over the file/,/^memory plan/{/^    /p;}' %t.out | sed 's/^    //' > %t.block
// RUN: sed '/^\[parallel\]/,$d' %t.toml > %t.pasted.toml
// RUN: cat %t.block >> %t.pasted.toml
// RUN: llmc plan %t.pasted.toml --device-profile %S/Inputs/search-gpu.toml > %t.pasted.out
// RUN: FileCheck %s --check-prefix=PASTED < %t.pasted.out
// PASTED:     on each of 4 ranks of mesh {dp=4}:
// PASTED-NOT: mesh search
// RUN: sed -n 's/.*predicted step: \([0-9.]*\) ms.*/\1/p' %t.out > %t.step
// RUN: sed -n 's/.*predicted step: \([0-9.]*\) ms.*/\1/p' %t.pasted.out | diff - %t.step

// --json: one object on standard output, the fields of docs/planning.md.
// RUN: llmc plan %t.toml --gpus 4 --json --device-profile %S/Inputs/search-gpu.toml 2>/dev/null > %t.json
// RUN: python3 -c 'import json,sys; d = json.load(open(sys.argv[1])); w = d["winner"]; r = d["ranked"]; print("winner", w["candidate"], "first", r[0]["candidate"] == w["candidate"] and r[0]["step_ms"] == w["step_ms"]); print("counts", d["candidates"], sum(p["c" "ount"] for p in d["pruned"].values()) + d["fit"] == d["candidates"], len(r) == min(20, d["fit"])); print("sorted", all(a["step_ms"] <= b["step_ms"] for a, b in zip(r, r[1:]))); print("fields", " ".join(sorted(w))); print("zero", d["zero"][:10]); print(d["parallel_toml"].splitlines()[:3])' %t.json | FileCheck %s --check-prefix=JSON
// JSON:      winner dp4 first True
// JSON-NEXT: counts 720 True True
// JSON-NEXT: sorted True
// JSON-NEXT: fields bubble candidate communication communication_ms cp dp ep exact fits kernels_ms memory_bytes mfu microbatches pp remat step_ms tp virtual_stages zero
// JSON-NEXT: zero ZeRO: none
// JSON-NEXT: ['[parallel]', 'devices = "cpu:4"', 'dp = 4']

// --json needs a search.
// RUN: printf '[model]\nfamily = "gpt2"\nvocab_size = 128\nlayers = 2\nwidth = 64\nheads = 4\nmax_positions = 32\n[train]\nbatch_size = 8\nseq_len = 16\n' > %t.fixed.toml
// RUN: not llmc plan %t.fixed.toml --json 2>&1 | FileCheck %s --check-prefix=NOSEARCH
// NOSEARCH: llmc plan: error: --json prints the mesh search, and {{.*}}fixed.toml has none; give --gpus N or [parallel] mesh = "auto"
