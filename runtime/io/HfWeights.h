//===- HfWeights.h - Hugging Face weight files and their names --*- C++ -*-===//
//
// Released checkpoints are one model.safetensors or shards listed by
// model.safetensors.index.json, in bf16, f16 or f32, with names that vary by
// how they were saved: GPT-2 without its `transformer.` prefix
// (openai-community/gpt2), Mixtral's experts one tensor each
// (`block_sparse_moe.experts.{j}.w1.weight`) or, saved by transformers 5
// without its legacy conversion, fused (`mlp.experts.gate_up_proj`), a tied
// head stored again as `lm_head.weight`. This unit opens the files (memory
// mapped) and plans, for each parameter of a program under llmc's names,
// which runs of which file tensors make it; runtime/train/Weights.h binds
// the plan into a session, converting each tensor to the parameter's type.
// No MLIR, no session. See docs/frontend.md, "Hugging Face weights".
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_RUNTIME_IO_HFWEIGHTS_H
#define LLMC_RUNTIME_IO_HFWEIGHTS_H

#include "runtime/DType.h"
#include "runtime/Status.h"
#include "runtime/io/Safetensors.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace llmc::rt {

class ThreadPool;

/// The tensors of a checkpoint's safetensors files, memory-mapped, as one
/// set of names.
class WeightFiles {
public:
  struct Entry {
    const SafetensorsTensor *tensor = nullptr;
    size_t file = 0; ///< index into paths()
  };

  /// Opens `path`: a folder holding model.safetensors or
  /// model.safetensors.index.json (and the shards it lists), a .safetensors
  /// file, or an index .json. Fails naming the file on a bad index, a
  /// missing shard, a tensor the index puts in a file that lacks it, or a
  /// name found in two files.
  static Status open(const std::string &path, WeightFiles &files);

  const std::map<std::string, Entry> &tensors() const { return tensors_; }
  const SafetensorsTensor *find(const std::string &name) const;
  /// The file `name` is in ("" when none).
  const std::string &fileOf(const std::string &name) const;
  const std::vector<std::string> &paths() const { return paths_; }
  /// What was opened, for messages.
  const std::string &source() const { return source_; }

private:
  std::vector<SafetensorsFile> files_;
  std::vector<std::string> paths_;
  std::map<std::string, Entry> tensors_;
  std::string source_;
};

/// A parameter the weights must give, under llmc's (Hugging Face) name.
struct WeightTarget {
  std::string name;
  DType dtype = DType::F32;
  Shape shape;
};

/// `count` elements of file tensor `tensor`, from element `sourceOffset`,
/// land at element `targetOffset` of the parameter.
struct WeightPiece {
  std::string tensor;
  int64_t sourceOffset = 0;
  int64_t count = 0;
  int64_t targetOffset = 0;
};

/// How one parameter is made: one piece covering a whole tensor of the
/// same shape (most), or several (stacked or split experts).
struct WeightSource {
  std::vector<WeightPiece> pieces;
  /// The one file tensor that is the whole parameter, or null.
  const WeightPiece *whole(int64_t elements) const {
    return pieces.size() == 1 && pieces[0].sourceOffset == 0 &&
                   pieces[0].targetOffset == 0 && pieces[0].count == elements
               ? &pieces[0]
               : nullptr;
  }
};

struct WeightPlan {
  std::vector<WeightSource> sources; ///< one per target, in order
  /// File tensors the model does not use (an error unless not strict).
  std::vector<std::string> unused;
  /// Buffers transformers writes that are not parameters and that it
  /// ignores on load too (GPT-2's attn.bias / attn.masked_bias masks, old
  /// LLaMA files' rotary_emb.inv_freq), and a tied head's second copy.
  std::vector<std::string> ignored;
};

/// Plans `targets` from `files`. For each target, in this order: the same
/// name; the name without its `transformer.` or `model.` prefix; for
/// Mixtral's stacked experts `...block_sparse_moe.experts.w1.weight`
/// [E, F, C], the per-expert `...experts.{j}.w1.weight` [F, C] (w2, w3
/// alike) or transformers 5's `...mlp.experts.gate_up_proj` [E, 2F, C]
/// (w1 its first F rows per expert, w3 the rest) and `down_proj`
/// [E, C, F] (w2); for the router, `...mlp.gate.weight`. A file
/// `lm_head.weight` that no target takes must equal the embedding bitwise
/// after conversion (a tied head saved twice), else it is an error naming
/// both. Fails once, listing every missing target, every shape or type that
/// does not fit and (when `strict`) every unused tensor, with the fix.
/// Tensors named in `otherArguments` (a program's data inputs, which a
/// file may hold too) are neither used nor unused.
Status planWeights(const WeightFiles &files,
                   const std::vector<WeightTarget> &targets, bool strict,
                   WeightPlan &plan,
                   const std::vector<std::string> &otherArguments = {});

/// Converts `count` elements of float type `from` at `source` to `to` at
/// `target` (f32, f64, bf16, f16 both ways; rounding to nearest even), on
/// `pool`'s threads when given. Same types copy.
Status convertElements(DType from, const void *source, DType to, void *target,
                       int64_t count, ThreadPool *pool);

/// The bytes of `target` (its dtype and shape) assembled from `source`'s
/// pieces of `files`, converted.
Status assembleWeight(const WeightFiles &files, const WeightTarget &target,
                      const WeightSource &source, std::vector<uint8_t> &bytes,
                      ThreadPool *pool);

} // namespace llmc::rt

#endif // LLMC_RUNTIME_IO_HFWEIGHTS_H
