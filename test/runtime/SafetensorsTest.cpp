// Tests of runtime/io/Safetensors: a file written by hand from the format
// spec, round trips with Python's `safetensors` library (when python3 has
// it), byte-exact rewrites, atomic writes, and every validation error with
// its exact message.
#include "runtime/io/Safetensors.h"

#include "IoTestUtil.h"

#include <gtest/gtest.h>

#include <unistd.h>
#include <nlohmann/json.hpp>

#include <cstring>
#include <random>
#include <sys/stat.h>

namespace {

using namespace llmc::rt;
using llmc::test::readBytes;
using llmc::test::TempDir;
using llmc::test::writeBytes;

/// A tensor that owns its bytes; views() turns a set of them into what
/// writeSafetensors takes.
struct OwnedTensor {
  DType dtype;
  Shape shape;
  std::vector<uint8_t> bytes;
};
using OwnedTensors = std::map<std::string, OwnedTensor>;

std::map<std::string, SafetensorsTensor> views(const OwnedTensors &tensors) {
  std::map<std::string, SafetensorsTensor> result;
  for (const auto &[name, tensor] : tensors)
    result[name] = {tensor.dtype, tensor.shape, tensor.bytes.data(),
                    tensor.bytes.size()};
  return result;
}

/// Fresh random bytes for every tensor (0/1 for BOOL), seeded so a failure
/// reproduces. Names are chosen so that name order differs from file order.
OwnedTensors randomTensors(uint64_t seed) {
  const std::vector<std::tuple<std::string, DType, Shape>> specs = {
      {"wte", DType::F32, {7, 5}},
      {"h.0.attn.bias", DType::BF16, {5}},
      {"h.0.ln.gamma", DType::F16, {3, 2}},
      {"lm_head", DType::F64, {2, 3}},
      {"step", DType::I64, {}},
      {"ids", DType::I32, {4, 1, 2}},
      {"mask", DType::I1, {3, 3}},
      {"empty", DType::F32, {0, 4}},
  };
  std::mt19937_64 rng(seed);
  OwnedTensors tensors;
  for (const auto &[name, dtype, shape] : specs) {
    OwnedTensor tensor{dtype, shape, {}};
    tensor.bytes.resize(numElements(shape) * dtypeSize(dtype));
    for (uint8_t &byte : tensor.bytes)
      byte = dtype == DType::I1 ? rng() % 2 : static_cast<uint8_t>(rng());
    tensors[name] = tensor;
  }
  return tensors;
}

void expectSameTensors(const SafetensorsFile &file, const OwnedTensors &want) {
  ASSERT_EQ(file.tensors().size(), want.size());
  for (const auto &[name, tensor] : want) {
    const SafetensorsTensor *got = file.find(name);
    ASSERT_NE(got, nullptr) << name;
    EXPECT_EQ(got->dtype, tensor.dtype) << name;
    EXPECT_EQ(got->shape, tensor.shape) << name;
    ASSERT_EQ(got->bytes, tensor.bytes.size()) << name;
    if (got->bytes != 0) { // memcmp must not see the null of an empty vector
      EXPECT_EQ(std::memcmp(got->data, tensor.bytes.data(), got->bytes), 0)
          << name;
    }
  }
}

//===----------------------------------------------------------------------===//
// A file written by hand from the format spec. It does not depend on Python,
// so it always runs; safetensors 0.8.0 writes exactly these bytes for these
// tensors and metadata (checked when this test was written).
//===----------------------------------------------------------------------===//

const char kKnownHeader[] =
    "{\"__metadata__\":{\"format\":\"pt\"},"
    "\"steps\":{\"dtype\":\"I64\",\"shape\":[2],\"data_offsets\":[0,16]},"
    "\"embedding.weight\":{\"dtype\":\"F32\",\"shape\":[2,3],"
    "\"data_offsets\":[16,40]},"
    "\"bias\":{\"dtype\":\"BF16\",\"shape\":[3],\"data_offsets\":[40,46]},"
    "\"mask\":{\"dtype\":\"BOOL\",\"shape\":[2,2],\"data_offsets\":[46,50]}}"
    "      "; // 282 bytes of JSON + 6 spaces: the data starts 8-byte aligned

const uint8_t kKnownLength[8] = {0x20, 0x01, 0, 0, 0, 0, 0, 0}; // 288

const uint8_t kKnownData[] = {
    // steps: I64 [1234567890123, -7]
    0xcb, 0x04, 0xfb, 0x71, 0x1f, 0x01, 0x00, 0x00, //
    0xf9, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
    // embedding.weight: F32 [[0.5, -1.25, 3.75], [-0.015625, 1024.5, 7.0]]
    0x00, 0x00, 0x00, 0x3f, 0x00, 0x00, 0xa0, 0xbf, 0x00, 0x00, 0x70, 0x40, //
    0x00, 0x00, 0x80, 0xbc, 0x00, 0x10, 0x80, 0x44, 0x00, 0x00, 0xe0, 0x40,
    // bias: BF16 [1.0, -2.5, 0.15625]
    0x80, 0x3f, 0x20, 0xc0, 0x20, 0x3e,
    // mask: BOOL [[1, 0], [0, 1]]
    0x01, 0x00, 0x00, 0x01};

std::vector<uint8_t> knownFile() {
  std::vector<uint8_t> bytes(kKnownLength, kKnownLength + 8);
  bytes.insert(bytes.end(), kKnownHeader,
               kKnownHeader + sizeof(kKnownHeader) - 1);
  bytes.insert(bytes.end(), kKnownData, kKnownData + sizeof(kKnownData));
  return bytes;
}

TEST(Safetensors, ReadsAFileWrittenFromTheSpec) {
  TempDir dir;
  std::string path = dir.file("known.safetensors");
  writeBytes(path, knownFile());

  SafetensorsFile file;
  Status status = readSafetensors(path, file);
  ASSERT_TRUE(status.isOk()) << status.toString();
  EXPECT_EQ(file.metadata(), (SafetensorsMetadata{{"format", "pt"}}));
  ASSERT_EQ(file.tensors().size(), 4u);

  const SafetensorsTensor *steps = file.find("steps");
  ASSERT_NE(steps, nullptr);
  EXPECT_EQ(steps->dtype, DType::I64);
  EXPECT_EQ(steps->shape, (Shape{2}));
  int64_t stepValues[2];
  std::memcpy(stepValues, steps->data, sizeof(stepValues));
  EXPECT_EQ(stepValues[0], 1234567890123);
  EXPECT_EQ(stepValues[1], -7);

  const SafetensorsTensor *embedding = file.find("embedding.weight");
  ASSERT_NE(embedding, nullptr);
  EXPECT_EQ(embedding->dtype, DType::F32);
  EXPECT_EQ(embedding->shape, (Shape{2, 3}));
  float embeddingValues[6];
  ASSERT_EQ(embedding->bytes, sizeof(embeddingValues));
  std::memcpy(embeddingValues, embedding->data, sizeof(embeddingValues));
  const float expected[6] = {0.5f, -1.25f, 3.75f, -0.015625f, 1024.5f, 7.0f};
  for (int i = 0; i < 6; ++i) // exact: every value is a short binary fraction
    EXPECT_EQ(embeddingValues[i], expected[i]) << i;

  const SafetensorsTensor *bias = file.find("bias");
  ASSERT_NE(bias, nullptr);
  EXPECT_EQ(bias->dtype, DType::BF16);
  uint16_t biasBits[3];
  std::memcpy(biasBits, bias->data, sizeof(biasBits));
  EXPECT_EQ(bf16ToFloat(biasBits[0]), 1.0f);
  EXPECT_EQ(bf16ToFloat(biasBits[1]), -2.5f);
  EXPECT_EQ(bf16ToFloat(biasBits[2]), 0.15625f);

  const SafetensorsTensor *mask = file.find("mask");
  ASSERT_NE(mask, nullptr);
  EXPECT_EQ(mask->dtype, DType::I1);
  EXPECT_EQ(mask->shape, (Shape{2, 2}));
  EXPECT_EQ(std::vector<uint8_t>(mask->data, mask->data + 4),
            (std::vector<uint8_t>{1, 0, 0, 1}));
  EXPECT_EQ(file.find("missing"), nullptr);
}

TEST(Safetensors, RewritesAFileWrittenFromTheSpecByteForByte) {
  TempDir dir;
  std::string path = dir.file("known.safetensors");
  writeBytes(path, knownFile());
  SafetensorsFile file;
  ASSERT_TRUE(readSafetensors(path, file).isOk());

  std::string copy = dir.file("copy.safetensors");
  Status status = writeSafetensors(copy, file.tensors(), file.metadata());
  ASSERT_TRUE(status.isOk()) << status.toString();
  EXPECT_EQ(readBytes(copy), knownFile());

  std::vector<uint8_t> serialized;
  ASSERT_TRUE(
      serializeSafetensors(file.tensors(), file.metadata(), serialized).isOk());
  EXPECT_EQ(serialized, knownFile());
}

//===----------------------------------------------------------------------===//
// Round trips with Python's safetensors library, in both directions.
//===----------------------------------------------------------------------===//

// Writes (mode "write") or checks (mode "check") a file with the library,
// from the raw bytes and the manifest the test wrote. Works with the
// TensorSpec API (0.8) and the older dict API.
const char kPythonScript[] = R"PY(
import ctypes, json, struct, sys
import safetensors

mode, manifest_path, path = sys.argv[1:4]
with open(manifest_path) as f:
    manifest = json.load(f)
NAMES = {"F32": "float32", "F64": "float64", "BF16": "bfloat16",
         "F16": "float16", "I32": "int32", "I64": "int64", "BOOL": "bool"}
raw = {}
for t in manifest["tensors"]:
    with open(t["raw"], "rb") as f:
        raw[t["name"]] = f.read()

if mode == "write":
    keep = []
    def spec(t):
        data = raw[t["name"]]
        if hasattr(safetensors, "TensorSpec"):
            buf = ctypes.create_string_buffer(data, max(len(data), 1))
            keep.append(buf)
            return safetensors.TensorSpec(
                dtype=NAMES[t["dtype"]], shape=t["shape"],
                data_ptr=ctypes.addressof(buf), data_len=len(data))
        return {"dtype": NAMES[t["dtype"]], "shape": t["shape"], "data": data}
    out = safetensors.serialize({t["name"]: spec(t) for t in manifest["tensors"]},
                                manifest["metadata"] or None)
    with open(path, "wb") as f:
        f.write(out)
    sys.exit(0)

with open(path, "rb") as f:
    data = f.read()
got = dict(safetensors.deserialize(data))
errors = []
if sorted(got) != sorted(raw):
    errors.append("names: %s != %s" % (sorted(got), sorted(raw)))
for t in manifest["tensors"]:
    g = got.get(t["name"])
    if g is None:
        continue
    if g["dtype"] != t["dtype"] or list(g["shape"]) != t["shape"]:
        errors.append("%s: %s %s" % (t["name"], g["dtype"], g["shape"]))
    if bytes(g["data"]) != raw[t["name"]]:
        errors.append("%s: different bytes" % t["name"])
(n,) = struct.unpack("<Q", data[:8])
metadata = json.loads(data[8:8 + n]).get("__metadata__", {})
if metadata != manifest["metadata"]:
    errors.append("metadata: %r != %r" % (metadata, manifest["metadata"]))
print("\n".join(errors) or "ok")
sys.exit(1 if errors else 0)
)PY";

