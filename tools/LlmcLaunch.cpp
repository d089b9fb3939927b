//===- LlmcLaunch.cpp - llmc launch: N local training processes -----------===//
//
//   llmc launch -n N RUN.toml [train options]
//
// 1. Compiles the run description once, as `llmc compile RUN.toml -o
//    FILE.llmcx` does (into a temporary directory unless -o).
// 2. Starts N `llmc-run FILE.llmcx` (the llmc-run next to this llmc) with
//    RANK=r, WORLD_SIZE=N, LOCAL_RANK=r, MASTER_ADDR=127.0.0.1,
//    MASTER_PORT=<a free port> and NCCL_NVLS_ENABLE=0 (unless set).
// 3. Prints every line of every child prefixed with "[rank r] " (llmc-run
//    prints step lines on rank 0 only, errors on every rank).
// 4. Waits. When a child fails, the others get SIGTERM (SIGKILL 5 s later)
//    and llmc launch exits 1 naming the rank that failed first. When llmc
//    launch itself dies, its children get SIGTERM (PR_SET_PDEATHSIG).
// 5. Ctrl-C or SIGTERM to llmc launch is passed on to every child once (they
//    are in a process group of their own, so a terminal's Ctrl-C reaches
//    them only through here): each finishes its step and stops cleanly
//    (docs/training.md, "A clean stop"); a second signal is passed on too,
//    and stops them at once. Children that stop so (exit 130 or 143) have
//    not failed; llmc launch then exits with the same status.
//
// See docs/distributed.md.
//
//===----------------------------------------------------------------------===//
#include "tools/LlmcDriver.h"

#include "runtime/Sharding.h"
#include "runtime/dist/Rendezvous.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>

namespace llmc::driver {

namespace {

namespace fs = std::filesystem;

/// The llmc-run beside this executable.
std::string siblingLlmcRun() {
  std::error_code error;
  fs::path self = fs::read_symlink("/proc/self/exe", error);
  if (error)
    return "";
  return (self.parent_path() / "llmc-run").string();
}

struct Child {
  pid_t pid = -1;
  int out = -1;         ///< read end of its stdout+stderr
  std::string partial;  ///< the unfinished last line
  bool exited = false;
  int status = 0;
};

void printLines(int rank, Child &child, const char *data, size_t size,
                bool flush) {
  child.partial.append(data, size);
  size_t start = 0;
  for (size_t nl; (nl = child.partial.find('\n', start)) != std::string::npos;
       start = nl + 1)
    std::printf("[rank %d] %.*s\n", rank, static_cast<int>(nl - start),
                child.partial.data() + start);
  child.partial.erase(0, start);
  if (flush && !child.partial.empty()) {
    std::printf("[rank %d] %s\n", rank, child.partial.c_str());
    child.partial.clear();
  }
  std::fflush(stdout);
}

std::string describeExit(int status) {
  if (WIFEXITED(status))
    return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status))
    return std::string("was killed by signal ") +
           std::to_string(WTERMSIG(status)) + " (" +
           strsignal(WTERMSIG(status)) + ")";
  return "ended abnormally";
}

/// The exit status of a child that stopped cleanly on a signal
/// (stopExitCode): not a failure.
bool stoppedStatus(int status) {
  return WIFEXITED(status) &&
         (WEXITSTATUS(status) == llmc::rt::stopExitCode(SIGINT) ||
          WEXITSTATUS(status) == llmc::rt::stopExitCode(SIGTERM));
}

bool failedStatus(int status) {
  return (!WIFEXITED(status) || WEXITSTATUS(status) != 0) &&
         !stoppedStatus(status);
}

/// Signals llmc launch received and has not passed on yet.
volatile sig_atomic_t pendingSignal = 0;
extern "C" void onLauncherSignal(int signal) { pendingSignal = signal; }

