#include "gigakv/change_stream.h"

#include <cassert>

namespace gigakv {
namespace {

// The group open on this thread: its stream, id, and whether it published a record.
thread_local const ChangeStream* tls_group_stream = nullptr;
thread_local uint64_t tls_group_id = 0;
thread_local bool tls_group_published = false;

}  // namespace

void ChangeStream::AddConsumer(ChangeConsumer* consumer) {
  for (int i = 0; i < kMaxConsumers; ++i) {
    Slot& slot = slots_[i];
    if (slot.consumer.load(std::memory_order_relaxed) == nullptr) {
      slot.interest.store(0, std::memory_order_relaxed);
      slot.consumer.store(consumer, std::memory_order_release);
      if (used_slots_.load(std::memory_order_relaxed) <= i) {
        used_slots_.store(i + 1, std::memory_order_release);
      }
      return;
    }
  }
  // More consumers than slots is a programming error (the server has a fixed, small set).
  assert(false && "too many change consumers");
}

void ChangeStream::RemoveConsumer(ChangeConsumer* consumer) {
  std::lock_guard<std::mutex> lock(interest_mutex_);
  for (Slot& slot : slots_) {
    if (slot.consumer.load(std::memory_order_relaxed) == consumer) {
      slot.interest.store(0, std::memory_order_relaxed);
      slot.consumer.store(nullptr, std::memory_order_release);
    }
  }
  RecomputeMask();
}

void ChangeStream::SetInterest(ChangeConsumer* consumer, ChangeConsumer::Interest interest) {
  std::lock_guard<std::mutex> lock(interest_mutex_);
  for (Slot& slot : slots_) {
    if (slot.consumer.load(std::memory_order_relaxed) == consumer) {
      slot.interest.store(static_cast<uint8_t>(interest), std::memory_order_release);
    }
  }
  RecomputeMask();
}

void ChangeStream::RecomputeMask() {
  // Consumers change their interest rarely (WATCH: when the first key is watched and when the
  // last is forgotten) and possibly from several threads at once; recomputing from the slots
  // under a CAS loop keeps the mask equal to the slots' union whatever the interleaving.
  uint32_t expected = interest_mask_.load(std::memory_order_relaxed);
  for (;;) {
    uint32_t mask = 0;
    for (const Slot& slot : slots_) {
      uint8_t interest = slot.interest.load(std::memory_order_acquire);
      if (interest == static_cast<uint8_t>(ChangeConsumer::Interest::kKeys)) mask |= kKeysBit;
      if (interest == static_cast<uint8_t>(ChangeConsumer::Interest::kEffects)) {
        mask |= kKeysBit | kEffectsBit;
      }
    }
    if (interest_mask_.compare_exchange_weak(expected, mask, std::memory_order_acq_rel)) return;
  }
}

void ChangeStream::Publish(ChangeRecord& record) {
  if (!active()) return;
  record.sequence = next_sequence_.fetch_add(1, std::memory_order_acq_rel);
  if (tls_group_stream == this) {
    record.group = tls_group_id;
    tls_group_published = true;
  }
  const int used = used_slots_.load(std::memory_order_acquire);
  for (int i = 0; i < used; ++i) {
    Slot& slot = slots_[i];
    if (slot.interest.load(std::memory_order_acquire) == 0) continue;
    ChangeConsumer* consumer = slot.consumer.load(std::memory_order_acquire);
    if (consumer != nullptr) consumer->OnChange(record);
  }
}

void ChangeStream::PublishKey(int db, std::string_view key,
                              absl::Span<const std::string_view> effect) {
  if (!active()) return;
  ChangedKey changed{db, key};
  ChangeRecord record;
  record.db = db;
  record.keys = absl::MakeConstSpan(&changed, 1);
  if (wants_effects()) record.effect = effect;
  Publish(record);
}

ChangeStream::Group::Group(ChangeStream& stream)
    : stream_(stream), outer_(tls_group_stream == nullptr) {
  if (!outer_) return;
  tls_group_stream = &stream_;
  tls_group_id = stream_.next_group_.fetch_add(1, std::memory_order_relaxed);
  tls_group_published = false;
}

ChangeStream::Group::~Group() {
  if (!outer_) return;
  const uint64_t group = tls_group_id;
  const bool published = tls_group_published;
  tls_group_stream = nullptr;
  tls_group_id = 0;
  tls_group_published = false;
  if (!published) return;
  for (Slot& slot : stream_.slots_) {
    if (slot.interest.load(std::memory_order_acquire) == 0) continue;
    ChangeConsumer* consumer = slot.consumer.load(std::memory_order_acquire);
    if (consumer != nullptr) consumer->OnGroupEnd(group);
  }
}

}  // namespace gigakv
