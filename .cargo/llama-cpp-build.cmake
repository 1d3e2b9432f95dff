# Included by llama.cpp's CMake build after each project() call (CMAKE_PROJECT_INCLUDE, set in
# config.toml's [env]; llama-cpp-sys-2 passes CMAKE_* variables on to CMake).
#
# Why: llama.cpp's C++ is the largest unit of a cold build with `gguf`, about 510 CPU-seconds
# at -O3 (BENCHMARKS.md, "CI: what each step costs"), and half of it is `llama-common`: chat
# templates, argument parsing, speculative decoding, JSON. rageval calls one function of it,
# the JSON-schema to grammar converter, once per schema. So `llama-common` and the HTTP library
# it links are compiled without optimisation (95 CPU-seconds fewer). `llama` keeps -O3: at -O1
# the GGUF tests' decoding took a quarter more CPU time (its sampling runs once per token).
# A flag added to a target comes after the build type's -O3, and the last -O wins.
# GCC and Clang flags: MSVC builds keep llama.cpp's own.
if(NOT RAGEVAL_LLAMA_OPT_LEVELS AND NOT MSVC)
  set(RAGEVAL_LLAMA_OPT_LEVELS ON)
  function(rageval_llama_opt_levels)
    foreach(target llama-common llama-common-base cpp-httplib)
      if(TARGET ${target})
        set_property(TARGET ${target} APPEND PROPERTY COMPILE_OPTIONS -O0)
      endif()
    endforeach()
  endfunction()
  # Deferred to the end of the top-level directory, when every target exists.
  cmake_language(DEFER DIRECTORY ${CMAKE_SOURCE_DIR} CALL rageval_llama_opt_levels)
endif()
