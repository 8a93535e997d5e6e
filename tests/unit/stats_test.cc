// Per-thread counters (server/stats.h): each thread adds to one slot of its own per Stats object,
// found again however the thread switches between Stats objects.
#include "server/stats.h"

#include <memory>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace gigakv::server {
namespace {

TEST(StatsTest, OneSlotPerThreadWhateverTheSwitchesBetweenStats) {
  // More objects than the per-thread cache holds, used in turn on one thread (as tests that run
  // two servers do, and more).
  std::vector<std::unique_ptr<Stats>> all;
  for (int i = 0; i < 6; ++i) all.push_back(std::make_unique<Stats>(4));
  for (int round = 0; round < 50; ++round) {
    for (auto& stats : all) {
      AddOwned(stats->Local().keyspace_hits, 1);
      AddOwned(stats->LocalCommandCounters()[2].calls, 1);
    }
    // Two of them alternately, as the replay test does.
    AddOwned(all[0]->Local().dirty, 1);
    AddOwned(all[1]->Local().dirty, 1);
  }
  for (auto& stats : all) {
    EXPECT_EQ(stats->thread_slot_count(), 1u);
    EXPECT_EQ(stats->totals().keyspace_hits, 50u);
    EXPECT_EQ(stats->command_totals(2).calls, 50u);
  }
  EXPECT_EQ(all[0]->totals().dirty, 50u);
  EXPECT_EQ(all[1]->totals().dirty, 50u);
  // Another thread gets a slot of its own; the sums cover both.
  std::thread other([&] {
    AddOwned(all[0]->Local().keyspace_hits, 7);
    AddOwned(all[5]->Local().keyspace_hits, 7);
  });
  other.join();
  EXPECT_EQ(all[0]->thread_slot_count(), 2u);
  EXPECT_EQ(all[0]->totals().keyspace_hits, 57u);
  EXPECT_EQ(all[5]->totals().keyspace_hits, 57u);
  EXPECT_EQ(all[3]->thread_slot_count(), 1u);
}

}  // namespace
}  // namespace gigakv::server
