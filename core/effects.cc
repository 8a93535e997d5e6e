#include "gigakv/effects.h"

#include <utility>

namespace gigakv {

void EffectSinkConsumer::OnChange(const ChangeRecord& record) {
  if (record.effect.empty()) return;
  Effect effect{record.db, std::vector<std::string>(record.effect.begin(), record.effect.end())};
  if (record.group == 0) {
    sink_.Append(std::move(effect));
    return;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  open_groups_[record.group].push_back(std::move(effect));
}

void EffectSinkConsumer::OnGroupEnd(uint64_t group) {
  std::vector<Effect> effects;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto found = open_groups_.find(group);
    if (found == open_groups_.end()) return;
    effects = std::move(found->second);
    open_groups_.erase(found);
  }
  if (effects.empty()) return;
  const int first_db = effects.front().db;
  sink_.Append(Effect{first_db, {"MULTI"}});
  for (Effect& effect : effects) sink_.Append(std::move(effect));
  sink_.Append(Effect{first_db, {"EXEC"}});
}

}  // namespace gigakv