/// The project's test venv (tools/dev.sh test installs safetensors there),
/// else the system python3.
std::string python() {
  std::string venv = LLMC_TEST_VENV_PYTHON;
  return access(venv.c_str(), X_OK) == 0 ? venv : "python3";
}

bool pythonHasSafetensors() {
  static const bool has =
      std::system((python() + " -c 'import safetensors' >/dev/null 2>&1")
                      .c_str()) == 0;
  return has;
}

class PythonRoundTrip : public ::testing::Test {
protected:
  void SetUp() override {
    if (!pythonHasSafetensors())
      GTEST_SKIP() << python()
                   << " cannot import safetensors (tools/dev.sh test "
                      "installs it); the files written from the spec in "
                      "ReadsAFileWrittenFromTheSpec and "
                      "RewritesAFileWrittenFromTheSpecByteForByte still "
                      "pin the format";
    writeBytes(dir.file("roundtrip.py"), kPythonScript,
               sizeof(kPythonScript) - 1);
  }

  // Writes the raw bytes and a manifest for the script.
  void writeManifest(const OwnedTensors &tensors,
                     const SafetensorsMetadata &metadata) {
    nlohmann::json manifest;
    manifest["metadata"] = nlohmann::json::object();
    for (const auto &[key, value] : metadata)
      manifest["metadata"][key] = value;
    manifest["tensors"] = nlohmann::json::array();
    int index = 0;
    for (const auto &[name, tensor] : tensors) {
      std::string raw = dir.file("raw" + std::to_string(index++) + ".bin");
      writeBytes(raw, tensor.bytes);
      manifest["tensors"].push_back(
          {{"name", name},
           {"dtype", safetensorsDTypeName(tensor.dtype)},
           {"shape", tensor.shape},
           {"raw", raw}});
    }
    std::string text = manifest.dump();
    writeBytes(dir.file("manifest.json"), text.data(), text.size());
  }

