//===- Sample.cpp - generate text from a compiled logits program ----------===//
#include "runtime/train/Sample.h"
#include "runtime/Sharding.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

namespace llmc::rt {

namespace {

Status invalid(std::string message) {
  return Status::error(StatusCode::InvalidArgument,
                       "generate: " + std::move(message));
}

Status checkOptions(const SampleOptions &options) {
  if (options.tokens < 0)
    return invalid("number of tokens is " + std::to_string(options.tokens) +
                   ", expected 0 or more");
  if (!(options.temperature >= 0.0) || std::isinf(options.temperature))
    return invalid("temperature is " + std::to_string(options.temperature) +
                   ", expected a finite number >= 0 (0 is greedy)");
  if (options.topK < 0)
    return invalid("top-k is " + std::to_string(options.topK) +
                   ", expected 0 (all tokens) or more");
  return Status::ok();
}

/// The program's "tokens" argument ([1, T] i32) gives T; output 0 must be
/// [1, T, V] f32, which gives V.
Status checkProgram(const Session &session, int64_t &context, int64_t &vocab) {
  const Executable &exe = session.executable();
  int index = session.findArgument("tokens");
  if (index < 0)
    return invalid("the program has no argument \"tokens\"; compile the "
                   "logits program (buildLogitsModule, function \"logits\")");
  if (exe.ranks.empty() || exe.outputs.empty())
    return invalid("the program has no rank or no output; expected output 0 "
                   "to be the [1, T, V] f32 logits");
  const std::vector<ValueInfo> &values = exe.ranks[0].values;
  int32_t slot = exe.arguments[index].value;
  if (slot < 0 || static_cast<size_t>(slot) >= values.size())
    return Status::error(StatusCode::Internal,
                         "generate: argument \"tokens\" has no value slot");
  // Global shapes: a sharded logits program takes and returns whole tensors.
  const ValueInfo &tokens = values[slot];
  Shape tokensShape;
  LLMC_RETURN_IF_ERROR(argumentGlobalShape(exe, index, tokensShape));
  if (tokens.dtype != DType::I32 || tokensShape.size() != 2 ||
      tokensShape[0] != 1 || tokensShape[1] <= 0)
    return invalid("argument \"tokens\" is " +
                   std::string(dtypeName(tokens.dtype)) + " " +
                   formatShape(tokensShape) +
                   ", expected i32 [1, T]: compile the logits program with "
                   "batch size 1");
  context = tokensShape[1];
  int32_t outSlot = exe.outputs[0].value;
  if (outSlot < 0 || static_cast<size_t>(outSlot) >= values.size())
    return Status::error(StatusCode::Internal,
                         "generate: output 0 has no value slot");
  const ValueInfo &out = values[outSlot];
  Shape outShape;
  LLMC_RETURN_IF_ERROR(outputGlobalShape(exe, 0, outShape));
  if (out.dtype != DType::F32 || outShape.size() != 3 || outShape[0] != 1 ||
      outShape[1] != context || outShape[2] <= 0)
    return invalid("output 0 is " + std::string(dtypeName(out.dtype)) + " " +
                   formatShape(outShape) + ", expected the f32 logits [1, " +
                   std::to_string(context) +
                   ", V]; is this the logits program rather than the loss?");
  vocab = outShape[2];
  return Status::ok();
}

/// The index of the largest finite logit, lowest on ties (0 when none is).
int32_t argMax(const float *logits, int64_t vocab) {
  int64_t best = -1;
  for (int64_t i = 0; i < vocab; ++i)
    if (std::isfinite(logits[i]) && (best < 0 || logits[i] > logits[best]))
      best = i;
  return static_cast<int32_t>(std::max<int64_t>(best, 0));
}

} // namespace

int32_t sampleToken(const float *logits, int64_t vocab, double temperature,
                    int64_t topK, SampleRng &rng) {
  if (temperature == 0.0 || topK == 1)
    return argMax(logits, vocab);

  // 1. The candidates: every finite logit, or the topK largest, in a fixed
  // order (value descending, id ascending) so that the walk below does not
  // depend on the sort's implementation.
  std::vector<int32_t> ids;
  ids.reserve(static_cast<size_t>(vocab));
  for (int64_t i = 0; i < vocab; ++i)
    if (std::isfinite(logits[i]))
      ids.push_back(static_cast<int32_t>(i));
  if (ids.empty())
    return 0;
  auto before = [&](int32_t a, int32_t b) {
    return logits[a] != logits[b] ? logits[a] > logits[b] : a < b;
  };
  if (topK > 0 && static_cast<size_t>(topK) < ids.size()) {
    std::partial_sort(ids.begin(), ids.begin() + topK, ids.end(), before);
    ids.resize(static_cast<size_t>(topK));
  } else {
    std::sort(ids.begin(), ids.end(), before);
  }

  // 2. Unnormalized probabilities in f64, shifted by the max for range.
  double max = logits[ids[0]];
  std::vector<double> weights(ids.size());
  double total = 0.0;
  for (size_t i = 0; i < ids.size(); ++i) {
    weights[i] = std::exp((logits[ids[i]] - max) / temperature);
    total += weights[i];
  }

  // 3. Inverse CDF: the first candidate whose cumulative weight passes u.
  double target = rng.uniform() * total, cumulative = 0.0;
  for (size_t i = 0; i < ids.size(); ++i) {
    cumulative += weights[i];
    if (target < cumulative)
      return ids[i];
  }
  return ids.back(); // rounding left target at the very end
}

Status generate(Session &session, const std::vector<int32_t> &prompt,
                const SampleOptions &options, std::vector<int32_t> &generated) {
  generated.clear();
  // 1. The options, the prompt and the program.
  if (Status status = checkOptions(options); !status)
    return status;
  if (prompt.empty())
    return invalid("the prompt is empty; give at least one token (a byte "
                   "model can start from '\\n')");
  int64_t context = 0, vocab = 0;
  if (Status status = checkProgram(session, context, vocab); !status)
    return status;
  for (size_t i = 0; i < prompt.size(); ++i)
    if (prompt[i] < 0 || prompt[i] >= vocab)
      return invalid("prompt token " + std::to_string(i) + " is " +
                     std::to_string(prompt[i]) +
                     ", outside the model's vocabulary [0, " +
                     std::to_string(vocab) + ")");

  // 2. One run per token, on the last `context` tokens.
  SampleRng rng(options.seed);
  std::vector<int32_t> sequence = prompt;
  std::vector<int32_t> window(static_cast<size_t>(context));
  generated.reserve(static_cast<size_t>(options.tokens));
  for (int64_t step = 0; step < options.tokens; ++step) {
    size_t used = std::min(sequence.size(), static_cast<size_t>(context));
    std::fill(window.begin(), window.end(), 0);
    std::copy(sequence.end() - static_cast<std::ptrdiff_t>(used),
              sequence.end(), window.begin());
    if (Status status =
            session.setArgument("tokens", DType::I32, {1, context},
                                window.data(), window.size() * sizeof(int32_t));
        !status)
      return status;
    if (Status status = session.run(); !status)
      return status;
    HostTensor host;
    if (Status status = session.outputToHost(0, host); !status)
      return status;
    const TensorRef &logits = host.view;
    if (logits.dtype != DType::F32 || logits.shape != Shape{1, context, vocab})
      return Status::error(
          StatusCode::Internal,
          "generate: output 0 is " + formatShape(logits.shape) +
              " after the run, expected [1, " + std::to_string(context) + ", " +
              std::to_string(vocab) + "] f32");
    const float *row =
        static_cast<const float *>(logits.data) + (used - 1) * vocab;
    int32_t token =
        sampleToken(row, vocab, options.temperature, options.topK, rng);
    sequence.push_back(token);
    generated.push_back(token);
  }
  return Status::ok();
}

} // namespace llmc::rt
