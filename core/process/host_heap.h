// The host heap between training steps, on a run whose device is the host CPU.
//
// glibc's malloc serves each block above its mmap threshold with a mmap of its own and unmaps
// it at free; the threshold starts at 128 KiB and rises, as such blocks are freed, to at most
// 32 MiB. It also trims the heap's freed top beyond twice the threshold.
// A training step frees its activations at the end and allocates them again in the next: for
// ResNet-18 on CIFAR (batch 128) that is about 1 GiB mapped, zeroed by the kernel page by page
// on first touch and unmapped again, every step: 250,000 minor page faults and 15 % of the
// step on 2 cores. PyTorch's CUDA caching allocator keeps freed blocks for the next step;
// this does the same for the host heap: blocks under 2 GiB (32 MiB on glibc before 2.35) come
// from the heap and its freed top is kept (mallopt M_MMAP_THRESHOLD and M_TRIM_THRESHOLD).
// Out-of-memory recovery still gives the free pages back (the CPU backend's
// release_cached_memory: malloc_trim).
//
// The environment wins: where MALLOC_MMAP_THRESHOLD_, MALLOC_TRIM_THRESHOLD_, MALLOC_TOP_PAD_,
// MALLOC_MMAP_MAX_ or GLIBC_TUNABLES (glibc.malloc.*) set glibc's malloc, or LD_PRELOAD brings
// another allocator (jemalloc, tcmalloc, mimalloc), nothing is changed.
#pragma once

#include <string>

namespace plugtrain {

struct HostHeapChange {
  bool changed = false;  // the settings were changed (put them back with restore_host_heap)
  std::string line;      // what the run's log says about the heap
};

// Keeps freed memory in the heap for the next step, unless the environment chose otherwise.
// Runs built side by side in one process (bench, doctor) share the setting: it is counted.
HostHeapChange keep_freed_host_memory();

// For each change made: once the last run that asked for it is gone, glibc's settings as its
// dynamic thresholds leave them after a training step (blocks from 32 MiB mapped anew, the top
// trimmed beyond 64 MiB) and the free pages given back.
void restore_host_heap();

}  // namespace plugtrain
