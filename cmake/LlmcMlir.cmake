# Per-folder access to MLIR/LLVM. Compiler folders call llmc_use_mlir() at the
# top of their CMakeLists.txt; runtime/ never does, and checks that it stayed
# clean with llmc_assert_no_mlir().

macro(llmc_use_mlir)
  include_directories(SYSTEM ${LLVM_INCLUDE_DIRS} ${MLIR_INCLUDE_DIRS})
  include_directories(${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR})
  separate_arguments(_llmc_llvm_defs NATIVE_COMMAND ${LLVM_DEFINITIONS})
  add_definitions(${_llmc_llvm_defs})
endmacro()

# Fails the configuration when TARGET can see an LLVM/MLIR header or links an
# LLVM/MLIR library, directly or through the folder it is declared in.
function(llmc_assert_no_mlir target)
  get_target_property(_inc ${target} INCLUDE_DIRECTORIES)
  get_target_property(_iinc ${target} INTERFACE_INCLUDE_DIRECTORIES)
  get_target_property(_libs ${target} LINK_LIBRARIES)
  get_directory_property(_dir_inc INCLUDE_DIRECTORIES)
  foreach(_item IN LISTS _inc _iinc _libs _dir_inc)
    if(_item MATCHES "llvm|mlir|LLVM|MLIR")
      message(FATAL_ERROR
        "${target} must build without MLIR/LLVM, but it sees '${_item}'. "
        "The runtime ships to machines without LLVM: move the code that "
        "needs MLIR to codegen/ or tools/.")
    endif()
  endforeach()
endfunction()
