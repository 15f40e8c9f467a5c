#include "harness/host_memory.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>

namespace reshard {

double DefaultMaxHostMemory() {
  double bytes = static_cast<double>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGE_SIZE);
  struct rlimit limit;
  if (getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
    bytes = std::min(bytes, static_cast<double>(limit.rlim_cur));
  }
  return bytes / 2;
}

}  // namespace reshard
