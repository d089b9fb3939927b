//===- CollectiveBackend.cpp - what the collective backends share ---------===//
#include "runtime/cuda/libs/CollectiveBackend.h"

namespace llmc::rt::cuda {

namespace {

constexpr size_t kAttrsBeforeRanks = 5; // collective, reduce, peer, tag, n

const char *collectiveName(CollectiveKind kind) {
  switch (kind) {
  case CollectiveKind::AllReduce:
    return "all-reduce";
  case CollectiveKind::AllGather:
    return "all-gather";
  case CollectiveKind::ReduceScatter:
    return "reduce-scatter";
  case CollectiveKind::AllToAll:
    return "all-to-all";
  case CollectiveKind::Send:
    return "send";
  case CollectiveKind::Recv:
    return "recv";
  }
  return "collective";
}

} // namespace

CollectiveBackend::~CollectiveBackend() = default;

bool isGroupCollective(CollectiveKind kind) {
  return kind == CollectiveKind::AllReduce ||
         kind == CollectiveKind::AllGather ||
         kind == CollectiveKind::ReduceScatter ||
         kind == CollectiveKind::AllToAll;
}

Status decodeCollective(const Command &command, CollectiveCall &call) {
  const std::vector<int64_t> &ints = command.attrs.ints;
  if (ints.size() < kAttrsBeforeRanks || ints[4] < 0 ||
      ints.size() != kAttrsBeforeRanks + static_cast<size_t>(ints[4]) ||
      ints[0] < 0 || ints[0] > static_cast<int64_t>(CollectiveKind::Recv))
    return Status::error(StatusCode::InvalidArgument,
                         "a collective needs [collective, reduce, peer, tag, "
                         "n, ranks...] attributes");
  call.kind = static_cast<CollectiveKind>(ints[0]);
  call.max = ints[1] == 1;
  call.peer = static_cast<int>(ints[2]);
  call.tag = static_cast<int>(ints[3]);
  call.ranks.assign(ints.begin() + kAttrsBeforeRanks, ints.end());
  return Status::ok();
}

std::string formatRankList(const std::vector<int> &ranks) {
  std::string text = "[";
  for (size_t i = 0; i < ranks.size(); ++i)
    text += (i ? ", " : "") + std::to_string(ranks[i]);
  return text + "]";
}

std::string describeCollective(const CollectiveCall &call,
                               const std::string &origin) {
  std::string what = collectiveName(call.kind);
  if (call.kind == CollectiveKind::AllReduce ||
      call.kind == CollectiveKind::ReduceScatter)
    what += call.max ? " (max)" : " (sum)";
  what += isGroupCollective(call.kind)
              ? " over " + formatRankList(call.ranks)
              : (call.kind == CollectiveKind::Send ? " to " : " from ") +
                    std::to_string(call.peer);
  return what + " at " + origin;
}

} // namespace llmc::rt::cuda