  // Runs the script; the output goes into the failure message.
  void runPython(const std::string &mode, const std::string &path) {
    std::string log = dir.file("python.log");
    std::string command = python() + " '" + dir.file("roundtrip.py") + "' " + mode +
                          " '" + dir.file("manifest.json") + "' '" + path +
                          "' >'" + log + "' 2>&1";
    int rc = std::system(command.c_str());
    std::vector<uint8_t> output = readBytes(log);
    EXPECT_EQ(rc, 0) << command << "\n"
                     << std::string(output.begin(), output.end());
  }

  TempDir dir;
};

TEST_F(PythonRoundTrip, ReadsPythonsFileAndWritesTheSameBytes) {
  OwnedTensors tensors = randomTensors(/*seed=*/1234);
  SafetensorsMetadata metadata = {{"format", "pt"}};
  writeManifest(tensors, metadata);
  std::string python = dir.file("python.safetensors");
  runPython("write", python);

  SafetensorsFile file;
  Status status = readSafetensors(python, file);
  ASSERT_TRUE(status.isOk()) << status.toString();
  expectSameTensors(file, tensors);
  EXPECT_EQ(file.metadata(), metadata);

  // Same tensors, same metadata: the same file, byte for byte.
  std::string ours = dir.file("ours.safetensors");
  ASSERT_TRUE(writeSafetensors(ours, views(tensors), metadata).isOk());
  EXPECT_EQ(readBytes(ours), readBytes(python));
}

