#include "cli/profile_json.h"

#include <fstream>
#include <sstream>

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

// Only `allowed` keys, and every one of `required`.
absl::Status CheckKeys(const json& object, absl::string_view source, absl::string_view prefix,
                       std::initializer_list<const char*> allowed, int required) {
  if (!object.is_object()) {
    return absl::InvalidArgumentError(absl::StrCat(
        source, ": ", prefix.empty() ? "the profile" : absl::StrCat("key \"", prefix, "\""),
        " must be a JSON object, got ", Abbreviate(object.dump(), 40)));
  }
  for (const auto& item : object.items()) {
    bool known = false;
    for (const char* k : allowed) known = known || item.key() == k;
    if (!known) {
      return KeyError(source, absl::StrCat(prefix, prefix.empty() ? "" : ".", Abbreviate(item.key(), 64)),
                      absl::StrCat("unknown key (known: ", absl::StrJoin(allowed, ", "), ")"));
    }
  }
  for (const char* k : allowed) {
    if (required-- <= 0) break;
    if (!object.contains(k)) {
      return KeyError(source, absl::StrCat(prefix, prefix.empty() ? "" : ".", k), "missing");
    }
  }
  return absl::OkStatus();
}

absl::Status GetNumber(const json& object, absl::string_view source, absl::string_view prefix,
                       const char* key, double* out) {
  const json& v = object[key];
  if (!v.is_number()) {
    return KeyError(source, absl::StrCat(prefix, prefix.empty() ? "" : ".", key),
                    absl::StrCat("expected a number, got ", Abbreviate(v.dump(), 40)));
  }
  *out = v.get<double>();
  return absl::OkStatus();
}

absl::Status GetLink(const json& object, absl::string_view source, const char* key,
                     LinkProfile* link) {
  const json& v = object[key];
  if (absl::Status s = CheckKeys(v, source, key, {"alpha_us", "beta_gbps"}, 2); !s.ok()) return s;
  if (absl::Status s = GetNumber(v, source, key, "alpha_us", &link->alpha_us); !s.ok()) return s;
  return GetNumber(v, source, key, "beta_gbps", &link->beta_gbps);
}

}  // namespace

absl::StatusOr<CostProfile> ProfileFromJson(const json& object, absl::string_view source) {
  if (absl::Status s = CheckKeys(object, source, "",
                                 {"name", "intra_host", "inter_host", "memory_gbps", "call_us",
                                  "fit"},
                                 4);
      !s.ok()) {
    return s;
  }
  CostProfile p;
  if (!object["name"].is_string()) {
    return KeyError(source, "name",
                    absl::StrCat("expected a string, got ", Abbreviate(object["name"].dump(), 40)));
  }
  p.name = object["name"].get<std::string>();
  if (absl::Status s = GetLink(object, source, "intra_host", &p.intra_host); !s.ok()) return s;
  if (absl::Status s = GetLink(object, source, "inter_host", &p.inter_host); !s.ok()) return s;
  if (absl::Status s = GetNumber(object, source, "", "memory_gbps", &p.memory_gbps); !s.ok()) {
    return s;
  }
  // Optional (older files have none): the per-call latency, 0 if absent.
  if (object.contains("call_us")) {
    if (absl::Status s = GetNumber(object, source, "", "call_us", &p.call_us); !s.ok()) return s;
  }
  if (absl::Status s = ValidateCostProfile(p); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": ", s.message()));
  }
  return p;
}

absl::StatusOr<CostProfile> ReadProfileFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot open the profile file"));
  std::stringstream text;
  text << in.rdbuf();
  json object;
  try {
    object = json::parse(text.str());
  } catch (const json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": not JSON: ", e.what()));
  }
  return ProfileFromJson(object, path);
}

json ProfileToJson(const CostProfile& p) {
  auto link = [](const LinkProfile& l) {
    return json{{"alpha_us", l.alpha_us}, {"beta_gbps", l.beta_gbps}};
  };
  json out = json::object();
  out["name"] = p.name;
  out["intra_host"] = link(p.intra_host);
  out["inter_host"] = link(p.inter_host);
  out["memory_gbps"] = p.memory_gbps;
  if (p.call_us != 0) out["call_us"] = p.call_us;
  return out;
}

absl::Status WriteProfileFile(const std::string& path, const json& profile) {
  std::ofstream out(path);
  out << profile.dump(2) << "\n";
  out.close();
  if (!out) return absl::InvalidArgumentError(absl::StrCat(path, ": cannot write the profile"));
  return absl::OkStatus();
}

const absl::StatusOr<CostProfile>& ProfileCache::Get(const std::string& path) {
  auto it = profiles_.find(path);
  if (it == profiles_.end()) it = profiles_.emplace(path, ReadProfileFile(path)).first;
  return it->second;
}

}  // namespace reshard
