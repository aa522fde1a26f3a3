# What `cmake --install` and CPack deliver, as components a vendor picks from:
#   host    bin/plugtrain, a launcher that checks for LibTorch and starts the host,
#           lib/plugtrain/plugtrain (needs at least one backend plugin, a models plugin and a
#           data set, e.g. the datasets plugin's, to train)
#   cpu, cuda, mps, models, datasets, ...   the bundled plugins, lib/plugtrain/plugins/...
#   sdk     include/plugtrain/*.h and lib/cmake/plugtrain: find_package(plugtrain) for plugin
#           authors, with plugtrain::sdk and plugtrain_add_plugin(); share/plugtrain/examples/plugins:
#           the example plugins' sources
# Every installed file is relative to the prefix (RUNPATHs hold LibTorch's folder only), so an
# installed tree can be moved or packaged.
include(CMakePackageConfigHelpers)

set_target_properties(plugtrain PROPERTIES INSTALL_RPATH "${PLUGTRAIN_TORCH_RUNTIME_DIR}")
if(APPLE)
  # The launcher reads /proc and knows Linux's loader; on macOS the host is bin/plugtrain itself.
  install(TARGETS plugtrain RUNTIME DESTINATION bin COMPONENT host)
else()
  install(TARGETS plugtrain RUNTIME DESTINATION lib/plugtrain COMPONENT host)
  install(TARGETS plugtrain_launcher RUNTIME DESTINATION bin COMPONENT host)
endif()
install(DIRECTORY sdk/include/ DESTINATION include COMPONENT sdk)
# The example plugins' sources, for plugin authors to copy: share/plugtrain/examples/plugins.
install(DIRECTORY examples/plugins/ DESTINATION share/plugtrain/examples/plugins COMPONENT sdk)

# The package version is the SDK ABI version: find_package(plugtrain 3.1) accepts any 3.x with
# x >= 1, the same rule the host applies to a plugin's handshake (same major, host minor >= plugin minor).
file(STRINGS sdk/include/plugtrain/abi.h _abi REGEX "#define PLUGTRAIN_SDK_ABI_(MAJOR|MINOR) ")
string(REGEX MATCH "MAJOR ([0-9]+)" _m "${_abi}")
set(PLUGTRAIN_SDK_ABI_MAJOR ${CMAKE_MATCH_1})
string(REGEX MATCH "MINOR ([0-9]+)" _m "${_abi}")
set(PLUGTRAIN_SDK_ABI_MINOR ${CMAKE_MATCH_1})
set(PLUGTRAIN_CMAKE_DIR lib/cmake/plugtrain)
set(PLUGTRAIN_TORCH_CMAKE_DIR "${Torch_DIR}")
configure_package_config_file(cmake/plugtrainConfig.cmake.in ${CMAKE_BINARY_DIR}/plugtrainConfig.cmake
  INSTALL_DESTINATION ${PLUGTRAIN_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_BINARY_DIR}/plugtrainConfigVersion.cmake
  VERSION ${PLUGTRAIN_SDK_ABI_MAJOR}.${PLUGTRAIN_SDK_ABI_MINOR} COMPATIBILITY SameMajorVersion)
install(FILES ${CMAKE_BINARY_DIR}/plugtrainConfig.cmake ${CMAKE_BINARY_DIR}/plugtrainConfigVersion.cmake
  cmake/PlugtrainPlugin.cmake DESTINATION ${PLUGTRAIN_CMAKE_DIR} COMPONENT sdk)

# cpack -G "DEB;TGZ" in the build folder: one package per component.
set(CPACK_PACKAGE_NAME plugtrain)
set(CPACK_PACKAGE_VENDOR plugtrain)
set(CPACK_PACKAGE_CONTACT "plugtrain developers")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Train LibTorch models from TOML experiments on pluggable backends")
set(CPACK_GENERATOR "DEB;TGZ")
set(CPACK_PACKAGING_INSTALL_PREFIX /opt/plugtrain)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_ENABLE_COMPONENT_DEPENDS ON)  # a plugin package depends on plugtrain-host
set(CPACK_ARCHIVE_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS OFF)  # LibTorch is not a Debian package: see docs/plugins.md
include(CPack)
cpack_add_component(host DISPLAY_NAME "plugtrain host" DESCRIPTION "the plugtrain command")
cpack_add_component(sdk DISPLAY_NAME "plugin SDK" DESCRIPTION "headers and CMake package for plugin authors")
foreach(plugin IN LISTS PLUGTRAIN_PLUGINS)
  cpack_add_component(${plugin} DESCRIPTION "the bundled ${plugin} plugin" DEPENDS host)
endforeach()
