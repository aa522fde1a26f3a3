/* plugtrain SDK 5 — the plain-C handshake every plugin exports.
 *
 * The host dlopens a candidate file, looks up PLUGTRAIN_INFO_SYMBOL and reads this struct
 * BEFORE it touches any C++ symbol of the plugin. Only when the SDK version, the LibTorch version
 * and the C++ ABI tag match does it call the plugin's registration (plugin.h). Keep this header
 * C-compatible and free of LibTorch.
 *
 * The version rule (docs/plugins.md, "How the SDK changes"): the host takes plugins of exactly
 * its own SDK version, major and minor, as it takes them only for exactly its own LibTorch. So
 * the SDK's values (Capabilities, ModelSpec, DatasetRead, ...) cross the boundary as they are,
 * each answer in one representation. A minor version changes what plugins must be rebuilt
 * against but not their source; a major version changes their source (docs/migrating-to-sdk5.md).
 *
 * The handshake itself, unlike the rest, grows as PJRT's structs do: fields are only appended to
 * plugtrain_plugin_info, and struct_size says how far the plugin's copy reaches. A host checks
 * struct_size against the end of the last field it needs (PLUGTRAIN_INFO_FIELD_END), never
 * against its own sizeof, and reads a later field only where PLUGTRAIN_INFO_HAS says the plugin
 * has it. So a plugin built before a field was appended still loads, and a host older than the
 * plugin ignores the fields it does not know.
 */
#ifndef PLUGTRAIN_ABI_H
#define PLUGTRAIN_ABI_H

#include <stddef.h>
#include <stdint.h>

#define PLUGTRAIN_SDK_ABI_MAJOR 5
#define PLUGTRAIN_SDK_ABI_MINOR 0

/* The one symbol the host looks up first, by this exact name (unchanged since SDK 1, so the
 * host can name the SDK an old plugin was built against). */
#define PLUGTRAIN_INFO_SYMBOL "plugtrain_plugin_info_v1"

#ifdef __cplusplus
extern "C" {
#endif

/* What a plugin registers, as bits: one file may register several kinds (a vendor's backend,
 * its models and its data sets). The registration must give exactly the kinds named here. */
typedef enum plugtrain_plugin_kind {
  PLUGTRAIN_KIND_BACKEND = 1,
  PLUGTRAIN_KIND_MODELS = 2,
  PLUGTRAIN_KIND_DATASETS = 4,
  PLUGTRAIN_KIND_TASKS = 8,
  PLUGTRAIN_KIND_LOGGERS = 16
} plugtrain_plugin_kind;

/* Fields are only appended (see above). A host needs every field up to and
 * including `name`; `version` and `description` it reads when struct_size covers them. */
typedef struct plugtrain_plugin_info {
  uint32_t struct_size;      /* sizeof(plugtrain_plugin_info) the plugin was built with */
  uint32_t sdk_abi_major;
  uint32_t sdk_abi_minor;
  uint32_t kinds;            /* plugtrain_plugin_kind bits (SDK 3: one kind, 1 to 4) */
  const char* torch_version; /* LibTorch version the plugin was compiled against */
  const char* cxx_abi;       /* e.g. "libstdc++ cxx11-abi=1" */
  const char* compiler;      /* e.g. "gcc 12.2.0" (informational) */
  const char* name;          /* unique plugin name, e.g. "cpu" */
  const char* version;       /* the plugin's own version */
  const char* description;   /* one line */
} plugtrain_plugin_info;

typedef const plugtrain_plugin_info* (*plugtrain_plugin_info_fn)(void);

/* Where a field of the handshake ends, in bytes from its start; and whether a plugin's copy,
 * as long as its struct_size says, reaches the end of that field. */
#define PLUGTRAIN_INFO_FIELD_END(FIELD) \
  (offsetof(plugtrain_plugin_info, FIELD) + sizeof(((const plugtrain_plugin_info*)0)->FIELD))
#define PLUGTRAIN_INFO_HAS(INFO, FIELD) ((size_t)(INFO)->struct_size >= PLUGTRAIN_INFO_FIELD_END(FIELD))

/* Optional lifecycle hooks (PLUGTRAIN_PLUGIN_HOOKS below). init is called once per process,
 * after the handshake matched and before the registration; it returns NULL when the plugin can
 * work, else a message why not (the plugin is then refused with it). shutdown is called once
 * per process, at its normal end, newest plugin first, after the host's objects of that plugin
 * are destroyed (not after a kill or a crash). Plugins stay loaded until exit. */
typedef const char* (*plugtrain_plugin_init_fn)(void);
typedef void (*plugtrain_plugin_shutdown_fn)(void);
#define PLUGTRAIN_INIT_SYMBOL "plugtrain_plugin_init"
#define PLUGTRAIN_SHUTDOWN_SYMBOL "plugtrain_plugin_shutdown"

#ifdef __cplusplus
}
#endif