/// Removes the temporary directory of the artifact (when there is one).
struct Cleanup {
  std::string dir;
  ~Cleanup() {
    std::error_code error;
    if (!dir.empty())
      fs::remove_all(dir, error);
  }
};

/// Step 1: compiles the run once and writes the artifact to -o or into a
/// temporary directory (`cleanup` removes it).
int compileForLaunch(const LaunchCommand &options, std::string &artifact,
                     Cleanup &cleanup) {
  Session session;
  CompileRequest request;
  request.input = options.input;
  request.stopAfter = "final";
  request.devices = options.device; // llmc-run's --device
  if (llmc::classifySource(options.input) == llmc::SourceKind::Mlir) {
    llvm::errs() << "llmc launch: expected a run description (.toml) or a "
                    "Hugging Face config.json, got '"
                 << options.input << "'\n";
    return kExitUsage;
  }
  Compiled compiled;
  if (int code = compileModule(session, request, compiled))
    return code;
  llmc::rt::Executable exe;
  if (int code = buildArtifact(compiled, options.input, exe))
    return code;
  if (exe.ranks.size() != static_cast<size_t>(options.processes)) {
    llvm::errs() << "llmc launch: " << options.input << " has a mesh of "
                 << exe.ranks.size() << " rank(s) "
                 << llmc::rt::formatMesh(exe.mesh) << "; launch it with -n "
                 << exe.ranks.size() << " (one process per rank)\n";
    return kExitUsage;
  }
  artifact = options.output;
  if (artifact.empty()) {
    const char *tmp = std::getenv("TMPDIR");
    std::string pattern =
        std::string(tmp && *tmp ? tmp : "/tmp") + "/llmc-launch-XXXXXX";
    if (!::mkdtemp(pattern.data())) {
      llvm::errs() << "llmc launch: cannot create a temporary directory: "
                   << std::strerror(errno) << "\n";
      return kExitRejected;
    }
    cleanup.dir = pattern;
    artifact = cleanup.dir + "/run.llmcx";
  }
  return writeArtifact(exe, artifact);
}

/// The command line of every child: llmc-run, the artifact and the train
/// options given to llmc launch.
std::vector<std::string> childArguments(const LaunchCommand &options,
                                        const std::string &llmcRun,
                                        const std::string &artifact) {
  std::vector<std::string> args = {llmcRun, artifact};
  auto pass = [&](const char *flag, const std::string &value) {
    if (!value.empty()) {
      args.push_back(flag);
      args.push_back(value);
    }
  };
  pass("--metrics", options.metrics);
  pass("--resume", options.resume);
  pass("--weights", options.weights);
  for (const std::string &data : options.data)
    pass("--data", data);
  for (const std::string &val : options.val)
    pass("--val", val);
  pass("--tokenizer", options.tokenizer);
  pass("--checkpoint-dir", options.checkpointDir);
  pass("--device", options.device);
  pass("--trace", options.trace);
  pass("--trace-steps", options.traceSteps);
  if (options.steps > 0)
    pass("--steps", std::to_string(options.steps));
  if (options.sampleTokens >= 0)
    pass("--sample-tokens", std::to_string(options.sampleTokens));
  if (options.threads > 0)
    pass("--threads", std::to_string(options.threads));
  if (options.nccl)
    args.push_back("--nccl");
  return args;
}

