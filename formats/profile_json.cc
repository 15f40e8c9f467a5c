#include "formats/profile_json.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/bounded_input.h"
#include "base/utf8.h"

namespace reshard {
namespace {

using json = nlohmann::json;

absl::Status KeyError(absl::string_view source, absl::string_view key, absl::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat(source, ": key \"", key, "\": ", message));
}

std::string Join(absl::string_view prefix, absl::string_view key) {
  return absl::StrCat(prefix, prefix.empty() ? "" : ".", key);
}

// Only `allowed` keys, and every one of the first `required` of them.
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
      return KeyError(source, Join(prefix, Abbreviate(item.key(), 64)),
                      absl::StrCat("unknown key (known: ", absl::StrJoin(allowed, ", "), ")"));
    }
  }
  for (const char* k : allowed) {
    if (required-- <= 0) break;
    if (!object.contains(k)) return KeyError(source, Join(prefix, k), "missing");
  }
  return absl::OkStatus();
}

absl::Status GetNumber(const json& object, absl::string_view source, absl::string_view prefix,
                       const char* key, double* out) {
  const json& v = object[key];
  if (!v.is_number()) {
    return KeyError(source, Join(prefix, key),
                    absl::StrCat("expected a number, got ", Abbreviate(v.dump(), 40)));
  }
  *out = v.get<double>();
  return absl::OkStatus();
}

absl::Status GetLink(const json& v, absl::string_view source, absl::string_view prefix,
                     LinkProfile* link) {
  if (absl::Status s = CheckKeys(v, source, prefix, {"alpha_us", "beta_gbps"}, 2); !s.ok())
    return s;
  if (absl::Status s = GetNumber(v, source, prefix, "alpha_us", &link->alpha_us); !s.ok()) return s;
  return GetNumber(v, source, prefix, "beta_gbps", &link->beta_gbps);
}

absl::Status GetSample(const json& v, absl::string_view source, const std::string& prefix,
                       MeasuredSample* s) {
  if (absl::Status st = CheckKeys(v, source, prefix, {"bytes", "us", "min_us", "max_us"}, 2);
      !st.ok()) {
    return st;
  }
  if (absl::Status st = GetNumber(v, source, prefix, "bytes", &s->bytes); !st.ok()) return st;
  if (absl::Status st = GetNumber(v, source, prefix, "us", &s->us); !st.ok()) return st;
  s->min_us = s->max_us = s->us;  // no spread recorded: the median alone
  if (v.contains("min_us")) {
    if (absl::Status st = GetNumber(v, source, prefix, "min_us", &s->min_us); !st.ok()) return st;
  }
  if (v.contains("max_us")) return GetNumber(v, source, prefix, "max_us", &s->max_us);
  return absl::OkStatus();
}

absl::Status GetKind(const json& v, absl::string_view source, const std::string& key,
                     StepKind* kind) {
  for (StepKind k : kAllStepKinds) {
    if (v.is_string() && v.get<std::string>() == StepKindName(k)) {
      *kind = k;
      return absl::OkStatus();
    }
  }
  return KeyError(source, key,
                  absl::StrCat("expected a collective's name (all_gather, reduce_scatter, "
                               "all_reduce, all_to_all, permute), got ",
                               Abbreviate(v.dump(), 40)));
}

absl::Status GetTable(const json& v, absl::string_view source, const std::string& prefix,
                      MeasuredTable* t) {
  if (absl::Status s = CheckKeys(v, source, prefix, {"kind", "n", "fit", "samples", "group"}, 4);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = GetKind(v["kind"], source, prefix + ".kind", &t->kind); !s.ok()) return s;
  if (!v["n"].is_number_integer()) {
    return KeyError(source, prefix + ".n",
                    absl::StrCat("expected an integer, got ", Abbreviate(v["n"].dump(), 40)));
  }
  t->n = v["n"].get<int64_t>();
  if (v.contains("group")) {
    if (!v["group"].is_string()) {
      return KeyError(source, prefix + ".group",
                      absl::StrCat("expected a string, got ", Abbreviate(v["group"].dump(), 40)));
    }
    t->group = v["group"].get<std::string>();
  }
  if (absl::Status s = GetLink(v["fit"], source, prefix + ".fit", &t->fit); !s.ok()) return s;
  const json& samples = v["samples"];
  if (!samples.is_array()) {
    return KeyError(source, prefix + ".samples",
                    absl::StrCat("expected an array, got ", Abbreviate(samples.dump(), 40)));
  }
  t->samples.resize(samples.size());
  for (size_t i = 0; i < samples.size(); ++i) {
    const std::string at = absl::StrCat(prefix, ".samples[", i, "]");
    if (absl::Status s = GetSample(samples[i], source, at, &t->samples[i]); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status GetVersion(const json& object, absl::string_view source, int* version) {
  *version = 1;
  if (object.contains("version")) {
    const json& v = object["version"];
    if (!v.is_number_integer() || (v.get<int64_t>() != 1 && v.get<int64_t>() != 2)) {
      return KeyError(source, "version",
                      absl::StrCat("expected 1 or 2, got ", Abbreviate(v.dump(), 40),
                                   " (a newer reshard may have written it)"));
    }
    *version = v.get<int>();
  }
  if (*version == 1 && object.contains("tables")) {
    return KeyError(source, "tables", "measured tables need \"version\": 2");
  }
  if (*version == 2 && !object.contains("tables")) return KeyError(source, "tables", "missing");
  return absl::OkStatus();
}

absl::Status GetMachine(const json& object, absl::string_view source, CostProfile* p) {
  if (!object["name"].is_string()) {
    return KeyError(source, "name",
                    absl::StrCat("expected a string, got ", Abbreviate(object["name"].dump(), 40)));
  }
  p->name = object["name"].get<std::string>();
  if (absl::Status s = GetLink(object["intra_host"], source, "intra_host", &p->intra_host);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = GetLink(object["inter_host"], source, "inter_host", &p->inter_host);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = GetNumber(object, source, "", "memory_gbps", &p->memory_gbps); !s.ok()) {
    return s;
  }
  // Optional (older files have none): the per-call latency, 0 if absent.
  if (object.contains("call_us")) {
    if (absl::Status s = GetNumber(object, source, "", "call_us", &p->call_us); !s.ok()) return s;
  }
  if (absl::Status s = ValidateCostProfile(*p); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": ", s.message()));
  }
  return absl::OkStatus();
}

absl::StatusOr<json> ParseFile(const std::string& path) {
  absl::StatusOr<std::string> text = ReadBoundedFile(path, kMaxProfileFileBytes);
  if (!text.ok()) return text.status();
  if (absl::Status s = CheckJsonNesting(*text, path, kMaxProfileJsonDepth); !s.ok()) return s;
  try {
    return json::parse(*text);
  } catch (const json::exception& e) {
    // The library quotes the token it stopped at, which may be most of the
    // file and any bytes: shortened, valid UTF-8.
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": not JSON: ", Abbreviate(e.what(), kMaxJsonErrorBytes)));
  }
}

