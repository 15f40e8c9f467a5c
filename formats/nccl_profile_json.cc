#include "formats/nccl_profile_json.h"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/utf8.h"

namespace reshard {
namespace {

using json = nlohmann::json;

absl::Status KeyError(absl::string_view source, absl::string_view key, absl::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat(source, ": key \"", key, "\": ", message));
}

constexpr const char* kKeys[] = {"name",        "arch",          "gpus_per_host", "nvlink_gbps",
                                 "nvswitch",    "nics_per_host", "nic_gbps",      "amd_cpu",
                                 "memory_gbps", "model"};
constexpr int kRequired = 9;  // all but "model"

absl::Status CheckKeys(const json& object, absl::string_view source) {
  if (!object.is_object()) {
    return absl::InvalidArgumentError(absl::StrCat(
        source, ": the profile must be a JSON object, got ", Abbreviate(object.dump(), 40)));
  }
  for (const auto& item : object.items()) {
    if (std::find_if(std::begin(kKeys), std::end(kKeys),
                     [&](const char* k) { return item.key() == k; }) == std::end(kKeys)) {
      return KeyError(source, Abbreviate(item.key(), 64),
                      absl::StrCat("unknown key (known: ", absl::StrJoin(kKeys, ", "), ")"));
    }
  }
  for (int i = 0; i < kRequired; ++i) {
    if (!object.contains(kKeys[i])) return KeyError(source, kKeys[i], "missing");
  }
  if (object.contains("model") && object["model"] != "nccl") {
    return KeyError(source, "model",
                    absl::StrCat("must be \"nccl\", got ", Abbreviate(object["model"].dump(), 40)));
  }
  return absl::OkStatus();
}

absl::Status Expected(absl::string_view source, const char* key, const char* what, const json& v) {
  return KeyError(source, key, absl::StrCat("expected ", what, ", got ", Abbreviate(v.dump(), 40)));
}

}  // namespace

absl::StatusOr<NcclProfile> NcclProfileFromJson(const json& o, absl::string_view source) {
  if (absl::Status s = CheckKeys(o, source); !s.ok()) return s;
  NcclProfile p;
  if (!o["name"].is_string()) return Expected(source, "name", "a string", o["name"]);
  p.name = o["name"].get<std::string>();
  if (!o["arch"].is_string() || !ParseGpuArch(o["arch"].get<std::string>(), &p.arch)) {
    return Expected(source, "arch", "\"volta\", \"ampere\", \"hopper\" or \"blackwell\"",
                    o["arch"]);
  }
  for (const char* key : {"gpus_per_host", "nics_per_host"}) {
    if (!o[key].is_number_integer()) return Expected(source, key, "an integer", o[key]);
  }
  p.gpus_per_host = o["gpus_per_host"].get<int>();
  p.nics_per_host = o["nics_per_host"].get<int>();
  for (const char* key : {"nvswitch", "amd_cpu"}) {
    if (!o[key].is_boolean()) return Expected(source, key, "true or false", o[key]);
  }
  p.nvswitch = o["nvswitch"].get<bool>();
  p.amd_cpu = o["amd_cpu"].get<bool>();
  const std::pair<const char*, double*> numbers[] = {
      {"nvlink_gbps", &p.nvlink_gbps}, {"nic_gbps", &p.nic_gbps}, {"memory_gbps", &p.memory_gbps}};
  for (const auto& [key, out] : numbers) {
    if (!o[key].is_number()) return Expected(source, key, "a number", o[key]);
    *out = o[key].get<double>();
  }
  if (absl::Status s = ValidateNcclProfile(p); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": ", s.message()));
  }
  return p;
}

json NcclProfileToJson(const NcclProfile& p) {
  return json{{"name", p.name},
              {"model", "nccl"},
              {"arch", std::string(GpuArchName(p.arch))},
              {"gpus_per_host", p.gpus_per_host},
              {"nvlink_gbps", p.nvlink_gbps},
              {"nvswitch", p.nvswitch},
              {"nics_per_host", p.nics_per_host},
              {"nic_gbps", p.nic_gbps},
              {"amd_cpu", p.amd_cpu},
              {"memory_gbps", p.memory_gbps}};
}

absl::StatusOr<NcclProfile> ReadNcclProfile(const std::string& name_or_path) {
  const std::vector<std::string> names = NcclProfileNames();
  if (std::find(names.begin(), names.end(), name_or_path) != names.end()) {
    return BuiltinNcclProfile(name_or_path);
  }
  std::ifstream in(name_or_path);
  if (!in) {
    return absl::NotFoundError(absl::StrCat(Abbreviate(name_or_path, 200),
                                            ": neither a built-in nccl profile (",
                                            absl::StrJoin(names, ", "), ") nor a readable file"));
  }
  std::stringstream text;
  text << in.rdbuf();
  json object;
  try {
    object = json::parse(text.str());
  } catch (const json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(
        Abbreviate(name_or_path, 200), ": not JSON: ", Abbreviate(e.what(), kMaxJsonErrorBytes)));
  }
  return NcclProfileFromJson(object, name_or_path);
}

}  // namespace reshard
