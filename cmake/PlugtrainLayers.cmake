# plugtrain_layer(NAME [USES lower ...]): core/NAME as the static library plugtrain_NAME, a layer
# above the ones it USES (see core/CMakeLists.txt). Fails the configure step on a back-edge: a
# USES of a layer not declared before, or an #include "X/..." (or <X/...>, X a folder of core/)
# of a folder X the layer cannot reach. The check reads every source and header of the folder
# (subfolders too), so it also guards headers that no .cpp of the layer happens to include.
set(PLUGTRAIN_LAYERS "")
set(PLUGTRAIN_LAYERS_TARGETS "")

# The folder an #include line names first ("run" of #include <run/plan.h>), in `folder`; "" when
# the line is an angle include of a folder that is not one of core/'s (a system or library header).
function(plugtrain_included_folder line folder)
  string(REGEX REPLACE "^#include [\"<]([a-z_]+)/.*" "\\1" named "${line}")
  if(line MATCHES "^#include <" AND NOT IS_DIRECTORY ${PROJECT_SOURCE_DIR}/core/${named})
    set(named "")
  endif()
  set(${folder} "${named}" PARENT_SCOPE)
endfunction()

function(plugtrain_layer name)
  cmake_parse_arguments(LAYER "" "" "USES" ${ARGN})
  set(reach ${name})
  foreach(lower IN LISTS LAYER_USES)
    if(NOT lower IN_LIST PLUGTRAIN_LAYERS)
      message(FATAL_ERROR "core/${name} uses core/${lower}, which is not a layer below it: the layers, lowest "
                          "first, are ${PLUGTRAIN_LAYERS} (core/CMakeLists.txt, docs/architecture.md)")
    endif()
    list(APPEND reach ${PLUGTRAIN_LAYER_REACH_${lower}})
  endforeach()
  list(REMOVE_DUPLICATES reach)

  file(GLOB_RECURSE sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/${name}/*.cpp)
  file(GLOB_RECURSE headers CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/${name}/*.h)
  foreach(file IN LISTS sources headers)
    file(STRINGS ${file} includes REGEX "^#include [\"<][a-z_]+/")
    foreach(line IN LISTS includes)
      plugtrain_included_folder("${line}" folder)
      if(folder STREQUAL "" OR folder STREQUAL "plugtrain")  # the SDK's headers: every layer may use them
        continue()
      endif()
      if(NOT folder IN_LIST reach)
        file(RELATIVE_PATH shown ${CMAKE_SOURCE_DIR} ${file})
        message(FATAL_ERROR "${shown}: ${line}: core/${name} may include only ${reach} (a back-edge between "
                            "layers; the order is in core/CMakeLists.txt and docs/architecture.md)")
      endif()
    endforeach()
  endforeach()

  add_library(plugtrain_${name} STATIC ${sources})
  foreach(lower IN LISTS LAYER_USES)
    target_link_libraries(plugtrain_${name} PUBLIC plugtrain_${lower})
  endforeach()

  set(PLUGTRAIN_LAYER_REACH_${name} ${reach} PARENT_SCOPE)
  set(PLUGTRAIN_LAYERS ${PLUGTRAIN_LAYERS} ${name} PARENT_SCOPE)
  set_property(GLOBAL APPEND PROPERTY PLUGTRAIN_LAYERS ${name})  # for plugtrain_check_plugin_layers
  set(PLUGTRAIN_LAYERS_TARGETS ${PLUGTRAIN_LAYERS_TARGETS} plugtrain_${name} PARENT_SCOPE)
endfunction()

# plugtrain_check_plugin_layers(DIR...): fails the configure step when a file under one of the
# folders DIR, or a target defined there (a plugin, or a library a plugin links), includes,
# compiles in or links a core layer a plugin may not use (below). Call once every plugin is added.
function(plugtrain_check_plugin_layers)
  # What a plugin may use of core/, by include, compiled in or linked: the layers below the plugin
  # host that hold no host object (a plugin is the host's guest, never a second host): util's
  # errors and files, config's choices, data's data set and image codec, logging's event writer.
  set(PLUGTRAIN_PLUGIN_LAYERS util config data logging)
  get_property(PLUGTRAIN_LAYERS GLOBAL PROPERTY PLUGTRAIN_LAYERS)
  foreach(dir IN LISTS ARGN)
    file(GLOB_RECURSE files ${dir}/*.cpp ${dir}/*.h)
    foreach(file IN LISTS files)
      file(STRINGS ${file} includes REGEX "^#include [\"<][a-z_]+/")
      foreach(line IN LISTS includes)
        plugtrain_included_folder("${line}" folder)
        if(folder IN_LIST PLUGTRAIN_LAYERS AND NOT folder IN_LIST PLUGTRAIN_PLUGIN_LAYERS)
          file(RELATIVE_PATH shown ${PROJECT_SOURCE_DIR} ${file})
          message(FATAL_ERROR "${shown}: ${line}: a plugin may use only the core layers ${PLUGTRAIN_PLUGIN_LAYERS} "
                              "(cmake/PlugtrainLayers.cmake, docs/architecture.md)")
        endif()
      endforeach()
    endforeach()
  endforeach()
  plugtrain_check_plugin_targets(${PROJECT_SOURCE_DIR} ${ARGN})
endfunction()

# The targets of DIR and its subdirectories whose folder lies under one of the plugin folders:
# the core sources each compiles and the core layers it links.
function(plugtrain_check_plugin_targets dir)
  get_property(source_dir DIRECTORY ${dir} PROPERTY SOURCE_DIR)
  set(under_plugins FALSE)
  foreach(plugins IN LISTS ARGN)
    if(source_dir MATCHES "^${plugins}(/|$)")
      set(under_plugins TRUE)
    endif()
  endforeach()
  if(under_plugins)
    get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
    foreach(target IN LISTS targets)
      get_target_property(sources ${target} SOURCES)
      get_target_property(links ${target} LINK_LIBRARIES)
      foreach(item IN LISTS sources links)
        set(layer "")
        if(item MATCHES "^${PROJECT_SOURCE_DIR}/core/([a-z_]+)/")
          set(layer ${CMAKE_MATCH_1})
        elseif(item MATCHES "^plugtrain_([a-z_]+)$" AND CMAKE_MATCH_1 IN_LIST PLUGTRAIN_LAYERS)
          set(layer ${CMAKE_MATCH_1})
        endif()
        if(layer AND NOT layer IN_LIST PLUGTRAIN_PLUGIN_LAYERS)
          message(FATAL_ERROR "${target} (${source_dir}) uses core/${layer} (${item}): a plugin may use only the core "
                              "layers ${PLUGTRAIN_PLUGIN_LAYERS} (cmake/PlugtrainLayers.cmake, docs/architecture.md)")
        endif()
      endforeach()
    endforeach()
  endif()
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(sub IN LISTS subdirs)
    plugtrain_check_plugin_targets(${sub} ${ARGN})
  endforeach()
endfunction()
