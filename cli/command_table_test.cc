// The table of `reshard` commands (cli/commands.h) and the help built from
// it (cli/help.h): every command declared completely, listed by reshard
// --help, and every flag it parses documented in its --help.
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "cli/backend_exec.h"
#include "cli/commands.h"
#include "cli/help.h"
#include "gtest/gtest.h"

namespace reshard {
namespace {

TEST(CommandTableTest, EveryCommandIsDeclaredCompletely) {
  std::set<std::string> names;
  for (const Command& c : Commands()) {
    EXPECT_TRUE(names.insert(c.name).second) << c.name << " is declared twice";
    EXPECT_FALSE(c.summary.empty()) << c.name;
    EXPECT_TRUE(absl::StartsWith(c.about, absl::StrCat("reshard ", c.name, ": "))) << c.about;
    EXPECT_TRUE(absl::StartsWith(c.error_prefix, "reshard")) << c.name;
    EXPECT_TRUE(c.run != nullptr) << c.name;
    EXPECT_EQ(FindCommand(c.name), &c);
  }
  EXPECT_EQ(FindCommand("no-such-command"), nullptr);
}

TEST(CommandTableTest, EveryVisibleFlagHasItsHelpLineInCommandHelp) {
  for (const Command& c : Commands()) {
    const std::string help = CommandHelp(c);
    std::set<std::string> flags;
    for (const FlagSpec& f : c.flags) {
      EXPECT_TRUE(flags.insert(f.name).second) << c.name << ": --" << f.name << " twice";
      EXPECT_NE(f.name, "help") << c.name << ": --help is added for every command";
      if (f.hidden) continue;
      EXPECT_FALSE(f.help.empty()) << c.name << ": --" << f.name;
      EXPECT_TRUE(absl::StrContains(help, absl::StrCat("\n  --", f.name, " ")) ||
                  absl::StrContains(help, absl::StrCat("\n  --", f.name, "\n")))
          << c.name << " --help does not list --" << f.name;
    }
    EXPECT_TRUE(absl::StrContains(help, "\n  --help ")) << c.name;
    EXPECT_TRUE(absl::StrContains(help, "EXIT CODES")) << c.name;
  }
}

TEST(CommandTableTest, HiddenFlagsStayOutOfHelp) {
  const Command* verify = FindCommand("verify");
  ASSERT_NE(verify, nullptr);
  EXPECT_FALSE(absl::StrContains(CommandHelp(*verify), "--store-dir"));
}

TEST(CommandTableTest, MainHelpListsEveryCommandAndBothModes) {
  const std::string help = MainHelp(Commands());
  for (const Command& c : Commands()) {
    EXPECT_TRUE(absl::StrContains(help, absl::StrCat("\n  ", c.name, " "))) << c.name;
  }
  EXPECT_TRUE(absl::StrContains(help, "bench"));
  EXPECT_TRUE(absl::StrContains(help, "MODES"));
  EXPECT_TRUE(absl::StrContains(help, "native, the default"));
  EXPECT_TRUE(absl::StrContains(help, "identical traces"));
}

// `reshard` lists and forwards (cli/backend_exec.h) exactly the commands
// that reshard-backends adds to the planning ones, with the same summaries,
// so that both programs' reshard --help are the same.
TEST(CommandTableTest, ReshardForwardsEveryBackendCommandWithItsSummary) {
  const std::vector<Command> planning = PlanningCommands();
  const std::vector<Command> backend = BackendCommands();
  const std::vector<Command> forwarded = ForwardedBackendCommands();
  ASSERT_EQ(Commands().size(), planning.size() + backend.size());
  ASSERT_EQ(forwarded.size(), backend.size());
  for (size_t i = 0; i < Commands().size(); ++i) {
    const Command& c = i < planning.size() ? planning[i] : backend[i - planning.size()];
    EXPECT_EQ(Commands()[i].name, c.name) << i;
  }
  for (size_t i = 0; i < backend.size(); ++i) {
    EXPECT_EQ(forwarded[i].name, backend[i].name);
    EXPECT_EQ(forwarded[i].summary, backend[i].summary);
    EXPECT_EQ(forwarded[i].error_prefix, backend[i].error_prefix);
    EXPECT_TRUE(forwarded[i].pass_through != nullptr) << forwarded[i].name;
  }
  std::vector<Command> reshard = planning;
  reshard.insert(reshard.end(), forwarded.begin(), forwarded.end());
  EXPECT_EQ(MainHelp(reshard), MainHelp(Commands()));
}

}  // namespace
}  // namespace reshard
