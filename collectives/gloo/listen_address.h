// Checks, before any rank starts, that the address Gloo's ranks would listen
// on (GlooOptions::hostname or ::interface) exists on this host: a typo is
// then one message about the input, not a failed case per rank.
//
//   RESHARD_RETURN_IF_ERROR(CheckListenAddress(options));
#ifndef RESHARD_COLLECTIVES_GLOO_LISTEN_ADDRESS_H_
#define RESHARD_COLLECTIVES_GLOO_LISTEN_ADDRESS_H_

#include "absl/status/status.h"
#include "collectives/gloo/gloo_communicator.h"

namespace reshard {

// InvalidArgument naming the field ("interface" or "hostname") when the
// interface does not exist or has no IPv4 address, or when the hostname does
// not resolve to an address a socket on this host can bind.
absl::Status CheckListenAddress(const GlooOptions& options);

}  // namespace reshard

#endif  // RESHARD_COLLECTIVES_GLOO_LISTEN_ADDRESS_H_
