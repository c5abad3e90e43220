#include "worker/object_cache.h"

namespace tuned::worker {

size_t ObjectCache::BytesOf(const Entry& entry) {
  return entry.key.size() + entry.compiled.object.size() + entry.compiled.kernel_name.size();
}

std::optional<CompiledCandidate> ObjectCache::Find(const std::string& key) {
  std::lock_guard lock(mu_);
  auto found = by_key_.find(key);
  if (found == by_key_.end()) return std::nullopt;
  entries_.splice(entries_.begin(), entries_, found->second);
  return found->second->compiled;
}

void ObjectCache::Put(const std::string& key, const CompiledCandidate& compiled) {
  if (compiled.native != nullptr) return;
  Entry entry{key, compiled};
  const size_t bytes = BytesOf(entry);
  if (bytes > capacity_bytes_) return;
  std::lock_guard lock(mu_);
  if (auto found = by_key_.find(key); found != by_key_.end()) {
    bytes_ -= BytesOf(*found->second);
    entries_.erase(found->second);
    by_key_.erase(found);
  }
  entries_.push_front(std::move(entry));
  by_key_[key] = entries_.begin();
  bytes_ += bytes;
  while (bytes_ > capacity_bytes_) {
    bytes_ -= BytesOf(entries_.back());
    by_key_.erase(entries_.back().key);
    entries_.pop_back();
  }
}

size_t ObjectCache::bytes() const {
  std::lock_guard lock(mu_);
  return bytes_;
}

size_t ObjectCache::size() const {
  std::lock_guard lock(mu_);
  return entries_.size();
}

}  // namespace tuned::worker
