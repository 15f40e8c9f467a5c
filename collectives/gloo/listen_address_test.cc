// The up-front check of where ranks listen (collectives/gloo/listen_address.h):
// loopback passes by address and by interface; an unknown interface or an
// address of no local interface is InvalidArgument naming the field.
#include "collectives/gloo/listen_address.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace reshard {
namespace {

using ::testing::HasSubstr;

TEST(ListenAddress, LoopbackPassesByAddressAndByInterface) {
  GlooOptions o;
  EXPECT_TRUE(CheckListenAddress(o).ok()) << CheckListenAddress(o);
  o.interface = "lo";
  EXPECT_TRUE(CheckListenAddress(o).ok()) << CheckListenAddress(o);
}

TEST(ListenAddress, AnUnknownInterfaceIsBadInputNamingIt) {
  GlooOptions o;
  o.interface = "nosuch0";
  const absl::Status s = CheckListenAddress(o);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(s.message(), HasSubstr("interface: 'nosuch0' is not an interface of this host"));
  EXPECT_THAT(s.message(), HasSubstr("lo"));  // the ones there are
}

TEST(ListenAddress, AnAddressOfNoLocalInterfaceIsBadInputNamingIt) {
  GlooOptions o;
  o.hostname = "192.0.2.1";  // TEST-NET-1 (RFC 5737): never a local address
  const absl::Status s = CheckListenAddress(o);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(s.message(), HasSubstr("hostname: '192.0.2.1' is not an address this host can"));
  o.hostname = "no.such.host.invalid";
  EXPECT_EQ(CheckListenAddress(o).code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace reshard
