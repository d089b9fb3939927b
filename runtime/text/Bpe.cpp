//===- Bpe.cpp - the BPE model of a tokenizer.json ------------------------===//
//
// tokenize() is the package's BPE::tokenize_with_cache, merge_word and
// Word::merge_all (tokenizers/src/models/bpe/), step for step:
//
//   1. A cached word returns its ids.
//   2. With ignore_merges, a word that is a vocabulary entry is one token.
//   3. Each character becomes a symbol: its vocabulary id; else, with
//      byte_fallback, one <0xNN> per byte when all of them exist; else the
//      unk token (consecutive unknowns fused into one with fuse_unk); else
//      the character is dropped.
//   4. Candidate merges of adjacent symbols go into a heap ordered by rank,
//      then by position; the best is applied unless it is stale (its symbol
//      was merged away, or the pair there now merges into another token),
//      and the pairs it forms with its neighbours are pushed.
//
// The heap reproduces the package's order even where a simpler "merge the
// lowest rank everywhere" loop would differ (a stale candidate whose new
// pair happens to merge into the same token is applied at its old rank).
//
//===----------------------------------------------------------------------===//

#include "runtime/text/Bpe.h"

#include "runtime/text/Utf8.h"

#include <algorithm>
#include <cstring>

namespace llmc::rt::text {

namespace {

// Words longer than this are merged every time, as in the package (its
// cache's MAX_LENGTH): they are rare, and would fill the cache.
constexpr size_t kMaxCachedWordBytes = 256;
// Past this many cached words (about 30 MiB), the cache starts over.
constexpr size_t kMaxCachedWords = 1 << 19;

/// "<0x0A>", as the package's format!("<{b:#04X}>") writes it.
std::string byteToken(unsigned byte) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string token = "<0x";
  token += kHex[byte >> 4];
  token += kHex[byte & 15];
  token += '>';
  return token;
}

} // namespace

void BpeScratch::clear() {
  slots_.clear();
  used_ = 0;
  keys_.clear();
  cachedIds_.clear();
}

namespace {

/// A fast 64-bit hash of a short string (words are a few bytes): eight
/// bytes at a time, mixed by multiply and xor-shift (after wyhash/murmur).
uint64_t hashWord(std::string_view word) {
  uint64_t hash = 0x9e3779b97f4a7c15ull ^ (word.size() * 0xff51afd7ed558ccdull);
  size_t i = 0;
  for (; i + 8 <= word.size(); i += 8) {
    uint64_t chunk;
    std::memcpy(&chunk, word.data() + i, 8);
    hash = (hash ^ chunk) * 0xc4ceb9fe1a85ec53ull;
    hash ^= hash >> 29;
  }
  uint64_t tail = 0;
  std::memcpy(&tail, word.data() + i, word.size() - i);
  hash = (hash ^ tail) * 0xc4ceb9fe1a85ec53ull;
  return hash ^ (hash >> 32);
}

} // namespace

const uint32_t *BpeScratch::find(std::string_view word, uint64_t hash,
                                 uint32_t &count) const {
  if (slots_.empty())
    return nullptr;
  size_t mask = slots_.size() - 1;
  for (size_t at = hash & mask;; at = (at + 1) & mask) {
    const Slot &slot = slots_[at];
    if (slot.keyLength == 0)
      return nullptr;
    if (slot.hash == hash && slot.keyLength == word.size() &&
        std::memcmp(keys_.data() + slot.keyOffset, word.data(), word.size()) ==
            0) {
      count = slot.idsCount;
      return cachedIds_.data() + slot.idsOffset;
    }
  }
}

void BpeScratch::insert(std::string_view word, uint64_t hash,
                        const uint32_t *ids, uint32_t count) {
  if (used_ >= kMaxCachedWords)
    clear();
  if (2 * (used_ + 1) > slots_.size()) {
    // Grow to keep the table at most half full.
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(std::max<size_t>(1024, 2 * old.size()), Slot{0, 0, 0, 0, 0});
    size_t mask = slots_.size() - 1;
    for (const Slot &slot : old) {
      if (slot.keyLength == 0)
        continue;
      size_t at = slot.hash & mask;
      while (slots_[at].keyLength != 0)
        at = (at + 1) & mask;
      slots_[at] = slot;
    }
  }
  size_t mask = slots_.size() - 1;
  size_t at = hash & mask;
  while (slots_[at].keyLength != 0)
    at = (at + 1) & mask;
  slots_[at] = Slot{hash, static_cast<uint32_t>(keys_.size()),
                    static_cast<uint32_t>(word.size()),
                    static_cast<uint32_t>(cachedIds_.size()), count};
  keys_.append(word);
  cachedIds_.insert(cachedIds_.end(), ids, ids + count);
  ++used_;
}

