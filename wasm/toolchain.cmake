# wasm/toolchain.cmake — included by the top-level CMakeLists.txt under Emscripten (the wasm-*
# presets), before core/. Debian's Emscripten 3.1.6 cannot use the host's CMake packages
# (find_package(fmt) fails, and /usr/include on the include path breaks the build with host
# glibc headers), so the header-only dependencies come from a folder of symlinks to exactly
# the Debian headers core needs: nlohmann/, fmt/ (header-only) and doctest/ (the test build).
if(MEMFIT_BUILD_CLI OR MEMFIT_BUILD_TESTS)
  message(FATAL_ERROR "memfit: under Emscripten, configure with MEMFIT_BUILD_CLI=OFF and "
                      "MEMFIT_BUILD_TESTS=OFF (use the wasm-release preset); wasm/ builds its "
                      "own test runner")
endif()

set(MEMFIT_WASM_INCLUDE ${CMAKE_BINARY_DIR}/wasm-include)
file(MAKE_DIRECTORY ${MEMFIT_WASM_INCLUDE})
foreach(dir nlohmann fmt doctest)
  if(NOT EXISTS /usr/include/${dir})
    message(FATAL_ERROR "memfit: /usr/include/${dir} is missing (scripts/lib/deps.sh installs it)")
  endif()
  if(NOT EXISTS ${MEMFIT_WASM_INCLUDE}/${dir})
    file(CREATE_LINK /usr/include/${dir} ${MEMFIT_WASM_INCLUDE}/${dir} SYMBOLIC)
  endif()
endforeach()

# fmt: core links fmt::fmt and only calls find_package(fmt) when no such target exists. Its
# implementation is compiled once (wasm/fmt.cpp), not header-only in every core TU (half of the
# compile time of a small TU). FMT_STATIC_THOUSANDS_SEPARATOR keeps std::locale (and libc++'s
# ~90 KB of facets) out of the module; core never formats with the locale ({:L}), so no output
# changes. FMT_USE_LONG_DOUBLE=0 / FMT_USE_INT128=0 / FMT_USE_FLOAT=0: core formats none of these
# (doubles only; an __int128 argument would no longer compile, a float or long double would print
# nothing, which the WASM = CLI parity tests would show), and their formatters are ~9 KB.
add_library(memfit_fmt STATIC ${CMAKE_CURRENT_LIST_DIR}/fmt.cpp)
target_include_directories(memfit_fmt SYSTEM PUBLIC ${MEMFIT_WASM_INCLUDE})
target_compile_definitions(memfit_fmt PUBLIC FMT_STATIC_THOUSANDS_SEPARATOR=44 FMT_USE_LONG_DOUBLE=0
                           FMT_USE_INT128=0 FMT_USE_FLOAT=0)
add_library(fmt::fmt ALIAS memfit_fmt)

# nlohmann_json: core calls find_package(nlohmann_json 3.10 REQUIRED); a package config of our
# own (wasm/cmake/) defines the target over the symlinked headers.
set(nlohmann_json_DIR ${CMAKE_CURRENT_LIST_DIR}/cmake CACHE PATH "nlohmann_json for the WASM build" FORCE)

# C++ exceptions as WebAssembly exceptions (core throws memfit::Error internally): without a
# flag a throw reaches JS as a bare number. Everything, core included, is compiled with it.
add_compile_options(-fwasm-exceptions)
add_link_options(-fwasm-exceptions)

# No RTTI (core uses neither typeid nor dynamic_cast; exceptions keep their type info): the type
# names and type_info objects of every std::function and json type are ~6 KB of the bundle.
# Embind then identifies types without typeid (EMSCRIPTEN_HAS_UNBOUND_TYPE_NAMES=0).
# -fno-rtti at link too: it selects the matching embind library (libembind, not libembind-rtti).
add_compile_options(-fno-rtti)
add_link_options(-fno-rtti)
add_compile_definitions(EMSCRIPTEN_HAS_UNBOUND_TYPE_NAMES=0)

# Link-time optimization: the bundle is ~11% smaller gzipped (README, "WebAssembly build").
# Objects are bitcode; each program is optimized whole at its own link -O level (-Oz for the
# bundle, -O1 for the test programs).
option(MEMFIT_WASM_LTO "Build the WASM programs with link-time optimization" ON)
if(MEMFIT_WASM_LTO)
  add_compile_options(-flto)
  add_link_options(-flto)
endif()

# The core test suite built for node and run by ctest (wasm/CMakeLists.txt); enable_testing()
# belongs to the top-level directory, which includes this file.
option(MEMFIT_WASM_TESTS "Build the core test suite for node and register it with ctest" ON)
if(MEMFIT_WASM_TESTS)
  enable_testing()
endif()