TEST_F(PythonRoundTrip, PythonReadsOurFile) {
  // Several metadata keys (the library writes them in hash order, so only
  // their values are compared), with escapes and non-ASCII text.
  OwnedTensors tensors = randomTensors(/*seed=*/5678);
  SafetensorsMetadata metadata = {
      {"format", "pt"},
      {"step", "1200"},
      {"note", "tab\there \"quoted\" \xc3\xa9t\xc3\xa9"}};
  writeManifest(tensors, metadata);
  std::string ours = dir.file("ours.safetensors");
  ASSERT_TRUE(writeSafetensors(ours, views(tensors), metadata).isOk());
  runPython("check", ours);

  std::string python = dir.file("python.safetensors");
  runPython("write", python);
  SafetensorsFile file;
  ASSERT_TRUE(readSafetensors(python, file).isOk());
  expectSameTensors(file, tensors);
  EXPECT_EQ(file.metadata(), metadata);
}

//===----------------------------------------------------------------------===//
// Writing.
//===----------------------------------------------------------------------===//

TEST(Safetensors, RoundTripsRandomTensorsByteForByte) {
  TempDir dir;
  OwnedTensors tensors = randomTensors(/*seed=*/42);
  SafetensorsMetadata metadata = {{"step", "17"}, {"format", "pt"}};
  std::string first = dir.file("first.safetensors");
  ASSERT_TRUE(writeSafetensors(first, views(tensors), metadata).isOk());

  SafetensorsFile file;
  Status status = readSafetensors(first, file);
  ASSERT_TRUE(status.isOk()) << status.toString();
  expectSameTensors(file, tensors);
  EXPECT_EQ(file.metadata(), metadata);

  std::string second = dir.file("second.safetensors");
  ASSERT_TRUE(writeSafetensors(second, file.tensors(), file.metadata()).isOk());
  EXPECT_EQ(readBytes(second), readBytes(first));

  // The views stay valid when the file (their buffer's owner) moves.
  SafetensorsFile moved = std::move(file);
  expectSameTensors(moved, tensors);
}

