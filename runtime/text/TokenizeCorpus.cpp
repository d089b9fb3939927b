//===- TokenizeCorpus.cpp - text files to llm.c token shards --------------===//
//
//   1. Check the options, open every input, prepare the output folder.
//   2. Cut the inputs into documents and the documents into batches of
//      about 1 MiB; workers encode batches (each with its own EncodeCache)
//      while this thread writes finished batches in order, so the shards
//      are the same for any number of threads.
//   3. A document of more than 64 MiB (streamDocumentBytes) is encoded by
//      this thread, streaming into the shards, when its turn comes (its ids
//      never exist at once).
//   4. Shards are buffered whole (shardTokens ids) and written atomically
//      (runtime/io/File.h), as llm.c's fineweb.py buffers them.
//
//===----------------------------------------------------------------------===//

#include "runtime/text/TokenizeCorpus.h"

#include "runtime/io/File.h"
#include "runtime/text/Utf8.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <fcntl.h>
#include <filesystem>
#include <memory>
#include <mutex>
#include <sys/mman.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

namespace llmc::rt {

namespace {

constexpr size_t kBatchBytes = 1 << 20;

/// A read-only mapping of one input file.
/// TODO(#22): runtime/io/MappedFile.h (the shard reader's) does the same;
/// use it once both are on one branch.
class InputFile {
public:
  ~InputFile() {
    if (data_)
      ::munmap(const_cast<char *>(data_), size_);
  }
  static Status open(const std::string &path, std::shared_ptr<InputFile> &out) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
      return Status::error(errno == ENOENT ? StatusCode::NotFound
                                           : StatusCode::InvalidArgument,
                           path + ": cannot open: " + std::strerror(errno) +
                               (errno == ENOENT ? "; check the path" : ""));
    struct stat info;
    if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
      ::close(fd);
      return Status::error(StatusCode::InvalidArgument,
                           path + ": is not a regular file; give text files");
    }
    auto file = std::shared_ptr<InputFile>(new InputFile());
    file->size_ = static_cast<size_t>(info.st_size);
    if (file->size_ > 0) {
      void *data = ::mmap(nullptr, file->size_, PROT_READ, MAP_PRIVATE, fd, 0);
      if (data == MAP_FAILED) {
        int error = errno;
        ::close(fd);
        return Status::error(StatusCode::Unavailable,
                             path + ": cannot map the file: " +
                                 std::strerror(error));
      }
      ::madvise(data, file->size_, MADV_SEQUENTIAL);
      file->data_ = static_cast<const char *>(data);
    }
    ::close(fd);
    out = std::move(file);
    return Status::ok();
  }
  std::string_view text() const { return {data_ ? data_ : "", size_}; }

private:
  InputFile() = default;
  const char *data_ = nullptr;
  size_t size_ = 0;
};

/// Step 1 for the output: DIR exists (created if needed), takes a file, and
/// holds no shards that a reader's glob would mix with the new ones.
Status prepareOutput(const std::string &dir) {
  namespace fs = std::filesystem;
  std::error_code error;
  fs::create_directories(dir, error);
  if (error || !fs::is_directory(dir))
    return Status::error(StatusCode::InvalidArgument,
                         dir + ": cannot create the output folder" +
                             (error ? ": " + error.message() : "") +
                             "; give -o a folder that can be written");
  std::string probe = dir + "/.llmc-tokenize-probe";
  int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    return Status::error(StatusCode::InvalidArgument,
                         dir + ": cannot write in the output folder: " +
                             std::strerror(errno));
  ::close(fd);
  ::unlink(probe.c_str());
  for (const fs::directory_entry &entry : fs::directory_iterator(dir, error)) {
    std::string name = entry.path().filename().string();
    bool shard = (name.rfind("train_", 0) == 0 || name.rfind("val_", 0) == 0) &&
                 name.size() > 4 && name.compare(name.size() - 4, 4, ".bin") == 0;
    if (shard)
      return Status::error(StatusCode::InvalidArgument,
                           dir + " already holds shards (" + name +
                               "); remove them or give -o another folder, so "
                               "that old and new shards do not mix");
  }
  return Status::ok();
}

/// One document: a part of an input file.
struct Document {
  size_t file;
  size_t begin, end;
  size_t spanEnd; ///< where the next document's bytes start (progress)
  bool val;
};

