// Tests of the Executable file format: byte-exact round trips, and a clear
// error — never a crash — for a wrong magic, a newer version, a corrupt
// payload, truncation at every byte, and inconsistent tables.
#include "runtime/Executable.h"
#include "runtime/Session.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <memory>

namespace {

using namespace llmc::rt;

Executable sample() {
  Executable exe;
  exe.producer = "llmc test";
  exe.source = "sample.toml";
  RankProgram &rank = exe.ranks.emplace_back();
  rank.values = {{DType::F32, {2, 3}, 0},
                 {DType::F32, {3}, 64},
                 {DType::F32, {2, 3}, 128},
                 {DType::I32, {4}, 192}};
  rank.arenaBytes = 256;
  ConstantData constant{3, std::vector<uint8_t>(16)};
  for (size_t i = 0; i < constant.bytes.size(); ++i)
    constant.bytes[i] = static_cast<uint8_t>(7 * i + 1);
  rank.constants.push_back(constant);
  Command broadcast;
  broadcast.kernel = KernelKind::Broadcast;
  broadcast.inputs = {1};
  broadcast.outputs = {2};
  broadcast.attrs.ints = {1};
  broadcast.origin = "blocks.0.bias";
  Command add;
  add.kernel = KernelKind::Add;
  add.inputs = {0, 2};
  add.outputs = {2};
  add.origin = "blocks.0";
  Command norm;
  norm.kernel = KernelKind::RmsNorm;
  norm.inputs = {2, 1};
  norm.outputs = {0};
  norm.attrs.floats = {1e-6};
  norm.origin = "norm";
  rank.commands = {broadcast, add, norm};
  exe.arguments = {{"x", ArgumentRole::Input, 0, {}},
                   {"blocks.0.bias", ArgumentRole::Parameter, 1,
                    {InitSpec::Kind::Normal, 0.02}}};
  exe.outputs = {{"loss", 2}};
  return exe;
}

TEST(Executable, RoundTripIsByteExact) {
  std::vector<uint8_t> bytes = serializeExecutable(sample());
  Executable back;
  ASSERT_TRUE(parseExecutable(bytes.data(), bytes.size(), "mem", back))
      << parseExecutable(bytes.data(), bytes.size(), "mem", back).message();
  EXPECT_EQ(serializeExecutable(back), bytes);
  EXPECT_EQ(back.arguments[1].name, "blocks.0.bias");
  EXPECT_EQ(back.arguments[1].init.kind, InitSpec::Kind::Normal);
  EXPECT_DOUBLE_EQ(back.arguments[1].init.scale, 0.02);
  EXPECT_EQ(back.ranks[0].commands[2].kernel, KernelKind::RmsNorm);
  EXPECT_EQ(back.ranks[0].commands[2].origin, "norm");
  EXPECT_EQ(back.ranks[0].constants[0].bytes, sample().ranks[0].constants[0].bytes);
}

TEST(Executable, MetadataAndCompanionsRoundTrip) {
  Executable exe = sample();
  exe.name = "train_step";
  exe.metadata = {{"train.steps", "20"}, {"data.path", "/data/train.bin"}};
  Executable companion = sample();
  companion.name = "logits";
  companion.arguments[0].role = ArgumentRole::OptimizerState;
  exe.companions.push_back(companion);
  std::vector<uint8_t> bytes = serializeExecutable(exe);
  Executable back;
  Status status = parseExecutable(bytes.data(), bytes.size(), "mem", back);
  ASSERT_TRUE(status) << status.message();
  EXPECT_EQ(back.name, "train_step");
  EXPECT_EQ(back.metadata, exe.metadata);
  ASSERT_NE(back.companion("logits"), nullptr);
  EXPECT_EQ(back.companion("logits")->arguments[0].role,
            ArgumentRole::OptimizerState);
  EXPECT_EQ(back.companion("other"), nullptr);
  EXPECT_EQ(back.findArgument("blocks.0.bias"), 1);
  EXPECT_EQ(back.findOutput("loss"), 0);
  EXPECT_EQ(back.findOutput("grad_norm"), -1);
  EXPECT_EQ(serializeExecutable(back), bytes);
}

TEST(Executable, WrongMagicSaysItIsNotAnExecutable) {
  std::vector<uint8_t> bytes = serializeExecutable(sample());
  bytes[0] = 'X';
  Executable back;
  Status status = parseExecutable(bytes.data(), bytes.size(), "m.llmcx", back);
  EXPECT_EQ(status.code(), StatusCode::InvalidArgument);
  EXPECT_EQ(status.message(),
            "m.llmcx: not an llmc executable (no LLMCEXE magic); write one "
            "with `llmc compile FILE -o model.llmcx`");
}

TEST(Executable, OtherVersionIsRejectedWithBothVersions) {
  std::vector<uint8_t> bytes = serializeExecutable(sample());
  uint32_t version = kExecutableVersion + 1;
  std::memcpy(bytes.data() + 8, &version, 4);
  Executable back;
  Status status = parseExecutable(bytes.data(), bytes.size(), "m.llmcx", back);
  EXPECT_EQ(status.code(), StatusCode::InvalidArgument);
  EXPECT_EQ(status.message(),
            "m.llmcx: written in executable format version " +
                std::to_string(kExecutableVersion + 1) +
                ", but this runtime reads versions 2 to " +
                std::to_string(kExecutableVersion) +
                "; compile it again with the llmc that matches this runtime");
}

TEST(Executable, FlippedPayloadByteFailsTheChecksum) {
  std::vector<uint8_t> bytes = serializeExecutable(sample());
  bytes[bytes.size() / 2] ^= 0x40;
  Executable back;
  Status status = parseExecutable(bytes.data(), bytes.size(), "m.llmcx", back);
  EXPECT_EQ(status.code(), StatusCode::DataLoss);
  EXPECT_EQ(status.message(),
            "m.llmcx: checksum mismatch; the file is damaged: compile it "
            "again");
}

TEST(Executable, EveryTruncationIsAnErrorNotACrash) {
  std::vector<uint8_t> bytes = serializeExecutable(sample());
  for (size_t size = 0; size < bytes.size(); ++size) {
    Executable back;
    Status status = parseExecutable(bytes.data(), size, "m.llmcx", back);
    EXPECT_FALSE(status) << "truncated to " << size << " bytes";
  }
}

TEST(Executable, ConsistentChecksumButInconsistentTablesIsRejected) {
  // A well-formed file whose tables disagree (a constant for a value that
  // is not there) passes the checksum and must still be refused.
  Executable exe = sample();
  exe.ranks[0].values.clear();
  std::vector<uint8_t> empty = serializeExecutable(exe);
  Executable back;
  Status status = parseExecutable(empty.data(), empty.size(), "m.llmcx", back);
  EXPECT_EQ(status.code(), StatusCode::DataLoss);
  EXPECT_EQ(status.message(),
            "sample.toml: rank 0: a constant names value slot 3 that does "
            "not exist");
}

TEST(Executable, ValidationNamesTheCommandAndTheModelPart) {
  Executable exe = sample();
  exe.ranks[0].commands[1].inputs = {0, 9};
  Status status = validateExecutable(exe);
  EXPECT_EQ(status.message(),
            "sample.toml: rank 0: command 1 (blocks.0): reads value slot 9 "
            "that does not exist");

  exe = sample();
  exe.ranks[0].values[2].offset = 250;
  status = validateExecutable(exe);
  EXPECT_EQ(status.message(),
            "sample.toml: rank 0: value 2 lies outside the arena of 256 "
            "bytes");

  exe = sample();
  exe.ranks[0].commands[0].kernel = KernelKind::Count;
  status = validateExecutable(exe);
  EXPECT_EQ(status.message(),
            "sample.toml: rank 0: command 0 (blocks.0.bias): unknown kernel "
            "id " +
                std::to_string(static_cast<int>(KernelKind::Count)));
}

/// sample() on a {dp=2, tp=2} mesh: four ranks, the input split over tp in
/// its last dimension (3 groups) and over dp in its first.
Executable shardedSample() {
  Executable exe = sample();
  exe.mesh = {{"dp", 2}, {"tp", 2}};
  exe.ranks.assign(4, exe.ranks.front());
  exe.arguments[0].sharding.dims = {{{0}, 1}, {{1}, 3}};
  exe.outputs[0].sharding.dims = {{{0}, 1}, {}};
  return exe;
}

TEST(Executable, MeshAndShardingsRoundTrip) {
  Executable exe = shardedSample();
  std::vector<uint8_t> bytes = serializeExecutable(exe);
  uint32_t version;
  std::memcpy(&version, bytes.data() + 8, 4);
  EXPECT_EQ(version, kExecutableVersion);
  Executable back;
  Status status = parseExecutable(bytes.data(), bytes.size(), "mem", back);
  ASSERT_TRUE(status) << status.message();
  ASSERT_EQ(back.mesh.size(), 2u);
  EXPECT_EQ(back.mesh[1].name, "tp");
  EXPECT_EQ(back.mesh[1].size, 2);
  EXPECT_EQ(back.arguments[0].sharding, exe.arguments[0].sharding);
  EXPECT_EQ(back.arguments[0].sharding.dims[1].groups, 3);
  EXPECT_FALSE(back.arguments[0].sharding.replicated());
  EXPECT_TRUE(back.arguments[1].sharding.replicated());
  EXPECT_EQ(back.outputs[0].sharding, exe.outputs[0].sharding);
  EXPECT_EQ(serializeExecutable(back), bytes);
}

TEST(Executable, ZigzagShardingsRoundTrip) {
  // A zigzag split (context parallelism) is stored as a negative block
  // count and read back as the flag.
  Executable exe = shardedSample();
  exe.arguments[0].sharding.dims[1].zigzag = true;
  std::vector<uint8_t> bytes = serializeExecutable(exe);
  Executable back;
  Status status = parseExecutable(bytes.data(), bytes.size(), "mem", back);
  ASSERT_TRUE(status) << status.message();
  EXPECT_TRUE(back.arguments[0].sharding.dims[1].zigzag);
  EXPECT_EQ(back.arguments[0].sharding.dims[1].groups, 3);
  EXPECT_FALSE(back.arguments[0].sharding.dims[0].zigzag);
  EXPECT_EQ(back.arguments[0].sharding, exe.arguments[0].sharding);
  EXPECT_EQ(serializeExecutable(back), bytes);
}

TEST(Executable, VersionTwoFilesStillLoad) {
  // Version 2 has no mesh and no shardings: one device, all replicated.
  Executable exe = sample();
  exe.version = 2;
  std::vector<uint8_t> bytes = serializeExecutable(exe);
  uint32_t version;
  std::memcpy(&version, bytes.data() + 8, 4);
  EXPECT_EQ(version, 2u);
  EXPECT_LT(bytes.size(), serializeExecutable(sample()).size());
  Executable back;
  Status status = parseExecutable(bytes.data(), bytes.size(), "old", back);
  ASSERT_TRUE(status) << status.message();
  EXPECT_EQ(back.version, 2u);
  EXPECT_TRUE(back.mesh.empty());
  EXPECT_TRUE(back.arguments[0].sharding.replicated());
  EXPECT_EQ(back.arguments[1].init.kind, InitSpec::Kind::Normal);
  EXPECT_EQ(back.outputs[0].name, "loss");
  EXPECT_EQ(serializeExecutable(back), bytes);
}

TEST(Executable, PipelineStagesOfOutputsRoundTrip) {
  // A {pp=2, tp=2} mesh whose output is computed on pipeline stage 1.
  Executable exe = shardedSample();
  exe.mesh = {{"pp", 2}, {"tp", 2}};
  exe.arguments[0].sharding.dims = {{}, {{1}, 3}};
  exe.outputs[0].sharding.dims = {};
  exe.outputs[0].pipelineStage = 1;
  exe.outputs[0].replicaStages = {0}; // a tied parameter's update, twice
  ASSERT_TRUE(validateExecutable(exe)) << validateExecutable(exe).message();
  std::vector<uint8_t> bytes = serializeExecutable(exe);
  Executable back;
  Status status = parseExecutable(bytes.data(), bytes.size(), "mem", back);
  ASSERT_TRUE(status) << status.message();
  EXPECT_EQ(back.outputs[0].pipelineStage, 1);
  EXPECT_EQ(back.outputs[0].replicaStages, std::vector<int32_t>{0});
  // Version 3 has no stages: every output is on every rank.
  exe.version = 3;
  bytes = serializeExecutable(exe);
  status = parseExecutable(bytes.data(), bytes.size(), "v3", back);
  ASSERT_TRUE(status) << status.message();
  EXPECT_EQ(back.outputs[0].pipelineStage, -1);
  // A stage outside the mesh's pp axis is refused.
  exe.version = kExecutableVersion;
  exe.outputs[0].pipelineStage = 2;
  status = validateExecutable(exe);
  EXPECT_FALSE(status);
  EXPECT_NE(status.message().find("pipeline stage 2"), std::string::npos)
      << status.message();
}

TEST(Executable, EveryTruncationOfAShardedFileIsAnError) {
  std::vector<uint8_t> bytes = serializeExecutable(shardedSample());
  for (size_t size = 0; size < bytes.size(); ++size) {
    Executable back;
    EXPECT_FALSE(parseExecutable(bytes.data(), size, "m.llmcx", back))
        << "truncated to " << size << " bytes";
  }
}

TEST(Executable, BadMeshesAndShardingsAreRejected) {
  Executable exe = shardedSample();
  ASSERT_TRUE(validateExecutable(exe))
      << validateExecutable(exe).message();

  exe.mesh[0].size = 3;
  EXPECT_EQ(validateExecutable(exe).message(),
            "sample.toml: the mesh has 6 devices, but the program has 4 rank "
            "programs");

  exe = shardedSample();
  exe.arguments[0].sharding.dims[0].axes = {2};
  EXPECT_EQ(validateExecutable(exe).message(),
            "sample.toml: argument 'x' dimension 0: mesh axis 2 does not "
            "exist in a mesh of 2 axes");

  exe = shardedSample();
  exe.arguments[0].sharding.dims[0].axes = {1};
  EXPECT_EQ(validateExecutable(exe).message(),
            "sample.toml: argument 'x' uses mesh axis 'tp' twice");

  exe = shardedSample();
  exe.arguments[0].sharding.dims.pop_back();
  EXPECT_EQ(validateExecutable(exe).message(),
            "sample.toml: argument 'x' has a sharding of 1 dimensions for a "
            "value of rank 2");

  exe = shardedSample();
  exe.outputs[0].sharding.dims[0].groups = 0;
  EXPECT_EQ(validateExecutable(exe).message(),
            "sample.toml: output 'loss' dimension 0: expected at least 1 "
            "group, got 0");

  exe = shardedSample();
  exe.arguments[0].sharding.dims[1].groups = 2; // local size 3
  EXPECT_EQ(validateExecutable(exe).message(),
            "sample.toml: argument 'x' dimension 1: local size 3 is not a "
            "multiple of its 2 groups");

  exe = shardedSample();
  exe.ranks[2].values[0].shape = {3, 2};
  EXPECT_EQ(validateExecutable(exe).message(),
            "sample.toml: argument 'x' is f32[2, 3] on rank 0 but f32[3, 2] "
            "on rank 2");

  // Rejected on load too, not only when built in memory.
  exe = shardedSample();
  exe.arguments[0].sharding.dims[0].axes = {7};
  std::vector<uint8_t> bytes = serializeExecutable(exe);
  Executable back;
  Status status = parseExecutable(bytes.data(), bytes.size(), "m", back);
  EXPECT_EQ(status.code(), StatusCode::DataLoss);
}

TEST(Executable, MissingFileNamesTheFix) {
  Executable back;
  Status status = readExecutable("/nonexistent/model.llmcx", back);
  EXPECT_EQ(status.code(), StatusCode::NotFound);
  EXPECT_EQ(status.message(),
            "cannot open '/nonexistent/model.llmcx': write it with `llmc "
            "compile FILE -o /nonexistent/model.llmcx`");
}



// ---- Programs compiled for fused kernels (docs/buffers.md) ----------------

/// y = exp(x) * x as one elementwise region: a FusedElementwise marker and
/// its two commands; the exp's result (value 1) lives in the kernel's
/// registers (kNoStorage).
Executable fusedSample() {
  Executable exe;
  exe.producer = "llmc test";
  exe.source = "fused.toml";
  exe.name = "step";
  exe.fusedKernels = true;
  RankProgram &rank = exe.ranks.emplace_back();
  rank.values = {{DType::F32, {16}, 0},
                 {DType::F32, {16}, kNoStorage},
                 {DType::F32, {16}, 64}};
  rank.arenaBytes = 128;
  Command marker;
  marker.kernel = KernelKind::FusedElementwise;
  marker.inputs = {0};
  marker.outputs = {2};
  marker.attrs.ints = {2};
  marker.origin = "h.0.act";
  Command exp;
  exp.kernel = KernelKind::Exp;
  exp.inputs = {0};
  exp.outputs = {1};
  exp.origin = "h.0.act";
  Command mul;
  mul.kernel = KernelKind::Mul;
  mul.inputs = {1, 0};
  mul.outputs = {2};
  mul.origin = "h.0.act";
  rank.commands = {marker, exp, mul};
  exe.arguments = {{"x", ArgumentRole::Input, 0, {}}};
  exe.outputs = {{"y", 2}};
  return exe;
}

TEST(Executable, FusedKernelsFlagRoundTripsInTheHeader) {
  std::vector<uint8_t> bytes = serializeExecutable(fusedSample());
  uint32_t flags;
  std::memcpy(&flags, bytes.data() + 12, 4);
  EXPECT_EQ(flags, 1u);
  Executable back;
  Status status = parseExecutable(bytes.data(), bytes.size(), "mem", back);
  ASSERT_TRUE(status) << status.message();
  EXPECT_TRUE(back.fusedKernels);
  EXPECT_FALSE(back.ranks[0].values[1].stored());
  EXPECT_TRUE(regionNeedsOneKernel(back.ranks[0], 0));
  EXPECT_EQ(commandsOfOneKernelRegions(back.ranks[0]),
            (std::vector<bool>{false, true, true}));
  EXPECT_EQ(serializeExecutable(back), bytes);
  // An ordinary program keeps flags 0 (files of older llmc read the same).
  bytes = serializeExecutable(sample());
  std::memcpy(&flags, bytes.data() + 12, 4);
  EXPECT_EQ(flags, 0u);
  ASSERT_TRUE(parseExecutable(bytes.data(), bytes.size(), "mem", back));
  EXPECT_FALSE(back.fusedKernels);
}

TEST(Executable, UnknownHeaderFlagsAreRefused) {
  std::vector<uint8_t> bytes = serializeExecutable(sample());
  uint32_t flags = 1u << 5;
  std::memcpy(bytes.data() + 12, &flags, 4);
  Executable back;
  Status status = parseExecutable(bytes.data(), bytes.size(), "m.llmcx", back);
  ASSERT_FALSE(status);
  EXPECT_EQ(status.message(),
            "m.llmcx: uses features this runtime does not know (header flags "
            "32); compile it again with the llmc that matches this runtime");
}

TEST(Executable, ValuesWithoutStorageOnlyInsideFusedRegions) {
  EXPECT_TRUE(validateExecutable(fusedSample()));
  // Without the flag, a value without storage is an error.
  Executable exe = fusedSample();
  exe.fusedKernels = false;
  Status status = validateExecutable(exe);
  ASSERT_FALSE(status);
  EXPECT_NE(status.message().find("value 1 has no storage, but the program "
                                  "is not compiled for fused kernels"),
            std::string::npos)
      << status.message();
  // A command outside the region that reads it.
  exe = fusedSample();
  exe.ranks[0].commands[0].attrs.ints = {1}; // the mul leaves the region
  status = validateExecutable(exe);
  ASSERT_FALSE(status);
  EXPECT_NE(status.message().find("command 2 (h.0.act) uses value 1, which "
                                  "has no storage, outside an elementwise "
                                  "fused region"),
            std::string::npos)
      << status.message();
  // An output without storage.
  exe = fusedSample();
  exe.outputs = {{"y", 1}};
  status = validateExecutable(exe);
  ASSERT_FALSE(status);
  EXPECT_NE(status.message().find("output 'y' has no storage"),
            std::string::npos)
      << status.message();
  // A region whose values are all stored runs op by op if it must.
  exe = fusedSample();
  exe.ranks[0].values[1].offset = 64;
  exe.ranks[0].values[2].offset = 0;
  EXPECT_TRUE(validateExecutable(exe));
  EXPECT_FALSE(regionNeedsOneKernel(exe.ranks[0], 0));
}

TEST(Executable, TheCpuSessionRefusesAProgramForFusedKernels) {
  std::unique_ptr<Session> session;
  Status status = Session::create(fusedSample(), SessionOptions(), session);
  ASSERT_FALSE(status);
  EXPECT_EQ(status.code(), StatusCode::InvalidArgument);
  EXPECT_EQ(status.message(),
            "fused.toml: @step was compiled for fused kernels (devices = "
            "\"cuda\": each elementwise region runs as one GPU kernel, and "
            "its intermediates have no storage), so the CPU cannot run it; "
            "compile it again with devices = \"cpu\" (or \"auto\", or llmc "
            "compile --fused-kernels=false) to run it on the CPU");
  // The same program with every value stored runs (must not refuse).
  Executable stored = fusedSample();
  stored.fusedKernels = false;
  stored.ranks[0].values[1].offset = 64;
  stored.ranks[0].values[2].offset = 0;
  ASSERT_TRUE(Session::create(stored, SessionOptions(), session));
  std::vector<float> x(16);
  for (int i = 0; i < 16; ++i)
    x[i] = 0.25f * static_cast<float>(i) - 1.5f;
  ASSERT_TRUE(session->setArgument("x", DType::F32, {16}, x.data(), 64));
  ASSERT_TRUE(session->run());
  TensorRef y;
  ASSERT_TRUE(session->output(0, y));
  for (int i = 0; i < 16; ++i)
    EXPECT_FLOAT_EQ(static_cast<const float *>(y.data)[i],
                    std::exp(x[i]) * x[i]);
}

/// sample() with a CUDA kernel plan as codegen writes one: every route, a
/// refusal, a fused region, a multi-tensor group and units, one with a
/// cubin.
Executable plannedSample() {
  Executable exe = sample();
  RankProgram &rank = exe.ranks[0];
  Command marker;
  marker.kernel = KernelKind::FusedElementwise;
  marker.attrs.ints = {1};
  marker.origin = "blocks.0";
  rank.commands.insert(rank.commands.begin() + 1, marker);
  CudaPlan &plan = rank.cuda;
  plan.present = true;
  plan.commands.resize(rank.commands.size());
  plan.commands[0].route = CudaRoute::DeviceUnit;
  plan.commands[0].entries = {"llmc_broadcast_b4"};
  plan.commands[0].scratchBytes = 512;
  plan.commands[2].route = CudaRoute::Elementwise;
  plan.commands[2].elementwise = {KernelKind::Add,  {DType::F32, DType::F32},
                                  DType::F32,       {},
                                  "llmc_add_f32",   4,
                                  {4, 4, 4}};
  plan.commands[3].code = StatusCode::Unimplemented;
  plan.commands[3].error = "at norm: no CUDA kernel for RmsNorm yet";
  plan.fused.push_back({1, "llmc_fused_1", 6, ""});
  CudaMultiTensorPlan group;
  group.kind = CudaMultiTensorPlan::Kind::SumSquares;
  group.members = {2, 3};
  group.ends = {3, 4};
  group.inputs = {{0}, {2}};
  group.outputs = {{1}, {1}};
  group.elements = {6, 6};
  group.label = "SumSquares";
  plan.multiTensor.push_back(group);
  CudaUnit unit;
  unit.name = "llmc_add_f32";
  unit.source = "extern \"C\" __global__ void llmc_add_f32() {}";
  unit.entries = {"llmc_add_f32", "llmc_add_f32_vec"};
  unit.flags = CudaUnit::kGenerated;
  unit.arch = "sm_90";
  unit.cubin = {1, 2, 3, 4, 5};
  plan.units.push_back(unit);
  return exe;
}

uint64_t payloadHash(const std::vector<uint8_t> &bytes) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (size_t i = 32; i < bytes.size(); ++i) {
    hash ^= bytes[i];
    hash *= 0x100000001b3ull;
  }
  return hash;
}