TEST(Safetensors, OrdersByDTypeThenNameAndAlignsEveryTensor) {
  TempDir dir;
  std::string path = dir.file("ordered.safetensors");
  ASSERT_TRUE(writeSafetensors(path, views(randomTensors(7))).isOk());
  std::vector<uint8_t> bytes = readBytes(path);
  uint64_t headerBytes = 0;
  std::memcpy(&headerBytes, bytes.data(), 8);
  EXPECT_EQ(headerBytes % 8, 0u);
  std::string header(bytes.begin() + 8, bytes.begin() + 8 + headerBytes);
  EXPECT_EQ(header.find_first_not_of(' ', header.rfind('}') + 1),
            std::string::npos)
      << "only spaces pad the header";

  // The file order: I64, F64, F32 (by name), I32, BF16, F16, BOOL.
  const char *order[] = {"step", "lm_head",       "empty",        "wte",
                         "ids",  "h.0.attn.bias", "h.0.ln.gamma", "mask"};
  size_t previous = 0;
  for (const char *name : order) {
    size_t at = header.find("\"" + std::string(name) + "\"");
    ASSERT_NE(at, std::string::npos) << name;
    EXPECT_GT(at, previous) << name;
    previous = at;
  }
  // Every tensor starts at a multiple of its element size (the data section
  // starts 8-byte aligned), so a reader can use it in place.
  const std::map<std::string, uint64_t> elementSize = {
      {"I64", 8},  {"F64", 8}, {"F32", 4}, {"I32", 4},
      {"BF16", 2}, {"F16", 2}, {"BOOL", 1}};
  nlohmann::json entries = nlohmann::json::parse(header);
  for (const auto &[name, entry] : entries.items()) {
    uint64_t size = elementSize.at(entry["dtype"].get<std::string>());
    EXPECT_EQ(entry["data_offsets"][0].get<uint64_t>() % size, 0u) << name;
  }
}

TEST(Safetensors, WritesAnEmptyFile) {
  TempDir dir;
  std::string path = dir.file("empty.safetensors");
  ASSERT_TRUE(writeSafetensors(path, {}).isOk());
  std::vector<uint8_t> expected = {8,   0,   0,   0,   0,   0,   0,   0,
                                   '{', '}', ' ', ' ', ' ', ' ', ' ', ' '};
  EXPECT_EQ(readBytes(path), expected);
  SafetensorsFile file;
  ASSERT_TRUE(readSafetensors(path, file).isOk());
  EXPECT_TRUE(file.tensors().empty());
  EXPECT_TRUE(file.metadata().empty());
}

TEST(Safetensors, WritesMetadataWithoutTensors) {
  // A checkpoint's optimizer file of a program without optimizer state.
  TempDir dir;
  std::string path = dir.file("meta.safetensors");
  ASSERT_TRUE(writeSafetensors(path, {}, {{"step", "3"}}).isOk());
  SafetensorsFile file;
  Status status = readSafetensors(path, file);
  ASSERT_TRUE(status.isOk()) << status.message();
  EXPECT_TRUE(file.tensors().empty());
  EXPECT_EQ(file.metadata().at("step"), "3");
}

TEST(Safetensors, WriteReplacesTheFileAndLeavesNoTemporary) {
  TempDir dir;
  std::string path = dir.file("model.safetensors");
  ASSERT_TRUE(writeSafetensors(path, views(randomTensors(1))).isOk());
  OwnedTensors second = randomTensors(2);
  ASSERT_TRUE(writeSafetensors(path, views(second)).isOk());
  SafetensorsFile file;
  ASSERT_TRUE(readSafetensors(path, file).isOk());
  expectSameTensors(file, second);
  struct stat info;
  EXPECT_NE(::stat((path + ".tmp").c_str(), &info), 0);
}

TEST(Safetensors, AFailedWriteLeavesTheOldFile) {
  TempDir dir;
  std::string path = dir.file("model.safetensors");
  ASSERT_TRUE(writeSafetensors(path, views(randomTensors(3))).isOk());
  std::vector<uint8_t> before = readBytes(path);

  // The temporary cannot be created: a directory is in its place.
  ASSERT_EQ(::mkdir((path + ".tmp").c_str(), 0755), 0);
  Status status = writeSafetensors(path, views(randomTensors(4)));
  ASSERT_FALSE(status.isOk());
  EXPECT_EQ(status.code(), StatusCode::InvalidArgument);
  EXPECT_EQ(status.message(), path + ".tmp: cannot create: Is a directory");
  EXPECT_EQ(readBytes(path), before);
}

