// The atomic writer against what is not a plain file (issue #27): a device
// or FIFO is written through, never replaced by a regular file, and its
// write errors come back (ENOSPC from /dev/full); a symbolic link is written
// through and kept; a directory is refused. sameFile and checkNotAnInput,
// which refuse an output that is one of the inputs; the XXH64 checkpoints
// record, against the reference implementation's values.
#include "runtime/io/File.h"
#include "runtime/io/Hash.h"

#include "IoTestUtil.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <string>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

namespace rt = llmc::rt;
using llmc::test::TempDir;

namespace {

bool isCharacterDevice(const std::string &path) {
  struct stat info;
  return ::lstat(path.c_str(), &info) == 0 && S_ISCHR(info.st_mode);
}

std::string contents(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(AtomicFile, ADeviceIsWrittenThroughNotReplaced) {
  // /dev/null takes the bytes and stays a device (as root, rename() would
  // have replaced the node with a regular file).
  ASSERT_TRUE(isCharacterDevice("/dev/null"));
  rt::Status status = rt::writeFileAtomically("/dev/null", "abc", 3);
  EXPECT_TRUE(status) << status.message();
  EXPECT_TRUE(isCharacterDevice("/dev/null"));
  EXPECT_FALSE(std::filesystem::exists("/dev/null.tmp"));
}

TEST(AtomicFile, AFullDeviceReportsTheWriteError) {
  if (!isCharacterDevice("/dev/full"))
    GTEST_SKIP() << "no /dev/full on this machine";
  rt::Status status = rt::writeFileAtomically("/dev/full", "abc", 3);
  EXPECT_FALSE(status);
  EXPECT_EQ(status.message(), "/dev/full: write failed after 0 bytes: No "
                              "space left on device");
  EXPECT_TRUE(isCharacterDevice("/dev/full"));
}

TEST(AtomicFile, AFifoIsWrittenThrough) {
  TempDir dir;
  std::string fifo = dir.file("pipe");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string read;
  std::thread reader([&] { read = contents(fifo); });
  rt::Status status = rt::writeFileAtomically(fifo, "hello", 5);
  reader.join();
  EXPECT_TRUE(status) << status.message();
  EXPECT_EQ(read, "hello");
  struct stat info;
  ASSERT_EQ(::lstat(fifo.c_str(), &info), 0);
  EXPECT_TRUE(S_ISFIFO(info.st_mode));
}

TEST(AtomicFile, ASymlinkIsWrittenThroughAndKept) {
  TempDir dir;
  std::string target = dir.file("target.txt"), link = dir.file("link.txt");
  llmc::test::writeBytes(target, "old", sizeof("old") - 1);
  ASSERT_EQ(::symlink("target.txt", link.c_str()), 0);
  ASSERT_TRUE(rt::writeFileAtomically(link, "new", 3));
  EXPECT_TRUE(std::filesystem::is_symlink(link));
  EXPECT_EQ(contents(target), "new");

  // A dangling link creates its target.
  std::string dangling = dir.file("dangling.txt");
  ASSERT_EQ(::symlink("created.txt", dangling.c_str()), 0);
  ASSERT_TRUE(rt::writeFileAtomically(dangling, "made", 4));
  EXPECT_TRUE(std::filesystem::is_symlink(dangling));
  EXPECT_EQ(contents(dir.file("created.txt")), "made");
}

TEST(AtomicFile, ADirectoryIsRefused) {
  TempDir dir;
  rt::Status status = rt::writeFileAtomically(dir.path(), "x", 1);
  EXPECT_FALSE(status);
  EXPECT_EQ(status.message(),
            dir.path() + ": is a directory; give the path of a file");
  EXPECT_TRUE(std::filesystem::is_directory(dir.path()));
}

TEST(AtomicFile, AnOutputThatIsAnInputIsRefused) {
  TempDir dir;
  std::string input = dir.file("run.toml");
  llmc::test::writeBytes(input, "[model]\n", sizeof("[model]\n") - 1);
  std::string link = dir.file("alias.toml");
  ASSERT_EQ(::symlink("run.toml", link.c_str()), 0);
  EXPECT_TRUE(rt::sameFile(input, input));
  EXPECT_TRUE(rt::sameFile(link, input));
  EXPECT_TRUE(rt::sameFile(dir.path() + "/./run.toml", input));
  EXPECT_FALSE(rt::sameFile(dir.file("other.toml"), input));
  // Neither exists: the same resolved path.
  EXPECT_TRUE(rt::sameFile(dir.file("a/../new"), dir.file("new")));
  rt::Status status = rt::checkNotAnInput("--metrics", link, "the input", input);
  EXPECT_FALSE(status);
  EXPECT_EQ(status.message(), "--metrics '" + link +
                                  "' is the same file as the input '" + input +
                                  "': writing it would destroy that input; "
                                  "give --metrics another path");
  EXPECT_TRUE(rt::checkNotAnInput("--metrics", dir.file("m.jsonl"),
                                  "the input", input));
  EXPECT_TRUE(rt::checkNotAnInput("--metrics", "", "the input", input));
}

TEST(Xxh64, MatchesTheReferenceValues) {
  auto hash = [](const std::string &text, size_t chunk) {
    rt::Xxh64 h;
    for (size_t i = 0; i < text.size(); i += chunk)
      h.update(text.data() + i, std::min(chunk, text.size() - i));
    return h.hex();
  };
  // Values of the reference xxHash (and python's xxhash.xxh64).
  EXPECT_EQ(hash("", 1), "ef46db3751d8e999");
  EXPECT_EQ(hash("a", 1), "d24ec4f1a98c6e5b");
  EXPECT_EQ(hash("abc", 1), "44bc2cf5ad770999");
  const std::string spam = "Nobody inspects the spammish repetition";
  // Whole, and in pieces that cross the 32-byte stripes.
  for (size_t chunk : {size_t(1), size_t(5), size_t(32), spam.size()})
    EXPECT_EQ(hash(spam, chunk), "fbcea83c8a378bf1") << chunk;
}

} // namespace
