#!/usr/bin/env bash
# The WebAssembly size cost of each architecture family (issue 16: "give the size cost per
# family"). Each file of core/model/arch/ is compiled as the wasm-release preset compiles it
# (-Oz, -fwasm-exceptions, -fno-rtti) but without LTO, so that its object holds real code; the
# cost is its code and data sections — what the file adds to a module that links it, before the
# link merges templates the families share and before gzip. The two modules' own sizes (the
# first one, memfit.wasm, and memfit-all.wasm with every family) are measured after the link by
# wasm/cmake/size.cmake. Prints; asserts nothing. Needs a configured wasm-release build.
set -euo pipefail
cd "$(dirname "$0")/.."
db=build/wasm-release/compile_commands.json
[ -f "$db" ] || { echo "bench-family-size: configure the wasm-release preset first ($db is missing)" >&2; exit 2; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
python3 - "$db" "$out" <<'PY'
import json, os, re, shlex, subprocess, sys, zlib
db, out = sys.argv[1], sys.argv[2]
first = set(re.findall(r'^MEMFIT_FAMILY\((\w+)\)', open('wasm/first_chunk.def').read(), re.M))

def sections(path):
    """Code (10) and data (11) section bytes of a wasm object, and those bytes deflated."""
    b = open(path, 'rb').read()
    i, size, payload = 8, 0, b''
    while i < len(b):
        sid = b[i]; i += 1
        n = shift = 0
        while True:
            byte = b[i]; i += 1
            n |= (byte & 0x7f) << shift; shift += 7
            if byte < 0x80: break
        if sid in (10, 11):
            size += n; payload += b[i:i + n]
        i += n
    return size, len(zlib.compress(payload, 9))

rows = []
for e in json.load(open(db)):
    src = e['file']
    if '/core/model/arch/' not in src or not src.endswith('.cpp'): continue
    args = shlex.split(e['command'])
    keep, skip = [], 0
    for a in args:
        if skip: skip -= 1; continue
        if a == '-flto' or a.startswith('-Winvalid-pch'): continue
        if a == '-Xclang': skip = 1; continue   # the precompiled header's two -Xclang pairs
        if a == '-o': skip = 1; continue
        keep.append(a)
    obj = os.path.join(out, os.path.basename(src) + '.o')
    subprocess.run(keep + ['-o', obj], check=True, cwd=e['directory'])
    name = os.path.basename(src)[:-4]
    size, deflated = sections(obj)
    rows.append((name, size, deflated))
total = sum(r[1] for r in rows); total_z = sum(r[2] for r in rows)
print(f"{'file (core/model/arch/)':32} {'code+data':>10} {'deflated':>9}  module")
for name, size, z in sorted(rows, key=lambda r: -r[1]):
    where = 'memfit.wasm' if f'{name}_family' in first else ''
    print(f"{name:32} {size:>10,} {z:>9,}  {where}")
print(f"{'all files':32} {total:>10,} {total_z:>9,}")
PY