Status BpeModel::parse(const JsonSource &source, const Json &model,
                       const std::string &path,
                       std::unique_ptr<BpeModel> &out) {
  LLMC_RETURN_IF_ERROR(expectObject(source, model, path));
  LLMC_RETURN_IF_ERROR(checkKeys(
      source, model, path,
      {"type", "dropout", "unk_token", "continuing_subword_prefix",
       "end_of_word_suffix", "fuse_unk", "byte_fallback", "ignore_merges",
       "vocab", "merges"}));
  auto bpe = std::unique_ptr<BpeModel>(new BpeModel());
  if (const Json *dropout = member(model, "dropout");
      dropout && !dropout->is_null()) {
    if (!dropout->is_number())
      return source.malformed(childPath(path, "dropout"),
                              "expected a number or null, got " +
                                  describeJson(*dropout));
    if (dropout->get<double>() != 0.0)
      return source.unsupported(
          childPath(path, "dropout"),
          "BPE dropout (" + describeJson(*dropout) +
              ") makes encoding random; llmc encodes deterministically, "
              "set \"dropout\" to null");
  }
  for (const char *key : {"continuing_subword_prefix", "end_of_word_suffix"}) {
    std::optional<std::string> affix;
    LLMC_RETURN_IF_ERROR(readOptionalString(source, model, path, key, affix));
    if (affix && !affix->empty())
      return source.unsupported(
          childPath(path, key),
          "\"" + *affix + "\": llmc does not implement " + key +
              " (it loads BPE models without affixes: GPT-2, LLaMA, "
              "Qwen, Mistral); use null");
  }
  LLMC_RETURN_IF_ERROR(
      readOptionalString(source, model, path, "unk_token", bpe->unkToken_));
  LLMC_RETURN_IF_ERROR(
      readOptionalBool(source, model, path, "fuse_unk", bpe->fuseUnk_));
  LLMC_RETURN_IF_ERROR(readOptionalBool(source, model, path, "byte_fallback",
                                        bpe->byteFallback_));
  LLMC_RETURN_IF_ERROR(readOptionalBool(source, model, path, "ignore_merges",
                                        bpe->ignoreMerges_));

  // The vocabulary: token -> id.
  const Json *vocab = member(model, "vocab");
  if (!vocab)
    return source.malformed(path, "missing \"vocab\" (an object of token "
                                  "-> id)");
  std::string vocabPath = childPath(path, "vocab");
  if (!vocab->is_object())
    return source.malformed(vocabPath, "expected an object of token -> id, "
                                       "got " +
                                           describeJson(*vocab));
  bpe->vocab_.reserve(vocab->size());
  for (auto it = vocab->begin(); it != vocab->end(); ++it) {
    const Json &id = it.value();
    if (!id.is_number_unsigned() || id.get<uint64_t>() > UINT32_MAX)
      return source.malformed(keyPath(vocabPath, it.key()),
                              "expected an id (an integer from 0 to "
                              "4294967295), got " +
                                  describeJson(id));
    auto [entry, inserted] =
        bpe->vocab_.emplace(it.key(), static_cast<uint32_t>(id.get<uint64_t>()));
    (void)inserted;
    bpe->tokens_[entry->second] = &entry->first;
    bpe->maxId_ = std::max<int64_t>(bpe->maxId_, entry->second);
  }
  for (unsigned c = 0; c < 128; ++c) {
    auto it = bpe->vocab_.find(std::string(1, static_cast<char>(c)));
    bpe->asciiIds_[c] =
        it == bpe->vocab_.end() ? int64_t{-1} : int64_t{it->second};
  }
  for (unsigned byte = 0; byte < 256; ++byte) {
    auto it = bpe->vocab_.find(byteToken(byte));
    bpe->byteIds_[byte] =
        it == bpe->vocab_.end() ? int64_t{-1} : int64_t{it->second};
  }

  const Json *merges = member(model, "merges");
  if (!merges)
    return source.malformed(path, "missing \"merges\" (a list of \"left "
                                  "right\" or [\"left\", \"right\"])");
  LLMC_RETURN_IF_ERROR(
      bpe->parseMerges(source, *merges, childPath(path, "merges")));
  out = std::move(bpe);
  return Status::ok();
}

