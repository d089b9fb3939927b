# cmake -P script behind the Python tests (the JAX parity, the Hugging Face,
# tokenizer and recipe tests): checks that the Python packages of
# test/requirements.txt are installed in .venv (by tools/dev.sh test), then
# runs SCRIPT. Inputs: NAME (the test's name, for messages), VENV,
# REQUIREMENTS, SCRIPT, and either ARGS (the script's arguments,
# '|'-separated: CMake would split a ';'-list before the script sees it) or
# LLMC, LLMC_RUN, EXAMPLES (optional) and WORKDIR, the options the parity
# scripts take. A missing or stale .venv fails the test: the
# comparison with JAX is part of the suite, and a machine without it has not
# passed it.

set(python "${VENV}/bin/python")
if(NOT DEFINED NAME)
  set(NAME jax-parity-forward)
endif()
get_filename_component(script_name "${SCRIPT}" NAME)

# message() without a mode prints the line as it is (FATAL_ERROR would wrap
# it), so the hint stays one greppable line.
function(fail_missing_packages why)
  message("${why}: run tools/dev.sh test to install the Python test packages")
  message(FATAL_ERROR "${NAME} needs the Python test packages")
endfunction()

if(NOT EXISTS "${python}")
  fail_missing_packages("${python} not found")
endif()
file(SHA256 "${REQUIREMENTS}" wanted)
set(stamp "${VENV}/.requirements.sha256")
if(EXISTS "${stamp}")
  file(STRINGS "${stamp}" installed LIMIT_COUNT 1)
endif()
if(NOT EXISTS "${stamp}" OR NOT installed STREQUAL wanted)
  fail_missing_packages(
    "${VENV} does not hold the packages of ${REQUIREMENTS} (stale or no ${stamp})")
endif()

if(DEFINED ARGS)
  string(REPLACE "|" ";" arguments "${ARGS}")
else()
  set(arguments --llmc "${LLMC}" --llmc-run "${LLMC_RUN}")
  # EXAMPLES is optional (the Hugging Face tests write their own models).
  if(DEFINED EXAMPLES)
    list(APPEND arguments --examples "${EXAMPLES}")
  endif()
  list(APPEND arguments --workdir "${WORKDIR}")
endif()
execute_process(COMMAND "${python}" -u "${SCRIPT}" ${arguments}
  RESULT_VARIABLE result)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "${script_name} failed (exit status ${result})")
endif()
