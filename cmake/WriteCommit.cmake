# Writes OUTPUT (a C++ fragment) with the commit of the checkout at ROOT:
# `#define LLMC_COMMIT "<12 hex digits>[-modified]"`, or "unknown" outside a
# git checkout (a source tarball). Run at every build by the llmc-commit
# target (runtime/CMakeLists.txt); the file is rewritten only when its text
# changes, so an unchanged commit rebuilds nothing.
execute_process(COMMAND git -C ${ROOT} rev-parse --short=12 HEAD
  OUTPUT_VARIABLE commit OUTPUT_STRIP_TRAILING_WHITESPACE
  RESULT_VARIABLE failed ERROR_QUIET)
if(failed OR commit STREQUAL "")
  set(commit "unknown")
else()
  # Tracked files changed since the commit: the binary is not that commit.
  execute_process(COMMAND git -C ${ROOT} status --porcelain --untracked-files=no
    OUTPUT_VARIABLE changes OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(NOT changes STREQUAL "")
    string(APPEND commit "-modified")
  endif()
endif()
set(text "#define LLMC_COMMIT \"${commit}\"\n")
if(EXISTS ${OUTPUT})
  file(READ ${OUTPUT} old)
endif()
if(NOT old STREQUAL text)
  file(WRITE ${OUTPUT} "${text}")
endif()