Status BpeModel::parseMerges(const JsonSource &source, const Json &merges,
                             const std::string &path) {
  if (!merges.is_array())
    return source.malformed(path, "expected a list of \"left right\" or "
                                  "[\"left\", \"right\"], got " +
                                      describeJson(merges));
  // At most half full (and a power of two, at least 2, for the mask).
  size_t slots = 2;
  while (slots < 2 * merges.size())
    slots *= 2;
  merges_.assign(slots, MergeSlot{0, Merge{kNoRank, 0}});
  uint32_t rank = 0;
  for (size_t i = 0; i < merges.size(); ++i) {
    const Json &item = merges[i];
    std::string itemPath = indexPath(path, i);
    std::string left, right;
    if (item.is_string()) {
      const std::string &line = item.get_ref<const std::string &>();
      // Legacy merges.txt files start with a "#version" line; the package
      // skips such lines (and does not count them in the ranks).
      if (line.rfind("#version", 0) == 0)
        continue;
      size_t space = line.find(' ');
      if (space == std::string::npos ||
          line.find(' ', space + 1) != std::string::npos)
        return source.malformed(itemPath,
                                "expected \"left right\" (two tokens and "
                                "one space), got " +
                                    describeJson(item));
      left = line.substr(0, space);
      right = line.substr(space + 1);
    } else if (item.is_array() && item.size() == 2 && item[0].is_string() &&
               item[1].is_string()) {
      left = item[0].get<std::string>();
      right = item[1].get<std::string>();
    } else {
      return source.malformed(itemPath, "expected \"left right\" or "
                                        "[\"left\", \"right\"], got " +
                                            describeJson(item));
    }
    auto find = [&](const std::string &token, uint32_t &id) -> Status {
      auto it = vocab_.find(token);
      if (it == vocab_.end())
        return source.malformed(
            itemPath, describeJson(Json(token)) +
                          " is not in model.vocab (every merge's parts and "
                          "result must be tokens)");
      id = it->second;
      return Status::ok();
    };
    uint32_t leftId = 0, rightId = 0, newId = 0;
    LLMC_RETURN_IF_ERROR(find(left, leftId));
    LLMC_RETURN_IF_ERROR(find(right, rightId));
    LLMC_RETURN_IF_ERROR(find(left + right, newId));
    // A pair listed twice keeps its last rank, as the package's map does.
    putMerge(pairKey(leftId, rightId), Merge{rank, newId});
    ++rank;
  }
  return Status::ok();
}

namespace {

size_t mixPair(uint64_t pair) {
  pair ^= pair >> 33;
  pair *= 0xff51afd7ed558ccdull;
  pair ^= pair >> 33;
  return static_cast<size_t>(pair);
}

} // namespace

const BpeModel::Merge *BpeModel::findMerge(uint32_t left,
                                           uint32_t right) const {
  uint64_t pair = pairKey(left, right);
  size_t mask = merges_.size() - 1;
  for (size_t at = mixPair(pair) & mask;; at = (at + 1) & mask) {
    const MergeSlot &slot = merges_[at];
    if (slot.merge.rank == kNoRank)
      return nullptr;
    if (slot.pair == pair)
      return &slot.merge;
  }
}

void BpeModel::putMerge(uint64_t pair, Merge merge) {
  size_t mask = merges_.size() - 1;
  for (size_t at = mixPair(pair) & mask;; at = (at + 1) & mask) {
    MergeSlot &slot = merges_[at];
    if (slot.merge.rank == kNoRank) {
      slot = MergeSlot{pair, merge};
      ++mergeCount_;
      return;
    }
    if (slot.pair == pair) {
      slot.merge = merge; // listed twice: the last rank wins
      return;
    }
  }
}

std::optional<uint32_t> BpeModel::tokenToId(std::string_view token) const {
  auto it = vocab_.find(std::string(token));
  if (it == vocab_.end())
    return std::nullopt;
  return it->second;
}

const std::string *BpeModel::idToToken(uint32_t id) const {
  auto it = tokens_.find(id);
  return it == tokens_.end() ? nullptr : it->second;
}

Status BpeModel::tokenize(std::string_view word, BpeScratch &scratch,
                          std::vector<uint32_t> &ids) const {
  if (word.empty())
    return Status::ok();
  // Steps 1 and 2.
  bool cacheable = word.size() <= kMaxCachedWordBytes;
  uint64_t hash = cacheable ? hashWord(word) : 0;
  if (cacheable) {
    uint32_t count = 0;
    if (const uint32_t *cached = scratch.find(word, hash, count)) {
      ids.insert(ids.end(), cached, cached + count);
      return Status::ok();
    }
  }
  size_t before = ids.size();
  auto whole = ignoreMerges_ ? vocab_.find(std::string(word)) : vocab_.end();
  if (whole != vocab_.end())
    ids.push_back(whole->second);
  else
    LLMC_RETURN_IF_ERROR(mergeWord(word, scratch, ids));
  if (cacheable)
    scratch.insert(word, hash, ids.data() + before,
                   static_cast<uint32_t>(ids.size() - before));
  return Status::ok();
}

