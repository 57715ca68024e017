# scripts/lib/web-tests.sh — the WebAssembly + web page stage of scripts/test.sh (issue 6). Source
# it after scripts/lib/deps.sh, then:
#   run_web_tests JOBS
# builds the wasm-release preset (the page's module at -Oz and, with it, the core test suite and
# the fuzz replays for node), runs them under node with ctest, assembles the site (build/web) and
# runs the browser tests (tests/web: node --test + playwright-core + Debian's chromium, all on
# 127.0.0.1). Needs the native CLI at build/native-debug (the page's numbers are compared with
# it): test.sh builds it first. Each step's wall time is printed (CI budget: README "Tests").
run_web_tests() {
  local jobs=${1:-2} start=$SECONDS t
  local root
  root=$(pwd)
  ensure_web_packages
  ensure_npm_packages
  export MEMFIT_REFERENCE_DIR=${MEMFIT_REFERENCE_DIR:-$root/../shared/reference}

  t=$SECONDS
  cmake --preset wasm-release >/dev/null
  # the bundle first (the browser tests need only it), then the node test programs
  cmake --build --preset wasm-release -j "$jobs" --target memfit_wasm_size
  echo "--- web: bundle built in $((SECONDS - t)) s"
  t=$SECONDS
  cmake --build --preset wasm-release -j "$jobs"
  echo "--- web: WASM test programs built in $((SECONDS - t)) s"
  t=$SECONDS
  ctest --preset wasm-release -j "$jobs"
  echo "--- web: WASM ctest in $((SECONDS - t)) s"

  t=$SECONDS
  node web/tools/build.mjs --wasm build/wasm-release/wasm/dist --out build/web
  # Test files run two at a time: much of a browser test is waiting (the mock Hub's slow
  # answers, timeouts, the CLI), so two overlap well even on two cores.
  MEMFIT_WASM_DIR=$root/build/wasm-release/wasm/dist MEMFIT_WEB_DIR=$root/build/web \
    MEMFIT_CLI=${MEMFIT_CLI:-$root/build/native-debug/native/memfit} \
    MEMFIT_SCREENSHOTS=$root/build/web-tests/screenshots \
    node --test --test-concurrency=2 tests/web/
  echo "--- web: browser and module tests in $((SECONDS - t)) s (screenshots: build/web-tests/screenshots)"
  echo "--- web: stage total $((SECONDS - start)) s"
}
