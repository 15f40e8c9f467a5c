// ValidateNcclProfile's ranges (spec §6.4, "Profile ranges"; issue 44:
// nvlink_gbps 1e-320 and gpus_per_host 1000 were accepted).
#include "planner/costs/nccl/nccl_profile.h"

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace reshard {
namespace {

using ::testing::HasSubstr;

TEST(NcclProfileTest, BuiltInProfilesAreValid) {
  for (const std::string& name : NcclProfileNames()) {
    absl::StatusOr<NcclProfile> p = BuiltinNcclProfile(name);
    ASSERT_TRUE(p.ok()) << name;
    EXPECT_TRUE(ValidateNcclProfile(*p).ok()) << name;
  }
}

struct Field {
  std::string name;
  std::function<void(NcclProfile*, double)> set;
  double least, most;
};

TEST(NcclProfileTest, EveryFieldIsInItsRangeOrNamed) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<Field> fields = {
      {"gpus_per_host", [](NcclProfile* p, double v) { p->gpus_per_host = static_cast<int>(v); }, 1,
       72},
      {"nics_per_host", [](NcclProfile* p, double v) { p->nics_per_host = static_cast<int>(v); }, 1,
       72},
      {"nvlink_gbps", [](NcclProfile* p, double v) { p->nvlink_gbps = v; }, 1, 1e4},
      {"nic_gbps", [](NcclProfile* p, double v) { p->nic_gbps = v; }, 0.1, 1e4},
      {"memory_gbps", [](NcclProfile* p, double v) { p->memory_gbps = v; }, 1, 1e5},
  };
  for (const Field& f : fields) {
    for (double ok : {f.least, f.most}) {
      NcclProfile p = DefaultNcclProfile();
      f.set(&p, ok);
      EXPECT_TRUE(ValidateNcclProfile(p).ok()) << f.name << " = " << ok;
    }
    const bool integer = f.name.find("per_host") != std::string::npos;
    std::vector<double> bad = {0, -1, f.most * 2, integer ? f.least - 1 : f.least / 2};
    if (!integer) bad.insert(bad.end(), {1e-320, nan, inf, 1e12});
    for (double value : bad) {
      NcclProfile p = DefaultNcclProfile();
      f.set(&p, value);
      absl::Status s = ValidateNcclProfile(p);
      EXPECT_TRUE(absl::IsInvalidArgument(s)) << f.name << " = " << value;
      EXPECT_THAT(s.message(), HasSubstr(f.name + " is ")) << s;
      EXPECT_THAT(s.message(), HasSubstr("must be from")) << s;
    }
  }
}

}  // namespace
}  // namespace reshard