/// The documents of the inputs in order (step 2).
class DocumentCursor {
public:
  DocumentCursor(const std::vector<std::shared_ptr<InputFile>> &files,
                 bool lines)
      : files_(files), lines_(lines) {}
  bool next(Document &document) {
    while (file_ < files_.size()) {
      std::string_view text = files_[file_]->text();
      if (!lines_) {
        document = {file_, 0, text.size(), text.size(), false};
        ++file_;
        return true;
      }
      while (offset_ < text.size()) {
        size_t newline = text.find('\n', offset_);
        size_t end = newline == std::string_view::npos ? text.size() : newline;
        size_t spanEnd = newline == std::string_view::npos ? end : end + 1;
        size_t begin = offset_;
        offset_ = spanEnd;
        if (end > begin && text[end - 1] == '\r')
          --end;
        if (end > begin) {
          document = {file_, begin, end, spanEnd, false};
          return true;
        }
      }
      ++file_;
      offset_ = 0;
    }
    return false;
  }

private:
  const std::vector<std::shared_ptr<InputFile>> &files_;
  bool lines_;
  size_t file_ = 0, offset_ = 0;
};

/// The shards of one split (step 4).
class ShardStream {
public:
  ShardStream(std::string dir, std::string prefix, shard::TokenType type,
              int64_t shardTokens)
      : dir_(std::move(dir)), prefix_(std::move(prefix)), type_(type),
        shardTokens_(shardTokens) {}

  Status append(const uint32_t *ids, size_t count) {
    size_t width = shard::tokenBytes(type_);
    while (count > 0) {
      size_t room = static_cast<size_t>(shardTokens_) - buffered_;
      size_t take = std::min(room, count);
      size_t at = data_.size();
      data_.resize(at + take * width);
      for (size_t i = 0; i < take; ++i) {
        uint32_t id = ids[i];
        if (width == 2 && id > 0xffff)
          return Status::error(StatusCode::Internal,
                               "token " + std::to_string(id) +
                                   " does not fit a uint16 shard");
        for (size_t b = 0; b < width; ++b)
          data_[at + i * width + b] = static_cast<uint8_t>(id >> (8 * b));
      }
      buffered_ += take;
      total_ += take;
      ids += take;
      count -= take;
      if (buffered_ == static_cast<size_t>(shardTokens_))
        LLMC_RETURN_IF_ERROR(flush());
    }
    return Status::ok();
  }

  Status flush() {
    if (buffered_ == 0)
      return Status::ok();
    char name[32];
    std::snprintf(name, sizeof(name), "_%06zu.bin", paths_.size());
    std::string path = dir_ + "/" + prefix_ + name;
    uint8_t header[shard::kHeaderBytes];
    shard::encodeHeader(type_, static_cast<int64_t>(buffered_), header);
    AtomicFileWriter writer;
    LLMC_RETURN_IF_ERROR(writer.open(path));
    LLMC_RETURN_IF_ERROR(writer.write(header, sizeof(header)));
    LLMC_RETURN_IF_ERROR(writer.write(data_.data(), data_.size()));
    LLMC_RETURN_IF_ERROR(writer.commit());
    paths_.push_back(path);
    data_.clear();
    buffered_ = 0;
    return Status::ok();
  }

  uint64_t total() const { return total_; }
  const std::vector<std::string> &paths() const { return paths_; }

private:
  std::string dir_, prefix_;
  shard::TokenType type_;
  int64_t shardTokens_;
  std::vector<uint8_t> data_;
  size_t buffered_ = 0;
  uint64_t total_ = 0;
  std::vector<std::string> paths_;
};

/// Where documents' ids go: the end-of-text tokens between documents, and
/// the held tokens of a single document split by tokens.
class CorpusWriter {
public:
  CorpusWriter(const TokenizeOptions &options, shard::TokenType type,
               std::optional<uint32_t> eot, bool holdSingleDocument)
      : train_(options.outputDir, "train", type, options.shardTokens),
        val_(options.outputDir, "val", type, options.shardTokens), eot_(eot),
        hold_(holdSingleDocument), valFraction_(options.valFraction) {}

