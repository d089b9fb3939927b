// Tests of the built-in model builders: the parameter count of every family
// against its closed form over several sizes, the Hugging Face names, and
// GPT-2 124M's published count.
#include "frontend/Parameters.h"
#include "frontend/models/Models.h"
#include "ir/Registration.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

#include <set>
#include <tuple>

using namespace mlir;

namespace {

class ModelTest : public ::testing::Test {
protected:
  ModelTest() {
    DialectRegistry registry;
    llmc::registerLlmcDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
  }

  /// Traces `model` and returns its parameter summary; fails the test if
  /// tracing reports an error.
  llmc::ParameterSummary trace(const llmc::ModelConfig &model,
                               int64_t batch = 2, int64_t seq = 8) {
    module = llmc::buildLossModule(context, model, batch, seq);
    EXPECT_TRUE(module) << "tracing failed";
    if (!module)
      return {};
    return llmc::summarizeParameters(lossFunction());
  }

  func::FuncOp lossFunction() {
    return module->lookupSymbol<func::FuncOp>("loss");
  }

  std::set<std::string> parameterNames() {
    std::set<std::string> names;
    func::FuncOp fn = lossFunction();
    for (unsigned i = 0; i < fn.getNumArguments(); ++i)
      if (auto role = fn.getArgAttrOfType<StringAttr>(i, "llmc.role");
          role && role.getValue() == "parameter")
        names.insert(
            fn.getArgAttrOfType<StringAttr>(i, "llmc.name").getValue().str());
    return names;
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
};

llmc::ModelConfig gpt2(int64_t v, int64_t l, int64_t c, int64_t h, int64_t p,
                       int64_t f) {
  llmc::ModelConfig m;
  m.family = llmc::ModelFamily::Gpt2;
  m.vocabSize = v;
  m.numLayers = l;
  m.hiddenSize = c;
  m.numHeads = h;
  m.numKvHeads = h;
  m.maxPositions = p;
  m.intermediateSize = f;
  return m;
}

llmc::ModelConfig llama(int64_t v, int64_t l, int64_t c, int64_t h, int64_t k,
                        int64_t f, bool tied) {
  llmc::ModelConfig m;
  m.family = llmc::ModelFamily::Llama;
  m.vocabSize = v;
  m.numLayers = l;
  m.hiddenSize = c;
  m.numHeads = h;
  m.numKvHeads = k;
  m.intermediateSize = f;
  m.tieEmbeddings = tied;
  return m;
}

int64_t gpt2Formula(const llmc::ModelConfig &m) {
  int64_t v = m.vocabSize, c = m.hiddenSize, l = m.numLayers,
          p = m.maxPositions, f = m.intermediateSize;
  return v * c + p * c + l * (4 * c * c + 2 * c * f + 9 * c + f) + 2 * c;
}

int64_t llamaAttention(const llmc::ModelConfig &m) {
  int64_t c = m.hiddenSize, hd = m.headDim();
  return 2 * c * m.numHeads * hd + 2 * c * m.numKvHeads * hd;
}

int64_t llamaFormula(const llmc::ModelConfig &m) {
  int64_t v = m.vocabSize, c = m.hiddenSize, l = m.numLayers,
          f = m.intermediateSize;
  return v * c + l * (2 * c + llamaAttention(m) + 3 * c * f) + c +
         (m.tieEmbeddings ? 0 : v * c);
}

int64_t moeFormula(const llmc::ModelConfig &m) {
  int64_t v = m.vocabSize, c = m.hiddenSize, l = m.numLayers,
          f = m.intermediateSize, e = m.numExperts;
  return v * c + l * (2 * c + llamaAttention(m) + c * e + e * 3 * c * f) + c +
         (m.tieEmbeddings ? 0 : v * c);
}

TEST_F(ModelTest, Gpt2OneTwentyFourMillion) {
  llmc::ParameterSummary summary =
      trace(gpt2(50257, 12, 768, 12, 1024, 3072), /*batch=*/1, /*seq=*/64);
  EXPECT_EQ(summary.elements, 124439808);
  // wte, wpe, ln_f (2) and 12 per layer.
  EXPECT_EQ(summary.tensors, 2 + 2 + 12 * 12);
}

TEST_F(ModelTest, Gpt2MatchesItsClosedForm) {
  for (auto [v, l, c, h, p, f] :
       {std::make_tuple(64, 1, 32, 4, 16, 128),
        std::make_tuple(100, 3, 48, 6, 32, 96),
        std::make_tuple(257, 2, 64, 1, 8, 256)}) {
    llmc::ModelConfig m = gpt2(v, l, c, h, p, f);
    EXPECT_EQ(trace(m).elements, gpt2Formula(m))
        << "V=" << v << " L=" << l << " C=" << c << " F=" << f;
  }
}

TEST_F(ModelTest, LlamaMatchesItsClosedForm) {
  for (auto [v, l, c, h, k, f, tied] :
       {std::make_tuple(64, 1, 32, 4, 2, 48, false),
        std::make_tuple(100, 2, 64, 8, 8, 172, true),
        std::make_tuple(300, 3, 48, 6, 1, 64, false)}) {
    llmc::ModelConfig m = llama(v, l, c, h, k, f, tied);
    EXPECT_EQ(trace(m).elements, llamaFormula(m))
        << "V=" << v << " L=" << l << " C=" << c << " kv=" << k
        << " tied=" << tied;
  }
}

TEST_F(ModelTest, MoeMatchesItsClosedForm) {
  for (auto [experts, k, layers] :
       {std::make_tuple(4, 2, 1), std::make_tuple(8, 2, 2),
        std::make_tuple(3, 1, 1)}) {
    llmc::ModelConfig m = llama(64, layers, 32, 4, 2, 48, false);
    m.family = llmc::ModelFamily::Moe;
    m.numExperts = experts;
    m.expertsPerToken = k;
    EXPECT_EQ(trace(m).elements, moeFormula(m))
        << "E=" << experts << " k=" << k << " L=" << layers;
  }
}

TEST_F(ModelTest, TiedLlamaHasNoHeadParameter) {
  trace(llama(64, 1, 32, 4, 2, 48, /*tied=*/true));
  std::set<std::string> names = parameterNames();
  EXPECT_EQ(names.count("lm_head.weight"), 0u);
  EXPECT_EQ(names.count("model.embed_tokens.weight"), 1u);
}

TEST_F(ModelTest, NamesFollowHuggingFace) {
  trace(gpt2(64, 2, 32, 4, 16, 128));
  std::set<std::string> gpt2Names = parameterNames();
  for (const char *name :
       {"transformer.wte.weight", "transformer.wpe.weight",
        "transformer.h.1.ln_1.weight", "transformer.h.1.attn.c_attn.weight",
        "transformer.h.1.attn.c_attn.bias", "transformer.h.1.attn.c_proj.weight",
        "transformer.h.1.mlp.c_fc.bias", "transformer.h.1.mlp.c_proj.weight",
        "transformer.ln_f.weight", "transformer.ln_f.bias"})
    EXPECT_EQ(gpt2Names.count(name), 1u) << name;

  llmc::ModelConfig moe = llama(64, 1, 32, 4, 2, 48, false);
  moe.family = llmc::ModelFamily::Moe;
  moe.numExperts = 4;
  moe.expertsPerToken = 2;
  trace(moe);
  std::set<std::string> moeNames = parameterNames();
  for (const char *name :
       {"model.embed_tokens.weight", "model.layers.0.input_layernorm.weight",
        "model.layers.0.self_attn.k_proj.weight",
        "model.layers.0.post_attention_layernorm.weight",
        "model.layers.0.block_sparse_moe.gate.weight",
        // Mixtral's experts.{j}.w1.weight ... stacked over j (Moe.cpp).
        "model.layers.0.block_sparse_moe.experts.w1.weight",
        "model.layers.0.block_sparse_moe.experts.w2.weight",
        "model.layers.0.block_sparse_moe.experts.w3.weight",
        "model.norm.weight", "lm_head.weight"})
    EXPECT_EQ(moeNames.count(name), 1u) << name;
}

TEST_F(ModelTest, InputsComeAfterParameters) {
  trace(gpt2(64, 1, 32, 4, 16, 128), /*batch=*/3, /*seq=*/5);
  func::FuncOp fn = lossFunction();
  unsigned n = fn.getNumArguments();
  ASSERT_GE(n, 2u);
  EXPECT_EQ(fn.getArgAttrOfType<StringAttr>(n - 2, "llmc.name").getValue(),
            "tokens");
  EXPECT_EQ(fn.getArgAttrOfType<StringAttr>(n - 1, "llmc.name").getValue(),
            "targets");
  EXPECT_EQ(cast<RankedTensorType>(fn.getArgument(n - 1).getType()).getShape(),
            ArrayRef<int64_t>({3, 5}));
  EXPECT_EQ(fn.getFunctionType().getResults().size(), 1u);
}

} // namespace
