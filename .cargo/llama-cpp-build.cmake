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
# - what is left of `llama-common` is compiled without optimisation, and so is `llama` but for
#   the sources that run once per token: the context, batches, the KV cache, the graph's
#   inputs, sampling, grammars and the tokenizer keep -O3 (with all of `llama` at -O1 the GGUF
#   tests' decoding took a quarter more CPU time). Unoptimised are the loader, quantisation
#   and saving, LoRA adapters, the architecture and chat-template tables, the memory kinds of
#   other architectures (recurrent, hybrid, sliding-window and sparse-attention caches), and
#   the 158 per-architecture graph builders, which lay out once per call the graph that ggml
#   computes; in ggml, the file reader, the training optimiser and the multi-device backend.
#   A flag added to a target or a source comes after the build type's -O3, and the last -O
#   wins: a source's after its target's.
# GCC and Clang flags: MSVC builds keep llama.cpp's own.
if(NOT RAGEVAL_LLAMA_BUILD AND NOT MSVC)
  set(RAGEVAL_LLAMA_BUILD ON)
  # Compiles the named sources of `target` (those of its source folder that exist, `.cpp`)
  # at `level`.
  function(rageval_sources_at target level)
    if(NOT TARGET ${target})
      return()
    endif()
    get_target_property(dir ${target} SOURCE_DIR)
    set(sources)
    foreach(name ${ARGN})
      if(EXISTS ${dir}/${name}.cpp)
        list(APPEND sources ${dir}/${name}.cpp)
      endif()
    endforeach()
    if(sources)
      set_source_files_properties(${sources} DIRECTORY ${dir} PROPERTIES COMPILE_OPTIONS ${level})
    endif()
  endfunction()
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
      # Unoptimised by default, and so are the model sources (one graph builder per
      # architecture, batched into unity files): they run once a call, to lay out the
      # graph that ggml then computes.
      set_property(TARGET llama APPEND PROPERTY COMPILE_OPTIONS -O0)
      rageval_sources_at(llama -O3
        llama llama-batch llama-context llama-cparams llama-grammar llama-graph
        llama-hparams llama-impl llama-io llama-kv-cache llama-memory llama-mmap
        llama-sampler llama-vocab unicode-data unicode)
    endif()
    # ggml's file reader, its training optimiser and its multi-device backend: run at load or
    # never.
    rageval_sources_at(ggml -O0 gguf ggml-opt ggml-backend-meta)
  endfunction()
  # Deferred to the end of the top-level directory, when every target exists.
  cmake_language(DEFER DIRECTORY ${CMAKE_SOURCE_DIR} CALL rageval_llama_build)
endif()
