// native/io/atomic_write.h — output that is either complete or absent: never a half-written file.
//
// A file: written to a temporary file in the same folder, fsync'ed, then renamed over its name
// (`plan --output`). A folder: built in a sibling `D.tmp-XXXXXX`, every file fsync'ed, then put in
// place of D whole (`shard`, the offload folder of memfit-torch); a failure or an exception before
// commit() removes the temporary folder, so D is absent, the previous folder, or the new one.
// Errors throw Failure(kFile) naming the path and errno's text.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace memfit::io {

// One new file (created exclusively: it never overwrites), written in chunks.
class OutputFile {
 public:
  explicit OutputFile(std::string path);
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  void write(const void* data, std::size_t size);
  // fsync (when `sync`) and close; a failure of either throws.
  void finish(bool sync = true);
  std::uint64_t written() const { return written_; }

 private:
  std::string path_;
  int fd_ = -1;
  std::uint64_t written_ = 0;
};

class AtomicFolder {
 public:
  // Creates the parent folders and the temporary sibling of `folder`.
  explicit AtomicFolder(const std::string& folder);
  ~AtomicFolder();  // removes the temporary folder unless committed
  AtomicFolder(const AtomicFolder&) = delete;
  AtomicFolder& operator=(const AtomicFolder&) = delete;

  const std::string& temp() const { return temp_; }      // where to write the files
  const std::string& target() const { return target_; }  // the folder's absolute path
  // Puts the temporary folder in place of the target (an atomic exchange when one exists), with
  // the folder fsync'ed before and its parent after (best effort) when `sync`.
  void commit(bool sync = true);

 private:
  std::string target_, temp_;
};

// `bytes` into `path`, through a temporary file beside it.
void write_file_atomically(const std::string& path, std::string_view bytes);

}  // namespace memfit::io
