// How much host memory a command that runs ranks on this machine (`reshard
// verify`, `reshard bench`) may plan to use before refusing a case.
#ifndef RESHARD_HARNESS_HOST_MEMORY_H_
#define RESHARD_HARNESS_HOST_MEMORY_H_

namespace reshard {

// Half of this machine's memory, or of the address-space limit when one is
// set (ulimit -v): the default of their --max-memory.
double DefaultMaxHostMemory();

}  // namespace reshard

#endif  // RESHARD_HARNESS_HOST_MEMORY_H_