/// In a child, after fork(): its environment and output, then llmc-run.
[[noreturn]] void execChild(int rank, int n, int port, pid_t parent,
                            int outFd, const std::string &llmcRun,
                            std::vector<std::string> args) {
  // A launcher that dies (killed, out of time) takes its ranks with it
  // instead of leaving them waiting at a collective.
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);
  // Its own process group: a terminal's Ctrl-C reaches the ranks once,
  // through the launcher, not twice (which would stop them at once).
  ::setpgid(0, 0);
  if (::getppid() != parent)
    ::_exit(1);
  ::dup2(outFd, STDOUT_FILENO);
  ::dup2(outFd, STDERR_FILENO);
  ::setenv("RANK", std::to_string(rank).c_str(), 1);
  ::setenv("WORLD_SIZE", std::to_string(n).c_str(), 1);
  ::setenv("LOCAL_RANK", std::to_string(rank).c_str(), 1);
  ::setenv("MASTER_ADDR", "127.0.0.1", 1);
  ::setenv("MASTER_PORT", std::to_string(port).c_str(), 1);
  // The lent H200 machines need NVLink SHARP off; a value set by the user
  // wins.
  ::setenv("NCCL_NVLS_ENABLE", "0", 0);
  std::vector<char *> argv;
  for (std::string &arg : args)
    argv.push_back(arg.data());
  argv.push_back(nullptr);
  ::execv(llmcRun.c_str(), argv.data());
  std::fprintf(stderr, "llmc launch: cannot run %s: %s\n", llmcRun.c_str(),
               std::strerror(errno));
  ::_exit(127);
}

/// Step 2: forks the N children, each reading nothing and writing into a
/// pipe of its own.
int startChildren(int n, int port, const std::string &llmcRun,
                  const std::vector<std::string> &args,
                  std::vector<Child> &children) {
  children.assign(n, Child());
  for (int rank = 0; rank < n; ++rank) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) {
      llvm::errs() << "llmc launch: pipe: " << std::strerror(errno) << "\n";
      return kExitRejected;
    }
    pid_t parent = ::getpid();
    pid_t pid = ::fork();
    if (pid < 0) {
      llvm::errs() << "llmc launch: fork: " << std::strerror(errno) << "\n";
      return kExitRejected;
    }
    if (pid == 0)
      execChild(rank, n, port, parent, fds[1], llmcRun, args);
    ::close(fds[1]);
    children[rank].pid = pid;
    children[rank].out = fds[0];
  }
  return kExitOk;
}

/// Prints what the children wrote since the last call (waiting up to
/// 100 ms), closing the pipes that ended.
void relayOutput(std::vector<Child> &children) {
  std::vector<pollfd> fds;
  std::vector<int> ranks;
  for (int r = 0; r < static_cast<int>(children.size()); ++r)
    if (children[r].out >= 0) {
      fds.push_back({children[r].out, POLLIN, 0});
      ranks.push_back(r);
    }
  if (!fds.empty())
    (void)::poll(fds.data(), fds.size(), 100);
  else
    ::usleep(100 * 1000);
  for (size_t i = 0; i < fds.size(); ++i) {
    if (!fds[i].revents)
      continue;
    Child &child = children[ranks[i]];
    char buffer[4096];
    ssize_t got = ::read(child.out, buffer, sizeof(buffer));
    if (got > 0) {
      printLines(ranks[i], child, buffer, static_cast<size_t>(got), false);
    } else if (got == 0 || (errno != EINTR && errno != EAGAIN)) {
      printLines(ranks[i], child, "", 0, true);
      ::close(child.out);
      child.out = -1;
    }
  }
}

/// How the children ended: the first that failed (-1: none) and the last
/// signal passed on to them (0: none).
struct LaunchEnd {
  int firstFailed = -1;
  int stopSignal = 0;
};

