# Driven by tests/package/CMakeLists.txt (cmake -D... -P run_package_test.cmake):
#   1. cmake --install BUILD_DIR --prefix PREFIX          (a fresh, empty prefix)
#   2. configure SOURCE_DIR into CONSUMER_BUILD_DIR with -DCMAKE_PREFIX_PATH=PREFIX (same generator)
#   3. build it
#   4. run the consumer on MODEL, checking it loads the library from PREFIX
#   5. with REMOTE_SOURCE_DIR: the same for the Optimium-Remote consumer (find_package(Optimium-Remote),
#      Remote::Client), which must also resolve liboptimium-remote from PREFIX
# Any failing step fails the test.
cmake_minimum_required(VERSION 3.23)

foreach(Var SOURCE_DIR BUILD_DIR PREFIX CONSUMER_BUILD_DIR GENERATOR MODEL)
  if(NOT DEFINED ${Var} OR "${${Var}}" STREQUAL "")
    message(FATAL_ERROR "run_package_test.cmake: -D${Var}=... is required")
  endif()
endforeach()
if(NOT CONFIG)
  set(CONFIG Release)
endif()

function(run_step Name)
  string(REPLACE ";" " " Printable "${ARGN}")
  message(STATUS "[package test] ${Name}: ${Printable}")
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE Result OUTPUT_VARIABLE Out ERROR_VARIABLE Out)
  message("${Out}")
  if(NOT Result EQUAL 0)
    message(FATAL_ERROR "[package test] ${Name} failed (${Result})")
  endif()
  set(STEP_OUTPUT "${Out}" PARENT_SCOPE)
endfunction()

# Start clean: a stale prefix or consumer cache could hide a broken install.
file(REMOVE_RECURSE "${PREFIX}" "${CONSUMER_BUILD_DIR}" "${REMOTE_CONSUMER_BUILD_DIR}")

# 1. install
run_step(install "${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${PREFIX}" --config "${CONFIG}")
foreach(Expected
    include/Optimium/Runtime.h
    include/Optimium/Runtime/Utils/StreamHelper.h
    share/cmake/Optimium-Runtime/Optimium-RuntimeConfig.cmake
    share/cmake/Optimium-Runtime/Optimium-RuntimeConfigVersion.cmake
    share/cmake/Optimium-Runtime/Optimium-RuntimeTargets.cmake)
  if(NOT EXISTS "${PREFIX}/${Expected}")
    message(FATAL_ERROR "[package test] the install is missing ${Expected}")
  endif()
endforeach()
file(GLOB InstalledLibs "${PREFIX}/lib*/liboptimium-runtime.so*" "${PREFIX}/lib*/*/liboptimium-runtime.so*")
if(NOT InstalledLibs)
  message(FATAL_ERROR "[package test] no liboptimium-runtime.so under ${PREFIX}/lib")
endif()

# 2. configure the consumer against the prefix only (no package registry, no build tree).
set(ConfigureArgs -S "${SOURCE_DIR}" -B "${CONSUMER_BUILD_DIR}" -G "${GENERATOR}"
    "-DCMAKE_PREFIX_PATH=${PREFIX}" "-DCMAKE_BUILD_TYPE=${CONFIG}"
    -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF -DCMAKE_FIND_USE_SYSTEM_PACKAGE_REGISTRY=OFF)
if(MAKE_PROGRAM)
  list(APPEND ConfigureArgs "-DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM}")
endif()
if(CXX_COMPILER)
  list(APPEND ConfigureArgs "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}")
endif()
if(CONSUMER_FLAGS)
  list(APPEND ConfigureArgs "-DCMAKE_CXX_FLAGS=${CONSUMER_FLAGS}" "-DCMAKE_EXE_LINKER_FLAGS=${CONSUMER_FLAGS}")
