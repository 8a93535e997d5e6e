// Blocking operations: clients parked on list and sorted-set keys (BLPOP, BZPOPMIN...).
#include "server/commands/collection_access.h"

namespace gigakv::server {

void SignalKeyAsReady(CommandContext&, int, std::string_view) {}

}  // namespace gigakv::server