TEST(Executable, CudaKernelPlanRoundTripsByteExact) {
  std::vector<uint8_t> bytes = serializeExecutable(plannedSample());
  Executable back;
  Status status = parseExecutable(bytes.data(), bytes.size(), "mem", back);
  ASSERT_TRUE(status) << status.message();
  EXPECT_EQ(serializeExecutable(back), bytes);
  const CudaPlan &plan = back.ranks[0].cuda;
  ASSERT_TRUE(plan.present);
  ASSERT_EQ(plan.commands.size(), 4u);
  EXPECT_EQ(plan.commands[0].entries,
            std::vector<std::string>{"llmc_broadcast_b4"});
  EXPECT_EQ(plan.commands[0].scratchBytes, 512u);
  EXPECT_EQ(plan.commands[2].elementwise.entry, "llmc_add_f32");
  EXPECT_EQ(plan.commands[2].elementwise.vectorWidth, 4);
  EXPECT_EQ(plan.commands[3].code, StatusCode::Unimplemented);
  EXPECT_EQ(plan.commands[3].error, "at norm: no CUDA kernel for RmsNorm yet");
  ASSERT_EQ(plan.fused.size(), 1u);
  EXPECT_EQ(plan.fused[0].entry, "llmc_fused_1");
  ASSERT_EQ(plan.multiTensor.size(), 1u);
  EXPECT_EQ(plan.multiTensor[0].members, (std::vector<int64_t>{2, 3}));
  ASSERT_EQ(plan.units.size(), 1u);
  EXPECT_EQ(plan.units[0].cubin, (std::vector<uint8_t>{1, 2, 3, 4, 5}));
  EXPECT_EQ(plan.unitDefining("llmc_add_f32_vec"), &plan.units[0]);
  EXPECT_EQ(plan.unitDefining("llmc_mul_f32"), nullptr);
}

