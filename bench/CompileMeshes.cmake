# `ninja scaling-deploy` (bench/CMakeLists.txt): the artifacts of
# bench/scaling.sh and bench/meshes.sh, compiled on this machine (the GPU
# machine has no compiler). Each run is a base run description with its
# [parallel] section (and for weak scaling its batch) changed:
#
#   NAME:BASE:MESH:BATCH   MESH = "dp=2,zero=1" ("-" for one GPU; "mb=4"
#                          in it sets [train] microbatches = 4),
#                          BATCH = the global batch_size ("-": as BASE)
#
# -DSET=virtual: the meshes of bench/virtual_meshes.sh instead (every mesh
# of issue #26 on virtual ranks of one GPU; no plans written).
#
# Writes DEST/NAME.toml, DEST/NAME.llmcx and DEST/NAME.plan.txt (llmc plan:
# the buffer plan and the communication per step, read by the scripts).
set(runs
  gpt2-1gpu:gpt2-124m:-:-
  gpt2-dp2:gpt2-124m:dp=2:-
  gpt2-dp2-zero1:gpt2-124m:dp=2,zero=1:-
  gpt2-dp2-zero3:gpt2-124m:dp=2,zero=3:-
  gpt2-tp2:gpt2-124m:tp=2:-
  gpt2-dp2-weak:gpt2-124m:dp=2:32
  llama-1gpu:llama-1b:-:-
  llama-dp2:llama-1b:dp=2:-
  llama-dp2-zero1:llama-1b:dp=2,zero=1:-
  llama-dp2-zero3:llama-1b:dp=2,zero=3:-
  llama-tp2:llama-1b:tp=2:-
  llama-dp2-weak:llama-1b:dp=2:16
  moe-1gpu:moe-small:-:-
  moe-ep2:moe-small:ep=2:-
  long-1gpu:llama-long:-:-
  long-cp2:llama-long:cp=2:-)
if(SET STREQUAL "virtual")
  set(runs)
  foreach(model gpt2:gpt2-124m llama:llama-1b)
    string(REPLACE ":" ";" pair ${model})
    list(GET pair 0 short)
    list(GET pair 1 base)
    list(APPEND runs
      ${short}-1gpu:${base}:-:-
      ${short}-dp2:${base}:dp=2:-
      ${short}-tp2:${base}:tp=2:-
      ${short}-dp2-tp2:${base}:dp=2,tp=2:-
      ${short}-tp2-sp:${base}:tp=2,sp=true:-
      ${short}-dp2-zero1:${base}:dp=2,zero=1:-
      ${short}-dp2-zero2:${base}:dp=2,zero=2:-
      ${short}-dp2-zero3:${base}:dp=2,zero=3:-
      ${short}-cp2:${base}:cp=2:-
      ${short}-1gpu-mb4:${base}:mb=4:-
      ${short}-pp2:${base}:pp=2,mb=4:-
      ${short}-dp2-pp2:${base}:dp=2,pp=2,mb=4:-)
  endforeach()
  list(APPEND runs moe-1gpu:moe-small:-:- moe-ep2:moe-small:ep=2:-)
endif()
file(MAKE_DIRECTORY "${DEST}")
foreach(run ${runs})
  string(REPLACE ":" ";" parts ${run})
  list(GET parts 0 name)
  list(GET parts 1 base)
  list(GET parts 2 mesh)
  list(GET parts 3 batch)
  file(READ "${SOURCE_DIR}/${base}.toml" text)
  if(mesh MATCHES "mb=([0-9]+)")
    set(microbatches ${CMAKE_MATCH_1})
    string(REGEX REPLACE ",?mb=[0-9]+" "" mesh "${mesh}")
    if(mesh STREQUAL "")
      set(mesh "-")
    endif()
    string(REPLACE "[train]\n" "[train]\nmicrobatches = ${microbatches}\n"
      text "${text}")
  endif()
  if(NOT mesh STREQUAL "-")
    string(REPLACE "," "\n" lines "${mesh}")
    string(REPLACE "devices = \"cuda\"" "devices = \"cuda\"\n${lines}"
      text "${text}")
  endif()
  if(NOT batch STREQUAL "-")
    string(REGEX REPLACE "batch_size = [0-9]+" "batch_size = ${batch}"
      text "${text}")
  endif()
  file(WRITE "${DEST}/${name}.toml" "${text}")
  execute_process(COMMAND "${LLMC}" compile "${DEST}/${name}.toml"
      -o "${DEST}/${name}.llmcx"
    RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "llmc compile ${name}.toml failed:\n${out}${err}")
  endif()
  if(SET STREQUAL "virtual")
    message(STATUS "virtual-meshes: ${out}")
    continue()
  endif()
  execute_process(COMMAND "${LLMC}" plan "${DEST}/${name}.toml"
    RESULT_VARIABLE result OUTPUT_FILE "${DEST}/${name}.plan.txt"
    ERROR_VARIABLE err)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "llmc plan ${name}.toml failed:\n${err}")
  endif()
  message(STATUS "scaling-deploy: ${out}")
endforeach()
