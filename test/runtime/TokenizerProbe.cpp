// llmc-tokenizer-probe: llmc's side of test/text/tokenizer_parity.py. Loads
// a tokenizer.json, runs the requests of a JSON file through it, and prints
// the results as JSON, so that one process answers a whole test case:
//
//   llmc-tokenizer-probe TOKENIZER.json REQUESTS.json
//   REQUESTS: {"encode": ["text", ...], "decode": [[id, ...], ...]}
//   stdout:   {"encode": [[ids]], "encode_special": [[ids]],
//              "decode": ["text"], "decode_skip": ["text"],
//              "vocab_size": N, "end_of_text": id or null}
//
// A load or encode error prints {"error": MESSAGE} and exits 1 (the tests of
// refusals read the message).
#include "runtime/text/Tokenizer.h"

#include <nlohmann/json.hpp>

#include <fstream>
#include <iostream>
#include <sstream>

using llmc::rt::DecodeSpecial;
using llmc::rt::EncodeCache;
using llmc::rt::SpecialTokens;
using llmc::rt::Status;
using llmc::rt::Tokenizer;
using Json = nlohmann::json;

namespace {

int fail(const std::string &message) {
  std::cout << Json{{"error", message}}.dump(-1, ' ', false,
                                             Json::error_handler_t::replace)
            << "\n";
  return 1;
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 3) {
    std::cerr << "usage: llmc-tokenizer-probe TOKENIZER.json REQUESTS.json\n";
    return 2;
  }
  std::unique_ptr<Tokenizer> tokenizer;
  if (Status status = Tokenizer::load(argv[1], tokenizer); !status)
    return fail(status.message());
  std::ifstream in(argv[2]);
  std::stringstream text;
  text << in.rdbuf();
  Json requests = Json::parse(text.str(), nullptr, false);
  if (requests.is_discarded() || !requests.is_object())
    return fail(std::string(argv[2]) + ": not a JSON object");

  Json out = Json::object();
  out["vocab_size"] = tokenizer->vocabSize();
  if (auto eot = tokenizer->endOfTextId())
    out["end_of_text"] = *eot;
  else
    out["end_of_text"] = nullptr;
  EncodeCache cache;
  Json encoded = Json::array(), special = Json::array();
  for (const Json &item : requests.value("encode", Json::array())) {
    std::string input = item.get<std::string>();
    std::vector<uint32_t> ids, withSpecial;
    if (Status status =
            tokenizer->encode(input, ids, SpecialTokens::Omit, &cache);
        !status)
      return fail(status.message());
    // Without a shared cache, through the plain overload: the same ids.
    if (Status status = tokenizer->encode(input, withSpecial,
                                          SpecialTokens::Add, nullptr);
        !status)
      return fail(status.message());
    encoded.push_back(ids);
    special.push_back(withSpecial);
  }
  out["encode"] = encoded;
  out["encode_special"] = special;
  Json decoded = Json::array(), skipped = Json::array();
  for (const Json &item : requests.value("decode", Json::array())) {
    std::vector<int32_t> ids = item.get<std::vector<int32_t>>();
    decoded.push_back(tokenizer->decode(ids));
    skipped.push_back(tokenizer->decode(ids, DecodeSpecial::Skip));
  }
  out["decode"] = decoded;
  out["decode_skip"] = skipped;
  std::cout << out.dump(-1, ' ', false, Json::error_handler_t::strict) << "\n";
  return 0;
}
