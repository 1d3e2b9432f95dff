# Included by llama.cpp's CMake build after each project() call (CMAKE_PROJECT_INCLUDE, set in
# config.toml's [env]; llama-cpp-sys-2 passes CMAKE_* variables on to CMake).
#
# Why: llama.cpp's C++ is the largest unit of a cold build with `gguf`, about 510 CPU-seconds
# at -O3 (BENCHMARKS.md, "CI: what each step costs"), and half of it is `llama-common`: chat
# templates, argument parsing, model downloads, speculative decoding, JSON. rageval reaches
# it only through llama-cpp-sys-2's `wrapper_common.cpp` (the JSON-schema to grammar
# converter, once per schema), and a static link takes only the objects that wrapper needs.
# So:
# - the sources of `llama-common` no link pulls in are not compiled: chat templates and their
#   parsers, the Jinja engine, argument parsing, downloads, the console, llguidance. Which
#   ones was found with `nm` over the built archive: the objects `wrapper_common.o`'s
#   undefined symbols reach, transitively, are common, fit, json, json-schema,
#   json-schema-to-grammar, log, ngram-*, reasoning-budget, sampling, speculative, trie and
#   unicode. Should a new llama-cpp-sys-2 need one of the left-out files, the link fails
#   naming its symbol: take its name out of the list below.
# - nothing left links the HTTP library (only downloads used it), so it is not built;
# - what is left of `llama-common` is compiled without optimisation, and so are the sources
#   of `llama` that run once per model load or never for the models rageval loads: the
#   loader, quantisation and saving, LoRA adapters, the architecture and chat-template
#   tables, and the memory kinds of other architectures (recurrent, hybrid, sliding-window
#   and sparse-attention caches). The rest of `llama` keeps -O3: with all of it at -O1 the
#   GGUF tests' decoding took a quarter more CPU time (sampling, grammars, the tokenizer and
#   the graph run once per token). A flag added to a target or a source comes after the
#   build type's -O3, and the last -O wins.
# GCC and Clang flags: MSVC builds keep llama.cpp's own.
if(NOT RAGEVAL_LLAMA_BUILD AND NOT MSVC)
  set(RAGEVAL_LLAMA_BUILD ON)
  function(rageval_llama_build)
    if(TARGET llama-common)
      get_target_property(sources llama-common SOURCES)
      list(FILTER sources EXCLUDE REGEX
        "(^|/)(jinja|parsers)/|(^|/)(arg|chat[-a-z]*|console|debug|download|hf-cache|imatrix-loader|llguidance|peg-parser|preset|subproc)\\.cpp$")
      set_property(TARGET llama-common PROPERTY SOURCES ${sources})
      foreach(property LINK_LIBRARIES INTERFACE_LINK_LIBRARIES)
        get_target_property(libraries llama-common ${property})
        if(libraries)
          list(FILTER libraries EXCLUDE REGEX "cpp-httplib")
          set_property(TARGET llama-common PROPERTY ${property} ${libraries})
        endif()
      endforeach()
    endif()
    if(TARGET cpp-httplib)
      set_property(TARGET cpp-httplib PROPERTY EXCLUDE_FROM_ALL ON)
    endif()
    foreach(target llama-common llama-common-base)
      if(TARGET ${target})
        set_property(TARGET ${target} APPEND PROPERTY COMPILE_OPTIONS -O0)
      endif()
    endforeach()
    if(TARGET llama)
      get_target_property(llama_dir llama SOURCE_DIR)
      set(cold_sources)
      foreach(name
          llama-model-loader llama-model llama-model-saver llama-quant llama-adapter
          llama-arch llama-chat llama-kv-cache-iswa llama-kv-cache-dsa llama-kv-cache-dsa-iswa
          llama-kv-cache-msa llama-kv-cache-dsv4 llama-memory-hybrid llama-memory-hybrid-iswa
          llama-memory-hybrid-idx llama-memory-recurrent)
        if(EXISTS ${llama_dir}/${name}.cpp)
          list(APPEND cold_sources ${llama_dir}/${name}.cpp)
        endif()
      endforeach()
      set_source_files_properties(${cold_sources} DIRECTORY ${llama_dir}
        PROPERTIES COMPILE_OPTIONS -O0)
    endif()
  endfunction()
  # Deferred to the end of the top-level directory, when every target exists.
  cmake_language(DEFER DIRECTORY ${CMAKE_SOURCE_DIR} CALL rageval_llama_build)
endif()
