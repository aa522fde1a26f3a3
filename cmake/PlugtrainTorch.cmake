# LibTorch from the torch wheel (scripts/setup passes its share/cmake as CMAKE_PREFIX_PATH).
#
# The host must not depend on CUDA at link time, so instead of the umbrella `torch`
# target (which pulls torch_cuda in a CUDA build) we expose two narrow targets:
#   plugtrain::torch_cpu  - c10 + torch_cpu + headers: the host, CPU/MPS/model plugins
#   plugtrain::torch_cuda - adds torch_cuda + c10_cuda: only the CUDA backend plugin
include(PlugtrainPlugin)  # plugtrain_torch_lib_dir()
find_package(Torch REQUIRED)

add_library(plugtrain_torch_cpu INTERFACE)
target_include_directories(plugtrain_torch_cpu SYSTEM INTERFACE ${TORCH_INCLUDE_DIRS})
target_link_libraries(plugtrain_torch_cpu INTERFACE torch_cpu c10)
add_library(plugtrain::torch_cpu ALIAS plugtrain_torch_cpu)

if(TARGET torch_cuda)
  add_library(plugtrain_torch_cuda INTERFACE)
  # torch_cuda_library links libtorch_cuda with --no-as-needed: nothing in the plugin calls it
  # directly, but loading it is what registers LibTorch's CUDA kernels.
  target_link_libraries(plugtrain_torch_cuda INTERFACE plugtrain_torch_cpu torch_cuda_library c10_cuda)
  add_library(plugtrain::torch_cuda ALIAS plugtrain_torch_cuda)
endif()

# Directory holding libtorch_cpu.so etc.; tests use it to find the runtime libraries.
plugtrain_torch_lib_dir(PLUGTRAIN_TORCH_LIB_DIR)
message(STATUS "plugtrain: LibTorch ${Torch_VERSION} in ${PLUGTRAIN_TORCH_LIB_DIR}")
# Where installed binaries and plugins look for LibTorch at run time (their RUNPATH; the
# dynamic loader's LD_LIBRARY_PATH still comes first). Packagers point it at the LibTorch
# the target machines have.
set(PLUGTRAIN_TORCH_RUNTIME_DIR "${PLUGTRAIN_TORCH_LIB_DIR}" CACHE PATH "LibTorch's library folder on the machines that run plugtrain")
