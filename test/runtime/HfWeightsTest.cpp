// Tests of the Hugging Face weight plumbing below the tools (issue #23):
// the memory-mapped reader against the buffered one, the streamed writer
// against the plain one (byte for byte), the float conversions against
// DType.h's scalar ones on every 16-bit pattern, the plan of Mixtral's
// per-expert and fused experts element by element, and the shard size
// parser. The end-to-end cases (folders, shards, refusals, export) are
// test/hf/*.py.
#include "runtime/cpu/ThreadPool.h"
#include "runtime/io/HfWeights.h"
#include "runtime/io/Safetensors.h"
#include "runtime/train/Export.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

namespace fs = std::filesystem;
using namespace llmc::rt;

namespace {

class TempDir {
public:
  TempDir() {
    path_ = fs::temp_directory_path() /
            ("llmc-hfw-" + std::to_string(std::random_device{}()));
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  std::string file(const std::string &name) const {
    return (path_ / name).string();
  }

private:
  fs::path path_;
};

SafetensorsTensor view(DType dtype, Shape shape, const void *data) {
  return {dtype, shape, static_cast<const uint8_t *>(data),
          static_cast<uint64_t>(numElements(shape)) * dtypeSize(dtype)};
}

std::vector<uint8_t> bytesOf(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

TEST(HfWeights, MappedReaderSeesWhatTheBufferedOneSees) {
  TempDir dir;
  std::vector<float> a = {1.5f, -2.0f, 3.25f, 0.0f, 7.0f, -1.0f};
  std::vector<uint16_t> b = {floatToBf16(0.5f), floatToBf16(-4.0f)};
  ASSERT_TRUE(writeSafetensors(dir.file("w.safetensors"),
                               {{"a", view(DType::F32, {2, 3}, a.data())},
                                {"b", view(DType::BF16, {2}, b.data())}},
                               {{"format", "pt"}})
                  .isOk());
  SafetensorsFile read, mapped;
  ASSERT_TRUE(readSafetensors(dir.file("w.safetensors"), read).isOk());
  ASSERT_TRUE(mapSafetensors(dir.file("w.safetensors"), mapped).isOk());
  ASSERT_EQ(mapped.tensors().size(), 2u);
  EXPECT_EQ(mapped.metadata(), read.metadata());
  for (const auto &[name, tensor] : read.tensors()) {
    const SafetensorsTensor *other = mapped.find(name);
    ASSERT_NE(other, nullptr);
    EXPECT_EQ(other->dtype, tensor.dtype);
    EXPECT_EQ(other->shape, tensor.shape);
    ASSERT_EQ(other->bytes, tensor.bytes);
    EXPECT_EQ(std::memcmp(other->data, tensor.data, tensor.bytes), 0);
  }
  // The same validation: a truncated file is refused by both.
  std::vector<uint8_t> bytes = bytesOf(dir.file("w.safetensors"));
  bytes.resize(bytes.size() - 4);
  std::ofstream(dir.file("cut.safetensors"), std::ios::binary)
      .write(reinterpret_cast<const char *>(bytes.data()), bytes.size());
  Status buffered = readSafetensors(dir.file("cut.safetensors"), read);
  Status viaMap = mapSafetensors(dir.file("cut.safetensors"), mapped);
  EXPECT_FALSE(viaMap.isOk());
  EXPECT_EQ(viaMap.message(), buffered.message());
  EXPECT_EQ(mapSafetensors(dir.file("none.safetensors"), mapped).message(),
            dir.file("none.safetensors") +
                ": cannot open: No such file or directory; check the path");
}

TEST(HfWeights, StreamedWriterWritesTheSameBytes) {
  TempDir dir;
  std::vector<float> a = {1, 2, 3, 4};
  std::vector<uint16_t> b = {1, 2, 3};
  std::map<std::string, SafetensorsTensor> tensors = {
      {"x.weight", view(DType::F32, {2, 2}, a.data())},
      {"y", view(DType::F16, {3}, b.data())}};
  ASSERT_TRUE(
      writeSafetensors(dir.file("plain.safetensors"), tensors, {{"k", "v"}})
          .isOk());
  std::vector<std::string> asked;
  ASSERT_TRUE(writeSafetensorsStreamed(
                  dir.file("streamed.safetensors"), tensors, {{"k", "v"}},
                  [&](const std::string &name, const uint8_t *&data) {
                    asked.push_back(name);
                    data = tensors.at(name).data;
                    return Status::ok();
                  })
                  .isOk());
  EXPECT_EQ(bytesOf(dir.file("streamed.safetensors")),
            bytesOf(dir.file("plain.safetensors")));
  // File order: by dtype (f32 before f16), then name.
  EXPECT_EQ(asked, (std::vector<std::string>{"x.weight", "y"}));
  // A failing producer leaves no file.
  Status failed = writeSafetensorsStreamed(
      dir.file("failed.safetensors"), tensors, {},
      [](const std::string &, const uint8_t *&) {
        return Status::error(StatusCode::Internal, "stop");
      });
  EXPECT_EQ(failed.message(), "stop");
  EXPECT_FALSE(fs::exists(dir.file("failed.safetensors")));
  EXPECT_FALSE(fs::exists(dir.file("failed.safetensors.tmp")));
}

// Every bf16 and f16 bit pattern widens to DType.h's value, and narrowing
// f32 gives floatToBf16 / floatToF16 (round to nearest even), on threads
// and without.
TEST(HfWeights, ConversionsMatchTheScalarOnes) {
  const int64_t n = 1 << 16;
  std::vector<uint16_t> all(n);
  for (int64_t i = 0; i < n; ++i)
    all[i] = static_cast<uint16_t>(i);
  ThreadPool pool(4);
  for (DType from : {DType::BF16, DType::F16}) {
    std::vector<float> wide(n);
    ASSERT_TRUE(convertElements(from, all.data(), DType::F32, wide.data(), n,
                                &pool)
                    .isOk());
    for (int64_t i = 0; i < n; ++i) {
      float want = from == DType::BF16 ? bf16ToFloat(all[i]) : f16ToFloat(all[i]);
      ASSERT_TRUE(std::memcmp(&wide[i], &want, 4) == 0 ||
                  (std::isnan(want) && std::isnan(wide[i])))
          << dtypeName(from) << " bits " << i;
    }
  }
  std::mt19937 random(23);
  std::vector<float> values(3 << 20); // above the threads' grain
  for (float &v : values) {
    uint32_t bits = random();
    std::memcpy(&v, &bits, 4);
  }
  for (DType to : {DType::BF16, DType::F16}) {
    std::vector<uint16_t> narrow(values.size());
    ASSERT_TRUE(convertElements(DType::F32, values.data(), to, narrow.data(),
                                static_cast<int64_t>(values.size()), &pool)
                    .isOk());
    for (size_t i = 0; i < values.size(); i += 7) {
      uint16_t want = to == DType::BF16 ? floatToBf16(values[i])
                                        : floatToF16(values[i]);
      ASSERT_EQ(narrow[i], want) << dtypeName(to) << " element " << i;
    }
  }
  EXPECT_EQ(convertElements(DType::I32, values.data(), DType::F32,
                            values.data(), 1, nullptr)
                .message(),
            "cannot convert i32 to f32: weights convert between f32, f64, "
            "bf16 and f16");
}

/// A Mixtral layer's experts in one of the two forms of the files.
class ExpertsTest : public ::testing::Test {
protected:
  static constexpr int64_t E = 3, F = 2, C = 4;
  std::vector<float> w1 = values(100), w2 = values(200), w3 = values(300);
  TempDir dir;

  static std::vector<float> values(float base) {
    std::vector<float> v(E * F * C);
    for (size_t i = 0; i < v.size(); ++i)
      v[i] = base + static_cast<float>(i);
    return v;
  }
  /// Plans and assembles llmc's stacked w1, w2, w3 from `path`.
  void expectStacked(const std::string &path) {
    WeightFiles files;
    ASSERT_TRUE(WeightFiles::open(path, files).isOk());
    std::vector<WeightTarget> targets;
    for (const char *w : {"w1", "w2", "w3"})
      targets.push_back({std::string("model.layers.0.block_sparse_moe.experts.") +
                             w + ".weight",
                         DType::F32,
                         std::string(w) == "w2" ? Shape{E, C, F} : Shape{E, F, C}});
    targets.push_back(
        {"model.layers.0.block_sparse_moe.gate.weight", DType::F32, {E, C}});
    WeightPlan plan;
    Status status = planWeights(files, targets, /*strict=*/true, plan);
    ASSERT_TRUE(status.isOk()) << status.message();
    const std::vector<float> *want[] = {&w1, &w2, &w3};
    for (size_t t = 0; t < 3; ++t) {
      std::vector<uint8_t> bytes;
      ASSERT_TRUE(
          assembleWeight(files, targets[t], plan.sources[t], bytes, nullptr)
              .isOk());
      ASSERT_EQ(bytes.size(), want[t]->size() * 4);
      EXPECT_EQ(std::memcmp(bytes.data(), want[t]->data(), bytes.size()), 0)
          << targets[t].name;
    }
  }
};

TEST_F(ExpertsTest, PerExpertTensorsStack) {
  std::map<std::string, SafetensorsTensor> tensors;
  std::vector<float> gate(E * C, 1.0f);
  tensors["model.layers.0.block_sparse_moe.gate.weight"] =
      view(DType::F32, {E, C}, gate.data());
  for (int64_t j = 0; j < E; ++j)
    for (auto [w, data] : {std::pair<const char *, std::vector<float> *>{"w1", &w1},
                           {"w2", &w2},
                           {"w3", &w3}})
      tensors["model.layers.0.block_sparse_moe.experts." + std::to_string(j) +
              "." + w + ".weight"] =
          view(DType::F32, std::string(w) == "w2" ? Shape{C, F} : Shape{F, C},
               data->data() + j * F * C);
  ASSERT_TRUE(writeSafetensors(dir.file("m.safetensors"), tensors).isOk());
  expectStacked(dir.file("m.safetensors"));
}

TEST_F(ExpertsTest, FusedTransformers5ExpertsSplit) {
  // gate_up_proj [E, 2F, C]: per expert, w1's F rows then w3's.
  std::vector<float> gateUp;
  for (int64_t e = 0; e < E; ++e) {
    gateUp.insert(gateUp.end(), w1.begin() + e * F * C,
                  w1.begin() + (e + 1) * F * C);
    gateUp.insert(gateUp.end(), w3.begin() + e * F * C,
                  w3.begin() + (e + 1) * F * C);
  }
  std::vector<float> gate(E * C, 1.0f);
  ASSERT_TRUE(
      writeSafetensors(
          dir.file("m.safetensors"),
          {{"model.layers.0.mlp.gate.weight", view(DType::F32, {E, C}, gate.data())},
           {"model.layers.0.mlp.experts.gate_up_proj",
            view(DType::F32, {E, 2 * F, C}, gateUp.data())},
           {"model.layers.0.mlp.experts.down_proj",
            view(DType::F32, {E, C, F}, w2.data())}})
          .isOk());
  expectStacked(dir.file("m.safetensors"));
}

TEST(HfWeights, ShardSizes) {
  uint64_t bytes = 0;
  EXPECT_TRUE(parseShardSize("5GB", bytes));
  EXPECT_EQ(bytes, 5'000'000'000ull);
  EXPECT_TRUE(parseShardSize("2GiB", bytes));
  EXPECT_EQ(bytes, 2ull << 30);
  EXPECT_TRUE(parseShardSize("500mb", bytes));
  EXPECT_EQ(bytes, 500'000'000ull);
  EXPECT_TRUE(parseShardSize("20KB", bytes));
  EXPECT_EQ(bytes, 20'000ull);
  EXPECT_TRUE(parseShardSize("1234", bytes));
  EXPECT_EQ(bytes, 1234ull);
  for (const char *bad : {"", "GB", "5TB", "0", "-1GB", "big"})
    EXPECT_FALSE(parseShardSize(bad, bytes)) << bad;
}

} // namespace
