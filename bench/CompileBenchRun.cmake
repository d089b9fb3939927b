# cmake -P script behind `ninja bench-deploy`: compiles TOML with LLMC into
# DEST/gpt2-124m.llmcx and records the compile's wall time
# (compile-seconds.txt) and the buffer plan's arena (arena-bytes.txt).
string(TIMESTAMP start "%s%f")
execute_process(COMMAND "${LLMC}" compile "${TOML}" -o "${DEST}/gpt2-124m.llmcx"
  RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE err)
string(TIMESTAMP end "%s%f")
if(NOT result EQUAL 0)
  message(FATAL_ERROR "llmc compile ${TOML} failed:\n${out}${err}")
endif()
math(EXPR ms "(${end} - ${start}) / 1000")
math(EXPR seconds "${ms} / 1000")
math(EXPR tenths "(${ms} % 1000) / 100")
file(WRITE "${DEST}/compile-seconds.txt" "${seconds}.${tenths}\n")
string(REGEX MATCH "([0-9]+) bytes of buffers" match "${out}${err}")
file(WRITE "${DEST}/arena-bytes.txt" "${CMAKE_MATCH_1}\n")
message(STATUS "bench-deploy: ${out}${err}")