Status BpeModel::mergeWord(std::string_view word, BpeScratch &scratch,
                           std::vector<uint32_t> &ids) const {
  std::vector<BpeScratch::Symbol> &symbols = scratch.symbols_;
  symbols.clear();
  auto add = [&](uint32_t id, uint32_t length) {
    int32_t count = static_cast<int32_t>(symbols.size());
    if (count > 0)
      symbols.back().next = count;
    symbols.push_back({id, count - 1, -1, length});
  };
  // Step 3. `unk`: a pending unknown (its id and bytes), added when a known
  // symbol follows, or grown by the next unknown with fuse_unk.
  bool pendingUnk = false;
  uint32_t unkId = 0, unkLength = 0;
  std::string character;
  for (size_t i = 0; i < word.size();) {
    uint32_t length = static_cast<uint32_t>(
        utf8SequenceLength(static_cast<unsigned char>(word[i])));
    character.assign(word.substr(i, length));
    i += length;
    int64_t known = -1;
    if (length == 1) {
      known = asciiIds_[static_cast<unsigned char>(character[0])];
    } else {
      auto it = vocab_.find(character);
      if (it != vocab_.end())
        known = it->second;
    }
    if (known >= 0) {
      if (pendingUnk) {
        add(unkId, unkLength);
        pendingUnk = false;
      }
      add(static_cast<uint32_t>(known), length);
      continue;
    }
    if (byteFallback_) {
      bool all = true;
      for (unsigned char byte : character)
        all = all && byteIds_[byte] >= 0;
      if (all) {
        // As in the package, a pending unknown is not flushed here.
        for (unsigned char byte : character)
          add(static_cast<uint32_t>(byteIds_[byte]), 1);
        continue;
      }
    }
    if (!unkToken_)
      continue; // no unk token: the package drops the character
    if (pendingUnk && fuseUnk_) {
      unkLength += length;
      continue;
    }
    auto unk = vocab_.find(*unkToken_);
    if (unk == vocab_.end())
      return Status::error(
          StatusCode::InvalidArgument,
          "model.unk_token \"" + *unkToken_ +
              "\" is not in model.vocab, and the text has a character that "
              "is not either; add the unk token to the vocabulary");
    if (pendingUnk)
      add(unkId, unkLength);
    pendingUnk = true;
    unkId = unk->second;
    unkLength = length;
  }
  if (pendingUnk)
    add(unkId, unkLength);
  // Step 4.
  mergeAll(scratch);
  for (const BpeScratch::Symbol &symbol : symbols)
    if (symbol.length != 0)
      ids.push_back(symbol.id);
  return Status::ok();
}

void BpeModel::mergeAll(BpeScratch &scratch) const {
  std::vector<BpeScratch::Symbol> &symbols = scratch.symbols_;
  std::vector<BpeScratch::Candidate> &heap = scratch.heap_;
  // std::*_heap keep the largest first: "a before b" when a has a larger
  // rank, or the same rank and a larger position.
  auto later = [](const BpeScratch::Candidate &a,
                  const BpeScratch::Candidate &b) {
    return a.rank != b.rank ? a.rank > b.rank : a.position > b.position;
  };
  auto push = [&](uint32_t left, uint32_t right, uint32_t position) {
    const Merge *merge = findMerge(left, right);
    if (!merge)
      return;
    heap.push_back({merge->rank, position, merge->newId});
    std::push_heap(heap.begin(), heap.end(), later);
  };
  heap.clear();
  int32_t count = static_cast<int32_t>(symbols.size());
  for (int32_t i = 0; i + 1 < count; ++i)
    push(symbols[i].id, symbols[i + 1].id, static_cast<uint32_t>(i));
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), later);
    BpeScratch::Candidate top = heap.back();
    heap.pop_back();
    BpeScratch::Symbol &current = symbols[top.position];
    if (current.length == 0 || current.next == -1)
      continue;
    int32_t nextPosition = current.next;
    BpeScratch::Symbol right = symbols[nextPosition];
    const Merge *merge = findMerge(current.id, right.id);
    if (!merge || merge->newId != top.newId)
      continue; // stale
    current.id = top.newId;
    current.length += right.length;
    current.next = right.next;
    symbols[nextPosition].length = 0;
    if (right.next > -1 && right.next < count)
      symbols[right.next].prev = static_cast<int32_t>(top.position);
    if (current.prev >= 0)
      push(symbols[current.prev].id, current.id,
           static_cast<uint32_t>(current.prev));
    if (current.next >= 0 && current.next < count)
      push(current.id, symbols[current.next].id, top.position);
  }
}

} // namespace llmc::rt::text
