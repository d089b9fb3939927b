# `ninja scaling-deploy` (bench/CMakeLists.txt): the artifacts of
# bench/scaling.sh and bench/meshes.sh, compiled on this machine (the GPU
# machine has no compiler). Each run is a base run description with its
# [parallel] section (and for weak scaling its batch) changed:
#
#   NAME:BASE:MESH:BATCH   MESH = "dp=2,zero=1" ("-" for one GPU),
#                          BATCH = the global batch_size ("-": as BASE)
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
file(MAKE_DIRECTORY "${DEST}")
foreach(run ${runs})
  string(REPLACE ":" ";" parts ${run})
  list(GET parts 0 name)
  list(GET parts 1 base)
  list(GET parts 2 mesh)
  list(GET parts 3 batch)
  file(READ "${SOURCE_DIR}/${base}.toml" text)
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
  execute_process(COMMAND "${LLMC}" plan "${DEST}/${name}.toml"
    RESULT_VARIABLE result OUTPUT_FILE "${DEST}/${name}.plan.txt"
    ERROR_VARIABLE err)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "llmc plan ${name}.toml failed:\n${err}")
  endif()
  message(STATUS "scaling-deploy: ${out}")
endforeach()
