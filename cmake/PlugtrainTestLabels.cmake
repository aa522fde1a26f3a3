# Test labels declared with the tests, not in a list kept here: each *_test.cpp of a test program
# says which label its suites carry, in a line of its own,
#   // ctest-label: e2e
# and, for a suite that differs from the file's,
#   // ctest-label Crc32c: unit
# Labels: unit (the library in process), e2e (runs the plugtrain executable), slow (many or long
# processes), slurm (a real one-node Slurm of its own; slow too). A test file without the line
# fails the configure, naming the file: a new suite cannot become "unit" by silence.
#
# plugtrain_suites_by_label(TARGET): sets PLUGTRAIN_<LABEL>_SUITES (unit, e2e, slow, slurm) in the
# caller's scope to gtest filters ("Suite.*:*/Suite.*:...", the second form for parameterised
# suites, which gtest names Prefix/Suite).
function(plugtrain_suites_by_label target)
  set(labels unit e2e slow slurm)
  foreach(label IN LISTS labels)
    set(filter_${label} "")
  endforeach()
  get_target_property(sources ${target} SOURCES)
  foreach(source IN LISTS sources)
    if(NOT source MATCHES "_test\\.cpp$")
      continue()
    endif()
    file(READ ${CMAKE_CURRENT_SOURCE_DIR}/${source} text)
    set(text "\n${text}")  # every line, the first too, follows a newline
    if(NOT text MATCHES "\n// ctest-label: ([a-z0-9]+)\n")
      message(FATAL_ERROR "tests/${source}: no '// ctest-label: unit|e2e|slow|slurm' line (cmake/PlugtrainTestLabels.cmake)")
    endif()
    set(file_label ${CMAKE_MATCH_1})
    string(REGEX MATCHALL "\n(TEST|TEST_F|TEST_P)\\([A-Za-z0-9_]+," definitions "${text}")
    set(suites "")
    foreach(definition IN LISTS definitions)
      string(REGEX REPLACE "^\n[A-Z_]+\\(([A-Za-z0-9_]+),$" "\\1" suite "${definition}")
      list(APPEND suites ${suite})
    endforeach()
    list(REMOVE_DUPLICATES suites)
    foreach(suite IN LISTS suites)
      set(label ${file_label})
      if(text MATCHES "\n// ctest-label ${suite}: ([a-z0-9]+)\n")
        set(label ${CMAKE_MATCH_1})
      endif()
      if(NOT label IN_LIST labels)
        message(FATAL_ERROR "tests/${source}: suite ${suite} has label '${label}'; labels are ${labels}")
      endif()
      string(APPEND filter_${label} ":${suite}.*:*/${suite}.*")
    endforeach()
  endforeach()
  foreach(label IN LISTS labels)
    string(TOUPPER ${label} upper)
    string(REGEX REPLACE "^:" "" filter "${filter_${label}}")
    set(PLUGTRAIN_${upper}_SUITES "${filter}" PARENT_SCOPE)
  endforeach()
endfunction()