TEST(Safetensors, WriteRejectsBadTensorsAndWritesNothing) {
  TempDir dir;
  std::string path = dir.file("bad.safetensors");
  std::vector<uint8_t> bytes(24, 0x5a);
  struct Case {
    std::map<std::string, SafetensorsTensor> tensors;
    SafetensorsMetadata metadata;
    std::string message;
  };
  const Case cases[] = {
      {{{"w", {DType::F32, {2, 2}, bytes.data(), 24}}},
       {},
       "tensor 'w' has 24 bytes, expected 16 for F32 [2, 2]"},
      {{{"w", {DType::F32, {-2, 3}, bytes.data(), 24}}},
       {},
       "tensor 'w' has shape [-2, 3]; dimensions must be non-negative and "
       "the size must fit in 64 bits"},
      {{{"__metadata__", {DType::I1, {24}, bytes.data(), 24}}},
       {},
       "a tensor cannot be called '__metadata__' (the header reserves that "
       "name); rename it"},
      {{{"bad\xff", {DType::I1, {24}, bytes.data(), 24}}},
       {},
       "tensor name 'bad\xff' is not valid UTF-8; the header is JSON and "
       "must be UTF-8"},
      {{{"w", {DType::I1, {24}, bytes.data(), 24}}},
       {{"note", "\xc0\x80"}},
       "metadata 'note' is not valid UTF-8; the header is JSON and must be "
       "UTF-8"},
      {{{"w", {DType::F32, {6}, nullptr, 24}}}, {}, "tensor 'w' has no data"},
  };
  for (const Case &c : cases) {
    Status status = writeSafetensors(path, c.tensors, c.metadata);
    ASSERT_FALSE(status.isOk()) << c.message;
    EXPECT_EQ(status.code(), StatusCode::InvalidArgument);
    EXPECT_EQ(status.message(), path + ": " + c.message);
    struct stat info;
    EXPECT_NE(::stat(path.c_str(), &info), 0) << "nothing is written";
    EXPECT_NE(::stat((path + ".tmp").c_str(), &info), 0);
  }
}

//===----------------------------------------------------------------------===//
// Reading: every validation error, with its exact message.
//===----------------------------------------------------------------------===//

std::vector<uint8_t> fileWith(const std::string &header,
                              std::vector<uint8_t> data) {
  std::vector<uint8_t> bytes(8);
  uint64_t length = header.size();
  for (int i = 0; i < 8; ++i)
    bytes[i] = static_cast<uint8_t>(length >> (8 * i));
  bytes.insert(bytes.end(), header.begin(), header.end());
  bytes.insert(bytes.end(), data.begin(), data.end());
  return bytes;
}

class SafetensorsErrors : public ::testing::Test {
protected:
  // Reads `bytes` from a file; expects the error `message` after "path: ".
  void expectError(const std::vector<uint8_t> &bytes, StatusCode code,
                   const std::string &message) {
    std::string path = dir.file("bad.safetensors");
    writeBytes(path, bytes);
    SafetensorsFile file;
    Status status = readSafetensors(path, file);
    ASSERT_FALSE(status.isOk()) << message;
    EXPECT_EQ(status.code(), code) << status.toString();
    EXPECT_EQ(status.message(), path + ": " + message);
    EXPECT_TRUE(file.tensors().empty());
  }

  std::vector<uint8_t> data(size_t size) {
    std::vector<uint8_t> bytes(size);
    for (uint8_t &byte : bytes)
      byte = static_cast<uint8_t>(rng() | 1);
    return bytes;
  }

  TempDir dir;
  std::mt19937 rng{99};
};

TEST_F(SafetensorsErrors, MissingFile) {
  std::string path = dir.file("absent.safetensors");
  SafetensorsFile file;
  Status status = readSafetensors(path, file);
  EXPECT_EQ(status.code(), StatusCode::NotFound);
  EXPECT_EQ(status.message(),
            path + ": cannot open: No such file or directory; check the path");
}

TEST_F(SafetensorsErrors, ADirectoryIsNotAFile) {
  SafetensorsFile file;
  Status status = readSafetensors(dir.path(), file);
  EXPECT_EQ(status.code(), StatusCode::InvalidArgument);
  EXPECT_EQ(status.message(),
            dir.path() + ": is not a regular file (a directory or a device); "
                         "give the path of a file");
}

TEST_F(SafetensorsErrors, ShorterThanTheLength) {
  expectError({1, 2, 3, 4, 5}, StatusCode::DataLoss,
              "file is 5 bytes, shorter than the 8-byte header length; the "
              "file is truncated or not a safetensors file");
}

TEST_F(SafetensorsErrors, HeaderBeyondTheFile) {
  std::vector<uint8_t> bytes = fileWith("{}", {});
  bytes[0] = 200;
  expectError(bytes, StatusCode::DataLoss,
              "header length is 200 bytes but only 2 bytes follow the 8-byte "
              "length; the file is truncated or not a safetensors file");
}

