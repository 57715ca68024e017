#!/usr/bin/env bash
# Compiles (does not link or run) memfit-torch's CUDA code paths — the copy stream, events and
# pinned staging under MEMFIT_TORCH_CUDA in native/torch/ — on a machine without a CUDA
# LibTorch. Debian's libtorch-dev 1.13 is a CPU build, so those paths are otherwise never
# compiled here; they use c10/cuda headers (which Debian ships) and the CUDA runtime headers
# (from a CUDA toolkit: $CUDA_HOME, default /usr/local/cuda). The one header a CPU build does
# not install, c10/cuda/impl/cuda_cmake_macros.h, is generated into a temporary folder.
#
# Usage: scripts/check-cuda-compile.sh [BUILD_DIR]   (a configured MEMFIT_WITH_TORCH build;
#        default build/native-torch, configured if missing)
# Exit 0: every file compiled; 1: a compile error (printed); 77: no CUDA headers, nothing checked.
set -euo pipefail
cd "$(dirname "$0")/.."
cuda_home=${CUDA_HOME:-/usr/local/cuda}
if [ ! -f "$cuda_home/include/cuda_runtime_api.h" ] || [ ! -d /usr/include/c10/cuda ]; then
  echo "check-cuda-compile: no CUDA runtime headers in $cuda_home/include or no c10/cuda headers: skipped" >&2
  exit 77
fi
build_dir=${1:-build/native-torch}
db=$build_dir/compile_commands.json
[ -f "$db" ] || [ -n "${1:-}" ] || cmake --preset native-torch >/dev/null
stub=$(mktemp -d)
trap 'rm -rf "$stub"' EXIT
mkdir -p "$stub/c10/cuda/impl"
printf '#pragma once\n#define C10_CUDA_BUILD_SHARED_LIBS\n' >"$stub/c10/cuda/impl/cuda_cmake_macros.h"

status=0
for file in $(grep -l MEMFIT_TORCH_CUDA native/torch/*.cpp); do
  # The file's own command from the build, without its output and dependency-file options.
  cmd=$(python3 - "$db" "$(pwd)/$file" <<'EOF'
import json, shlex, sys
for entry in json.load(open(sys.argv[1])):
    if entry["file"] == sys.argv[2]:
        args = shlex.split(entry["command"])
        out, skip = [], False
        for a in args:
            if skip: skip = False; continue
            if a in ("-o", "-MF", "-MT"): skip = True; continue
            if a == "-MD": continue
            out.append(a)
        print(shlex.join(out)); break
EOF
)
  [ -n "$cmd" ] || { echo "check-cuda-compile: $file is not in $db" >&2; status=1; continue; }
  if (cd "$build_dir" && eval "$cmd -DMEMFIT_TORCH_CUDA=1 -I$stub -I$cuda_home/include -fsyntax-only"); then
    echo "check-cuda-compile: $file: ok"
  else
    status=1
  fi
done
exit $status