  void startDocument(bool val) {
    valNow_ = val;
    pendingEot_ = eot_ && started_[val];
    counted_ = false;
  }
  Status tokens(const uint32_t *ids, size_t count) {
    if (count == 0)
      return Status::ok();
    if (!counted_) {
      ++documents_[valNow_];
      counted_ = true;
    }
    if (hold_) {
      held_.insert(held_.end(), ids, ids + count);
      return Status::ok();
    }
    ShardStream &stream = valNow_ ? val_ : train_;
    if (pendingEot_) {
      LLMC_RETURN_IF_ERROR(stream.append(&*eot_, 1));
      pendingEot_ = false;
    }
    started_[valNow_] = true;
    return stream.append(ids, count);
  }
  Status finish(TokenizeSummary &summary) {
    if (hold_) {
      // One document: its first ceil(F * T) tokens are val.
      size_t valCount = static_cast<size_t>(
          std::ceil(valFraction_ * static_cast<double>(held_.size())));
      valCount = std::min(valCount, held_.size());
      LLMC_RETURN_IF_ERROR(val_.append(held_.data(), valCount));
      LLMC_RETURN_IF_ERROR(
          train_.append(held_.data() + valCount, held_.size() - valCount));
      documents_[1] = valCount > 0;
      documents_[0] = held_.size() > valCount;
    }
    LLMC_RETURN_IF_ERROR(train_.flush());
    LLMC_RETURN_IF_ERROR(val_.flush());
    summary.trainTokens = train_.total();
    summary.valTokens = val_.total();
    summary.trainShards = train_.paths();
    summary.valShards = val_.paths();
    summary.trainDocuments = documents_[0];
    summary.valDocuments = documents_[1];
    return Status::ok();
  }
  uint64_t tokensSoFar() const {
    return train_.total() + val_.total() + held_.size();
  }

private:
  ShardStream train_, val_;
  std::optional<uint32_t> eot_;
  bool hold_;
  double valFraction_;
  std::vector<uint32_t> held_;
  bool started_[2] = {false, false};
  uint64_t documents_[2] = {0, 0};
  bool valNow_ = false, pendingEot_ = false, counted_ = false;
};

/// A run of documents encoded by one worker.
struct Batch {
  std::vector<Document> documents;
  std::vector<uint32_t> ids;
  std::vector<size_t> counts; ///< ids of each document
  uint64_t position = 0; ///< bytes of the inputs up to its last document
  bool large = false;    ///< one document this thread encodes
  bool done = false;
  Status status;
};

/// A UTF-8 error with the file, the byte offset in it and the line.
Status notUtf8(const std::string &path, std::string_view file, size_t at) {
  size_t line = 1 + static_cast<size_t>(
                        std::count(file.begin(), file.begin() + at, '\n'));
  return Status::error(StatusCode::InvalidArgument,
                       path + ": byte " + std::to_string(at) + " (line " +
                           std::to_string(line) +
                           ") is not UTF-8; convert the file to UTF-8 "
                           "(iconv -f LATIN1 -t UTF-8, for example)");
}

/// Step 1 for the options: what can be refused before opening anything.
Status checkOptions(const Tokenizer &tokenizer, const TokenizeOptions &options,
                    std::optional<uint32_t> &eot) {
  if (options.inputs.empty())
    return Status::error(StatusCode::InvalidArgument,
                         "no input files; give one or more text files");
  if (!(options.valFraction >= 0.0 && options.valFraction < 1.0))
    return Status::error(StatusCode::InvalidArgument,
                         "--val-fraction " + std::to_string(options.valFraction) +
                             " is outside [0, 1)");
  if (options.shardTokens < 1 || options.shardTokens > shard::kMaxTokens)
    return Status::error(StatusCode::InvalidArgument,
                         "--shard-tokens " + std::to_string(options.shardTokens) +
                             " is outside 1 .. 2147483647 (a shard header "
                             "counts its tokens in an int32)");
  if (options.eot) {
    eot = tokenizer.endOfTextId();
    if (!eot)
      return Status::error(
          StatusCode::InvalidArgument,
          tokenizer.path() +
              " declares no end-of-text token (none of <|endoftext|>, "
              "<|end_of_text|>, </s>, <eos>, <|eos|>); leave out --eot, or "
              "add the model's end-of-text token to its added_tokens");
  }
  return Status::ok();
}

/// Which documents go to val (the rule of TokenizeCorpus.h).
struct ValSplit {
  uint64_t documents = 0, valCount = 0;
  bool holdSingle = false; ///< one document, split by tokens