endif()
run_step(configure "${CMAKE_COMMAND}" ${ConfigureArgs})
file(STRINGS "${CONSUMER_BUILD_DIR}/CMakeCache.txt" FoundDir REGEX "^Optimium-Runtime_DIR:")
string(REGEX REPLACE "^[^=]*=" "" FoundDir "${FoundDir}")
file(REAL_PATH "${PREFIX}/share/cmake/Optimium-Runtime" ExpectedDir)
file(REAL_PATH "${FoundDir}" FoundDirReal)
if(NOT FoundDirReal STREQUAL ExpectedDir)
  message(FATAL_ERROR "[package test] find_package used ${FoundDir}, not ${ExpectedDir}")
endif()

# 3. build
run_step(build "${CMAKE_COMMAND}" --build "${CONSUMER_BUILD_DIR}" --config "${CONFIG}")

# 4. run (the consumer's RPATH points at PREFIX/lib; no LD_LIBRARY_PATH needed)
find_program(Consumer MyExecutable PATHS "${CONSUMER_BUILD_DIR}" "${CONSUMER_BUILD_DIR}/${CONFIG}"
             NO_DEFAULT_PATH REQUIRED)
find_program(Ldd ldd)
if(Ldd)
  run_step(ldd "${Ldd}" "${Consumer}")
  file(REAL_PATH "${PREFIX}" PrefixReal)
  string(FIND "${STEP_OUTPUT}" "=> ${PREFIX}/" AtPrefix)
  string(FIND "${STEP_OUTPUT}" "=> ${PrefixReal}/" AtPrefixReal)
  if(AtPrefix EQUAL -1 AND AtPrefixReal EQUAL -1)
    message(FATAL_ERROR "[package test] the consumer does not resolve liboptimium-runtime from ${PREFIX}")
  endif()
endif()
run_step(run "${Consumer}" "${MODEL}")
if(NOT STEP_OUTPUT MATCHES "package consumer OK")
  message(FATAL_ERROR "[package test] the consumer did not report success")
endif()

# 5. the remote-inference package
if(REMOTE_SOURCE_DIR)
  foreach(Expected include/Optimium/Remote.h share/cmake/Optimium-Remote/Optimium-RemoteConfig.cmake
                   share/cmake/Optimium-Remote/Optimium-RemoteTargets.cmake bin/optimium-remote-server)
    if(NOT EXISTS "${PREFIX}/${Expected}")
      message(FATAL_ERROR "[package test] the install is missing ${Expected}")
    endif()
  endforeach()
  set(RemoteArgs ${ConfigureArgs})
  list(TRANSFORM RemoteArgs REPLACE "^${SOURCE_DIR}$" "${REMOTE_SOURCE_DIR}")
  list(TRANSFORM RemoteArgs REPLACE "^${CONSUMER_BUILD_DIR}$" "${REMOTE_CONSUMER_BUILD_DIR}")
  run_step(configure-remote "${CMAKE_COMMAND}" ${RemoteArgs})
  run_step(build-remote "${CMAKE_COMMAND}" --build "${REMOTE_CONSUMER_BUILD_DIR}" --config "${CONFIG}")
  find_program(RemoteConsumer MyRemoteExecutable PATHS "${REMOTE_CONSUMER_BUILD_DIR}"
               "${REMOTE_CONSUMER_BUILD_DIR}/${CONFIG}" NO_DEFAULT_PATH REQUIRED)
  if(Ldd)
    run_step(ldd-remote "${Ldd}" "${RemoteConsumer}")
    string(REGEX MATCH "liboptimium-remote[^ ]* => ([^ ]*)" Hit "${STEP_OUTPUT}")
    string(FIND "${CMAKE_MATCH_1}" "${PREFIX}/" AtPrefix)
    string(FIND "${CMAKE_MATCH_1}" "${PrefixReal}/" AtPrefixReal)
    if(AtPrefix EQUAL -1 AND AtPrefixReal EQUAL -1)
      message(FATAL_ERROR "[package test] the remote consumer does not resolve liboptimium-remote from ${PREFIX}")
    endif()
  endif()
  run_step(run-remote "${RemoteConsumer}")
  if(NOT STEP_OUTPUT MATCHES "remote package consumer OK")
    message(FATAL_ERROR "[package test] the remote consumer did not report success")
  endif()
endif()
message(STATUS "[package test] passed")
