# plugtrain_add_plugin(<target> SOURCES ... [OUTPUT_DIR dir] [LINK ...] [NO_INSTALL])
# A plugin is a MODULE library with no "lib" prefix, hidden symbols except the
# exported handshake/factory, built into the folder the host searches by default.
function(plugtrain_add_plugin target)
  cmake_parse_arguments(ARG "NO_INSTALL" "OUTPUT_DIR" "SOURCES;LINK" ${ARGN})
  if(NOT ARG_OUTPUT_DIR)
    set(ARG_OUTPUT_DIR ${PLUGTRAIN_PLUGIN_OUTPUT_DIR})
  endif()
  add_library(${target} MODULE ${ARG_SOURCES})
  target_link_libraries(${target} PRIVATE plugtrain::sdk ${ARG_LINK})
  set_target_properties(${target} PROPERTIES
    PREFIX ""
    LIBRARY_OUTPUT_DIRECTORY ${ARG_OUTPUT_DIR}
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON)
  # Fail at link time, not at load time, when a plugin forgets a symbol.
  if(NOT APPLE)
    target_link_options(${target} PRIVATE "LINKER:--no-undefined")
  endif()
  if(NOT ARG_NO_INSTALL)
    install(TARGETS ${target} LIBRARY DESTINATION ${PLUGTRAIN_PLUGIN_SUBDIR})
  endif()
endfunction()