  Status plan(const std::vector<std::shared_ptr<InputFile>> &files,
              const TokenizeOptions &options) {
    if (options.valFraction <= 0)
      return Status::ok();
    DocumentCursor counter(files, options.lines);
    Document document;
    while (counter.next(document))
      ++documents;
    holdSingle = documents == 1;
    if (documents < 2)
      return Status::ok();
    valCount = static_cast<uint64_t>(std::floor(
        static_cast<double>(documents) * options.valFraction + 1e-9));
    if (valCount == 0)
      return Status::error(
          StatusCode::InvalidArgument,
          "--val-fraction " + std::to_string(options.valFraction) + " of " +
              std::to_string(documents) +
              " documents selects none; give more documents (--lines makes "
              "each line one), a larger fraction, or a single file (whose "
              "leading tokens then go to val)");
    return Status::ok();
  }
  bool isVal(uint64_t index) const {
    return valCount > 0 &&
           (index + 1) * valCount / documents > index * valCount / documents;
  }
};

/// Cuts the documents into batches, in order (step 2).
class BatchMaker {
public:
  BatchMaker(const std::vector<std::shared_ptr<InputFile>> &files,
             const TokenizeOptions &options, const ValSplit &split)
      : cursor_(files, options.lines), split_(split),
        largeBytes_(options.streamDocumentBytes),
        fileStart_(files.size() + 1, 0) {
    for (size_t i = 0; i < files.size(); ++i)
      fileStart_[i + 1] = fileStart_[i] + files[i]->text().size();
    more_ = cursor_.next(lookahead_);
  }
  bool more() const { return more_; }
  std::unique_ptr<Batch> next() {
    auto batch = std::make_unique<Batch>();
    size_t bytes = 0;
    while (more_) {
      Document document = lookahead_;
      bool large = document.end - document.begin > largeBytes_;
      if (large && !batch->documents.empty())
        break; // a large document is a batch of its own
      document.val = split_.isVal(index_++);
      batch->documents.push_back(document);
      batch->position = fileStart_[document.file] + document.spanEnd;
      batch->large = large;
      bytes += document.end - document.begin;
      more_ = cursor_.next(lookahead_);
      if (large || bytes >= kBatchBytes)
        break;
    }
    if (!more_)
      batch->position = fileStart_.back();
    return batch;
  }

private:
  DocumentCursor cursor_;
  const ValSplit &split_;
  size_t largeBytes_;
  std::vector<uint64_t> fileStart_;
  Document lookahead_{};
  bool more_ = false;
  uint64_t index_ = 0;
};

/// The worker threads: each encodes whole batches with its own cache.
/// Batches come out in the order they went in.
class Encoders {
public:
  Encoders(const Tokenizer &tokenizer,
           const std::vector<std::shared_ptr<InputFile>> &files,
           const std::vector<std::string> &paths, int threads)
      : tokenizer_(tokenizer), files_(files), paths_(paths) {
    for (int i = 0; i < threads; ++i)
      workers_.emplace_back([this] { work(); });
  }
  ~Encoders() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    changed_.notify_all();
    for (std::thread &worker : workers_)
      worker.join();
  }
  size_t inFlight() const { return inFlight_.size(); }
  /// Queues `batch`; a large one is left to the caller (done at once).
  void submit(std::unique_ptr<Batch> batch) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (batch->large)
      batch->done = true;
    else
      pending_.push_back(batch.get());
    inFlight_.push_back(std::move(batch));
    changed_.notify_all();
  }
  /// The oldest batch in flight once it is encoded.
  Batch &front() {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [&] { return inFlight_.front()->done; });
    return *inFlight_.front();
  }
  void pop() {
    std::lock_guard<std::mutex> lock(mutex_);
    inFlight_.pop_front();
  }