TEST_F(SafetensorsErrors, HeaderLengthAboveTheLimit) {
  std::vector<uint8_t> bytes = fileWith("{}", {});
  bytes[4] = 1; // 2^32 + 2
  expectError(bytes, StatusCode::DataLoss,
              "header length is 4294967298 bytes, more than the limit of "
              "100000000; the file is corrupt or not a safetensors file");
}

TEST_F(SafetensorsErrors, HeaderIsNotJson) {
  expectError(fileWith("{\"w\": {\"dtype\" \"F32\"}}", {}),
              StatusCode::DataLoss,
              "header is not valid JSON (parse error at line 1, column 20: "
              "syntax error while parsing object separator - unexpected "
              "string literal; expected ':'); the file is corrupt or not a "
              "safetensors file");
}

TEST_F(SafetensorsErrors, HeaderIsNotAnObject) {
  expectError(fileWith("[1, 2]", {}), StatusCode::DataLoss,
              "header is an array, expected an object that maps tensor names "
              "to {dtype, shape, data_offsets}");
}

TEST_F(SafetensorsErrors, NameGivenTwice) {
  expectError(
      fileWith("{\"w\":{\"dtype\":\"I8\"},\"w\":{\"dtype\":\"F32\",\"shape\":"
               "[1],\"data_offsets\":[0,4]}}",
               data(4)),
      StatusCode::DataLoss, "header names 'w' twice; the file is corrupt");
}

TEST_F(SafetensorsErrors, MetadataIsNotAStringMap) {
  expectError(fileWith("{\"__metadata__\":[\"a\"]}", {}), StatusCode::DataLoss,
              "\"__metadata__\" must map strings to strings, found an array");
  expectError(fileWith("{\"__metadata__\":{\"step\":12}}", {}),
              StatusCode::DataLoss,
              "\"__metadata__\" must map strings to strings, found a number "
              "for key 'step'");
}

TEST_F(SafetensorsErrors, EntryIsNotAnObject) {
  expectError(fileWith("{\"w\":\"F32\"}", {}), StatusCode::DataLoss,
              "tensor 'w': expected an object with \"dtype\", \"shape\" and "
              "\"data_offsets\", found a string");
}

TEST_F(SafetensorsErrors, EntryMissesAKey) {
  expectError(
      fileWith("{\"w\":{\"dtype\":\"F32\",\"data_offsets\":[0,4]}}", data(4)),
      StatusCode::DataLoss,
      "tensor 'w': missing \"shape\" (every tensor needs \"dtype\", "
      "\"shape\" and \"data_offsets\")");
}

TEST_F(SafetensorsErrors, DTypeIsNotAString) {
  expectError(
      fileWith("{\"w\":{\"dtype\":4,\"shape\":[1],\"data_offsets\":[0,4]}}",
               data(4)),
      StatusCode::DataLoss,
      "tensor 'w': \"dtype\" must be a string such as \"F32\", found a number");
}

TEST_F(SafetensorsErrors, UnsupportedDType) {
  for (const char *dtype : {"U16", "complex"}) {
    expectError(fileWith(std::string("{\"w\":{\"dtype\":\"") + dtype +
                             "\",\"shape\":[2],\"data_offsets\":[0,4]}}",
                         data(4)),
                StatusCode::InvalidArgument,
                std::string("tensor 'w' has dtype ") + dtype +
                    ", which llmc cannot load (it loads F32, F64, BF16, F16, "
                    "I32, I64 and BOOL); convert the tensor to one of those");
  }
  // What quantized checkpoints store (fp8, int8/uint8 packs) is named so.
  for (const char *dtype : {"I8", "U8", "F8_E4M3", "F8_E5M2"}) {
    expectError(fileWith(std::string("{\"w\":{\"dtype\":\"") + dtype +
                             "\",\"shape\":[4],\"data_offsets\":[0,4]}}",
                         data(4)),
                StatusCode::InvalidArgument,
                std::string("tensor 'w' has dtype ") + dtype +
                    " (a quantized checkpoint's), which llmc cannot load (it "
                    "loads F32, F64, BF16, F16, I32, I64 and BOOL); use the "
                    "model's bf16, f16 or f32 release");
  }
}

