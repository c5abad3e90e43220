# Target helpers: one library per folder, warnings everywhere, tests registered with labels, and
# include roots that make the layering of docs/architecture.md a compile error to break.

function(tuned_target_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers)
  if(TUNED_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()

# --- Headers and include roots ---------------------------------------------------------------
# No target has the repository root as an include folder. Each target that declares its headers
# gets, in the build tree, symlinks of them at their repository-relative paths (so
# `#include "compiler/ir/ir.h"` reads the same everywhere):
#   build/include/<target>/          its public headers: the target's only PUBLIC (INTERFACE)
#                                    include folder, so what links it sees them and nothing else
#   build/include_private/<target>/  its private headers, seen by its own sources only
# A file that includes a header of a library it does not link (directly or through PUBLIC DEPS)
# therefore fails to compile.
#
# The rule for which headers a target has:
#   - by default, the `*.h` files in the folders of its sources (each folder on its own, not its
#     subfolders), found again at every build (CONFIGURE_DEPENDS); `*_internal.h` is private,
#     every other header public. A header that a target names in HEADERS or PRIVATE_HEADERS is
#     left out of every other target's default set, whatever the order of the CMake calls (the
#     links are made at the end of the configure step).
#   - HEADERS / PRIVATE_HEADERS replace the default: use them where one folder holds two
#     targets (cli/cli_support.h beside the `tuned` command) or a target has no sources (a
#     header-only library).
# Two libraries may not expose the same header (a configure error). Test and program targets
# get their headers as private ones. The file build/tuned_headers.txt lists every target's
# headers; the layering test checks it against the table of docs/architecture.md.

function(_tuned_include_root target out)
  set(${out} ${PROJECT_BINARY_DIR}/include/${target} PARENT_SCOPE)
endfunction()
function(_tuned_private_include_root target out)
  set(${out} ${PROJECT_BINARY_DIR}/include_private/${target} PARENT_SCOPE)
endfunction()

# tuned_declare_headers(target [HEADERS h...] [PRIVATE_HEADERS h...]): give a target built with
# add_library/add_executable its include roots (tuned_add_library and tuned_add_test call it).
function(tuned_declare_headers target)
  cmake_parse_arguments(ARG "" "" "HEADERS;PRIVATE_HEADERS" ${ARGN})
  foreach(kind HEADERS PRIVATE_HEADERS)
    set(absolute)
    foreach(header IN LISTS ARG_${kind})
      get_filename_component(header ${header} ABSOLUTE BASE_DIR ${CMAKE_CURRENT_SOURCE_DIR})
      if(NOT EXISTS ${header})
        message(FATAL_ERROR "${target}: header ${header} does not exist")
      endif()
      list(APPEND absolute ${header})
    endforeach()
    set_property(TARGET ${target} PROPERTY TUNED_${kind} ${absolute})
    set_property(GLOBAL APPEND PROPERTY TUNED_CLAIMED_HEADERS ${absolute})
  endforeach()
  if(ARG_HEADERS OR ARG_PRIVATE_HEADERS)
    set_property(TARGET ${target} PROPERTY TUNED_EXPLICIT_HEADERS ON)
  endif()

  _tuned_include_root(${target} public_root)
  _tuned_private_include_root(${target} private_root)
  get_target_property(type ${target} TYPE)
  if(type STREQUAL "INTERFACE_LIBRARY")
    file(MAKE_DIRECTORY ${public_root})
    target_include_directories(${target} INTERFACE ${public_root})
  elseif(type STREQUAL "EXECUTABLE")
    file(MAKE_DIRECTORY ${private_root})
    target_include_directories(${target} PRIVATE ${private_root})
  else()
    file(MAKE_DIRECTORY ${public_root} ${private_root})
    target_include_directories(${target} PUBLIC ${public_root} PRIVATE ${private_root})
  endif()
  set_property(GLOBAL APPEND PROPERTY TUNED_HEADER_TARGETS ${target})
endfunction()

# The default header set of a target: the *.h files in the folders of its sources.
function(_tuned_default_headers target out)
  get_target_property(sources ${target} SOURCES)
  get_target_property(source_dir ${target} SOURCE_DIR)
  get_property(claimed GLOBAL PROPERTY TUNED_CLAIMED_HEADERS)
  set(folders)
  foreach(source IN LISTS sources)
    get_filename_component(source ${source} ABSOLUTE BASE_DIR ${source_dir})
    cmake_path(IS_PREFIX PROJECT_BINARY_DIR ${source} generated)
    if(generated)
      continue()  # generated sources: their headers live in their own build folders
    endif()
    get_filename_component(folder ${source} DIRECTORY)
    list(APPEND folders ${folder})
  endforeach()
  list(REMOVE_DUPLICATES folders)
  set(headers)
  foreach(folder IN LISTS folders)
    file(GLOB found CONFIGURE_DEPENDS ${folder}/*.h)
    list(APPEND headers ${found})
  endforeach()
  if(claimed)
    list(REMOVE_ITEM headers ${claimed})
  endif()
  set(${out} ${headers} PARENT_SCOPE)
endfunction()

# Makes root/<repository-relative path> a link to each header, and removes links that are no
# longer declared (a header moved to another library must stop resolving here).
function(_tuned_link_headers root headers)
  set(wanted)
  foreach(header IN LISTS headers)
    file(RELATIVE_PATH relative ${PROJECT_SOURCE_DIR} ${header})
    list(APPEND wanted ${root}/${relative})
    get_filename_component(folder ${root}/${relative} DIRECTORY)
    file(MAKE_DIRECTORY ${folder})
    file(CREATE_LINK ${header} ${root}/${relative} SYMBOLIC)
  endforeach()
  file(GLOB_RECURSE existing LIST_DIRECTORIES false ${root}/*)
  foreach(link IN LISTS existing)
    if(NOT link IN_LIST wanted)
      file(REMOVE ${link})
    endif()
  endforeach()
endfunction()

# Runs once, at the end of the configure step, when every target has declared its headers.
function(_tuned_make_include_roots)
  get_property(targets GLOBAL PROPERTY TUNED_HEADER_TARGETS)
  set(manifest "# target public|private header, written by cmake/TunedHelpers.cmake\n")
  set(library_headers)
  foreach(target IN LISTS targets)
    get_target_property(explicit ${target} TUNED_EXPLICIT_HEADERS)
    if(explicit)
      get_target_property(public ${target} TUNED_HEADERS)
      get_target_property(private ${target} TUNED_PRIVATE_HEADERS)
      foreach(kind public private)
        if(NOT ${kind})
          set(${kind})
        endif()
      endforeach()
    else()
      _tuned_default_headers(${target} headers)
      set(public ${headers})
      set(private ${headers})
      list(FILTER public EXCLUDE REGEX "_internal\\.h$")
      list(FILTER private INCLUDE REGEX "_internal\\.h$")
    endif()
    get_target_property(type ${target} TYPE)
    if(type STREQUAL "EXECUTABLE")
      list(APPEND private ${public})  # nothing links a program: all its headers are its own
      set(public)
    else()
      foreach(header IN LISTS public)
        if(header IN_LIST library_headers)
          message(FATAL_ERROR "${header} is a public header of two libraries (the second is "
                              "${target}): name it in one library's HEADERS")
        endif()
        list(APPEND library_headers ${header})
      endforeach()
    endif()
    _tuned_include_root(${target} public_root)
    _tuned_private_include_root(${target} private_root)
    if(NOT type STREQUAL "EXECUTABLE")
      _tuned_link_headers(${public_root} "${public}")
    endif()
    if(NOT type STREQUAL "INTERFACE_LIBRARY")
      _tuned_link_headers(${private_root} "${private}")
    endif()
    foreach(kind public private)
      foreach(header IN LISTS ${kind})
        file(RELATIVE_PATH relative ${PROJECT_SOURCE_DIR} ${header})
        string(APPEND manifest "${target} ${kind} ${relative}\n")
      endforeach()
    endforeach()
  endforeach()
  file(CONFIGURE OUTPUT ${PROJECT_BINARY_DIR}/tuned_headers.txt CONTENT "${manifest}")
endfunction()
cmake_language(DEFER DIRECTORY ${PROJECT_SOURCE_DIR} CALL _tuned_make_include_roots)

# tuned_add_library(name SRCS a.cc b.cc DEPS public_deps... PRIVATE_DEPS ...
#                   [HEADERS h...] [PRIVATE_HEADERS h...])
# With no SRCS the library is header only (an INTERFACE library: HEADERS required). Headers:
# see "Headers and include roots" above; most libraries declare none and get their folder's.
function(tuned_add_library name)
  cmake_parse_arguments(ARG "" "" "SRCS;DEPS;PRIVATE_DEPS;HEADERS;PRIVATE_HEADERS" ${ARGN})
  set(headers)
  if(ARG_HEADERS)
    list(APPEND headers HEADERS ${ARG_HEADERS})
  endif()
  if(ARG_PRIVATE_HEADERS)
    list(APPEND headers PRIVATE_HEADERS ${ARG_PRIVATE_HEADERS})
  endif()
  if(NOT ARG_SRCS)
    if(NOT ARG_HEADERS OR ARG_PRIVATE_DEPS OR ARG_PRIVATE_HEADERS)
      message(FATAL_ERROR "${name}: a library without SRCS is header only: give HEADERS, and no PRIVATE_DEPS or PRIVATE_HEADERS")
    endif()
    add_library(${name} INTERFACE)
    target_link_libraries(${name} INTERFACE ${ARG_DEPS})
    tuned_declare_headers(${name} ${headers})
    return()
  endif()
  add_library(${name} STATIC ${ARG_SRCS})
  tuned_declare_headers(${name} ${headers})
  target_link_libraries(${name} PUBLIC ${ARG_DEPS} PRIVATE ${ARG_PRIVATE_DEPS})
  set_target_properties(${name} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  tuned_target_warnings(${name})
endfunction()

# tuned_test_private_access(test library): a test of a library's private headers sees them.
# The one way a target reaches another's `*_internal.h`.
function(tuned_test_private_access test library)
  _tuned_private_include_root(${library} private_root)
  target_include_directories(${test} PRIVATE ${private_root})
endfunction()

# tuned_add_test(name SRCS ... DEPS ... LABELS unit|integration|fault)
# The test sees the headers of its own source folders and what its DEPS export.
function(tuned_add_test name)
  cmake_parse_arguments(ARG "" "" "SRCS;DEPS;LABELS" ${ARGN})
  add_executable(${name} ${ARG_SRCS})
  tuned_declare_headers(${name})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} GTest::gtest GTest::gtest_main GTest::gmock)
  tuned_target_warnings(${name})
  gtest_discover_tests(${name} PROPERTIES LABELS "${ARG_LABELS}" DISCOVERY_TIMEOUT 60)
endfunction()
