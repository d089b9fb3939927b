/*===- llmc.h - the C API of the llmc runtime ------------------------------===
 *
 * Load an Executable written by `llmc compile FILE -o model.llmcx`, create a
 * session, bind its arguments (parameters and inputs) by name, run it and
 * read its outputs. Link with libllmc_runtime; no MLIR, no LLVM, no Python.
 *
 * Every function returning llmc_status returns LLMC_OK on success; on
 * failure, llmc_last_error() returns a message for the user (what went
 * wrong and how to fix it) until the next call on the same thread.
 * Objects are not thread-safe: use one session per thread.
 * See docs/runtime-api.md.
 *
 *===----------------------------------------------------------------------===*/
#ifndef LLMC_H
#define LLMC_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum llmc_status {
  LLMC_OK = 0,
  LLMC_INVALID_ARGUMENT = 1,
  LLMC_NOT_FOUND = 2,
  LLMC_DATA_LOSS = 3,
  LLMC_UNIMPLEMENTED = 4,
  LLMC_UNAVAILABLE = 5,
  LLMC_INTERNAL = 6,
  LLMC_CANCELLED = 7
} llmc_status;

/* Element types; values match the Executable format. i1 is one byte. */
typedef enum llmc_dtype {
  LLMC_F32 = 0,
  LLMC_F64 = 1,
  LLMC_BF16 = 2,
  LLMC_F16 = 3,
  LLMC_I32 = 4,
  LLMC_I64 = 5,
  LLMC_I1 = 6
} llmc_dtype;

typedef enum llmc_role {
  LLMC_PARAMETER = 0,
  LLMC_INPUT = 1,
  LLMC_OPTIMIZER_STATE = 2 /* AdamW moments of a training step */
} llmc_role;

#define LLMC_MAX_RANK 8

/* What an argument or output is. `name` stays valid as long as the
 * executable. `shape` is the GLOBAL shape: a program sharded over several
 * ranks takes and returns whole tensors, split and assembled by the
 * session. */
typedef struct llmc_tensor_info {
  const char *name;
  llmc_role role; /* outputs: LLMC_INPUT */
  llmc_dtype dtype;
  int rank;
  int64_t shape[LLMC_MAX_RANK];
  size_t bytes;
} llmc_tensor_info;

typedef struct llmc_executable llmc_executable;
typedef struct llmc_session llmc_session;

typedef struct llmc_session_options {
  unsigned threads; /* 0: every core */
} llmc_session_options;

/* The runtime's version, "MAJOR.MINOR.PATCH". */
const char *llmc_version(void);
/* The message of the last failed call on this thread ("" if none). */
const char *llmc_last_error(void);

llmc_status llmc_executable_load(const char *path, llmc_executable **out);
void llmc_executable_free(llmc_executable *executable);
size_t llmc_executable_num_arguments(const llmc_executable *executable);
llmc_status llmc_executable_argument(const llmc_executable *executable,
                                     size_t index, llmc_tensor_info *info);
size_t llmc_executable_num_outputs(const llmc_executable *executable);
llmc_status llmc_executable_output(const llmc_executable *executable,
                                   size_t index, llmc_tensor_info *info);

/* `options` may be NULL. The executable must outlive the session. */
llmc_status llmc_session_create(const llmc_executable *executable,
                                const llmc_session_options *options,
                                llmc_session **out);
void llmc_session_free(llmc_session *session);
/* Copies `bytes` bytes of `data` into the argument called `name`; `dtype`
 * and `shape` (the global shape) must match the argument's. */
llmc_status llmc_session_set_argument(llmc_session *session, const char *name,
                                      llmc_dtype dtype, const int64_t *shape,
                                      int rank, const void *data,
                                      size_t bytes);
llmc_status llmc_session_run(llmc_session *session);
/* Copies output `index` (the whole, global tensor) into `data`, which
 * holds `bytes` bytes (exactly the output's size). */
llmc_status llmc_session_read_output(const llmc_session *session,
                                     size_t index, void *data, size_t bytes);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* LLMC_H */