TEST_F(SafetensorsErrors, ShapeIsNotNonNegativeIntegers) {
  expectError(
      fileWith("{\"w\":{\"dtype\":\"F32\",\"shape\":[2,-1],\"data_offsets\":"
               "[0,4]}}",
               data(4)),
      StatusCode::DataLoss,
      "tensor 'w': \"shape\" must be a list of non-negative integers, found "
      "[2,-1]");
  expectError(
      fileWith("{\"w\":{\"dtype\":\"F32\",\"shape\":[1.5],\"data_offsets\":"
               "[0,4]}}",
               data(4)),
      StatusCode::DataLoss,
      "tensor 'w': \"shape\" must be a list of non-negative integers, found "
      "[1.5]");
  expectError(
      fileWith("{\"w\":{\"dtype\":\"F32\",\"shape\":4,\"data_offsets\":[0,4]}}",
               data(4)),
      StatusCode::DataLoss,
      "tensor 'w': \"shape\" must be a list of non-negative integers, found 4");
}

TEST_F(SafetensorsErrors, ShapeTooLarge) {
  expectError(
      fileWith("{\"w\":{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296],"
               "\"data_offsets\":[0,4]}}",
               data(4)),
      StatusCode::DataLoss,
      "tensor 'w': shape [4294967296, 4294967296] has more bytes than fit in "
      "64 bits");
}

TEST_F(SafetensorsErrors, OffsetsAreNotAPair) {
  expectError(
      fileWith("{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0]}}",
               data(4)),
      StatusCode::DataLoss,
      "tensor 'w': \"data_offsets\" must be [begin, end] with non-negative "
      "integers, found [0]");
}

TEST_F(SafetensorsErrors, OffsetsEndBeforeTheyBegin) {
  expectError(
      fileWith("{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":"
               "[4,0]}}",
               data(4)),
      StatusCode::DataLoss,
      "tensor 'w': data_offsets [4, 0] end before they "
      "begin");
}

TEST_F(SafetensorsErrors, OffsetsBeyondTheData) {
  expectError(
      fileWith("{\"w\":{\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":"
               "[0,24]}}",
               data(20)),
      StatusCode::DataLoss,
      "tensor 'w': data_offsets [0, 24] reach beyond the data section of 20 "
      "bytes; the file is truncated");
}

TEST_F(SafetensorsErrors, OffsetsDisagreeWithTheShape) {
  expectError(
      fileWith("{\"w\":{\"dtype\":\"BF16\",\"shape\":[2,3],\"data_offsets\":"
               "[0,24]}}",
               data(24)),
      StatusCode::DataLoss,
      "tensor 'w': data_offsets [0, 24] span 24 bytes, expected 12 for BF16 "
      "[2, 3]");
}

TEST_F(SafetensorsErrors, TensorsOverlap) {
  expectError(fileWith("{\"a\":{\"dtype\":\"F32\",\"shape\":[6],"
                       "\"data_offsets\":[0,24]},"
                       "\"b\":{\"dtype\":\"F32\",\"shape\":[6],"
                       "\"data_offsets\":[16,40]}}",
                       data(40)),
              StatusCode::DataLoss,
              "tensors 'a' [0, 24] and 'b' [16, 40] overlap; the file is "
              "corrupt");
}

TEST_F(SafetensorsErrors, DataHasAHole) {
  expectError(fileWith("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],"
                       "\"data_offsets\":[0,8]},"
                       "\"b\":{\"dtype\":\"F32\",\"shape\":[2],"
                       "\"data_offsets\":[12,20]}}",
                       data(20)),
              StatusCode::DataLoss,
              "bytes [8, 12) of the data section belong to no tensor; the "
              "format requires every byte to be indexed (the file is "
              "corrupt)");
}

TEST_F(SafetensorsErrors, DataHasTrailingBytes) {
  expectError(fileWith("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],"
                       "\"data_offsets\":[0,8]}}",
                       data(11)),
              StatusCode::DataLoss,
              "bytes [8, 11) of the data section belong to no tensor; the "
              "format requires every byte to be indexed (the file is "
              "corrupt)");
}

TEST_F(SafetensorsErrors, HeaderIsNotUtf8) {
  expectError(fileWith("{\"w\xff\":{}}", {}), StatusCode::DataLoss,
              "header is not valid JSON (parse error at line 1, column 4: "
              "syntax error while parsing object key - invalid string: "
              "ill-formed UTF-8 byte; last read: '\"w\xff'; expected string "
              "literal); the file is corrupt or not a safetensors file");
}

} // namespace