// Format 4 has no plan: such a file loads (and runs on the CPU) without
// one, and writing version 4 drops it.
TEST(Executable, VersionFourFilesLoadWithoutAPlan) {
  Executable exe = plannedSample();
  exe.version = 4;
  std::vector<uint8_t> bytes = serializeExecutable(exe);
  Executable back;
  Status status = parseExecutable(bytes.data(), bytes.size(), "old.llmcx", back);
  ASSERT_TRUE(status) << status.message();
  EXPECT_EQ(back.version, 4u);
  EXPECT_FALSE(back.ranks[0].cuda.present);
  EXPECT_EQ(back.ranks[0].commands.size(), 4u);
}

TEST(Executable, EveryTruncationOfAPlannedFileIsAnError) {
  std::vector<uint8_t> bytes = serializeExecutable(plannedSample());
  for (size_t size = 0; size < bytes.size(); ++size) {
    Executable back;
    EXPECT_FALSE(parseExecutable(bytes.data(), size, "m.llmcx", back))
        << "truncated to " << size << " bytes";
  }
}

// Every byte of the payload changed, with the checksum made to match: the
// reader and the validation answer (an error, or a program that fits its
// plan), never a crash.
TEST(Executable, EveryMutationOfAPlannedFileIsCaughtOrConsistent) {
  std::vector<uint8_t> bytes = serializeExecutable(plannedSample());
  size_t refused = 0;
  for (size_t i = 32; i < bytes.size(); ++i)
    for (uint8_t flip : {uint8_t(0x01), uint8_t(0x80), uint8_t(0xff)}) {
      std::vector<uint8_t> mutated = bytes;
      mutated[i] ^= flip;
      uint64_t hash = payloadHash(mutated);
      std::memcpy(mutated.data() + 24, &hash, 8);
      Executable back;
      Status status =
          parseExecutable(mutated.data(), mutated.size(), "m.llmcx", back);
      if (!status) {
        ++refused;
        continue;
      }
      for (const RankProgram &rank : back.ranks)
        if (rank.cuda.present)
          EXPECT_EQ(rank.cuda.commands.size(), rank.commands.size());
    }
  EXPECT_GT(refused, 0u);
}

TEST(Executable, APlanThatDoesNotFitItsProgramIsRejected) {
  auto rejected = [](Executable exe, const std::string &want) {
    std::vector<uint8_t> bytes = serializeExecutable(exe);
    Executable back;
    Status status = parseExecutable(bytes.data(), bytes.size(), "p.llmcx", back);
    ASSERT_FALSE(status);
    EXPECT_NE(status.message().find(want), std::string::npos)
        << status.message();
  };
  Executable fewer = plannedSample();
  fewer.ranks[0].cuda.commands.pop_back();
  rejected(fewer, "rank 0: the CUDA kernel plan has 3 choices for 4 commands");
  Executable marker = plannedSample();
  marker.ranks[0].cuda.fused[0].marker = 2;
  rejected(marker, "names command 2 as a fused region's marker");
  Executable group = plannedSample();
  group.ranks[0].cuda.multiTensor[0].ends[1] = 9;
  rejected(group, "a multi-tensor group (SumSquares) that does not fit");
  Executable route = plannedSample();
  route.ranks[0].cuda.commands[1].route = static_cast<CudaRoute>(9);
  rejected(route, "unknown route, status, kind or type at command 1");
}

} // namespace