/// Step 3: relays output and signals until every child has exited and
/// closed its pipe; a failed child stops the others (SIGTERM, SIGKILL 5 s
/// later).
LaunchEnd superviseChildren(std::vector<Child> &children) {
  using Clock = std::chrono::steady_clock;
  LaunchEnd end;
  Clock::time_point killAt{};
  bool killed = false;
  auto running = [&] {
    for (const Child &c : children)
      if (!c.exited || c.out >= 0)
        return true;
    return false;
  };
  while (running()) {
    if (int signal = pendingSignal) {
      pendingSignal = 0;
      end.stopSignal = signal;
      for (Child &child : children)
        if (!child.exited)
          ::kill(child.pid, signal);
    }
    relayOutput(children);
    for (int r = 0; r < static_cast<int>(children.size()); ++r) {
      Child &child = children[r];
      if (child.exited)
        continue;
      int status = 0;
      if (::waitpid(child.pid, &status, WNOHANG) != child.pid)
        continue;
      child.exited = true;
      child.status = status;
      if (failedStatus(status) && end.firstFailed < 0) {
        end.firstFailed = r;
        // One rank is gone: the others would wait for it at their next
        // collective. Stop them.
        for (Child &other : children)
          if (!other.exited)
            ::kill(other.pid, SIGTERM);
        killAt = Clock::now() + std::chrono::seconds(5);
      }
    }
    if (end.firstFailed >= 0 && !killed && Clock::now() > killAt) {
      for (Child &other : children)
        if (!other.exited)
          ::kill(other.pid, SIGKILL);
      killed = true;
    }
  }
  return end;
}

/// Step 4: the exit status of llmc launch, and what it says.
int reportEnd(const std::vector<Child> &children, const LaunchEnd &end) {
  if (end.firstFailed < 0) {
    for (const Child &child : children)
      if (stoppedStatus(child.status)) {
        llvm::errs() << "llmc launch: the ranks stopped on "
                     << (end.stopSignal == SIGTERM ? "SIGTERM" : "SIGINT")
                     << " (see rank 0's lines for the checkpoint)\n";
        return WEXITSTATUS(child.status);
      }
    return kExitOk;
  }
  llvm::errs() << "llmc launch: rank " << end.firstFailed << " "
               << describeExit(children[end.firstFailed].status);
  std::string stopped;
  for (int r = 0; r < static_cast<int>(children.size()); ++r)
    if (r != end.firstFailed && failedStatus(children[r].status) &&
        WIFSIGNALED(children[r].status))
      stopped += (stopped.empty() ? "" : ", ") + std::to_string(r);
  if (!stopped.empty())
    llvm::errs() << "; stopped rank(s) " << stopped;
  llvm::errs() << "\n";
  return kExitRejected;
}

} // namespace

int runLaunch(const LaunchCommand &options) {
  int n = options.processes;
  if (n < 1) {
    llvm::errs() << "llmc launch: -n N (the number of processes, one per "
                    "GPU) is required and must be at least 1, got "
                 << n << "\n";
    return kExitUsage;
  }
  std::string llmcRun = siblingLlmcRun();
  if (llmcRun.empty() || ::access(llmcRun.c_str(), X_OK) != 0) {
    llvm::errs() << "llmc launch: cannot find llmc-run next to llmc ('"
                 << llmcRun << "'); it is built with llmc\n";
    return kExitRejected;
  }
  // 1. Compile once.
  std::string artifact;
  Cleanup cleanup;
  if (int code = compileForLaunch(options, artifact, cleanup))
    return code;
  // 2. The children, after the signal handlers (a signal between two forks
  //    is passed on by the loop of step 3).
  std::vector<std::string> args = childArguments(options, llmcRun, artifact);
  int port = options.port > 0 ? options.port.getValue()
                              : llmc::rt::findFreePort();
  if (port <= 0) {
    llvm::errs() << "llmc launch: found no free TCP port on 127.0.0.1 for "
                    "the rendezvous; pass --master-port\n";
    return kExitRejected;
  }
  std::fflush(stdout);
  std::fflush(stderr);
  {
    struct sigaction action {};
    action.sa_handler = onLauncherSignal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    sigaction(SIGINT, &action, nullptr);
    sigaction(SIGTERM, &action, nullptr);
  }
  std::vector<Child> children;
  if (int code = startChildren(n, port, llmcRun, args, children))
    return code;
  // 3. Their output, and their ends; 4. the verdict.
  LaunchEnd end = superviseChildren(children);
  return reportEnd(children, end);
}

} // namespace llmc::driver
