#ifndef RESHARD_BASE_BYTE_SIZE_H_
#define RESHARD_BASE_BYTE_SIZE_H_

// A byte count as a person reads it in a message: "512 bytes", "1.5 KiB",
// "3.73 GiB" (three significant digits, binary units), never "9.31e-10 GiB".

#include <string>

namespace reshard {

std::string ShownBytes(double bytes);

}  // namespace reshard

#endif  // RESHARD_BASE_BYTE_SIZE_H_
