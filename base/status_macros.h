// Status plumbing for functions that return absl::Status or absl::StatusOr.
// Debian's Abseil does not ship absl/status/status_macros.h, so reshard has
// its own two macros:
//
//   absl::Status Run() {
//     RESHARD_RETURN_IF_ERROR(Check());                  // returns Check()'s error
//     RESHARD_ASSIGN_OR_RETURN(Plan plan, MakePlan());   // or its value
//     ...
//   }
#ifndef RESHARD_BASE_STATUS_MACROS_H_
#define RESHARD_BASE_STATUS_MACROS_H_

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

// Evaluates `expr` (an absl::Status) once and returns it from the enclosing
// function unless it is OK.
#define RESHARD_RETURN_IF_ERROR(expr)                                     \
  do {                                                                    \
    if (::absl::Status reshard_status_ = (expr); !reshard_status_.ok()) { \
      return reshard_status_;                                             \
    }                                                                     \
  } while (false)

// Evaluates `rexpr` (an absl::StatusOr<T>) once; returns its status from the
// enclosing function unless it is OK, else declares or assigns `lhs` from its
// value (moved): RESHARD_ASSIGN_OR_RETURN(auto x, F()); or (x, F());
#define RESHARD_ASSIGN_OR_RETURN(lhs, rexpr) \
  RESHARD_ASSIGN_OR_RETURN_IMPL_(RESHARD_STATUS_CONCAT_(reshard_statusor_, __LINE__), lhs, rexpr)

#define RESHARD_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, rexpr) \
  auto statusor = (rexpr);                                   \
  if (!statusor.ok()) return std::move(statusor).status();   \
  lhs = *std::move(statusor)

#define RESHARD_STATUS_CONCAT_(a, b) RESHARD_STATUS_CONCAT_IMPL_(a, b)
#define RESHARD_STATUS_CONCAT_IMPL_(a, b) a##b

#endif  // RESHARD_BASE_STATUS_MACROS_H_
