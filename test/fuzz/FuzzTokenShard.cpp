//===- FuzzTokenShard.cpp - libFuzzer target: token shards ----------------===//
//
// TokenShard::open on a file of any bytes. The first byte picks the format
// (auto on a .bin name, tokens, u16, text, text through a byte encoder); the
// rest is the file. A shard it opens is read to its last token, and the
// out-of-vocabulary search and message run on it.
//
//===----------------------------------------------------------------------===//
#include "runtime/data/TokenShard.h"
#include "test/fuzz/FuzzSupport.h"

#include <cstdint>
#include <string>
#include <vector>

using namespace llmc::rt;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0)
    return 0;
  static const TokenFormat kFormats[] = {TokenFormat::Auto, TokenFormat::Shard,
                                         TokenFormat::U16, TokenFormat::Text,
                                         TokenFormat::Text};
  unsigned choice = data[0] % 5;
  std::string path = llmc::fuzz::scratchDirectory() + "/shard.bin";
  llmc::fuzz::writeFile(path, data + 1, size - 1);
  TextEncoder bytes;
  if (choice == 4)
    bytes = [](std::string_view text, std::vector<uint32_t> &ids) {
      for (unsigned char c : text)
        ids.push_back(c);
      return Status::ok();
    };
  TokenShard shard;
  if (!TokenShard::open(path, kFormats[choice], bytes, shard))
    return 0;
  uint64_t sum = 0;
  for (uint64_t i = 0; i < shard.size(); ++i)
    sum += shard[i];
  (void)sum;
  uint64_t at = shard.findOutOfVocabulary(0, shard.size(), 200);
  if (at < shard.size())
    (void)outOfVocabularyError(shard, at, 200);
  return 0;
}
