// From what `reshard calibrate` timed to the measured model's tables (spec
// §6.3), and how well the tables predict sizes they were not given.
//
//   std::vector<MeasuredTable> tables = BuildTables(probes, samples, machine_link);
//   for (const HeldOut& h : HeldOutPredictions(tables[0])) ...   // measured_table.h
//
// One table per collective kind and group size: groups of one size (mesh 2,2
// has two groups of 2) are merged, per size the median of their medians and
// the widest spread, since one machine's loopback does not tell its mesh dims
// apart. Each table's formula fit (used beyond its sizes) is alpha-beta's fit
// (alpha_beta_fit.h) to its samples alone, or `machine` where they do not fit.
#ifndef RESHARD_HARNESS_MEASURED_TABLES_H_
#define RESHARD_HARNESS_MEASURED_TABLES_H_

#include <vector>

#include "harness/alpha_beta_fit.h"
#include "harness/collective_timing.h"
#include "planner/costs/measured_table.h"

namespace reshard {

// `samples[i]` is the timing of `probes[i]` (CombineRanks). Tables in the
// order their kind and size first appear; a table needs two distinct sizes
// (fewer are left out).
std::vector<MeasuredTable> BuildTables(const std::vector<Probe>& probes,
                                       const std::vector<TimedCollective>& samples,
                                       const LinkProfile& machine);

}  // namespace reshard

#endif  // RESHARD_HARNESS_MEASURED_TABLES_H_
