# cmake -P script behind the `runtime-no-mlir` test. Inputs: COMPILE_COMMANDS,
# RUNTIME_DIR, RUNTIME_LIB, and optionally FORBIDDEN_SYMBOLS (names, "|"
# separated, that RUNTIME_LIB must not define: what belongs to codegen).
# Fails with the offending file, command or symbol.

set(leak_regex "(/include/(mlir|llvm|llvm-c)([/ ]|$))|(llvm-[0-9]+/include)")

# 1. Sources: no #include of an LLVM/MLIR header.
file(GLOB_RECURSE sources "${RUNTIME_DIR}/*.h" "${RUNTIME_DIR}/*.cpp"
     "${RUNTIME_DIR}/*.c" "${RUNTIME_DIR}/*.cu" "${RUNTIME_DIR}/*.cuh")
if(NOT sources)
  message(FATAL_ERROR "no runtime sources found under ${RUNTIME_DIR}")
endif()
foreach(source IN LISTS sources)
  file(STRINGS "${source}" includes REGEX "^[ \t]*#[ \t]*include[ \t]*[<\"](mlir|llvm|llvm-c)/")
  if(includes)
    message(FATAL_ERROR "${source} includes an LLVM/MLIR header: ${includes}")
  endif()
endforeach()

# 2. Compile commands: no runtime file is compiled with an LLVM/MLIR path.
file(READ "${COMPILE_COMMANDS}" json)
string(JSON count LENGTH "${json}")
math(EXPR last "${count} - 1")
set(checked 0)
foreach(i RANGE ${last})
  string(JSON file GET "${json}" ${i} file)
  if(NOT file MATCHES "^${RUNTIME_DIR}/")
    continue()
  endif()
  string(JSON command GET "${json}" ${i} command)
  if(command MATCHES "${leak_regex}")
    message(FATAL_ERROR "${file} is compiled with an LLVM/MLIR include path:\n${command}")
  endif()
  math(EXPR checked "${checked} + 1")
endforeach()
if(checked EQUAL 0)
  message(FATAL_ERROR "no runtime compile command in ${COMPILE_COMMANDS}")
endif()

# 3. The built library loads no LLVM/MLIR library.
find_program(READELF NAMES readelf llvm-readelf REQUIRED)
execute_process(COMMAND ${READELF} -d "${RUNTIME_LIB}"
                OUTPUT_VARIABLE dynamic RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "readelf failed on ${RUNTIME_LIB}")
endif()
if(dynamic MATCHES "lib(LLVM|MLIR)[^ \]]*")
  message(FATAL_ERROR "${RUNTIME_LIB} needs ${CMAKE_MATCH_0}")
endif()
# 4. The library defines none of FORBIDDEN_SYMBOLS (codegen's pieces:
# codegen/cuda/ makes the kernel plan, the runtime only reads it).
if(FORBIDDEN_SYMBOLS)
  find_program(NM NAMES nm llvm-nm REQUIRED)
  execute_process(COMMAND ${NM} -D -C --defined-only "${RUNTIME_LIB}"
                  OUTPUT_VARIABLE symbols RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "nm failed on ${RUNTIME_LIB}")
  endif()
  string(REPLACE "|" ";" forbidden "${FORBIDDEN_SYMBOLS}")
  foreach(name IN LISTS forbidden)
    string(REGEX MATCH "[^\n]*[ :]${name}\\([^\n]*" found "${symbols}")
    if(found)
      message(FATAL_ERROR "${RUNTIME_LIB} defines ${name}, which belongs to "
        "codegen/cuda/ (llmc_codegen_cuda): ${found}")
    endif()
  endforeach()
endif()
message(STATUS "runtime is free of MLIR/LLVM: ${checked} compile commands, "
               "the sources and ${RUNTIME_LIB} checked")
