#include "process/host_heap.h"

#include <climits>
#include <cstdlib>
#include <mutex>
#include <string_view>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace plugtrain {

namespace {

std::mutex holders_mutex;
int holders = 0;  // runs alive that changed the settings

// glibc's settings as its own dynamic thresholds leave them once a process has freed a block of
// 32 MiB: mmap threshold at its ceiling (DEFAULT_MMAP_THRESHOLD_MAX, 32 MiB on 64-bit) and trim
// threshold twice that. mallopt cannot switch the dynamic adjustment back on, and glibc's
// initial 128 KiB would map every tensor over 128 KiB anew: worse than a process that never
// had the setting. Then the free pages are given back (as the CPU backend's
// release_cached_memory does; plugins/backend_cpu/host_memory.cpp).
constexpr int kGlibcMmapCeiling = 32 * 1024 * 1024;

void glibc_defaults() {
#if defined(__GLIBC__)
  mallopt(M_MMAP_THRESHOLD, kGlibcMmapCeiling);
  mallopt(M_TRIM_THRESHOLD, 2 * kGlibcMmapCeiling);
  malloc_trim(0);
#endif
}

int largest_heap_block = 0;  // the mmap threshold set while holders > 0

std::string kept_line() {
  return std::string("host heap keeps freed memory for the next step (blocks under ") +
         (largest_heap_block == INT_MAX ? "2 GiB" : "32 MiB") + " from the heap, no trim)";
}

// What in the environment already decides how the heap behaves ("" when nothing does).
std::string environment_choice() {
  for (const char* name : {"MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "MALLOC_TOP_PAD_", "MALLOC_MMAP_MAX_"})
    if (std::getenv(name)) return name;
  if (const char* tunables = std::getenv("GLIBC_TUNABLES");
      tunables && std::string_view(tunables).find("glibc.malloc.") != std::string_view::npos)
    return "GLIBC_TUNABLES";
  if (const char* preload = std::getenv("LD_PRELOAD")) {
    const std::string_view p(preload);
    for (const char* allocator : {"jemalloc", "tcmalloc", "mimalloc"})
      if (p.find(allocator) != std::string_view::npos) return std::string("LD_PRELOAD's ") + allocator;
  }
  return "";
}

}  // namespace

HostHeapChange keep_freed_host_memory() {
#if defined(__GLIBC__)
  if (const std::string choice = environment_choice(); !choice.empty())
    return {false, "host heap as the environment sets it (" + choice + ")"};
  const std::lock_guard<std::mutex> lock(holders_mutex);
  if (holders > 0) {
    ++holders;
    return {true, kept_line()};
  }
  // mallopt takes an int: INT_MAX (2 GiB - 1) is the largest threshold it can set. glibc before
  // 2.35 refuses an mmap threshold above HEAP_MAX_SIZE / 2 (32 MiB on 64-bit): there blocks from
  // 32 MiB on are still mapped anew. The trim threshold has no such cap.
  largest_heap_block = INT_MAX;
  if (mallopt(M_MMAP_THRESHOLD, largest_heap_block) != 1) {
    largest_heap_block = kGlibcMmapCeiling;
    if (mallopt(M_MMAP_THRESHOLD, largest_heap_block) != 1) largest_heap_block = 0;
  }
  if (largest_heap_block == 0 || mallopt(M_TRIM_THRESHOLD, INT_MAX) != 1) {
    glibc_defaults();
    return {false, "host heap: glibc refused to keep freed memory (mallopt); each step maps its memory anew"};
  }
  ++holders;
  return {true, kept_line()};
#else
  return {false, ""};  // macOS's malloc keeps its own freed regions; nothing to do
#endif
}

void restore_host_heap() {
  const std::lock_guard<std::mutex> lock(holders_mutex);
  if (holders > 0 && --holders == 0) glibc_defaults();
}

}  // namespace plugtrain
