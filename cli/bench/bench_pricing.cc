#include "cli/bench/bench_pricing.h"

#include <cstdlib>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "base/utf8.h"
#include "formats/profile_json.h"
#include "planner/costs/alpha_beta_cost_model.h"
#include "planner/costs/measured_cost_model.h"

namespace reshard {
namespace {

constexpr char kBuiltinJson[] =
#include "cli/bench/builtin_gloo_profile.inc"
    ;

absl::StatusOr<BenchPricing> FromLoaded(const LoadedProfile& loaded, std::string profile,
                                        std::string source, int64_t devices_per_host) {
  BenchPricing p;
  absl::StatusOr<std::shared_ptr<const CostModel>> model =
      loaded.version >= 2 ? MakeMeasuredCostModel(loaded.measured, devices_per_host)
                          : MakeAlphaBetaCostModel(loaded.measured.machine, devices_per_host);
  if (!model.ok()) return model.status();
  p.model = *model;
  p.model_name = loaded.version >= 2 ? "measured" : "alpha-beta";
  p.profile = std::move(profile);
  p.source = std::move(source);
  p.description =
      absl::StrCat(p.model_name, " (profile: ", Utf8Valid(p.profile), ", ", p.source, ")");
  return p;
}

}  // namespace

std::string DefaultProfilePath() {
  const char* xdg = std::getenv("XDG_CONFIG_HOME");
  if (xdg != nullptr && *xdg != '\0') return absl::StrCat(xdg, "/reshard/gloo-profile.json");
  const char* home = std::getenv("HOME");
  if (home != nullptr && *home != '\0') {
    return absl::StrCat(home, "/.config/reshard/gloo-profile.json");
  }
  return "";
}

const char* BuiltinGlooProfileJson() { return kBuiltinJson; }

absl::StatusOr<BenchPricing> ResolveBenchPricing(const std::string& flag,
                                                 int64_t devices_per_host) {
  if (!flag.empty() && flag != "builtin") {
    absl::StatusOr<LoadedProfile> loaded = ReadLoadedProfileFile(flag);
    if (!loaded.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("--profile: ", loaded.status().message()));
    }
    return FromLoaded(*loaded, flag, "from --profile", devices_per_host);
  }
  const std::string path = DefaultProfilePath();
  std::error_code ignored;
  if (flag.empty() && !path.empty() && std::filesystem::exists(path, ignored)) {
    absl::StatusOr<LoadedProfile> loaded = ReadLoadedProfileFile(path);
    if (!loaded.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("the default profile ", loaded.status().message(),
                       " (fix or remove it, or give --profile builtin)"));
    }
    return FromLoaded(*loaded, path, "the default path", devices_per_host);
  }
  const nlohmann::json object = nlohmann::json::parse(kBuiltinJson);
  absl::StatusOr<LoadedProfile> loaded = LoadedProfileFromJson(object, "built-in profile");
  if (!loaded.ok()) return loaded.status();  // a build error: tests read it too
  return FromLoaded(*loaded, absl::StrCat("built-in ", loaded->measured.machine.name), "built in",
                    devices_per_host);
}

}  // namespace reshard
