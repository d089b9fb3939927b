//===- Export.h - a checkpoint as a Hugging Face model folder ---*- C++ -*-===//
//
// `llmc export CHECKPOINT -o OUT` (and `llmc-run export`, for machines
// without MLIR): the parameters of an llmc checkpoint as a folder that
// transformers' AutoModelForCausalLM.from_pretrained loads: config.json
// (the one the checkpoint carries, with torch_dtype set), model.safetensors
// or shards named model-0000K-of-0000N.safetensors with
// model.safetensors.index.json, generation_config.json and the tokenizer
// files the run had. Mixtral's stacked experts [E, ...] are split back into
// `experts.{j}.w1.weight` tensors (the layout of the released checkpoints,
// which transformers 4 and 5 both load). Tensors are converted one at a
// time while the file is written, so the export holds one tensor beyond the
// checkpoint's memory map. The folder is written as OUT.partial-PID and
// renamed at the end: a crash leaves no half folder under OUT.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_RUNTIME_TRAIN_EXPORT_H
#define LLMC_RUNTIME_TRAIN_EXPORT_H

#include "runtime/DType.h"
#include "runtime/Status.h"

#include <cstdint>
#include <string>

namespace llmc::rt {

struct ExportOptions {
  /// The tensors' type in the folder: f32 (the checkpoint's, exact), bf16 or
  /// f16 (rounded to nearest even).
  DType dtype = DType::F32;
  /// Largest shard, in bytes (transformers' max_shard_size; 5 GB).
  uint64_t shardBytes = 5'000'000'000ull;
  /// Replace an existing OUT.
  bool force = false;
};

struct ExportReport {
  size_t tensors = 0;
  size_t shards = 0;
  uint64_t bytes = 0;
  std::string checkpoint; ///< the step directory exported
};

/// Exports the checkpoint `checkpoint` (a step-NNNNNNNN directory, or a
/// checkpoint directory: its latest) into `out`. Fails, leaving `out` as it
/// was, when the checkpoint has no config.json (an artifact compiled before
/// llmc wrote one, or from llmc IR), when `out` exists and `force` is not
/// set, or on any read or write error.
Status exportHfFolder(const std::string &checkpoint, const std::string &out,
                      const ExportOptions &options, ExportReport &report);

/// "f32", "bf16", "f16" (also "float32", "bfloat16", "float16").
bool parseExportDType(const std::string &text, DType &dtype);

/// Parses a shard size as transformers writes it: "5GB" (10^9), "500MB",
/// "2GiB" (2^30), "100KB", or a number of bytes.
bool parseShardSize(const std::string &text, uint64_t &bytes);

} // namespace llmc::rt

#endif // LLMC_RUNTIME_TRAIN_EXPORT_H
