# cmake -P script behind the tokenizer's Python tests (test/text/): checks
# that .venv holds the packages of test/requirements.txt (tools/dev.sh test
# installs them), then runs SCRIPT with ARGS (a ;-list). Inputs: NAME, VENV,
# REQUIREMENTS, SCRIPT, ARGS. A missing or stale .venv fails the test, as in
# test/parity/RunParity.cmake: a machine without the reference package has
# not passed the comparison.

set(python "${VENV}/bin/python")
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

string(REPLACE "|" ";" arguments "${ARGS}")
execute_process(COMMAND "${python}" -u "${SCRIPT}" ${arguments}
  RESULT_VARIABLE result)
if(NOT result EQUAL 0)
  get_filename_component(script_name "${SCRIPT}" NAME)
  message(FATAL_ERROR "${script_name} failed (exit status ${result})")
endif()
