# cmake -P script behind `ninja cuda-deploy`: copies BINARY (and BINARY2,
# and the files DATA and DATA2, when given) and the shared
# libraries it loads into DEST, except those every Linux machine has (libc,
# libstdc++, ...) and NVRTC, cuBLAS(Lt) and NCCL, which are hundreds of MB and
# come with the CUDA toolkit of the GPU machine. Run the result with
# LD_LIBRARY_PATH=DEST:/usr/local/cuda/lib64 (docs/cuda.md).
file(REMOVE_RECURSE "${DEST}")
file(MAKE_DIRECTORY "${DEST}")
# BINARIES (a list) or BINARY and BINARY2; DATA may be a list too.
set(binaries ${BINARIES})
if(BINARY)
  list(APPEND binaries "${BINARY}")
endif()
if(BINARY2)
  list(APPEND binaries "${BINARY2}")
endif()
list(GET binaries 0 first)
file(GET_RUNTIME_DEPENDENCIES
  EXECUTABLES ${binaries}
  RESOLVED_DEPENDENCIES_VAR resolved
  UNRESOLVED_DEPENDENCIES_VAR unresolved
  POST_EXCLUDE_REGEXES
    "/(libc|libm|libdl|librt|libpthread|libgcc_s|libstdc\\+\\+)\\.so"
    "/ld-linux"
    "/lib(nvrtc|cublas|cublasLt|nccl)[.-]")
if(unresolved)
  message(FATAL_ERROR "cuda-deploy: unresolved libraries: ${unresolved}")
endif()
file(COPY ${binaries} DESTINATION "${DEST}")
# DATA may be a list; DATA2 one more file.
foreach(data IN LISTS DATA DATA2)
  file(COPY "${data}" DESTINATION "${DEST}")
endforeach()
set(total 0)
foreach(library IN LISTS resolved)
  get_filename_component(name "${library}" NAME)
  # Copy the file the link points to, under the name the loader asks for.
  file(REAL_PATH "${library}" real)
  file(COPY_FILE "${real}" "${DEST}/${name}")
  file(SIZE "${real}" size)
  math(EXPR total "${total} + ${size}")
  message(STATUS "cuda-deploy: ${name}")
endforeach()
file(SIZE "${first}" size)
math(EXPR total "(${total} + ${size}) / 1048576")
message(STATUS "cuda-deploy: ${DEST} holds about ${total} MiB")
