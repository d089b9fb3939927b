//===- Evaluate.h - the validation loss of a training run -------*- C++ -*-===//
//
// `[eval] every = N, steps = M`: after every N-th step (and the last) the
// loop measures the mean loss of M batches of the validation shards. They
// run through the artifact's companion "eval" program: the model's forward
// loss, traced for one microbatch's rows (batch_size / microbatches) and
// compiled for the same devices and mesh as the step (docs/training.md).
// The program runs in a session of its own, whose parameters are copied
// from the training session before each evaluation; the validation set is
// read in order from its start every time, so every evaluation sees the
// same batches. `llmc eval` uses the same class on a checkpoint.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_RUNTIME_TRAIN_EVALUATE_H
#define LLMC_RUNTIME_TRAIN_EVALUATE_H

#include "runtime/DeviceSession.h"
#include "runtime/data/TokenLoader.h"
#include "runtime/train/TextCodec.h"
#include "runtime/train/Trainer.h"

#include <memory>

namespace llmc::rt {

class Evaluator {
public:
  /// Prepares the evaluation of `train`'s run: its "eval" companion in a
  /// session on `device` ("cpu" or "cuda", as the training session), and
  /// the validation corpus (options.settings.valData, read with `codec`).
  /// Fails, saying what to do, when the artifact has no eval program or the
  /// validation set holds no batch; asks for at most as many batches as it
  /// holds (and says so on options.log).
  static Status create(const Executable &train, const TrainOptions &options,
                       const std::string &device, const TextCodec &codec,
                       std::unique_ptr<Evaluator> &evaluator);

  /// Copies every parameter of `trained` (a session of the training step or
  /// of this eval program) into the eval session.
  Status bindParameters(const DeviceSession &trained);
  /// The eval session, for binding parameters some other way (llmc eval).
  DeviceSession &session() { return *session_; }

  /// The mean loss over batches() validation batches from the set's start.
  Status evaluate(double &loss);

  int64_t batches() const { return batches_; }
  int64_t batchSize() const { return batchSize_; }
  const TokenCorpus &corpus() const { return corpus_; }

private:
  Evaluator() = default;
  const Executable *program_ = nullptr;
  std::unique_ptr<DeviceSession> session_;
  TokenCorpus corpus_;
  std::unique_ptr<TokenLoader> loader_;
  int lossOutput_ = -1;
  int64_t batches_ = 0, batchSize_ = 0, seqLen_ = 0;
};

/// The rows of the global batch (dimension 0 of argument "tokens" of
/// `exe`) that `ranks` hold, ascending; empty when they hold every row.
Status batchRowsOf(const Executable &exe, const std::vector<int> &ranks,
                   std::vector<int64_t> &rows);

/// The corpus options of the run's training ("train") or validation
/// ("val") data.
CorpusOptions corpusOptionsFor(const TrainSettings &settings,
                               const std::string &role,
                               const TextCodec &codec);

} // namespace llmc::rt

#endif // LLMC_RUNTIME_TRAIN_EVALUATE_H
