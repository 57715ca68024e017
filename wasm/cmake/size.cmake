# cmake -DDIR=<dist> -DBUDGET=<bytes> [-DSTRICT=ON] -P size.cmake — prints the gzipped sizes of
# memfit.wasm and memfit.mjs (gzip -9, as a static server would serve them): what a first visit
# loads, held to the budget — over it, a loud warning, or a failure with STRICT
# (MEMFIT_WASM_SIZE_STRICT). memfit-all's and memfit-text's sizes (loaded on demand) are printed too.
find_program(GZIP gzip REQUIRED)
set(total 0)
foreach(f memfit.wasm memfit.mjs)
  execute_process(COMMAND ${GZIP} -9 -c ${DIR}/${f} COMMAND wc -c OUTPUT_VARIABLE gz
                  OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "size: cannot gzip ${DIR}/${f}")
  endif()
  file(SIZE ${DIR}/${f} raw)
  math(EXPR total "${total} + ${gz}")
  message(STATUS "memfit wasm size: ${f} ${raw} bytes, ${gz} gzipped")
endforeach()
message(STATUS "memfit wasm size: total ${total} bytes gzipped (budget ${BUDGET})")
if(EXISTS ${DIR}/memfit-all.wasm)
  execute_process(COMMAND ${GZIP} -9 -c ${DIR}/memfit-all.wasm COMMAND wc -c OUTPUT_VARIABLE all
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
  message(STATUS "memfit wasm size: memfit-all.wasm (every family, loaded on demand) ${all} bytes gzipped")
endif()
if(EXISTS ${DIR}/memfit-text.wasm)
  execute_process(COMMAND ${GZIP} -9 -c ${DIR}/memfit-text.wasm COMMAND wc -c OUTPUT_VARIABLE text
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
  message(STATUS "memfit wasm size: memfit-text.wasm (the tokenizer, loaded when a prompt is typed) ${text} bytes gzipped")
endif()
# What the site serves: web/tools/build.mjs precompresses with zopfli (still gzip) where installed.
find_program(ZOPFLI zopfli)
if(ZOPFLI)
  set(served 0)
  foreach(f memfit.wasm memfit.mjs)
    execute_process(COMMAND ${ZOPFLI} -c ${DIR}/${f} COMMAND wc -c OUTPUT_VARIABLE gz
                    OUTPUT_STRIP_TRAILING_WHITESPACE)
    math(EXPR served "${served} + ${gz}")
  endforeach()
  message(STATUS "memfit wasm size: as served (zopfli-made gzip, build/web/wasm/*.gz) ${served} bytes")
endif()
if(total GREATER BUDGET)
  if(STRICT)
    message(FATAL_ERROR "memfit: the WASM bundle is ${total} bytes gzipped, over the ${BUDGET} budget")
  endif()
  message(WARNING "*** memfit: the WASM bundle is ${total} bytes gzipped, OVER the ${BUDGET} budget "
                  "(README, \"WebAssembly build\") ***")
endif()