private:
  void work() {
    EncodeCache cache;
    for (;;) {
      Batch *batch;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        changed_.wait(lock, [&] { return stop_ || !pending_.empty(); });
        if (stop_)
          return;
        batch = pending_.front();
        pending_.pop_front();
      }
      Status status = encode(*batch, cache);
      std::lock_guard<std::mutex> lock(mutex_);
      batch->status = status;
      batch->done = true;
      changed_.notify_all();
    }
  }
  Status encode(Batch &batch, EncodeCache &cache) {
    for (const Document &document : batch.documents) {
      std::string_view file = files_[document.file]->text();
      std::string_view text =
          file.substr(document.begin, document.end - document.begin);
      if (size_t bad = text::firstInvalidUtf8(text); bad != std::string::npos)
        return notUtf8(paths_[document.file], file, document.begin + bad);
      size_t before = batch.ids.size();
      LLMC_RETURN_IF_ERROR(
          tokenizer_.encode(text, batch.ids, SpecialTokens::Omit, &cache));
      batch.counts.push_back(batch.ids.size() - before);
    }
    return Status::ok();
  }

  const Tokenizer &tokenizer_;
  const std::vector<std::shared_ptr<InputFile>> &files_;
  const std::vector<std::string> &paths_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::unique_ptr<Batch>> inFlight_; // in input order
  std::deque<Batch *> pending_;                 // not started yet
  bool stop_ = false;
  std::vector<std::thread> workers_;
};

/// Step 3: a large document, encoded here and streamed into the shards.
Status writeLarge(const Tokenizer &tokenizer, const Document &document,
                  const std::vector<std::shared_ptr<InputFile>> &files,
                  const std::vector<std::string> &paths, EncodeCache &cache,
                  CorpusWriter &writer) {
  std::string_view file = files[document.file]->text();
  std::string_view text =
      file.substr(document.begin, document.end - document.begin);
  if (size_t bad = text::firstInvalidUtf8(text); bad != std::string::npos)
    return notUtf8(paths[document.file], file, document.begin + bad);
  writer.startDocument(document.val);
  return tokenizer.encodeStreaming(text, SpecialTokens::Omit, cache,
                                   [&](const uint32_t *ids, size_t count) {
                                     return writer.tokens(ids, count);
                                   });
}

} // namespace

Status tokenizeCorpus(
    const Tokenizer &tokenizer, const TokenizeOptions &options,
    const std::function<void(const TokenizeProgress &)> &progress,
    TokenizeSummary &summary) {
  auto started = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                         started)
        .count();
  };
  // Step 1.
  std::optional<uint32_t> eot;
  LLMC_RETURN_IF_ERROR(checkOptions(tokenizer, options, eot));
  std::vector<std::shared_ptr<InputFile>> files(options.inputs.size());
  summary = TokenizeSummary();
  for (size_t i = 0; i < files.size(); ++i) {
    LLMC_RETURN_IF_ERROR(InputFile::open(options.inputs[i], files[i]));
    summary.bytes += files[i]->text().size();
  }
  summary.files = files.size();
  summary.tokenType = shard::tokenTypeForVocab(tokenizer.vocabSize());
  ValSplit split;
  LLMC_RETURN_IF_ERROR(split.plan(files, options));
  LLMC_RETURN_IF_ERROR(prepareOutput(options.outputDir));

  // Step 2: batches ahead of the writer, written in order.
  int threads = options.threads > 0
                    ? options.threads
                    : std::max(1u, std::thread::hardware_concurrency());
  summary.threads = threads;
  CorpusWriter writer(options, summary.tokenType, eot, split.holdSingle);
  BatchMaker maker(files, options, split);
  EncodeCache ownCache;
  Encoders encoders(tokenizer, files, options.inputs, threads);
  size_t window = 2 * static_cast<size_t>(threads);
  auto fill = [&] {
    while (maker.more() && encoders.inFlight() < window)
      encoders.submit(maker.next());
  };
  fill();
  while (encoders.inFlight() > 0) {
    Batch &batch = encoders.front();
    if (batch.large) {
      LLMC_RETURN_IF_ERROR(writeLarge(tokenizer, batch.documents.front(), files,
                                      options.inputs, ownCache, writer));
    } else {
      LLMC_RETURN_IF_ERROR(batch.status);
      const uint32_t *ids = batch.ids.data();
      for (size_t d = 0; d < batch.documents.size(); ++d) {
        writer.startDocument(batch.documents[d].val);
        LLMC_RETURN_IF_ERROR(writer.tokens(ids, batch.counts[d]));
        ids += batch.counts[d];
      }
    }
    uint64_t bytesDone = batch.position;
    encoders.pop();
    fill();
    if (progress)
      progress(TokenizeProgress{bytesDone, summary.bytes, writer.tokensSoFar(),
                                elapsed()});
  }
  LLMC_RETURN_IF_ERROR(writer.finish(summary));
  summary.seconds = elapsed();
  return Status::ok();
}

} // namespace llmc::rt
