# `cmake --install` and CPack (docs/install.md). Layout under the prefix:
#   bin/streamlens, bin/streamlens-gui
#   lib/streamlens/libstreamlens_cuda.so, libstreamlens_inject.so, libstreamlens_sqlite.so (plugins,
#   not on the linker path)
#   share/streamlens/devices/*.json, share/streamlens/samples/
#   share/doc/streamlens/ (README, docs), share/man/man1/streamlens.1.gz
# The binaries find these relative to their own location (PREFIX/bin/..), so a
# DESTDIR or relocated install works as well as /usr.
include(GNUInstallDirs)
set(SL_PLUGIN_DIR lib/streamlens)

# The CUDA libraries live outside the linker path on GPU machines: keep the
# build's search path in the installed libraries that load them (the
# executables link no CUDA library).
foreach(_t streamlens_inject streamlens_cuda)
  if(TARGET ${_t} AND SL_HAVE_CUDA)
    set_target_properties(${_t} PROPERTIES INSTALL_RPATH "${CMAKE_BUILD_RPATH}")
  endif()
endforeach()

install(TARGETS streamlens RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
if(TARGET streamlens-gui)
  install(TARGETS streamlens-gui RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
if(TARGET streamlens_inject)
  install(TARGETS streamlens_inject streamlens_cuda LIBRARY DESTINATION ${SL_PLUGIN_DIR})
endif()
install(TARGETS streamlens_sqlite LIBRARY DESTINATION ${SL_PLUGIN_DIR})

install(DIRECTORY ${PROJECT_SOURCE_DIR}/assets/devices/ DESTINATION ${CMAKE_INSTALL_DATADIR}/streamlens/devices
        FILES_MATCHING PATTERN "*.json")
install(DIRECTORY ${PROJECT_SOURCE_DIR}/samples/ DESTINATION ${CMAKE_INSTALL_DATADIR}/streamlens/samples)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})

# The man page is made from the binary's --help, like docs/cli.md.
set(_man ${PROJECT_BINARY_DIR}/streamlens.1.gz)
add_custom_command(OUTPUT ${_man}
  COMMAND ${PROJECT_SOURCE_DIR}/scripts/gen-cli-docs --man $<TARGET_FILE:streamlens> > ${PROJECT_BINARY_DIR}/streamlens.1
  COMMAND gzip -9nf ${PROJECT_BINARY_DIR}/streamlens.1
  DEPENDS streamlens ${PROJECT_SOURCE_DIR}/scripts/gen-cli-docs
  COMMENT "Generating the streamlens(1) man page" VERBATIM)
add_custom_target(streamlens_man ALL DEPENDS ${_man})
install(FILES ${_man} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)

# CPack: `cpack -G DEB` in the build directory writes streamlens_VERSION_ARCH.deb.
set(CPACK_PACKAGE_NAME streamlens)
set(CPACK_PACKAGE_VENDOR "streamlens")
set(CPACK_PACKAGE_CONTACT "streamlens maintainers <streamlens@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "profiler and simulator for GPU stream schedules of XLA HLO programs")
set(CPACK_PACKAGE_DESCRIPTION
    "Runs XLA HLO programs on CUDA GPUs or a discrete-event simulator, records every kernel into SQLite, and shows and compares per-stream timelines.")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# Dependencies from the binaries' own libraries (dpkg-shlibdeps); the CUDA
# libraries of a CUDA build come from NVIDIA's installer, not a package.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "sqlite3, python3")
set(CPACK_STRIP_FILES ON)
include(CPack)
