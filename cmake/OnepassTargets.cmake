# Helpers that every module uses, so that warnings, sanitizers and test labels stay uniform.

# Warnings are errors with ONEPASS_WERROR (ON in the release, asan and fuzz presets, which CI builds;
# -DONEPASS_WERROR=OFF turns it off for a compiler that warns where ours does not).
function(onepass_target_defaults target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wno-unused-parameter)
  if(ONEPASS_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
    if(ONEPASS_SANITIZE AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
      # GCC's flow analysis over sanitizer-instrumented code reports maybe-uninitialized where
      # nothing is (boost::optional inside Beast's parser, inlined into http/wire.cpp); the
      # release build keeps it an error, here it stays a warning.
      target_compile_options(${target} PRIVATE -Wno-error=maybe-uninitialized)
    endif()
  endif()
endfunction()

if(ONEPASS_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()
if(ONEPASS_FUZZ)
  # -fno-sanitize-recover: undefined behaviour aborts (a libFuzzer crash with its input saved),
  # as in the asan preset; clang's UBSan otherwise prints the report and carries on.
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer
                      -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()

# The test binaries' own code (GoogleTest cases, clients, helpers) is compiled at this level,
# whatever the build type: the libraries under test keep theirs. At -O3 a test source took twice
# as long to compile as at -O1 and sanitized ones twice as long at -O1 as at -O0, while the tests
# spend their time in the libraries, so the test code is the CI's largest compile cost for nothing.
set(ONEPASS_TEST_OPTIMIZATION "-O1" CACHE STRING
    "Optimisation flag for the tests' own sources (-O0 in the sanitizer presets)")

# The edges (the HTTP dialects' JSON mapping, the CLI's subcommands) at this level on top of the
# build type's, when set: no test's time depends on their speed, and under ASan they were a
# fifth of the sanitized build (-O0 in the asan preset).
set(ONEPASS_EDGE_OPTIMIZATION "" CACHE STRING
    "Optimisation flag for src/api and apps/onepass, over the build type's (-O0 in the asan preset)")

# The test binaries' sources are compiled a few to a translation unit (CMake's unity build):
# each test source spent most of its compile on the same headers (GoogleTest, nlohmann/json, the
# libraries' own), and the tests were two fifths of every build's compile time. A test source
# keeps its helpers in an anonymous namespace of names its own, so that sources share a unit.
option(ONEPASS_UNITY_TESTS "Compile the test binaries' sources a few to a translation unit" ON)
set(ONEPASS_UNITY_BATCH 4 CACHE STRING "Test sources per translation unit (ONEPASS_UNITY_TESTS)")

# onepass_test_defaults(TARGET): warnings as for every target, the tests' optimisation level.
function(onepass_test_defaults target)
  onepass_target_defaults(${target})
  target_compile_options(${target} PRIVATE ${ONEPASS_TEST_OPTIMIZATION})
endfunction()

# The engine's libraries (tensor, kernels, model: the forward pass) at this level on top of the
# build type's, when set: the asan preset's -O1 left their vector helpers uninlined, and the
# golden and batch-invariance tests, which run every fixture through them, were the longest part
# of the sanitized suite. The sanitizers instrument them all the same.
set(ONEPASS_ENGINE_OPTIMIZATION "" CACHE STRING
    "Optimisation flag for the engine's libraries, over the build type's (-O2 in the asan preset)")

# onepass_add_library(NAME [ENGINE|EDGE] SOURCES ... DEPS ...): library onepass_NAME rooted at
# src/; ENGINE: part of the forward pass (ONEPASS_ENGINE_OPTIMIZATION); EDGE: protocol mapping
# (ONEPASS_EDGE_OPTIMIZATION).
function(onepass_add_library name)
  cmake_parse_arguments(ARG "ENGINE;EDGE" "" "SOURCES;DEPS;PRIVATE_DEPS" ${ARGN})
  add_library(onepass_${name} STATIC ${ARG_SOURCES})
  target_include_directories(onepass_${name} PUBLIC "${PROJECT_SOURCE_DIR}/src")
  target_link_libraries(onepass_${name} PUBLIC ${ARG_DEPS} PRIVATE ${ARG_PRIVATE_DEPS})
  onepass_target_defaults(onepass_${name})
  if(ARG_ENGINE)
    target_compile_options(onepass_${name} PRIVATE ${ONEPASS_ENGINE_OPTIMIZATION})
  endif()
  if(ARG_EDGE)
    target_compile_options(onepass_${name} PRIVATE ${ONEPASS_EDGE_OPTIMIZATION})
  endif()
endfunction()

# onepass_add_test(NAME SOURCES ... DEPS ... LABELS unit|integration|e2e [MANUAL]): one GoogleTest
# binary. MANUAL builds it (so it keeps compiling) without registering it with ctest: for a test
# whose data lives outside the repository, run by hand.
function(onepass_add_test name)
  cmake_parse_arguments(ARG "MANUAL" "" "SOURCES;DEPS;LABELS" ${ARGN})
  if(ARG_MANUAL AND NOT ONEPASS_BENCHMARKS)
    return()
  endif()
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} GTest::gtest GTest::gtest_main GTest::gmock)
  target_compile_definitions(${name} PRIVATE
    ONEPASS_TEST_DATA_DIR="${ONEPASS_TEST_DATA_DIR}"
    ONEPASS_BINARY_DIR="${PROJECT_BINARY_DIR}")
  onepass_test_defaults(${name})
  if(ONEPASS_UNITY_TESTS)
    set_target_properties(${name} PROPERTIES UNITY_BUILD ON
      UNITY_BUILD_BATCH_SIZE ${ONEPASS_UNITY_BATCH})
  endif()
  if(ARG_MANUAL)
    return()
  endif()
  add_test(NAME ${name} COMMAND ${name})
  if(ARG_LABELS)
    set_tests_properties(${name} PROPERTIES LABELS "${ARG_LABELS}")
  endif()
endfunction()

# The benchmark programs (Google Benchmark) and the MANUAL tests run by hand, never by ctest. The
# release build compiles them, so they keep compiling; the sanitizer presets leave them out.
option(ONEPASS_BENCHMARKS "Build the benchmark programs and the manual (not ctest) tests" ON)

# onepass_add_benchmark(NAME SOURCES ... DEPS ...): one Google Benchmark program, optimised as
# the libraries it times are, that finds the test data as the tests do.
function(onepass_add_benchmark name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  if(NOT ONEPASS_BENCHMARKS)
    return()
  endif()
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} benchmark::benchmark)
  target_compile_definitions(${name} PRIVATE ONEPASS_TEST_DATA_DIR="${ONEPASS_TEST_DATA_DIR}")
  onepass_target_defaults(${name})
