// Tests of the run description (TOML) and config.json parsers on bad
// input: every bad input is checked against its full message, position
// included, because the message is what the user acts on. The good inputs
// (every example in examples/ parses to the sizes its comments state) are
// in ConfigExamplesTest.cpp.
#include "test/compiler/ConfigTestSupport.h"

using namespace llmc;
using namespace llmc::config_test;

namespace {

//===----------------------------------------------------------------------===//
// Keys and sections
//===----------------------------------------------------------------------===//

TEST(RunDescriptionErrors, UnknownKeySuggestsTheClosest) {
  EXPECT_EQ(tomlErrors(kGpt2 + "tie_embedding = true\n"),
            Messages{"run.toml:8:1: error: unknown key 'tie_embedding' in "
                     "[model]; did you mean 'tie_embeddings'?"});
}

TEST(RunDescriptionErrors, UnknownKeyOfAnotherSection) {
  EXPECT_EQ(tomlErrors(kGpt2 + "seq_len = 16\n"),
            Messages{"run.toml:8:1: error: unknown key 'seq_len' in [model]; "
                     "did you mean to put it in [train]?"});
}

TEST(RunDescriptionErrors, UnknownKeyListsTheValidOnes) {
  EXPECT_EQ(tomlErrors(kGpt2 + "[memory]\nbudget = 10\n"),
            Messages{"run.toml:9:1: error: unknown key 'budget' in [memory]; "
                     "valid keys: budget_gib, remat"});
}

TEST(RunDescriptionErrors, UnknownSectionSuggestsTheClosest) {
  EXPECT_EQ(tomlErrors(kGpt2 + "[trian]\nsteps = 10\n"),
            Messages{"run.toml:8:1: error: unknown section [trian]; did you "
                     "mean [train]?"});
}

TEST(RunDescriptionErrors, UnknownSectionListsTheValidOnes) {
  EXPECT_EQ(tomlErrors(kGpt2 + "[optimizer]\n"),
            Messages{"run.toml:8:1: error: unknown section [optimizer]; valid "
                     "sections: [model], [train], [precision], [parallel], "
                     "[memory], [data], [eval], [checkpoint]"});
}

TEST(RunDescriptionErrors, KeyOutsideAnySection) {
  EXPECT_EQ(tomlErrors("seed = 1\n" + kGpt2),
            Messages{"run.toml:1:1: error: unknown key 'seed' outside any "
                     "section; move it under [train]"});
}

TEST(RunDescriptionErrors, SectionThatIsNotATable) {
  EXPECT_EQ(tomlErrors("model = 3\n"),
            Messages{"run.toml:1:9: error: expected [model] to be a table, "
                     "got an integer 3; write [model] on a line of its own, "
                     "followed by its keys"});
}

TEST(RunDescriptionErrors, MissingModelSection) {
  EXPECT_EQ(tomlErrors("[train]\nbatch_size = 2\n"),
            Messages{"run.toml: error: missing section [model]; add [model] "
                     "with family = \"gpt2\" and the sizes, with hf = "
                     "\"MODEL_DIR\", or with hf_config = \"config.json\""});
}

TEST(RunDescriptionErrors, MissingRequiredKeyAtTheHeader) {
  EXPECT_EQ(tomlErrors("[model]\nfamily = \"gpt2\"\nvocab_size = 128\n"
                       "width = 64\nheads = 4\nmax_positions = 64\n"),
            Messages{"run.toml:1:1: error: missing required key 'layers' in "
                     "[model]; add e.g. layers = 12"});
}

TEST(RunDescriptionErrors, MissingKeyOfTheFamily) {
  // The header is the table's position, wherever it is.
  std::string llamaWithoutFfn = kLlama.substr(0, kLlama.find("ffn_width"));
  EXPECT_EQ(tomlErrors("[train]\nseq_len = 16\n\n" + llamaWithoutFfn),
            Messages{"run.toml:4:1: error: missing required key 'ffn_width' "
                     "in [model] for family \"llama\"; add e.g. ffn_width = "
                     "3072"});
}

TEST(RunDescriptionErrors, MalformedSyntax) {
  EXPECT_EQ(tomlErrors("[model]\nfamily = \n"),
            Messages{"run.toml:2:10: error: malformed TOML: error while "
                     "parsing key-value pair: expected value, saw '\\n'; fix "
                     "the syntax (https://toml.io/en/v1.0.0)"});
}

TEST(RunDescriptionErrors, DuplicateKey) {
  // toml++ places the error where it stopped: at the second value.
  EXPECT_EQ(tomlErrors(kGpt2 + "layers = 3\n"),
            Messages{"run.toml:8:10: error: malformed TOML: error while "
                     "parsing key-value pair: cannot redefine existing "
                     "integer 'layers'; fix the syntax "
                     "(https://toml.io/en/v1.0.0)"});
}

//===----------------------------------------------------------------------===//
// Types, ranges, choices
//===----------------------------------------------------------------------===//

TEST(RunDescriptionErrors, WrongType) {
  std::string text = kGpt2;
  text.replace(text.find("layers = 2"), 10, "layers = \"2\"");
  EXPECT_EQ(tomlErrors(text),
            Messages{"run.toml:4:10: error: expected layers to be an "
                     "integer, got a string \"2\"; write e.g. layers = 12"});
}

TEST(RunDescriptionErrors, FloatWhereAnIntegerIsExpected) {
  EXPECT_EQ(tomlErrors(kGpt2 + "[train]\nbatch_size = 8.0\n"),
            Messages{"run.toml:9:14: error: expected batch_size to be an "
                     "integer, got a float 8.0; write e.g. batch_size = 8"});
}

TEST(RunDescriptionErrors, OutOfRange) {
  EXPECT_EQ(tomlErrors(kGpt2 + "[train]\nbeta2 = 1.0\n"),
            Messages{"run.toml:9:9: error: expected beta2 in [0, 1), got 1; "
                     "write e.g. beta2 = 0.95"});
  EXPECT_EQ(tomlErrors(kGpt2 + "[parallel]\nzero = 4\n"),
            Messages{"run.toml:9:8: error: expected zero in [0, 3], got 4; "
                     "write e.g. zero = 1"});
}

TEST(RunDescriptionErrors, NotFinite) {
  EXPECT_EQ(tomlErrors(kGpt2 + "[train]\nlearning_rate = inf\n"),
            Messages{"run.toml:9:17: error: expected learning_rate > 0, got "
                     "inf; write e.g. learning_rate = 6e-4"});
}

TEST(RunDescriptionErrors, BadChoiceWithSuggestion) {
  std::string text = kGpt2;
  text.replace(text.find("\"gpt2\""), 6, "\"gtp2\"");
  EXPECT_EQ(tomlErrors(text),
            Messages{"run.toml:2:10: error: expected family to be one of "
                     "\"gpt2\", \"llama\", \"moe\", got \"gtp2\"; did you mean "
                     "\"gpt2\"?"});
}

TEST(RunDescriptionErrors, BadChoiceWithoutSuggestion) {
  EXPECT_EQ(tomlErrors(kGpt2 + "[train]\nschedule = \"exponential\"\n"),
            Messages{"run.toml:9:12: error: expected schedule to be one of "
                     "\"cosine\", \"linear\", \"constant\", got "
                     "\"exponential\"; write e.g. schedule = \"cosine\""});
}

//===----------------------------------------------------------------------===//
// The model's shape and its family's rules
//===----------------------------------------------------------------------===//

TEST(RunDescriptionErrors, HeadsNotDividingWidth) {
  EXPECT_EQ(tomlErrors("[model]\nfamily = \"gpt2\"\nvocab_size = 50257\n"
                       "layers = 12\nwidth = 768\nheads = 7\n"
                       "max_positions = 1024\n"),
            Messages{"run.toml:6:9: error: expected heads to divide width "
                     "768, got 7; set heads to one of 1, 2, 3, 4, 6, 8, 12, "
                     "..."});
}

TEST(RunDescriptionErrors, KvHeadsNotDividingHeads) {
  std::string text = kLlama;
  text.replace(text.find("kv_heads = 2"), 12, "kv_heads = 3");
  EXPECT_EQ(tomlErrors(text),
            Messages{"run.toml:7:12: error: expected kv_heads to divide heads "
                     "8, got 3; set kv_heads to one of 1, 2, 4, 8"});
}

TEST(RunDescriptionErrors, OddHeadDimensionForRope) {
  std::string text = kLlama;
  text.replace(text.find("width = 128"), 11, "width = 96");
  text.replace(text.find("heads = 8"), 9, "heads = 32");
  text.replace(text.find("kv_heads = 2"), 12, "kv_heads = 8");
  // 96 / 32 = 3; the list leaves out 32 and 96, which give odd dimensions.
  EXPECT_EQ(tomlErrors(text),
            Messages{"run.toml:6:9: error: expected an even head dimension "
                     "for rope, got width 96 / heads 32 = 3; set heads to one "
                     "of 1, 2, 3, 4, 6, 8, 12, ..."});
}

TEST(RunDescriptionErrors, MoreExpertsPerTokenThanExperts) {
  EXPECT_EQ(tomlErrors("[model]\nfamily = \"moe\"\nvocab_size = 256\n"
                       "layers = 2\nwidth = 64\nheads = 4\nffn_width = 128\n"
                       "experts = 4\nexperts_per_token = 5\n"),
            Messages{"run.toml:9:21: error: expected experts_per_token <= "
                     "experts 4, got 5; lower experts_per_token or raise "
                     "experts"});
}

TEST(RunDescriptionErrors, SeqLenBeyondGpt2Positions) {
  EXPECT_EQ(tomlErrors(kGpt2 + "[train]\nseq_len = 128\n"),
            Messages{"run.toml:9:11: error: expected seq_len <= max_positions "
                     "64 for gpt2, got 128; lower seq_len or raise "
                     "max_positions (gpt2 learns one embedding per "
                     "position)"});
}

TEST(RunDescriptionErrors, DefaultSeqLenBeyondGpt2Positions) {
  std::string text = kGpt2;
  text.replace(text.find("max_positions = 64"), 18, "max_positions = 32");
  EXPECT_EQ(tomlErrors(text),
            Messages{"run.toml:7:17: error: expected max_positions >= seq_len "
                     "64 (the default of [train]) for gpt2, got 32; set a "
                     "smaller seq_len in [train] or raise max_positions"});
}

TEST(RunDescriptionErrors, RopeThetaOnGpt2) {
  EXPECT_EQ(tomlErrors(kGpt2 + "rope_theta = 10000.0\n"),
            Messages{"run.toml:8:14: error: expected no rope_theta for family "
                     "\"gpt2\", got 10000.0; remove it (gpt2 uses learned "
                     "positions)"});
}

TEST(RunDescriptionErrors, UntiedGpt2) {
  EXPECT_EQ(tomlErrors(kGpt2 + "tie_embeddings = false\n"),
            Messages{"run.toml:8:18: error: expected tie_embeddings = true for "
                     "family \"gpt2\", got false; remove it (gpt2 always "
                     "shares the token embedding with the classifier)"});
}

TEST(RunDescriptionErrors, GroupedQueryAttentionOnGpt2) {
  EXPECT_EQ(tomlErrors(kGpt2 + "kv_heads = 2\n"),
            Messages{"run.toml:8:12: error: expected kv_heads to equal heads "
                     "4 for gpt2, got 2; remove kv_heads (gpt2 has no "
                     "grouped-query attention)"});
}

TEST(RunDescriptionErrors, MoeKeyOnLlama) {
  EXPECT_EQ(tomlErrors(kLlama + "experts = 8\n"),
            Messages{"run.toml:9:11: error: expected experts only with family "
                     "\"moe\", got family \"llama\"; remove experts or set "
                     "family = \"moe\""});
}

TEST(RunDescriptionErrors, OneMessagePerKey) {
  // heads = 0 fails its range; the checks that divide by it stay silent.
  std::string text = kLlama;
  text.replace(text.find("heads = 8"), 9, "heads = 0");
  EXPECT_EQ(tomlErrors(text),
            Messages{"run.toml:6:9: error: expected heads in [1, 65536], got 0; write "
                     "e.g. heads = 12"});
}

TEST(RunDescriptionErrors, SizesNear2To63AreRefusedWhereRead) {
  // width = 2^62: 4 * width (the default ffn_width) overflowed into
  // "expected ffn_width > 0, got -4" for a file with no ffn_width.
  std::string text = kGpt2;
  text.replace(text.find("width = 64"), 10, "width = 4611686018427387904");
  EXPECT_EQ(tomlErrors(text),
            Messages{"run.toml:5:9: error: expected width in [1, 16777216], "
                     "got 4611686018427387904; write e.g. width = 768"});
  text = kGpt2;
  text.replace(text.find("vocab_size = 128"), 16,
               "vocab_size = 9223372036854775807");
  EXPECT_EQ(tomlErrors(text),
            Messages{"run.toml:3:14: error: expected vocab_size in [1, "
                     "16777216], got 9223372036854775807; write e.g. "
                     "vocab_size = 50257"});
}

TEST(RunDescriptionErrors, StepsBeyond2To40TokensAreRefused) {
  // batch_size = 2^62 compiled to a 1.9 MB buffer plan: its sizes wrapped.
  auto train = [](const std::string &batch, const std::string &seq) {
    return kGpt2 + "[train]\nbatch_size = " + batch + "\nseq_len = " + seq +
           "\n"; // lines 8, 9, 10
  };
  EXPECT_EQ(tomlErrors(train("4611686018427387904", "16")),
            Messages{"run.toml:9:14: error: expected batch_size in [1, "
                     "1099511627776], got 4611686018427387904; write e.g. "
                     "batch_size = 8"});
  EXPECT_EQ(tomlErrors(train("1099511627776", "16")),
            Messages{"run.toml:9:14: error: expected at most 2^40 tokens a "
                     "step, got batch_size 1099511627776 x seq_len 16 = "
                     "17592186044416; lower batch_size or seq_len"});
  // The tokens within 2^40, the widest activation (4 x width = 512) not within
  // 2^48 elements.
  Messages messages = tomlErrors(
      kLlama + "[train]\nbatch_size = 1099511627776\nseq_len = 1\n");
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_NE(messages[0].find("run.toml:10:14: error: expected the largest "
                             "activation (batch_size 1099511627776 x seq_len 1 "
                             "tokens x 512, the widest"),
            std::string::npos)
      << messages[0];
}

TEST(RunDescriptionErrors, BudgetBeyond2To20GiBIsRefused) {
  EXPECT_EQ(tomlErrors(kGpt2 + "[memory]\nbudget_gib = 1e300\n"),
            Messages{"run.toml:9:14: error: expected budget_gib in [0, "
                     "1048576], got 1e300; write e.g. budget_gib = 80.0"});
}

TEST(RunDescriptionErrors, ALearningRateBeyondTenIsRefused) {
  EXPECT_EQ(tomlErrors(kGpt2 + "[train]\nlearning_rate = 1e300\n"),
            Messages{"run.toml:9:17: error: expected learning_rate <= 10, got "
                     "1e300; AdamW moves each weight by about the rate every "
                     "step: use a rate such as 3e-4"});
}

//===----------------------------------------------------------------------===//
// [train], [precision], [parallel], [data]
//===----------------------------------------------------------------------===//

TEST(RunDescriptionErrors, MicrobatchesNotDividingBatch) {
  EXPECT_EQ(tomlErrors(kGpt2 + "[train]\nbatch_size = 8\nmicrobatches = 3\n"),
            Messages{"run.toml:10:16: error: expected microbatches to divide "
                     "batch_size 8, got 3; set microbatches to one of 1, 2, "
                     "4, 8"});
}

TEST(RunDescriptionErrors, WarmupNotShorterThanTraining) {
  EXPECT_EQ(tomlErrors(kGpt2 + "[train]\nsteps = 100\nwarmup_steps = 100\n"),
            Messages{"run.toml:10:16: error: expected warmup_steps < steps "
                     "100, got 100; lower warmup_steps or raise steps"});
}

TEST(RunDescriptionErrors, MinLearningRateAboveLearningRate) {
  EXPECT_EQ(tomlErrors(kGpt2 + "[train]\nlearning_rate = 1e-4\n"
                               "min_learning_rate = 3e-4\n"),
            Messages{"run.toml:10:21: error: expected min_learning_rate <= "
                     "learning_rate 0.0001, got 0.0003; lower "
                     "min_learning_rate or raise learning_rate"});
}

TEST(RunDescriptionErrors, LossScaleWithoutFp16) {
  EXPECT_EQ(tomlErrors(kGpt2 + "[precision]\npolicy = \"bf16\"\n"
                               "initial_loss_scale = 1024.0\n"),
            Messages{"run.toml:10:22: error: expected initial_loss_scale only "
                     "with policy \"fp16\", got policy \"bf16\"; remove "
                     "initial_loss_scale or set policy = \"fp16\""});
}

TEST(RunDescriptionErrors, SequenceParallelWithoutTensorParallel) {
  EXPECT_EQ(tomlErrors(kGpt2 + "[parallel]\nsp = true\n"),
            Messages{"run.toml:9:6: error: expected tp > 1 with sp = true, "
                     "got tp = 1; set tp to 2 or more, or remove sp (sequence "
                     "parallelism splits activations over the tp axis)"});
}

TEST(RunDescriptionErrors, BadDevices) {
  for (const char *devices : {"gpu:2", "cuda:0", "cpu:", "auto:2"})
    EXPECT_EQ(tomlErrors(kGpt2 + "[parallel]\ndevices = \"" + devices + "\"\n"),
              Messages{"run.toml:9:11: error: expected devices to be "
                       "\"auto\", \"cpu\", \"cpu:N\", \"cuda\" or \"cuda:N\" "
                       "with N > 0, got \"" +
                       std::string(devices) +
                       "\"; write e.g. devices = \"cuda:8\""});
}

TEST(RunDescriptionErrors, MeshOtherThanAuto) {
  EXPECT_EQ(tomlErrors(kGpt2 + "[parallel]\nmesh = \"2x2\"\n"),
            Messages{"run.toml:9:8: error: expected mesh to be \"auto\", got "
                     "\"2x2\"; write mesh = \"auto\" to search for a mesh, or "
                     "remove it and set dp, tp, pp, cp and ep"});
}

//===----------------------------------------------------------------------===//
// The mesh: axes that divide the model and the batch, ranks that the devices
// provide
//===----------------------------------------------------------------------===//

/// GPT-2 124M's sizes: 12 heads, a vocabulary of 50257 (a prime times 29),
/// an MLP of 3072.
const std::string kGpt2Small = "[model]\n"              // 1
                               "family = \"gpt2\"\n"    // 2
                               "vocab_size = 50257\n"   // 3
                               "layers = 2\n"           // 4
                               "width = 768\n"          // 5
                               "heads = 12\n"           // 6
                               "max_positions = 64\n";  // 7

TEST(MeshErrors, TensorParallelNotDividingTheVocabulary) {
  EXPECT_EQ(
      tomlErrors(kGpt2Small + "[parallel]\ndevices = \"cpu\"\ntp = 4\n"),
      Messages{"run.toml:10:6: error: expected tp to divide heads, vocab_size "
               "and ffn_width (tensor parallelism splits them over the tp "
               "ranks), got 4, which does not divide vocab_size 50257; pad "
               "vocab_size to 50432 (a multiple of 64 x 4, so that each "
               "rank's rows stay 16-byte aligned), or set tp to one of 1"});
}

TEST(MeshErrors, TensorParallelNotDividingTheHeadsNorTheVocabulary) {
  EXPECT_EQ(
      tomlErrors(kGpt2Small + "[parallel]\ndevices = \"cpu\"\ntp = 8\n"),
      Messages{"run.toml:10:6: error: expected tp to divide heads, vocab_size "
               "and ffn_width (tensor parallelism splits them over the tp "
               "ranks), got 8, which does not divide heads 12 or vocab_size "
               "50257; valid tp: 1, 2, 3, 4, 6, 12 with vocab_size padded to "
               "a multiple of 64 x tp (50304 for tp 6)"});
}

TEST(MeshErrors, TensorParallelNotDividingTheKvHeads) {
  // kLlama: 8 heads, 2 kv heads, vocabulary 256, MLP 344 = 8 * 43.
  EXPECT_EQ(tomlErrors(kLlama + "[parallel]\ndevices = \"cpu\"\ntp = 4\n"),
            Messages{"run.toml:11:6: error: expected tp to divide heads, "
                     "kv_heads, vocab_size and ffn_width (tensor parallelism "
                     "splits them over the tp ranks), got 4, which does not "
                     "divide kv_heads 2; valid tp: 1, 2"});
}

TEST(MeshErrors, TensorParallelNotDividingTheExpertMlp) {
  EXPECT_EQ(tomlErrors("[model]\n"                  // 1
                       "family = \"moe\"\n"         // 2
                       "vocab_size = 256\n"         // 3
                       "layers = 2\n"               // 4
                       "width = 64\n"               // 5
                       "heads = 4\n"                // 6
                       "ffn_width = 90\n"           // 7
                       "experts = 4\n"              // 8
                       "experts_per_token = 2\n"    // 9
                       "[parallel]\n"               // 10
                       "devices = \"cpu\"\n"        // 11
                       "tp = 4\n"),                 // 12
            Messages{"run.toml:12:6: error: expected tp to divide heads, "
                     "kv_heads, vocab_size and ffn_width (tensor parallelism "
                     "splits them over the tp ranks), got 4, which does not "
                     "divide ffn_width 90; valid tp: 1, 2"});
}

TEST(MeshErrors, TensorParallelThatFits) {
  RunDescription run =
      parseClean(kLlama + "[parallel]\ndevices = \"cpu:2\"\ntp = 2\n");
  EXPECT_EQ(run.parallel.tp, 2);
}

TEST(MeshErrors, DataParallelNotDividingTheBatch) {
  EXPECT_EQ(tomlErrors(kGpt2 + "[train]\nbatch_size = 12\n"
                               "[parallel]\ndevices = \"cpu\"\ndp = 5\n"),
            Messages{"run.toml:12:6: error: expected dp to divide batch_size "
                     "12, got 5 (data parallelism splits it over the dp "
                     "ranks); valid dp: 1, 2, 3, 4, 6, 12"});
}

TEST(MeshErrors, DataParallelNotDividingTheMicrobatch) {
  EXPECT_EQ(tomlErrors(kGpt2 + "[train]\nbatch_size = 12\nmicrobatches = 2\n"
                               "[parallel]\ndevices = \"cpu\"\ndp = 4\n"),
            Messages{"run.toml:13:6: error: expected dp to divide the batch of "
                     "a microbatch 6 (batch_size 12 / microbatches 2), got 4 "
                     "(data parallelism splits it over the dp ranks); valid "
                     "dp: 1, 2, 3, 6"});
}

TEST(MeshErrors, SequenceParallelNeedsSeqLenDividedByTp) {
  EXPECT_EQ(tomlErrors(kGpt2 + "[train]\nseq_len = 63\n[parallel]\n"
                               "devices = \"cpu\"\ntp = 2\nsp = true\n"),
            Messages{"run.toml:13:6: error: expected seq_len to be a multiple "
                     "of tp 2 with sp = true, got seq_len 63; set seq_len to "
                     "64 or remove sp (sequence parallelism splits the "
                     "sequence over the tp ranks)"});
}

TEST(MeshErrors, ZeroNeedsDataParallelism) {
  EXPECT_EQ(tomlErrors(kGpt2 + "[parallel]\nzero = 2\n"),
            Messages{"run.toml:9:8: error: expected dp > 1 with zero = 2, got "
                     "dp = 1; set dp to 2 or more, or remove zero (ZeRO shards "
                     "the optimizer state, gradients and parameters over the "
                     "dp ranks)"});
}

TEST(MeshErrors, ExpertParallelismNeedsAMoeModel) {
  EXPECT_EQ(tomlErrors(kGpt2 + "[parallel]\ndevices = \"cpu\"\nep = 2\n"),
            Messages{"run.toml:10:6: error: expected ep = 1 for a gpt2 model, "
                     "got 2; expert parallelism splits the experts of a moe "
                     "model: remove ep, or use dp for data parallelism"});
}

TEST(MeshErrors, ExpertParallelismSplitsExpertsTokensAndCapacity) {
  const std::string moe = "[model]\nfamily = \"moe\"\nvocab_size = 256\n"
                          "layers = 2\nwidth = 64\nheads = 4\nkv_heads = 2\n"
                          "ffn_width = 128\nexperts = 8\n"
                          "experts_per_token = 2\n"
                          "[train]\nbatch_size = 4\nseq_len = 32\n";
  // Lines: [parallel] is line 14, devices 15, ep 16.
  EXPECT_EQ(tomlErrors(moe + "[parallel]\ndevices = \"cpu\"\nep = 3\n"),
            Messages{"run.toml:16:6: error: expected ep to divide experts 8, "
                     "got 3 (expert parallelism gives each ep rank experts / "
                     "ep experts); valid ep: 1, 2, 4, 8"});
  EXPECT_EQ(tomlErrors(moe + "[parallel]\ndevices = \"cpu\"\nep = 8\n"),
            Messages{"run.toml:16:6: error: expected dp x ep to divide the "
                     "batch of a microbatch 4, got 1 x 8 = 8 (the ep ranks "
                     "split the tokens like dp); valid dp x ep: 1, 2, 4"});
  // 128 tokens: capacity ceil(1.25 * 128 * 2 / 8) = 40, which 2 x 2 = 4
  // divides; capacity_factor 1.05 gives ceil(33.6) = 34, which it does not.
  RunDescription ok =
      parseClean(moe + "[parallel]\ndevices = \"cpu\"\ndp = 2\nep = 2\n");
  EXPECT_EQ(ok.parallel.ep, 2);
  std::string tight = moe;
  tight.insert(tight.find("[train]"), "capacity_factor = 1.05\n");
  EXPECT_EQ(
      tomlErrors(tight + "[parallel]\ndevices = \"cpu\"\ndp = 2\nep = 2\n"),
      Messages{"run.toml:18:6: error: expected dp x ep = 4 to divide the "
               "expert capacity 34 (min(tokens, ceil(capacity_factor * tokens "
               "* k / experts)) for 128 tokens per microbatch), got a "
               "remainder of 2; each rank's tokens get capacity / (dp x ep) "
               "slots per expert: change capacity_factor or the batch"});
}

TEST(MeshErrors, ContextParallelismNeedsSeqLenDividedByTwiceCp) {
  EXPECT_EQ(tomlErrors(kGpt2 + "[train]\nseq_len = 60\n[parallel]\n"
                               "devices = \"cpu\"\ncp = 4\n"),
            Messages{"run.toml:12:6: error: expected seq_len to be a multiple "
                     "of 2*cp = 8, got seq_len 60; set seq_len to 64 or choose "
                     "cp so that 2*cp divides it (context parallelism gives "
                     "each rank an early and a late chunk of the sequence)"});
}

TEST(MeshErrors, ContextParallelismIsAMeshAxis) {
  RunDescription run =
      parseClean(kGpt2 + "[parallel]\ndevices = \"cpu\"\ndp = 2\ncp = 2\n");
  EXPECT_EQ(run.parallel.dp * run.parallel.cp, 4);
  EXPECT_TRUE(run.pending.empty());
  EXPECT_EQ(
      tomlErrors(kGpt2 + "[parallel]\ndevices = \"cpu:2\"\ncp = 4\n"),
      Messages{"run.toml:9:11: error: expected devices \"cpu:N\" with N the "
               "mesh's 4 ranks (cp 4), got \"cpu:2\"; set devices = "
               "\"cpu:4\", or devices = \"cpu\" for as many CPU devices as "
               "the mesh needs"});
}

TEST(MeshErrors, PipelineKeys) {
  // Two layers: pp = 4 cannot give every stage one.
  EXPECT_EQ(tomlErrors(kGpt2 + "[parallel]\ndevices = \"cpu\"\npp = 4\n"),
            Messages{"run.toml:10:6: error: expected at most 2 pipeline chunks "
                     "(pp x virtual_stages, one layer each at least) for 2 "
                     "layers, got 4; lower pp or virtual_stages"});
  EXPECT_EQ(tomlErrors(kGpt2 + "[parallel]\ndevices = \"cpu\"\npp = 2\n"
                               "virtual_stages = 2\n"),
            Messages{"run.toml:11:18: error: expected virtual_stages = 1 "
                     "without pipeline_schedule = \"interleaved\", got 2; set "
                     "pipeline_schedule = \"interleaved\" (model chunks per "
                     "stage) or remove virtual_stages"});
  EXPECT_EQ(tomlErrors(kGpt2 + "[parallel]\ndevices = \"cpu\"\npp = 2\n"
                               "pipeline_boundaries = [1, 2]\n"),
            Messages{"run.toml:11:23: error: expected 1 pipeline_boundaries "
                     "(the first layer of every chunk after the first, pp x "
                     "virtual_stages - 1), got 2"});
  EXPECT_EQ(tomlErrors(kGpt2 + "[parallel]\ndevices = \"cpu\"\npp = 2\n"
                               "pipeline_boundaries = [2]\n"),
            Messages{"run.toml:11:23: error: expected increasing layer "
                     "indices in [1, 2) in pipeline_boundaries, got [2]"});
  EXPECT_EQ(tomlErrors(kGpt2 + "[parallel]\npipeline_boundaries = [1]\n"),
            Messages{"run.toml:9:23: error: expected pp > 1 with "
                     "pipeline_boundaries, got pp = 1; set pp to 2 or more, "
                     "or remove pipeline_boundaries"});
  EXPECT_EQ(tomlErrors(kGpt2 + "[parallel]\ndevices = \"cpu\"\npp = 2\n"
                               "pipeline_schedule = \"interleaved\"\n"),
            Messages{"run.toml:11:21: error: expected [train] microbatches "
                     "to be a multiple of pp 2 with pipeline_schedule = "
                     "\"interleaved\", got 1; set microbatches = 2"});
}

TEST(MeshErrors, CpuDevicesThatDoNotMatchTheRanks) {
  EXPECT_EQ(
      tomlErrors(kGpt2 + "[parallel]\ndevices = \"cpu:4\"\ndp = 2\ntp = 4\n"),
      Messages{"run.toml:9:11: error: expected devices \"cpu:N\" with N the "
               "mesh's 8 ranks (dp 2 x tp 4), got \"cpu:4\"; set devices = "
               "\"cpu:8\", or devices = \"cpu\" for as many CPU devices as "
               "the mesh needs"});
  EXPECT_EQ(tomlErrors(kGpt2 + "[parallel]\ndevices = \"cpu:2\"\n"),
            Messages{"run.toml:9:11: error: expected devices \"cpu:N\" with N "
                     "the mesh's 1 rank (every axis 1), got \"cpu:2\"; set "
                     "devices = \"cpu:1\", or devices = \"cpu\" for as many "
                     "CPU devices as the mesh needs"});
}

TEST(MeshErrors, CpuWithoutACountTakesTheMesh) {
  RunDescription run =
      parseClean(kGpt2 + "[parallel]\ndevices = \"cpu\"\ndp = 2\ntp = 2\n");
  EXPECT_EQ(run.parallel.dp * run.parallel.tp, 4);
}

TEST(MeshErrors, SeveralGpusNeedLlmcLaunch) {
  // One process per GPU (llmc launch): "cuda" or "cuda:N" with N the ranks.
  EXPECT_EQ(parseClean(kGpt2 + "[parallel]\ndevices = \"cuda:8\"\ndp = 8\n")
                .parallel.dp,
            8);
  EXPECT_EQ(parseClean(kGpt2 + "[parallel]\ndevices = \"cuda\"\ndp = 2\n")
                .parallel.dp,
            2);
  EXPECT_EQ(tomlErrors(kGpt2 + "[parallel]\ndevices = \"cuda:4\"\ndp = 8\n"),
            Messages{"run.toml:9:11: error: expected devices \"cuda:N\" with "
                     "N the mesh's 8 ranks (dp 8), got \"cuda:4\"; set "
                     "devices = \"cuda:8\" and train with `llmc launch -n 8 "
                     "RUN.toml` (one process per GPU, docs/distributed.md)"});
  // devices left at "auto" may mean GPUs: the message points at [parallel].
  EXPECT_EQ(tomlErrors(kGpt2 + "[parallel]\ntp = 2\n"),
            Messages{"run.toml:8:1: error: expected one rank on devices "
                     "\"auto\" (the default), got 2 ranks (tp 2); for GPUs "
                     "set devices = \"cuda\" and train with `llmc launch -n 2 "
                     "RUN.toml` (one process per GPU, docs/distributed.md), "
                     "or set devices = \"cpu:2\" to run this mesh on CPU "
                     "devices"});
}

TEST(RunDescriptionErrors, SeveralErrorsReportedTogether) {
  EXPECT_EQ(
      tomlErrors("[model]\n"              // 1
                 "family = \"gpt2\"\n"    // 2
                 "vocab_size = 0\n"       // 3
                 "layers = 2\n"           // 4
                 "width = 64\n"           // 5
                 "heads = 5\n"            // 6
                 "max_positions = 64\n"   // 7
                 "tie_embedding = true\n" // 8
                 "\n"                     // 9
                 "[train]\n"              // 10
                 "batch_size = 8\n"       // 11
                 "microbatches = 3\n"     // 12
                 "beta1 = \"0.9\"\n"),    // 13
      (Messages{"run.toml:3:14: error: expected vocab_size in [1, 16777216], got 0; "
                "write "
                "e.g. vocab_size = 50257",
                "run.toml:6:9: error: expected heads to divide width 64, got "
                "5; set heads to one of 1, 2, 4, 8, 16, 32, 64",
                "run.toml:8:1: error: unknown key 'tie_embedding' in [model]; "
                "did you mean 'tie_embeddings'?",
                "run.toml:12:16: error: expected microbatches to divide "
                "batch_size 8, got 3; set microbatches to one of 1, 2, 4, 8",
                "run.toml:13:9: error: expected beta1 to be a number, got a "
                "string \"0.9\"; write e.g. beta1 = 0.9"}));
}

TEST_F(ConfigFilesTest, MissingRunDescription) {
  std::string path = file("nope.toml");
  ParseOutcome outcome = parseRunDescription(path);
  EXPECT_FALSE(outcome.ok());
  EXPECT_EQ(format(outcome.diagnostics),
            Messages{path + ": error: cannot read the run description: no "
                            "such file or directory; check the path"});
}

TEST_F(ConfigFilesTest, MissingHfConfigFile) {
  std::string path = write("run.toml", "[model]\nhf_config = \"nope.json\"\n");
  ParseOutcome outcome = parseRunDescription(path);
  EXPECT_FALSE(outcome.ok());
  EXPECT_EQ(format(outcome.diagnostics),
            Messages{path +
                     ":2:13: error: expected hf_config to name an "
                     "existing file, got \"nope.json\" (looked for '" +
                     file("nope.json") +
                     "'); fix the path, which is relative to this file's "
                     "directory"});
}

TEST_F(ConfigFilesTest, HfConfigTogetherWithSizes) {
  write("hf/config.json", "{\"model_type\": \"gpt2\", \"n_embd\": 64, "
                          "\"n_layer\": 2, \"n_head\": 4, \"n_positions\": "
                          "64, \"vocab_size\": 128}");
  std::string path = write("run.toml", "[model]\n"
                                       "hf_config = \"hf/config.json\"\n"
                                       "family = \"gpt2\"\n"
                                       "width = 128\n");
  ParseOutcome outcome = parseRunDescription(path);
  EXPECT_FALSE(outcome.ok());
  EXPECT_EQ(format(outcome.diagnostics),
            (Messages{path + ":3:10: error: expected either hf_config or "
                             "family and sizes, got both hf_config and "
                             "family; remove family (config.json gives it) "
                             "or remove hf_config",
                      path + ":4:9: error: expected either hf_config or "
                             "family and sizes, got both hf_config and width; "
                             "remove width (config.json gives it) or remove "
                             "hf_config"}));
}

TEST_F(ConfigFilesTest, HfConfigErrorsNameTheJsonFile) {
  std::string json = write("bad.json", "{\n  \"model_type\": \"llama\",\n"
                                       "  \"hidden_size\": 128\n}\n");
  std::string path = write("run.toml", "[model]\nhf_config = \"bad.json\"\n"
                                       "[train]\nseq_len = 0\n");
  ParseOutcome outcome = parseRunDescription(path);
  EXPECT_FALSE(outcome.ok());
  // The run description's own messages first, then the config.json's.
  std::string missing = ":1:1: error: missing required key '";
  std::string forLlama = "' for model_type \"llama\"; add \"";
  auto missingKey = [&](const std::string &key) {
    return json + missing + key + forLlama + key + "\" to config.json";
  };
  EXPECT_EQ(format(outcome.diagnostics),
            (Messages{path + ":4:11: error: expected seq_len in [1, 1099511627776], "
                                    "got 0; "
                             "write e.g. seq_len = 1024",
                      missingKey("vocab_size"), missingKey("num_hidden_layers"),
                      missingKey("num_attention_heads"),
                      missingKey("intermediate_size"),
                      missingKey("max_position_embeddings")}));
}

TEST_F(ConfigFilesTest, MissingDataFile) {
  std::string path =
      write("run.toml", kGpt2 + "[data]\npath = \"train.bin\"\n");
  ParseOutcome outcome = parseRunDescription(path);
  EXPECT_FALSE(outcome.ok());
  EXPECT_EQ(format(outcome.diagnostics),
            Messages{path +
                     ":9:8: error: expected path to name existing "
                     "files, got \"train.bin\" (looked for '" +
                     file("train.bin") +
                     "'); fix the path, which is relative to this file's "
                     "directory"});
}

//===----------------------------------------------------------------------===//
// config.json
//===----------------------------------------------------------------------===//

TEST(HfConfigErrors, UnknownModelType) {
  EXPECT_EQ(jsonErrors("{\"model_type\": \"bert\", \"hidden_size\": 768}"),
            Messages{"config.json:1:2: error: expected model_type to be one "
                     "of \"gpt2\", \"llama\", \"mixtral\", got \"bert\"; llmc "
                     "builds only these architectures"});
  EXPECT_EQ(jsonErrors(replaced(kHfGpt2, "\"gpt2\"", "\"gpt-2\"")),
            Messages{"config.json:2:3: error: expected model_type to be one "
                     "of \"gpt2\", \"llama\", \"mixtral\", got \"gpt-2\"; did "
                     "you mean \"gpt2\"?"});
}

TEST(HfConfigErrors, MissingModelType) {
  EXPECT_EQ(jsonErrors("{\"n_embd\": 64}"),
            Messages{"config.json:1:1: error: missing required key "
                     "'model_type'; add \"model_type\": \"gpt2\", \"llama\" or "
                     "\"mixtral\""});
}

TEST(HfConfigErrors, MissingKey) {
  EXPECT_EQ(jsonErrors(replaced(kHfGpt2, "  \"n_layer\": 2,\n", "")),
            Messages{"config.json:1:1: error: missing required key 'n_layer' "
                     "for model_type \"gpt2\"; add \"n_layer\" to "
                     "config.json"});
}

TEST(HfConfigErrors, WrongType) {
  EXPECT_EQ(jsonErrors(replaced(kHfGpt2, "\"n_head\": 4", "\"n_head\": \"4\"")),
            Messages{"config.json:4:3: error: expected n_head to be an "
                     "integer, got a string \"4\"; write it as a JSON "
                     "integer"});
  EXPECT_EQ(jsonErrors(replaced(kHfGpt2, "\"n_head\": 4", "\"n_head\": 4.5")),
            Messages{"config.json:4:3: error: expected n_head to be an "
                     "integer, got a number 4.5; write it as a JSON "
                     "integer"});
}

TEST(HfConfigErrors, ModelRulesUseTheJsonNames) {
  EXPECT_EQ(jsonErrors("{\n"
                       "  \"model_type\": \"llama\",\n"
                       "  \"hidden_size\": 128,\n"
                       "  \"intermediate_size\": 344,\n"
                       "  \"num_hidden_layers\": 2,\n"
                       "  \"num_attention_heads\": 7,\n"
                       "  \"vocab_size\": 256,\n"
                       "  \"max_position_embeddings\": 256\n"
                       "}\n"),
            Messages{"config.json:6:3: error: expected num_attention_heads to "
                     "divide hidden_size 128, got 7; set num_attention_heads "
                     "to one of 1, 2, 4, 8, 16, 32, 64"});
}

// head_dim, rope_scaling and the other keys that change the numerics:
// HfConfigTest.cpp.

TEST(HfConfigErrors, UntiedGpt2) {
  EXPECT_EQ(jsonErrors(replaced(kHfGpt2, "\"vocab_size\": 128",
                                "\"vocab_size\": 128,\n"
                                "  \"tie_word_embeddings\": false")),
            Messages{"config.json:8:3: error: expected tie_word_embeddings to "
                     "be true for gpt2, got false; set it to true (llmc's gpt2 "
                     "always shares the token embedding with the "
                     "classifier)"});
}

TEST(HfConfigErrors, MalformedJson) {
  // llvm::json stops just past the character it rejects: the '}' at 3:1.
  EXPECT_EQ(jsonErrors("{\n  \"model_type\": \"gpt2\",\n}\n"),
            Messages{"config.json:3:2: error: malformed JSON: expected object "
                     "key; fix the syntax"});
}

TEST(HfConfigErrors, NotAnObject) {
  EXPECT_EQ(jsonErrors("[1, 2]"),
            Messages{"config.json:1:1: error: expected a JSON object at the "
                     "top level, got an array; a config.json is one object of "
                     "named settings"});
}

} // namespace