/* ---- helpers used by the export macros (and by the host for its own tag) ---- */
#define PLUGTRAIN_STR_(x) #x
#define PLUGTRAIN_STR(x) PLUGTRAIN_STR_(x)

#if defined(_LIBCPP_VERSION)
#define PLUGTRAIN_CXX_STDLIB "libc++"
#else
#define PLUGTRAIN_CXX_STDLIB "libstdc++"
#endif

#if defined(_GLIBCXX_USE_CXX11_ABI)
#define PLUGTRAIN_CXX_ABI_TAG PLUGTRAIN_CXX_STDLIB " cxx11-abi=" PLUGTRAIN_STR(_GLIBCXX_USE_CXX11_ABI)
#else
#define PLUGTRAIN_CXX_ABI_TAG PLUGTRAIN_CXX_STDLIB
#endif

#if defined(__clang__)
#define PLUGTRAIN_COMPILER "clang " __clang_version__
#elif defined(__GNUC__)
#define PLUGTRAIN_COMPILER "gcc " __VERSION__
#else
#define PLUGTRAIN_COMPILER "unknown"
#endif

#if defined(_WIN32)
#define PLUGTRAIN_EXPORT __declspec(dllexport)
#else
#define PLUGTRAIN_EXPORT __attribute__((visibility("default")))
#endif

/* PLUGTRAIN_PLUGIN_INFO(kinds, "name", "version", "description"): the handshake in one line
 * (PLUGTRAIN_PLUGIN in plugin.h uses it). Needs <torch/version.h> for TORCH_VERSION. */
#define PLUGTRAIN_PLUGIN_INFO(KINDS, NAME, VERSION, DESCRIPTION)                             \
  extern "C" PLUGTRAIN_EXPORT const plugtrain_plugin_info* plugtrain_plugin_info_v1(void) { \
    static const plugtrain_plugin_info info = {                                              \
        sizeof(plugtrain_plugin_info), PLUGTRAIN_SDK_ABI_MAJOR, PLUGTRAIN_SDK_ABI_MINOR,      \
        (uint32_t)(KINDS), TORCH_VERSION, PLUGTRAIN_CXX_ABI_TAG, PLUGTRAIN_COMPILER,          \
        NAME, VERSION, DESCRIPTION};                                                        \
    return &info;                                                                            \
  }

/* PLUGTRAIN_PLUGIN_HOOKS(init, shutdown): exports the lifecycle hooks, with
 * init: const char*(void) (NULL: fine) and shutdown: void(void). Use once, at global scope. */
#define PLUGTRAIN_PLUGIN_HOOKS(INIT_FN, SHUTDOWN_FN)                                       \
  extern "C" PLUGTRAIN_EXPORT const char* plugtrain_plugin_init(void) { return INIT_FN(); } \
  extern "C" PLUGTRAIN_EXPORT void plugtrain_plugin_shutdown(void) { SHUTDOWN_FN(); }

#endif /* PLUGTRAIN_ABI_H */