json LinkJson(const LinkProfile& l) {
  return json{{"alpha_us", l.alpha_us}, {"beta_gbps", l.beta_gbps}};
}

}  // namespace

absl::StatusOr<LoadedProfile> LoadedProfileFromJson(const json& object, absl::string_view source) {
  if (absl::Status s = CheckKeys(object, source, "",
                                 {"name", "intra_host", "inter_host", "memory_gbps", "call_us",
                                  "version", "tables", "fit"},
                                 4);
      !s.ok()) {
    return s;
  }
  LoadedProfile out;
  if (absl::Status s = GetVersion(object, source, &out.version); !s.ok()) return s;
  if (absl::Status s = GetMachine(object, source, &out.measured.machine); !s.ok()) return s;
  if (out.version == 1) return out;
  const json& tables = object["tables"];
  if (!tables.is_array()) {
    return KeyError(source, "tables",
                    absl::StrCat("expected an array, got ", Abbreviate(tables.dump(), 40)));
  }
  out.measured.tables.resize(tables.size());
  for (size_t i = 0; i < tables.size(); ++i) {
    const std::string at = absl::StrCat("tables[", i, "]");
    if (absl::Status s = GetTable(tables[i], source, at, &out.measured.tables[i]); !s.ok()) {
      return s;
    }
  }
  if (absl::Status s = ValidateMeasuredProfile(out.measured); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": ", s.message()));
  }
  return out;
}

absl::StatusOr<LoadedProfile> ReadLoadedProfileFile(const std::string& path) {
  absl::StatusOr<json> object = ParseFile(path);
  if (!object.ok()) return object.status();
  return LoadedProfileFromJson(*object, path);
}

absl::StatusOr<CostProfile> ProfileFromJson(const json& object, absl::string_view source) {
  absl::StatusOr<LoadedProfile> p = LoadedProfileFromJson(object, source);
  if (!p.ok()) return p.status();
  return p->measured.machine;
}

absl::StatusOr<CostProfile> ReadProfileFile(const std::string& path) {
  absl::StatusOr<LoadedProfile> p = ReadLoadedProfileFile(path);
  if (!p.ok()) return p.status();
  return p->measured.machine;
}

json ProfileToJson(const CostProfile& p) {
  json out = json::object();
  out["name"] = p.name;
  out["intra_host"] = LinkJson(p.intra_host);
  out["inter_host"] = LinkJson(p.inter_host);
  out["memory_gbps"] = p.memory_gbps;
  if (p.call_us != 0) out["call_us"] = p.call_us;
  return out;
}

json MeasuredProfileToJson(const MeasuredProfile& p) {
  json out = ProfileToJson(p.machine);
  out["version"] = 2;
  json tables = json::array();
  for (const MeasuredTable& t : p.tables) {
    json samples = json::array();
    for (const MeasuredSample& s : t.samples) {
      samples.push_back(
          {{"bytes", s.bytes}, {"us", s.us}, {"min_us", s.min_us}, {"max_us", s.max_us}});
    }
    tables.push_back({{"kind", std::string(StepKindName(t.kind))},
                      {"n", t.n},
                      {"group", t.group},
                      {"fit", LinkJson(t.fit)},
                      {"samples", samples}});
  }
  out["tables"] = tables;
  return out;
}

absl::Status WriteProfileFile(const std::string& path, const json& profile) {
  std::string text;
  try {
    text = profile.dump(2) + "\n";
  } catch (const json::exception& e) {
    return absl::InvalidArgumentError(
        absl::StrCat(Utf8Valid(path), ": cannot write the profile: ", e.what()));
  }
  const std::string tmp = absl::StrCat(path, ".tmp.", getpid());
  std::ofstream out(tmp);
  out << text;
  out.close();
  if (!out || std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return absl::InvalidArgumentError(absl::StrCat(Utf8Valid(path), ": cannot write the profile"));
  }
  return absl::OkStatus();
}

const absl::StatusOr<LoadedProfile>& ProfileCache::Get(const std::string& path) {
  auto it = profiles_.find(path);
  if (it == profiles_.end()) it = profiles_.emplace(path, ReadLoadedProfileFile(path)).first;
  return it->second;
}

}  // namespace reshard
