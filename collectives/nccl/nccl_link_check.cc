// Proves that the NCCL backend links against libnccl and libcudart: it takes
// the address of every entry point of nccl_communicator.h, cuda_copy_engine.h
// and nccl_cross_mesh.h, so the linker must resolve all of their NCCL and
// CUDA symbols. It is built by `bazel build --config=cuda //...`; linking is the
// check, so no test runs it; if run, it only prints the NCCL versions. Without --config=cuda
// (RESHARD_CUDA unset) it is a stub that says so.
#include <cstdio>

#ifdef RESHARD_CUDA
#include <nccl.h>

#include "collectives/nccl/cuda_copy_engine.h"
#include "collectives/nccl/nccl_communicator.h"
#include "collectives/nccl/nccl_cross_mesh.h"

int main() {
  // volatile: the references must survive optimisation.
  volatile const void* entry_points[] = {
      reinterpret_cast<const void*>(&reshard::NcclCommunicator::Connect),
      reinterpret_cast<const void*>(&reshard::CudaCopyEngine::Create),
      reinterpret_cast<const void*>(&reshard::ConnectNcclAcross),
  };
  // Every virtual function is referenced through the vtables, which Connect
  // and Create pull in.
  int version = 0;
  ncclGetVersion(&version);
  std::printf("nccl backend linked: NCCL headers %d, library %d (%zu entry points)\n",
              NCCL_VERSION_CODE, version, sizeof(entry_points) / sizeof(entry_points[0]));
  return 0;
}
#else
int main() {
  std::printf("built without --config=cuda: the nccl backend is not compiled\n");
  return 0;
}
#endif
