// GPT-2 tiny, forward and loss, written by hand in the llmc dialect.
//
// 2 layers, width 64, 4 heads of 16, vocabulary 128, context 32;
// a batch of 2 sequences of 16 tokens. Parameter names are those of
// Hugging Face GPT-2 (Conv1D weights stored [in, out]); every value is
// located at the model part it comes from. Until the frontend (issue #3)
// builds this from a run description, this file is the input of the main
// job:
//
//   llmc compile examples/gpt2-tiny.mlir --print-cost

module {
  func.func @loss(
      %wte_weight: tensor<128x64xf32> {llmc.name = "transformer.wte.weight", llmc.role = "parameter"},
      %wpe_weight: tensor<32x64xf32> {llmc.name = "transformer.wpe.weight", llmc.role = "parameter"},
      %h_0_ln_1_weight: tensor<64xf32> {llmc.name = "transformer.h.0.ln_1.weight", llmc.role = "parameter"},
      %h_0_ln_1_bias: tensor<64xf32> {llmc.name = "transformer.h.0.ln_1.bias", llmc.role = "parameter"},
      %h_0_attn_c_attn_weight: tensor<64x192xf32> {llmc.name = "transformer.h.0.attn.c_attn.weight", llmc.role = "parameter"},
      %h_0_attn_c_attn_bias: tensor<192xf32> {llmc.name = "transformer.h.0.attn.c_attn.bias", llmc.role = "parameter"},
      %h_0_attn_c_proj_weight: tensor<64x64xf32> {llmc.name = "transformer.h.0.attn.c_proj.weight", llmc.role = "parameter"},
      %h_0_attn_c_proj_bias: tensor<64xf32> {llmc.name = "transformer.h.0.attn.c_proj.bias", llmc.role = "parameter"},
      %h_0_ln_2_weight: tensor<64xf32> {llmc.name = "transformer.h.0.ln_2.weight", llmc.role = "parameter"},
      %h_0_ln_2_bias: tensor<64xf32> {llmc.name = "transformer.h.0.ln_2.bias", llmc.role = "parameter"},
      %h_0_mlp_c_fc_weight: tensor<64x256xf32> {llmc.name = "transformer.h.0.mlp.c_fc.weight", llmc.role = "parameter"},
      %h_0_mlp_c_fc_bias: tensor<256xf32> {llmc.name = "transformer.h.0.mlp.c_fc.bias", llmc.role = "parameter"},
      %h_0_mlp_c_proj_weight: tensor<256x64xf32> {llmc.name = "transformer.h.0.mlp.c_proj.weight", llmc.role = "parameter"},
      %h_0_mlp_c_proj_bias: tensor<64xf32> {llmc.name = "transformer.h.0.mlp.c_proj.bias", llmc.role = "parameter"},
      %h_1_ln_1_weight: tensor<64xf32> {llmc.name = "transformer.h.1.ln_1.weight", llmc.role = "parameter"},
      %h_1_ln_1_bias: tensor<64xf32> {llmc.name = "transformer.h.1.ln_1.bias", llmc.role = "parameter"},
      %h_1_attn_c_attn_weight: tensor<64x192xf32> {llmc.name = "transformer.h.1.attn.c_attn.weight", llmc.role = "parameter"},
      %h_1_attn_c_attn_bias: tensor<192xf32> {llmc.name = "transformer.h.1.attn.c_attn.bias", llmc.role = "parameter"},
      %h_1_attn_c_proj_weight: tensor<64x64xf32> {llmc.name = "transformer.h.1.attn.c_proj.weight", llmc.role = "parameter"},
      %h_1_attn_c_proj_bias: tensor<64xf32> {llmc.name = "transformer.h.1.attn.c_proj.bias", llmc.role = "parameter"},
      %h_1_ln_2_weight: tensor<64xf32> {llmc.name = "transformer.h.1.ln_2.weight", llmc.role = "parameter"},
      %h_1_ln_2_bias: tensor<64xf32> {llmc.name = "transformer.h.1.ln_2.bias", llmc.role = "parameter"},
      %h_1_mlp_c_fc_weight: tensor<64x256xf32> {llmc.name = "transformer.h.1.mlp.c_fc.weight", llmc.role = "parameter"},
      %h_1_mlp_c_fc_bias: tensor<256xf32> {llmc.name = "transformer.h.1.mlp.c_fc.bias", llmc.role = "parameter"},
      %h_1_mlp_c_proj_weight: tensor<256x64xf32> {llmc.name = "transformer.h.1.mlp.c_proj.weight", llmc.role = "parameter"},
      %h_1_mlp_c_proj_bias: tensor<64xf32> {llmc.name = "transformer.h.1.mlp.c_proj.bias", llmc.role = "parameter"},
      %ln_f_weight: tensor<64xf32> {llmc.name = "transformer.ln_f.weight", llmc.role = "parameter"},
      %ln_f_bias: tensor<64xf32> {llmc.name = "transformer.ln_f.bias", llmc.role = "parameter"},
      %tokens: tensor<2x16xi32> {llmc.name = "tokens", llmc.role = "input"},
      %targets: tensor<2x16xi32> {llmc.name = "targets", llmc.role = "input"}
  ) -> tensor<f32> {
    %v1 = llmc.embedding %wte_weight[%tokens] : (tensor<128x64xf32>, tensor<2x16xi32>) -> tensor<2x16x64xf32> loc("wte")
    %v2 = llmc.iota dim 0 : tensor<16xi32> loc("wpe.positions")
    %v3 = llmc.embedding %wpe_weight[%v2] : (tensor<32x64xf32>, tensor<16xi32>) -> tensor<16x64xf32> loc("wpe")
    %v4 = llmc.broadcast %v3 dims [1, 2] : tensor<16x64xf32> -> tensor<2x16x64xf32> loc("wpe")
    %v5 = llmc.add %v1, %v4 : tensor<2x16x64xf32> loc("embed")
    // Block 0: attention
    %v6 = llmc.layer_norm %v5, %h_0_ln_1_weight, %h_0_ln_1_bias epsilon 1.0e-05 : (tensor<2x16x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<2x16x64xf32> loc("h.0.ln_1")
    %v7 = llmc.matmul %v6, %h_0_attn_c_attn_weight : tensor<2x16x64xf32>, tensor<64x192xf32> -> tensor<2x16x192xf32> loc("h.0.attn.c_attn")
    %v8 = llmc.broadcast %h_0_attn_c_attn_bias dims [2] : tensor<192xf32> -> tensor<2x16x192xf32> loc("h.0.attn.c_attn.bias")
    %v9 = llmc.add %v7, %v8 : tensor<2x16x192xf32> loc("h.0.attn.c_attn")
    %v10 = llmc.slice %v9 starts [0, 0, 0] limits [2, 16, 64] : tensor<2x16x192xf32> -> tensor<2x16x64xf32> loc("h.0.attn.q")
    %v11 = llmc.reshape %v10 : tensor<2x16x64xf32> -> tensor<2x16x4x16xf32> loc("h.0.attn.q")
    %v12 = llmc.transpose %v11 perm [0, 2, 1, 3] : tensor<2x16x4x16xf32> -> tensor<2x4x16x16xf32> loc("h.0.attn.q")
    %v13 = llmc.slice %v9 starts [0, 0, 64] limits [2, 16, 128] : tensor<2x16x192xf32> -> tensor<2x16x64xf32> loc("h.0.attn.k")
    %v14 = llmc.reshape %v13 : tensor<2x16x64xf32> -> tensor<2x16x4x16xf32> loc("h.0.attn.k")
    %v15 = llmc.transpose %v14 perm [0, 2, 1, 3] : tensor<2x16x4x16xf32> -> tensor<2x4x16x16xf32> loc("h.0.attn.k")
    %v16 = llmc.slice %v9 starts [0, 0, 128] limits [2, 16, 192] : tensor<2x16x192xf32> -> tensor<2x16x64xf32> loc("h.0.attn.v")
    %v17 = llmc.reshape %v16 : tensor<2x16x64xf32> -> tensor<2x16x4x16xf32> loc("h.0.attn.v")
    %v18 = llmc.transpose %v17 perm [0, 2, 1, 3] : tensor<2x16x4x16xf32> -> tensor<2x4x16x16xf32> loc("h.0.attn.v")
    %v19 = llmc.attention %v12, %v15, %v18 causal : (tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32> loc("h.0.attn")
    %v20 = llmc.transpose %v19 perm [0, 2, 1, 3] : tensor<2x4x16x16xf32> -> tensor<2x16x4x16xf32> loc("h.0.attn")
    %v21 = llmc.reshape %v20 : tensor<2x16x4x16xf32> -> tensor<2x16x64xf32> loc("h.0.attn")
    %v22 = llmc.matmul %v21, %h_0_attn_c_proj_weight : tensor<2x16x64xf32>, tensor<64x64xf32> -> tensor<2x16x64xf32> loc("h.0.attn.c_proj")
    %v23 = llmc.broadcast %h_0_attn_c_proj_bias dims [2] : tensor<64xf32> -> tensor<2x16x64xf32> loc("h.0.attn.c_proj.bias")
    %v24 = llmc.add %v22, %v23 : tensor<2x16x64xf32> loc("h.0.attn.c_proj")
    %v25 = llmc.add %v5, %v24 : tensor<2x16x64xf32> loc("h.0.residual_1")
    // Block 0: MLP
    %v26 = llmc.layer_norm %v25, %h_0_ln_2_weight, %h_0_ln_2_bias epsilon 1.0e-05 : (tensor<2x16x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<2x16x64xf32> loc("h.0.ln_2")
    %v27 = llmc.matmul %v26, %h_0_mlp_c_fc_weight : tensor<2x16x64xf32>, tensor<64x256xf32> -> tensor<2x16x256xf32> loc("h.0.mlp.c_fc")
    %v28 = llmc.broadcast %h_0_mlp_c_fc_bias dims [2] : tensor<256xf32> -> tensor<2x16x256xf32> loc("h.0.mlp.c_fc.bias")
    %v29 = llmc.add %v27, %v28 : tensor<2x16x256xf32> loc("h.0.mlp.c_fc")
    %v30 = llmc.gelu %v29 tanh : tensor<2x16x256xf32> loc("h.0.mlp.act")
    %v31 = llmc.matmul %v30, %h_0_mlp_c_proj_weight : tensor<2x16x256xf32>, tensor<256x64xf32> -> tensor<2x16x64xf32> loc("h.0.mlp.c_proj")
    %v32 = llmc.broadcast %h_0_mlp_c_proj_bias dims [2] : tensor<64xf32> -> tensor<2x16x64xf32> loc("h.0.mlp.c_proj.bias")
    %v33 = llmc.add %v31, %v32 : tensor<2x16x64xf32> loc("h.0.mlp.c_proj")
    %v34 = llmc.add %v25, %v33 : tensor<2x16x64xf32> loc("h.0.residual_2")
    // Block 1: attention
    %v35 = llmc.layer_norm %v34, %h_1_ln_1_weight, %h_1_ln_1_bias epsilon 1.0e-05 : (tensor<2x16x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<2x16x64xf32> loc("h.1.ln_1")
    %v36 = llmc.matmul %v35, %h_1_attn_c_attn_weight : tensor<2x16x64xf32>, tensor<64x192xf32> -> tensor<2x16x192xf32> loc("h.1.attn.c_attn")
    %v37 = llmc.broadcast %h_1_attn_c_attn_bias dims [2] : tensor<192xf32> -> tensor<2x16x192xf32> loc("h.1.attn.c_attn.bias")
    %v38 = llmc.add %v36, %v37 : tensor<2x16x192xf32> loc("h.1.attn.c_attn")
    %v39 = llmc.slice %v38 starts [0, 0, 0] limits [2, 16, 64] : tensor<2x16x192xf32> -> tensor<2x16x64xf32> loc("h.1.attn.q")
    %v40 = llmc.reshape %v39 : tensor<2x16x64xf32> -> tensor<2x16x4x16xf32> loc("h.1.attn.q")
    %v41 = llmc.transpose %v40 perm [0, 2, 1, 3] : tensor<2x16x4x16xf32> -> tensor<2x4x16x16xf32> loc("h.1.attn.q")
    %v42 = llmc.slice %v38 starts [0, 0, 64] limits [2, 16, 128] : tensor<2x16x192xf32> -> tensor<2x16x64xf32> loc("h.1.attn.k")
    %v43 = llmc.reshape %v42 : tensor<2x16x64xf32> -> tensor<2x16x4x16xf32> loc("h.1.attn.k")
    %v44 = llmc.transpose %v43 perm [0, 2, 1, 3] : tensor<2x16x4x16xf32> -> tensor<2x4x16x16xf32> loc("h.1.attn.k")
    %v45 = llmc.slice %v38 starts [0, 0, 128] limits [2, 16, 192] : tensor<2x16x192xf32> -> tensor<2x16x64xf32> loc("h.1.attn.v")
    %v46 = llmc.reshape %v45 : tensor<2x16x64xf32> -> tensor<2x16x4x16xf32> loc("h.1.attn.v")
    %v47 = llmc.transpose %v46 perm [0, 2, 1, 3] : tensor<2x16x4x16xf32> -> tensor<2x4x16x16xf32> loc("h.1.attn.v")
    %v48 = llmc.attention %v41, %v44, %v47 causal : (tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32> loc("h.1.attn")
    %v49 = llmc.transpose %v48 perm [0, 2, 1, 3] : tensor<2x4x16x16xf32> -> tensor<2x16x4x16xf32> loc("h.1.attn")
    %v50 = llmc.reshape %v49 : tensor<2x16x4x16xf32> -> tensor<2x16x64xf32> loc("h.1.attn")
    %v51 = llmc.matmul %v50, %h_1_attn_c_proj_weight : tensor<2x16x64xf32>, tensor<64x64xf32> -> tensor<2x16x64xf32> loc("h.1.attn.c_proj")
    %v52 = llmc.broadcast %h_1_attn_c_proj_bias dims [2] : tensor<64xf32> -> tensor<2x16x64xf32> loc("h.1.attn.c_proj.bias")
    %v53 = llmc.add %v51, %v52 : tensor<2x16x64xf32> loc("h.1.attn.c_proj")
    %v54 = llmc.add %v34, %v53 : tensor<2x16x64xf32> loc("h.1.residual_1")
    // Block 1: MLP
    %v55 = llmc.layer_norm %v54, %h_1_ln_2_weight, %h_1_ln_2_bias epsilon 1.0e-05 : (tensor<2x16x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<2x16x64xf32> loc("h.1.ln_2")
    %v56 = llmc.matmul %v55, %h_1_mlp_c_fc_weight : tensor<2x16x64xf32>, tensor<64x256xf32> -> tensor<2x16x256xf32> loc("h.1.mlp.c_fc")
    %v57 = llmc.broadcast %h_1_mlp_c_fc_bias dims [2] : tensor<256xf32> -> tensor<2x16x256xf32> loc("h.1.mlp.c_fc.bias")
    %v58 = llmc.add %v56, %v57 : tensor<2x16x256xf32> loc("h.1.mlp.c_fc")
    %v59 = llmc.gelu %v58 tanh : tensor<2x16x256xf32> loc("h.1.mlp.act")
    %v60 = llmc.matmul %v59, %h_1_mlp_c_proj_weight : tensor<2x16x256xf32>, tensor<256x64xf32> -> tensor<2x16x64xf32> loc("h.1.mlp.c_proj")
    %v61 = llmc.broadcast %h_1_mlp_c_proj_bias dims [2] : tensor<64xf32> -> tensor<2x16x64xf32> loc("h.1.mlp.c_proj.bias")
    %v62 = llmc.add %v60, %v61 : tensor<2x16x64xf32> loc("h.1.mlp.c_proj")
    %v63 = llmc.add %v54, %v62 : tensor<2x16x64xf32> loc("h.1.residual_2")
    // Head: tied with wte
    %v64 = llmc.layer_norm %v63, %ln_f_weight, %ln_f_bias epsilon 1.0e-05 : (tensor<2x16x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<2x16x64xf32> loc("ln_f")
    %v65 = llmc.matmul %v64, %wte_weight transpose_b : tensor<2x16x64xf32>, tensor<128x64xf32> -> tensor<2x16x128xf32> loc("lm_head")
    %v66 = llmc.cross_entropy %v65, %targets reduction mean : (tensor<2x16x128xf32>, tensor<2x16xi32>) -> tensor<f32> loc("loss")
    return %v66 : tensor<f32>
  }
}
