# cmake -DDIR=<dist> -DBUDGET=<bytes> -P size.cmake — prints the gzipped sizes of memfit.wasm and
# memfit.mjs (gzip -9, as a static server would serve them) and fails over the budget.
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
if(total GREATER BUDGET)
  message(FATAL_ERROR "memfit: the WASM bundle is ${total} bytes gzipped, over the ${BUDGET} budget")
endif()
