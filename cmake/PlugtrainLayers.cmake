# plugtrain_layer(NAME [USES lower ...]): core/NAME as the static library plugtrain_NAME, a layer
# above the ones it USES (see core/CMakeLists.txt). Fails the configure step on a back-edge: a
# USES of a layer not declared before, or an #include "X/..." of a folder X the layer cannot
# reach. The check reads every source and header of the folder (subfolders too), so it also
# guards headers that no .cpp of the layer happens to include.
set(PLUGTRAIN_LAYERS "")
set(PLUGTRAIN_LAYERS_TARGETS "")

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
    file(STRINGS ${file} includes REGEX "^#include \"[a-z_]+/")
    foreach(line IN LISTS includes)
      string(REGEX REPLACE "^#include \"([a-z_]+)/.*" "\\1" folder "${line}")
      if(folder STREQUAL "plugtrain")  # the SDK's headers: every layer may use them
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
  set(PLUGTRAIN_LAYERS_TARGETS ${PLUGTRAIN_LAYERS_TARGETS} plugtrain_${name} PARENT_SCOPE)
endfunction()
