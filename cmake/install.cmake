# Installation: libbraid (with its SONAME symlinks), the public headers, an exported CMake
# package (find_package(braid CONFIG) -> braid::braid) and a pkg-config file (braid.pc).
#
# Layout under the prefix (libdir is ${CMAKE_INSTALL_LIBDIR}, "lib" for the default prefix):
#   include/braid/{braid.h,braid.hpp,transport.h}
#   <libdir>/libbraid.so -> libbraid.so.<major> -> libbraid.so.<version>
#   <libdir>/libbraid-transport-*.so          (plugins; transports/*/CMakeLists.txt install them
#                                              here: the loader looks next to libbraid.so)
#   <libdir>/cmake/braid/braid{Config,ConfigVersion,Targets,Targets-<config>}.cmake
#   <libdir>/pkgconfig/braid.pc
#   bin/braidrun, bin/braid-info              (tools/*/CMakeLists.txt install them)
include(CMakePackageConfigHelpers)

set(BRAID_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/braid" CACHE STRING
    "Where braid's CMake package files are installed (relative to the prefix)")
mark_as_advanced(BRAID_INSTALL_CMAKEDIR)

install(TARGETS braid EXPORT braidTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT Runtime
          NAMELINK_COMPONENT Development
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT Development
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT Runtime)
# (braid's INSTALL_INTERFACE include directory already points consumers at include/.)

install(FILES
  ${PROJECT_SOURCE_DIR}/include/braid/braid.h
  ${PROJECT_SOURCE_DIR}/include/braid/braid.hpp
  ${PROJECT_SOURCE_DIR}/include/braid/transport.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/braid COMPONENT Development)

# --- CMake package -------------------------------------------------------------------------
install(EXPORT braidTargets
  NAMESPACE braid::
  FILE braidTargets.cmake
  DESTINATION ${BRAID_INSTALL_CMAKEDIR}
  COMPONENT Development)

# libbraid.so is a shared library whose dependencies (libdl, pthreads) are all private, so the
# package needs no find_dependency(). braid.hpp needs C++20; consumers set their own standard.
set(_braid_config_template "${PROJECT_BINARY_DIR}/cmake/braidConfig.cmake.in")
file(WRITE "${_braid_config_template}.tmp" [=[
# braid CMake package.
#   find_package(braid CONFIG REQUIRED)
#   target_link_libraries(app PRIVATE braid::braid)   # braid.h (C) and braid.hpp (C++20)
# Also sets braid_VERSION, braid_INCLUDE_DIR and braid_PLUGIN_DIR (where the transport plugins
# and libbraid.so are installed).
@PACKAGE_INIT@

include("${CMAKE_CURRENT_LIST_DIR}/braidTargets.cmake")

set_and_check(braid_INCLUDE_DIR "@PACKAGE_CMAKE_INSTALL_INCLUDEDIR@")
set_and_check(braid_PLUGIN_DIR "@PACKAGE_CMAKE_INSTALL_LIBDIR@")

check_required_components(braid)
]=])
configure_file("${_braid_config_template}.tmp" "${_braid_config_template}" COPYONLY)

configure_package_config_file("${_braid_config_template}"
  "${PROJECT_BINARY_DIR}/cmake/braidConfig.cmake"
  INSTALL_DESTINATION ${BRAID_INSTALL_CMAKEDIR}
  PATH_VARS CMAKE_INSTALL_INCLUDEDIR CMAKE_INSTALL_LIBDIR)
# Before 1.0 every minor release may break the API: SameMinorVersion would be the honest choice
# then, but the package promises SameMajorVersion as documented.
write_basic_package_version_file("${PROJECT_BINARY_DIR}/cmake/braidConfigVersion.cmake"
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY SameMajorVersion)
install(FILES
  "${PROJECT_BINARY_DIR}/cmake/braidConfig.cmake"
  "${PROJECT_BINARY_DIR}/cmake/braidConfigVersion.cmake"
  DESTINATION ${BRAID_INSTALL_CMAKEDIR}
  COMPONENT Development)

# --- pkg-config ----------------------------------------------------------------------------
# The prefix is only known at install time (`cmake --install build --prefix /opt/braid`), so
# braid.pc is made in two steps: everything but the prefix now, the prefix when installing.
# libdir and includedir are written relative to ${prefix} unless they were given absolute.
foreach(_kind LIBDIR INCLUDEDIR)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${_kind}}")
    set(BRAID_PC_${_kind} "${CMAKE_INSTALL_${_kind}}")
  else()
    set(BRAID_PC_${_kind} "\${prefix}/${CMAKE_INSTALL_${_kind}}")
  endif()
endforeach()
set(BRAID_PC_PREFIX "@BRAID_PC_INSTALL_PREFIX@")  # filled in at install time
configure_file(${PROJECT_SOURCE_DIR}/cmake/braid.pc.in
               ${PROJECT_BINARY_DIR}/cmake/braid.pc.stage @ONLY)
install(CODE "
  set(BRAID_PC_INSTALL_PREFIX \"\${CMAKE_INSTALL_PREFIX}\")
  configure_file(\"${PROJECT_BINARY_DIR}/cmake/braid.pc.stage\"
                 \"${PROJECT_BINARY_DIR}/cmake/pkgconfig/braid.pc\" @ONLY)
  " COMPONENT Development)
install(FILES "${PROJECT_BINARY_DIR}/cmake/pkgconfig/braid.pc"
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT Development)
