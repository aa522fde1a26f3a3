# Precompiled headers: LibTorch's headers (about 4,500 files behind ATen/ATen.h) parsed once per
# kind of target instead of once per source file.
#
#   plugtrain_precompiled_headers(<target> <kind>)
#     kind: library | plugin | plugin_torch | program | test
#
# GCC uses a precompiled header only where the options that shape it match the compile that
# uses it: -fPIC against -fPIE, sanitizers, and the macros the headers read. Hidden visibility
# is decided as declarations are parsed, so plugins need their own too. So there is one
# precompiled header per kind, built by a small object library of that kind (the "owner") and
# shared with REUSE_FROM by every target of the kind:
#   library  the core layers (static, -fPIC)
#   plugin   MODULE plugins (-fPIC, hidden visibility) that link the SDK alone
#   plugin_torch  the same linking LibTorch's CPU target too, whose macros (USE_DISTRIBUTED, ...)
#            the headers test: a precompiled header made without them is refused with them
#   program  executables (-fPIE): the plugtrain app, the benchmarks
#   test     the GoogleTest executables (-fPIE, GoogleTest's headers and macros too)
# Only third-party headers go in: an SDK header may be compiled with other macros on purpose
# (a test plugin built for an older SDK minor defines PLUGTRAIN_SDK_ABI_MINOR before it).
# A precompiled header is included before every file of its targets, so a missing LibTorch
# include goes unnoticed here: -DPLUGTRAIN_PRECOMPILE_HEADERS=OFF builds every file from what it
# includes, as a plugin author's build does (the installed-SDK test builds examples/plugins so).
include_guard(GLOBAL)
option(PLUGTRAIN_PRECOMPILE_HEADERS "Precompile LibTorch's headers once per kind of target" ON)

set(PLUGTRAIN_PCH_TORCH
  <ATen/ATen.h>
  <torch/nn/module.h>
  <torch/nn/modules/linear.h>
  <torch/nn/modules/conv.h>
  <torch/optim/optimizer.h>)
set(PLUGTRAIN_PCH_STD <algorithm> <filesystem> <functional> <map> <memory> <optional> <sstream> <string> <vector>)
set(PLUGTRAIN_PCH_HEADERS_library ${PLUGTRAIN_PCH_TORCH} ${PLUGTRAIN_PCH_STD} <nlohmann/json.hpp>)
set(PLUGTRAIN_PCH_HEADERS_plugin ${PLUGTRAIN_PCH_TORCH} ${PLUGTRAIN_PCH_STD} <boost/dll/alias.hpp>)
set(PLUGTRAIN_PCH_HEADERS_plugin_torch ${PLUGTRAIN_PCH_HEADERS_plugin})
set(PLUGTRAIN_PCH_HEADERS_program ${PLUGTRAIN_PCH_TORCH} ${PLUGTRAIN_PCH_STD} <nlohmann/json.hpp> <CLI/CLI.hpp>)
set(PLUGTRAIN_PCH_HEADERS_test ${PLUGTRAIN_PCH_TORCH} ${PLUGTRAIN_PCH_STD} <nlohmann/json.hpp> <gtest/gtest.h>)

# The owner of one kind's precompiled header, made on first use.
function(_plugtrain_pch_owner kind out)
  set(owner plugtrain_pch_${kind})
  if(NOT TARGET ${owner})
    set(anchor ${CMAKE_BINARY_DIR}/pch/${kind}.cpp)
    file(WRITE ${anchor} "// Compiled only to make the precompiled header of the '${kind}' targets.\n")
    add_library(${owner} OBJECT ${anchor})
    # GCC refuses a precompiled header made with a macro that the compile using it lacks, or
    # without one it has that the headers test, so the owner links exactly what the targets of
    # its kind link: the SDK, and LibTorch's CPU target for all but the plain plugins.
    target_link_libraries(${owner} PRIVATE plugtrain::sdk)
    if(NOT kind STREQUAL "plugin")
      target_link_libraries(${owner} PRIVATE plugtrain::torch_cpu)
    endif()
    if(kind MATCHES "^plugin")
      set_target_properties(${owner} PROPERTIES CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON)
    elseif(kind STREQUAL "program" OR kind STREQUAL "test")
      # An object library compiles -fPIC; the executables that reuse this compile -fPIE.
      set_target_properties(${owner} PROPERTIES POSITION_INDEPENDENT_CODE OFF)
      target_compile_options(${owner} PRIVATE -fPIE)
    endif()
    if(kind STREQUAL "test")
      target_link_libraries(${owner} PRIVATE GTest::gtest)
    endif()
    target_precompile_headers(${owner} PRIVATE ${PLUGTRAIN_PCH_HEADERS_${kind}})
  endif()
  set(${out} ${owner} PARENT_SCOPE)
endfunction()

function(plugtrain_precompiled_headers target kind)
  if(NOT PLUGTRAIN_PRECOMPILE_HEADERS)
    return()
  endif()
  if(NOT DEFINED PLUGTRAIN_PCH_HEADERS_${kind})
    message(FATAL_ERROR "plugtrain_precompiled_headers(${target} ${kind}): kind must be library, plugin, plugin_torch, "
                        "program or test")
  endif()
  _plugtrain_pch_owner(${kind} owner)
  target_precompile_headers(${target} REUSE_FROM ${owner})
endfunction()
