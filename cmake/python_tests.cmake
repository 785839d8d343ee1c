# nctlm_python_unittests(PREFIX NEEDS MODULE...): one ctest entry PREFIX_test_x per test_x.py of the
# calling directory, run with a python3 that can `import NEEDS` (Debian's /usr/bin/python3 first;
# scripts/install-deps installs the package), against the source tree. Without such a python3 a
# single failing test says which package is missing, rather than skipping.
function(nctlm_python_unittests prefix needs)
  find_package(Python3 COMPONENTS Interpreter)
  set(python "")
  foreach(candidate IN ITEMS /usr/bin/python3 "${Python3_EXECUTABLE}")
    if(candidate AND NOT python)
      execute_process(COMMAND "${candidate}" -c "import ${needs}" RESULT_VARIABLE missing OUTPUT_QUIET ERROR_QUIET)
      if(missing EQUAL 0)
        set(python "${candidate}")
      endif()
    endif()
  endforeach()
  if(NOT python)
    add_test(NAME ${prefix}_python_with_${needs} COMMAND python3 -c "import ${needs}")
    return()
  endif()
  file(GLOB modules CONFIGURE_DEPENDS "${CMAKE_CURRENT_SOURCE_DIR}/test_*.py")
  foreach(module_file IN LISTS modules)
    get_filename_component(module "${module_file}" NAME_WE)
    add_test(NAME ${prefix}_${module} COMMAND "${python}" -m unittest -v ${module}
             WORKING_DIRECTORY "${CMAKE_CURRENT_SOURCE_DIR}")
    set_tests_properties(${prefix}_${module} PROPERTIES TIMEOUT 300
      ENVIRONMENT "PYTHONPATH=${PROJECT_SOURCE_DIR}/python;PYTHONDONTWRITEBYTECODE=1;NCTLM=$<TARGET_FILE:nctlm>;NCTLM_PYTHON=${python}")
  endforeach()
endfunction()
