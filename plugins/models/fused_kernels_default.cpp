// fused_kernels_impl.h for this instruction set (CMakeLists.txt sets its flags and CPU_CAPABILITY).
#define PLUGTRAIN_FUSED_KERNEL_TABLE default_kernels
#include "fused_kernels_impl.h"
