#include "collectives/execution_stats.h"

namespace reshard {

int64_t ExecutionStats::bytes_sent() const {
  int64_t total = 0;
  for (const StepStats& s : steps) total += s.bytes_sent;
  return total;
}

int64_t ExecutionStats::bytes_received() const {
  int64_t total = 0;
  for (const StepStats& s : steps) total += s.bytes_received;
  return total;
}

}  // namespace reshard
