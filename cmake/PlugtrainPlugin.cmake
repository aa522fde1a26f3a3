# plugtrain_add_plugin(<target> [KIND backend|models|datasets|tasks|loggers] SOURCES ... [LINK ...] [OUTPUT_DIR dir]
#                      [COMPONENT name] [NO_INSTALL])
#
# The one way to build a plugin: in this tree, and in a plugin author's own project after
# find_package(plugtrain) (this file is installed with the package). It makes a MODULE library
# without the "lib" prefix (named plugtrain_<KIND>_<target> when KIND is given), with hidden
# symbols except the handshake and factory the SDK macros export, every symbol resolved at
# link time (a forgotten one fails the build, not the load), linked with plugtrain::sdk plus
# LINK, and installed into <prefix>/lib/plugtrain/plugins, the folder the host searches beside
# itself, as install component COMPONENT (default: the target, "_" written "-", as Debian
# package names need). Its installed RUNPATH is LibTorch's folder only: no build-tree path.
include_guard(GLOBAL)

function(plugtrain_add_plugin target)
  cmake_parse_arguments(ARG "NO_INSTALL" "OUTPUT_DIR;KIND;COMPONENT" "SOURCES;LINK" ${ARGN})
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "plugtrain_add_plugin(${target}): unknown arguments ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT ARG_SOURCES)
    message(FATAL_ERROR "plugtrain_add_plugin(${target}): SOURCES is required")
  endif()
  if(ARG_KIND AND NOT ARG_KIND MATCHES "^(backend|models|datasets|tasks|loggers)$")
    message(FATAL_ERROR "plugtrain_add_plugin(${target}): KIND must be backend, models, datasets, tasks or loggers, got '${ARG_KIND}'")
  endif()
  add_library(${target} MODULE ${ARG_SOURCES})
  target_link_libraries(${target} PRIVATE plugtrain::sdk ${ARG_LINK})
  set_target_properties(${target} PROPERTIES
    PREFIX ""
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON
    INSTALL_RPATH "${PLUGTRAIN_TORCH_RUNTIME_DIR}")
  if(ARG_KIND)
    set_target_properties(${target} PROPERTIES OUTPUT_NAME "plugtrain_${ARG_KIND}_${target}")
  endif()
  if(ARG_OUTPUT_DIR)
    set_target_properties(${target} PROPERTIES LIBRARY_OUTPUT_DIRECTORY "${ARG_OUTPUT_DIR}")
  elseif(PLUGTRAIN_PLUGIN_OUTPUT_DIR)
    set_target_properties(${target} PROPERTIES LIBRARY_OUTPUT_DIRECTORY "${PLUGTRAIN_PLUGIN_OUTPUT_DIR}")
  endif()
  if(NOT APPLE)
    target_link_options(${target} PRIVATE "LINKER:--no-undefined")
  endif()
  if(COMMAND plugtrain_precompiled_headers)  # in this tree (cmake/PlugtrainPrecompiledHeaders.cmake), not installed
    if(ARG_LINK MATCHES "torch_cpu|torch_cuda|plugtrain_readers")  # LibTorch's CPU target, its macros
      plugtrain_precompiled_headers(${target} plugin_torch)
    else()
      plugtrain_precompiled_headers(${target} plugin)
    endif()
  endif()
  if(NOT ARG_NO_INSTALL)
    if(NOT ARG_COMPONENT)
      string(REPLACE "_" "-" ARG_COMPONENT "${target}")
    endif()
    set(destination "${PLUGTRAIN_PLUGIN_SUBDIR}")
    if(NOT destination)
      set(destination lib/plugtrain/plugins)
    endif()
    install(TARGETS ${target} LIBRARY DESTINATION "${destination}" COMPONENT ${ARG_COMPONENT})
  endif()
endfunction()

# The folder holding LibTorch's libtorch_cpu.so, from the imported torch_cpu target.
function(plugtrain_torch_lib_dir out)
  get_target_property(location torch_cpu IMPORTED_LOCATION)
  if(NOT location)
    get_target_property(location torch_cpu IMPORTED_LOCATION_RELEASE)
  endif()
  get_filename_component(dir "${location}" DIRECTORY)
  set(${out} "${dir}" PARENT_SCOPE)
endfunction()
