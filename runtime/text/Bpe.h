//===- Bpe.h - the BPE model of a tokenizer.json ----------------*- C++ -*-===//
//
// `model` of type BPE: the vocabulary, the merges ranked by their order in
// the file, and the options real files use (unk_token, fuse_unk,
// byte_fallback, ignore_merges). tokenize() turns one pre-token into ids
// with the package's algorithm (models/bpe/word.rs: a heap of candidate
// merges ordered by rank, then position), so that ties and stale candidates
// resolve as they do there. Words already seen come from a cache.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_RUNTIME_TEXT_BPE_H
#define LLMC_RUNTIME_TEXT_BPE_H

#include "runtime/text/TokenizerJson.h"

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace llmc::rt::text {

/// The per-thread state of BpeModel::tokenize: the cache of words already
/// merged and the buffers of one merge.
class BpeScratch {
public:
  BpeScratch() = default;
  /// Forgets every cached word.
  void clear();

private:
  friend class BpeModel;
  struct Symbol {
    uint32_t id;
    int32_t prev, next;
    uint32_t length; ///< bytes of the word; 0 once merged into the left
  };
  struct Candidate {
    uint32_t rank, position, newId;
  };
  /// The cache: open addressing over word hashes; the words' bytes and
  /// ids live in two arrays, so a lookup allocates nothing (a map of
  /// std::string cost a third of the encoding time).
  struct Slot {
    uint64_t hash;
    uint32_t keyOffset, keyLength, idsOffset, idsCount;
  };
  /// The ids of `word` if cached, else nullptr (`count` set on a hit).
  const uint32_t *find(std::string_view word, uint64_t hash,
                       uint32_t &count) const;
  void insert(std::string_view word, uint64_t hash, const uint32_t *ids,
              uint32_t count);
  std::vector<Slot> slots_; ///< keyLength 0: empty (words are not empty)
  size_t used_ = 0;
  std::string keys_;
  std::vector<uint32_t> cachedIds_;
  std::vector<Symbol> symbols_;
  std::vector<Candidate> heap_;
};

class BpeModel {
public:
  /// Reads `model` (at JSON path `path`), refusing the options llmc does not
  /// implement (dropout, continuing_subword_prefix, end_of_word_suffix).
  static Status parse(const JsonSource &source, const Json &model,
                      const std::string &path,
                      std::unique_ptr<BpeModel> &out);

  /// Appends the ids of one pre-token (its characters looked up in the
  /// vocabulary, then merged). Fails only when a character is unknown and
  /// unk_token is not in the vocabulary (as the package does).
  Status tokenize(std::string_view word, BpeScratch &scratch,
                  std::vector<uint32_t> &ids) const;

  std::optional<uint32_t> tokenToId(std::string_view token) const;
  /// The vocabulary entry of `id`, or nullptr.
  const std::string *idToToken(uint32_t id) const;
  /// The number of vocabulary entries: what the package's get_vocab_size
  /// returns, from which it numbers added tokens that are not in it.
  size_t vocabEntries() const { return vocab_.size(); }
  /// The largest id of the vocabulary, or -1 when it is empty.
  int64_t maxId() const { return maxId_; }
  size_t mergeCount() const { return mergeCount_; }
  bool byteFallback() const { return byteFallback_; }

private:
  struct Merge {
    uint32_t rank, newId;
  };
  static uint64_t pairKey(uint32_t left, uint32_t right) {
    return (static_cast<uint64_t>(left) << 32) | right;
  }
  Status parseMerges(const JsonSource &source, const Json &merges,
                     const std::string &path);
  /// Steps 1-2 of tokenize: the word's symbols, then the merges.
  Status mergeWord(std::string_view word, BpeScratch &scratch,
                   std::vector<uint32_t> &ids) const;
  void mergeAll(BpeScratch &scratch) const;

  /// The merges by pair: open addressing (rank kNoRank marks an empty
  /// slot), twice as fast to probe as std::unordered_map, which the merge
  /// loop of long words (LLaMA 2's whole lines) spends its time in.
  static constexpr uint32_t kNoRank = UINT32_MAX;
  struct MergeSlot {
    uint64_t pair;
    Merge merge;
  };
  const Merge *findMerge(uint32_t left, uint32_t right) const;
  void putMerge(uint64_t pair, Merge merge);

  std::unordered_map<std::string, uint32_t> vocab_;
  std::unordered_map<uint32_t, const std::string *> tokens_;
  std::vector<MergeSlot> merges_;
  size_t mergeCount_ = 0;
  /// The id of each ASCII character's token, or -1 (the common lookup).
  int64_t asciiIds_[128];
  int64_t maxId_ = -1;
  std::optional<std::string> unkToken_;
  bool fuseUnk_ = false;
  bool byteFallback_ = false;
  bool ignoreMerges_ = false;
  /// The id of "<0xNN>" for every byte, or -1.
  int64_t byteIds_[256];
};

} // namespace llmc::rt::text

#endif // LLMC_RUNTIME_TEXT_BPE_H
