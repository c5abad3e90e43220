#ifndef TUNED_WORKER_OBJECT_CACHE_H_
#define TUNED_WORKER_OBJECT_CACHE_H_

/// \file
/// Object files of built candidates, kept so that a job for the same build (a re-measure of a
/// trace: the noisy-result and final top-k rounds of docs/server.md) links the object again
/// instead of compiling it again. Keys come from `Builder::CacheKey` (the same workload,
/// trace and target build the same object); least recently used objects go first once their
/// bytes pass the capacity. Thread-safe.

#include <cstddef>
#include <list>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "worker/builder.h"

namespace tuned::worker {

class ObjectCache {
 public:
  explicit ObjectCache(size_t capacity_bytes) : capacity_bytes_(capacity_bytes) {}

  std::optional<CompiledCandidate> Find(const std::string& key);
  /// Keeps `compiled` (an object file, not a test builder's native function) under `key`; an
  /// object larger than the capacity is not kept.
  void Put(const std::string& key, const CompiledCandidate& compiled);

  size_t bytes() const;
  size_t size() const;

 private:
  struct Entry {
    std::string key;
    CompiledCandidate compiled;
  };
  static size_t BytesOf(const Entry& entry);

  const size_t capacity_bytes_;
  mutable std::mutex mu_;
  std::list<Entry> entries_;  // most recently used first
  std::unordered_map<std::string, std::list<Entry>::iterator> by_key_;
  size_t bytes_ = 0;
};

}  // namespace tuned::worker

#endif  // TUNED_WORKER_OBJECT_CACHE_H_
