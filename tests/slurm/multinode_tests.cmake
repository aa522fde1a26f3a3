# ddp across the nodes of a Slurm cluster whose slurmd each run in a network namespace of their
# own (tests/slurm/netns_slurm.sh). One ctest test for the whole binary: its fixture starts the
# cluster once (about 2 s) for every case, and stops it at the end. Beside them, the rendezvous
# network's own cases on this machine's loopback.
add_executable(plugtrain_multinode_tests ${CMAKE_CURRENT_SOURCE_DIR}/distributed/multinode_slurm_test.cpp
                                         ${CMAKE_CURRENT_SOURCE_DIR}/distributed/multinode_sweep_test.cpp
                                         ${CMAKE_CURRENT_SOURCE_DIR}/distributed/multinode_restart_test.cpp
                                         ${CMAKE_CURRENT_SOURCE_DIR}/distributed/rendezvous_network_test.cpp)
target_link_libraries(plugtrain_multinode_tests PRIVATE plugtrain_test_support plugtrain_distributed plugtrain::torch_cpu
                                                        nlohmann_json::nlohmann_json GTest::gtest_main)
target_compile_definitions(plugtrain_multinode_tests PRIVATE
  PLUGTRAIN_SOURCE_DIR="${CMAKE_SOURCE_DIR}" PLUGTRAIN_EXE="$<TARGET_FILE:plugtrain>")
# The torchrun of the torch wheel we build against, for the case of torchrun across the nodes.
if(EXISTS "${PLUGTRAIN_WHEEL_VENV}/bin/torchrun")
  target_compile_definitions(plugtrain_multinode_tests PRIVATE PLUGTRAIN_TORCHRUN="${PLUGTRAIN_WHEEL_VENV}/bin/torchrun")
endif()
add_dependencies(plugtrain_multinode_tests plugtrain plugtrain_models plugtrain_datasets plugtrain_backend_cpu)
add_test(NAME multinode_slurm COMMAND plugtrain_multinode_tests)
set_tests_properties(multinode_slurm PROPERTIES LABELS "slurm;slow" TIMEOUT 900 RESOURCE_LOCK slurm)
