// UTF-8 hygiene for text that reaches a user: messages and JSON output may
// quote input, and input may hold any bytes. Everything reshard prints goes
// through these, so that its output is always valid UTF-8 and a quote of a
// huge input stays short.
//
//   Utf8Valid("S(0)\xff")          -> "S(0)\uFFFD"
//   Abbreviate(ten_megabytes, 40)  -> its first <= 37 bytes (whole characters) + "..."
#ifndef RESHARD_BASE_UTF8_H_
#define RESHARD_BASE_UTF8_H_

#include <cstddef>
#include <string>

#include "absl/strings/string_view.h"

namespace reshard {

// True when `text` is well-formed UTF-8 (RFC 3629: no overlong forms, no
// surrogates, nothing above U+10FFFF).
bool IsValidUtf8(absl::string_view text);

// `text` with every byte that is not part of a well-formed UTF-8 sequence
// replaced by U+FFFD (the replacement character).
std::string Utf8Valid(absl::string_view text);

// Utf8Valid(text) if it fits in `max_bytes`; otherwise its longest prefix of
// whole characters that leaves room for "...", then "...". `max_bytes` >= 4.
std::string Abbreviate(absl::string_view text, size_t max_bytes);

// How much of a JSON parser's message reshard shows (Abbreviate): it quotes
// the token where parsing stopped, which may be most of the input.
inline constexpr size_t kMaxJsonErrorBytes = 300;

}  // namespace reshard

#endif  // RESHARD_BASE_UTF8_H_
