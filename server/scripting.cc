#include "server/scripting.h"

#include "absl/strings/ascii.h"

namespace gigakv::server {

void ScriptCache::Add(const std::string& sha, std::string_view body) {
  std::lock_guard lock(mutex_);
  auto [it, added] = scripts_.try_emplace(sha);
  if (!added) return;
  it->second = std::make_shared<const std::string>(body);
  body_bytes_ += body.size();
}

std::shared_ptr<const std::string> ScriptCache::Find(std::string_view sha) const {
  if (sha.size() != 40) return nullptr;
  char lower[40];
  for (size_t i = 0; i < 40; ++i)
    lower[i] = absl::ascii_tolower(static_cast<unsigned char>(sha[i]));
  std::lock_guard lock(mutex_);
  auto it = scripts_.find(absl::string_view(lower, 40));
  return it == scripts_.end() ? nullptr : it->second;
}

void ScriptCache::Flush() {
  std::lock_guard lock(mutex_);
  scripts_.clear();
  body_bytes_ = 0;
  generation_.fetch_add(1, std::memory_order_acq_rel);
}

size_t ScriptCache::size() const {
  std::lock_guard lock(mutex_);
  return scripts_.size();
}

size_t ScriptCache::body_bytes() const {
  std::lock_guard lock(mutex_);
  return body_bytes_;
}

}  // namespace gigakv::server
