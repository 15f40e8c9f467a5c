#include "collectives/gloo/listen_address.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace reshard {
namespace {

// The interface's first IPv4 address is what Gloo listens on (its tcp attr).
absl::Status CheckInterface(const std::string& name) {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("interface: cannot list this host's interfaces: ", std::strerror(errno)));
  }
  bool exists = false, ipv4 = false;
  std::vector<std::string> names;
  for (ifaddrs* a = list; a != nullptr; a = a->ifa_next) {
    if (a->ifa_addr != nullptr && a->ifa_addr->sa_family == AF_INET) names.push_back(a->ifa_name);
    if (name != a->ifa_name) continue;
    exists = true;
    ipv4 = ipv4 || (a->ifa_addr != nullptr && a->ifa_addr->sa_family == AF_INET);
  }
  freeifaddrs(list);
  if (ipv4) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("interface: '", name, "' ",
                   exists ? "has no IPv4 address" : "is not an interface of this host",
                   "; those with an IPv4 address: ", absl::StrJoin(names, ", ")));
}

// Binding port 0 on the address is what a listening rank does first.
absl::Status CheckHostname(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (int err = getaddrinfo(host.c_str(), nullptr, &hints, &found); err != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("hostname: '", host, "' does not resolve: ", gai_strerror(err)));
  }
  std::string why = "no address";
  bool bound = false;
  for (addrinfo* a = found; a != nullptr && !bound; a = a->ai_next) {
    const int fd = socket(a->ai_family, SOCK_STREAM, 0);
    if (fd < 0) continue;
    bound = bind(fd, a->ai_addr, a->ai_addrlen) == 0;  // port 0 in the address: any port
    if (!bound) why = std::strerror(errno);
    close(fd);
  }
  freeaddrinfo(found);
  if (bound) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("hostname: '", host, "' is not an address this host can listen on (", why, ")"));
}

}  // namespace

absl::Status CheckListenAddress(const GlooOptions& options) {
  if (!options.interface.empty()) return CheckInterface(options.interface);
  return CheckHostname(options.hostname);
}

}  // namespace reshard
