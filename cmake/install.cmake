# Install rules and the exported CMake package:
#   find_package(nctlm 0.2 REQUIRED)  ->  nctlm::nctlm (everything), nctlm::<block> (nctlm::hbm,
#   nctlm::dma, nctlm::platforms, ...), nctlm::main (a main() without the SystemC banner)
# plus a pkg-config file (nctlm.pc) for non-CMake builds.
include(CMakePackageConfigHelpers)

get_property(_nctlm_libs GLOBAL PROPERTY NCTLM_LIBRARIES)
install(TARGETS ${_nctlm_libs} nctlm_all nctlm_systemc nctlm_main
  EXPORT nctlmTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  OBJECTS DESTINATION ${CMAKE_INSTALL_LIBDIR}/nctlm/objects
  INCLUDES DESTINATION ${NCTLM_INSTALL_INCLUDEDIR})
install(TARGETS nctlm RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

# Headers keep their source paths: #include "platforms/platform.h" works against the install too.
foreach(_dir models platforms testbenches study apps/nctlm)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${_dir}/ DESTINATION ${NCTLM_INSTALL_INCLUDEDIR}/${_dir}
    FILES_MATCHING PATTERN "*.h")
endforeach()
install(FILES ${PROJECT_BINARY_DIR}/include/models/common/version.h
  DESTINATION ${NCTLM_INSTALL_INCLUDEDIR}/models/common)

# Data the CLI and users need: shipped platforms, workloads, sweeps, every script the CLI runs
# (found relative to the installed binary: platforms/shipped_configs.h), the Python package, docs.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/configs/ DESTINATION ${NCTLM_INSTALL_DATADIR}/configs)
install(PROGRAMS ${NCTLM_RUNTIME_SCRIPTS} DESTINATION ${NCTLM_INSTALL_DATADIR}/scripts)
# The whole python/nctlm tree, subpackages included (nctlm.nki: the tracer `nctlm kernel` runs,
# found by python_package_dir()), without caches.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/python/nctlm DESTINATION ${NCTLM_INSTALL_PYTHONDIR}
  PATTERN "__pycache__" EXCLUDE PATTERN "*.pyc" EXCLUDE)
# The kernel library's NKI-style sources (configs/kernels/NAME.json is traced from them).
install(DIRECTORY ${PROJECT_SOURCE_DIR}/kernels/ DESTINATION ${NCTLM_INSTALL_DATADIR}/kernels
  FILES_MATCHING PATTERN "*.py" PATTERN "__pycache__" EXCLUDE)
install(FILES ${PROJECT_BINARY_DIR}/nctlm.schema.json ${PROJECT_BINARY_DIR}/kernel.schema.json
  ${PROJECT_BINARY_DIR}/graph.schema.json DESTINATION ${NCTLM_INSTALL_DATADIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(FILES ${PROJECT_SOURCE_DIR}/README.md ${PROJECT_SOURCE_DIR}/LICENSE ${PROJECT_SOURCE_DIR}/CHANGELOG.md
  DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/examples/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples)
install(FILES ${PROJECT_SOURCE_DIR}/scripts/nctlm-completion.bash
  DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions RENAME nctlm OPTIONAL)

install(EXPORT nctlmTargets NAMESPACE nctlm:: DESTINATION ${NCTLM_INSTALL_CMAKEDIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/nctlmConfig.cmake.in
  ${PROJECT_BINARY_DIR}/nctlmConfig.cmake INSTALL_DESTINATION ${NCTLM_INSTALL_CMAKEDIR}
  PATH_VARS NCTLM_INSTALL_DATADIR NCTLM_INSTALL_PYTHONDIR)
# 0.x: a minor release may break the API, so 0.2 accepts 0.2.* only.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/nctlmConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/nctlmConfig.cmake ${PROJECT_BINARY_DIR}/nctlmConfigVersion.cmake
  ${PROJECT_SOURCE_DIR}/cmake/nctlm_package_data.cpp DESTINATION ${NCTLM_INSTALL_CMAKEDIR})

# pkg-config: libraries in link order (dependents before their dependencies).
set(NCTLM_PC_LIBS "")
foreach(_lib cli study testbenches platforms platform_config core host host_pure host_config noc pe dma hbm
    analytic pe_config noc_config dma_config hbm_config sweep_spec common common_pure)
  string(APPEND NCTLM_PC_LIBS " -lnctlm_${_lib}")
endforeach()
configure_file(${PROJECT_SOURCE_DIR}/cmake/nctlm.pc.in ${PROJECT_BINARY_DIR}/nctlm.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/nctlm.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