endfunction()

# onepass_add_fuzzer(NAME SOURCES ... DEPS ... CORPUS dir): libFuzzer target, run briefly by ctest.
function(onepass_add_fuzzer name)
  cmake_parse_arguments(ARG "" "CORPUS" "SOURCES;DEPS" ${ARGN})
  if(NOT ONEPASS_FUZZ)
    return()
  endif()
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS})
  target_link_options(${name} PRIVATE -fsanitize=fuzzer)
  onepass_target_defaults(${name})
  target_compile_definitions(${name} PRIVATE ONEPASS_TEST_DATA_DIR="${ONEPASS_TEST_DATA_DIR}")
  set(corpus_dir "${CMAKE_CURRENT_BINARY_DIR}/${name}_corpus")
  file(MAKE_DIRECTORY "${corpus_dir}")
  set(seed_args "")
  if(ARG_CORPUS)
    set(seed_args "${ARG_CORPUS}")
  endif()
  add_test(NAME ${name}
    COMMAND ${name} -max_total_time=${ONEPASS_FUZZ_SECONDS} -rss_limit_mb=2048 -timeout=10
            "${corpus_dir}" ${seed_args})
  # The environment says the same, for any code compiled without the flag above.
  set_tests_properties(${name} PROPERTIES LABELS fuzz
                       ENVIRONMENT "UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1")
endfunction()

# onepass_add_fuzzers_in(DIR DEPS ...): one libFuzzer target per DIR/*_fuzz.cpp, seeded from
# DIR/corpus/<name>/ when that folder exists.
function(onepass_add_fuzzers_in dir)
  cmake_parse_arguments(ARG "" "" "DEPS" ${ARGN})
  file(GLOB fuzz_sources CONFIGURE_DEPENDS "${dir}/*_fuzz.cpp")
  foreach(source IN LISTS fuzz_sources)
    get_filename_component(name "${source}" NAME_WE)
    set(corpus "")
    if(IS_DIRECTORY "${dir}/corpus/${name}")
      set(corpus CORPUS "${dir}/corpus/${name}")
    endif()
    onepass_add_fuzzer(${name} SOURCES "${source}" DEPS ${ARG_DEPS} ${corpus})
  endforeach()
endfunction()
