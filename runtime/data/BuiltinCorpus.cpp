//===- BuiltinCorpus.cpp - a training text that needs no download ---------===//
//
// Short stories from a small grammar: each paragraph follows one character
// through a handful of sentence templates, word-wrapped at 72 columns, with a
// blank line between paragraphs. Every word list and template here was
// written for llmc. The choices come from splitmix64 reduced with `%`, which
// is integer arithmetic and so the same on every platform (std distributions
// are not: the standard leaves their algorithms to the library).
//
//===----------------------------------------------------------------------===//
#include "runtime/data/BuiltinCorpus.h"
#include "runtime/Random.h"

#include <cstdint>
#include <vector>

namespace llmc::rt {

namespace {

constexpr uint64_t kSeed = 0x6c6c6d63; // "llmc"
constexpr size_t kTargetBytes = 200 * 1024;
constexpr size_t kLineWidth = 72;

using Words = std::vector<const char *>;

// The vocabulary: small on purpose, so a tiny model sees every word often.
const Words kNames = {"Ada",  "Tom", "Mira", "Ben",
                      "Lena", "Sam", "Nora", "Finn"};
const Words kCreatures = {"cat",    "dog",    "fox",     "bird",  "farmer",
                          "baker",  "sailor", "robot",   "horse", "owl",
                          "miller", "goat",   "teacher", "crow"};
const Words kAdjectives = {"small", "old",   "quiet", "happy",
                           "tall",  "brave", "lazy",  "clever",
                           "tired", "kind",  "young", "busy"};
const Words kLooks = {"red",   "green", "old",    "new",    "heavy",
                      "round", "clean", "bright", "broken", "little"};
const Words kThings = {"apple", "box",  "stone", "book",   "hat",
                       "lamp",  "key",  "boat",  "basket", "letter",
                       "cup",   "drum", "map",   "ring",   "kite"};
const Words kPlaces = {"garden", "river", "market",  "forest",
                       "house",  "hill",  "village", "kitchen",
                       "bridge", "field", "tower",   "beach"};
const Words kPrepositions = {"near", "in", "behind", "under", "beside", "by"};
const Words kTakes = {"found",   "carried", "painted", "lost",    "fixed",
                      "cleaned", "opened",  "watched", "dropped", "hid"};
const Words kActs = {"slept",  "sang",    "waited", "smiled",       "danced",
                     "walked", "laughed", "rested", "looked around"};
const Words kTimes = {"in the morning", "at night",      "every day",
                      "after the rain", "before dinner", "on a cold day",
                      "at noon",        "in the evening"};
const Words kFeelings = {"glad", "sad", "sleepy", "hungry", "proud", "calm"};

class Rng {
public:
  explicit Rng(uint64_t seed) : bits_(seed) {}
  uint64_t next() { return bits_.next(); }
  /// One of `words`.
  std::string pick(const Words &words) { return words[next() % words.size()]; }
  /// A number in [lo, hi].
  int range(int lo, int hi) {
    return lo + static_cast<int>(next() % static_cast<uint64_t>(hi - lo + 1));
  }

private:
  SplitMix64 bits_;
};

std::string capitalized(std::string text) {
  if (!text.empty() && text[0] >= 'a' && text[0] <= 'z')
    text[0] = static_cast<char>(text[0] - 'a' + 'A');
  return text;
}

std::string article(const std::string &word) {
  return (word[0] == 'a' || word[0] == 'e' || word[0] == 'i' ||
          word[0] == 'o' || word[0] == 'u')
             ? "an " + word
             : "a " + word;
}

/// One sentence about `hero` ("Mira" or "the old fox"), from one of the
/// templates.
std::string sentence(Rng &rng, const std::string &hero) {
  std::string thing = rng.pick(kThings), place = rng.pick(kPlaces);
  std::string look = rng.pick(kLooks);
  switch (rng.next() % 10) {
  case 0:
    return hero + " " + rng.pick(kTakes) + " " + article(look) + " " + thing +
           " " + rng.pick(kPrepositions) + " the " + place + ".";
  case 1:
    return hero + " " + rng.pick(kActs) + " " + rng.pick(kPrepositions) +
           " the " + place + " " + rng.pick(kTimes) + ".";
  case 2:
    return capitalized(rng.pick(kTimes)) + ", " + hero + " went to the " +
           place + ".";
  case 3:
    return "The " + thing + " was " + look + ", so " + hero + " " +
           rng.pick(kTakes) + " it.";
  case 4:
    return "\"Where is my " + thing + "?\" asked " + hero + ".";
  case 5:
    return "\"It is " + rng.pick(kPrepositions) + " the " + place +
           ",\" said the " + rng.pick(kAdjectives) + " " +
           rng.pick(kCreatures) + ".";
  case 6:
    return "Then " + hero + " and the " + rng.pick(kCreatures) + " " +
           rng.pick(kActs) + " together.";
  case 7:
    return hero + " felt " + rng.pick(kFeelings) + " and " + rng.pick(kActs) +
           ".";
  case 8: {
    std::string adjective = rng.pick(kAdjectives);
    return "There was " + article(adjective) + " " + rng.pick(kCreatures) +
           " near the " + place + ".";
  }
  default:
    return hero + " gave the " + thing + " to " + rng.pick(kNames) + ".";
  }
}

/// A paragraph: an opening that introduces the hero, then 2 to 5 sentences
/// about it.
std::string paragraph(Rng &rng) {
  std::string opening, hero;
  if (rng.next() % 2 == 0) {
    hero = rng.pick(kNames);
    opening = hero + " lived " + rng.pick(kPrepositions) + " the " +
              rng.pick(kPlaces) + ".";
  } else {
    std::string adjective = rng.pick(kAdjectives),
                creature = rng.pick(kCreatures);
    hero = "the " + adjective + " " + creature;
    opening = "Once there was " + article(adjective) + " " + creature + ".";
  }
  std::string text = opening;
  for (int i = 0, n = rng.range(2, 5); i < n; ++i)
    text += " " + capitalized(sentence(rng, hero));
  return text;
}

/// Appends `text` to `out` wrapped at kLineWidth columns, then a blank line.
void appendWrapped(std::string &out, const std::string &text) {
  size_t column = 0, start = 0;
  while (start < text.size()) {
    size_t end = text.find(' ', start);
    if (end == std::string::npos)
      end = text.size();
    size_t length = end - start;
    if (column > 0 && column + 1 + length > kLineWidth) {
      out += '\n';
      column = 0;
    } else if (column > 0) {
      out += ' ';
      ++column;
    }
    out.append(text, start, length);
    column += length;
    start = end + 1;
  }
  out += "\n\n";
}

std::string generateCorpus() {
  Rng rng(kSeed);
  std::string out;
  out.reserve(kTargetBytes + 1024);
  while (out.size() < kTargetBytes)
    appendWrapped(out, paragraph(rng));
  return out;
}

} // namespace

const std::string &builtinCorpus() {
  static const std::string corpus = generateCorpus();
  return corpus;
}

} // namespace llmc::rt
