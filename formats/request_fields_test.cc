// The CLI's translation of library field names (formats/request_fields.h): a
// leading "field: " and every `field` become the flag or the JSON key.
#include "formats/request_fields.h"

#include "gtest/gtest.h"
#include "planner/steps/plan_limit.h"

namespace reshard {
namespace {

TEST(FieldNameTest, FlagsUseDashesAndMaxStatesIsTheCliSpelling) {
  EXPECT_EQ(FieldName("max_memory", FieldStyle::kFlag), "--max-memory");
  EXPECT_EQ(FieldName("max_memory", FieldStyle::kJsonKey), "max_memory");
  EXPECT_EQ(FieldName("max_expanded_states", FieldStyle::kFlag), "--max-states");
  EXPECT_EQ(FieldName("max_expanded_states", FieldStyle::kJsonKey), "max_states");
  EXPECT_EQ(FieldName("max_search_edges", FieldStyle::kFlag), "--max-edges");
  EXPECT_EQ(FieldName("max_search_edges", FieldStyle::kJsonKey), "max_edges");
}

TEST(InFrontEndTermsTest, TheLeadingFieldAndBackquotedFieldsAreTranslated) {
  const absl::Status s = InFrontEndTerms(
      absl::InvalidArgumentError("mode: needs a native model; `cost_model` \"pytorch\" (drop "
                                 "`cost_model`, or give `mode` pytorch)"),
      FieldStyle::kFlag);
  EXPECT_EQ(s.message(),
            "--mode: needs a native model; --cost-model \"pytorch\" (drop --cost-model, or give "
            "--mode pytorch)");
  EXPECT_TRUE(absl::IsInvalidArgument(s));
}

TEST(InFrontEndTermsTest, WordsThatAreNotFieldsAreKept) {
  const absl::Status s = InFrontEndTerms(
      absl::NotFoundError("no_path: RR is not reachable (see `spec`)"), FieldStyle::kFlag);
  EXPECT_EQ(s.message(), "no_path: RR is not reachable (see `spec`)");
}

TEST(InFrontEndTermsTest, TheLimitPayloadSurvives) {
  const absl::Status s = InFrontEndTerms(
      PlanLimitError(PlanLimit::kMaxExpandedStates, "expanded 1 state"), FieldStyle::kJsonKey);
  EXPECT_EQ(s.message(), "max_states: expanded 1 state");
  EXPECT_EQ(PlanLimitOf(s), PlanLimit::kMaxExpandedStates);
}

}  // namespace
}  // namespace reshard
