#!/usr/bin/python3
"""Generates core/text/unicode_tables.cpp: the Unicode data of memfit's portable TextBackend
(general categories, simple lowercase, canonical combining classes, decompositions, primary
composites, scripts, Alphabetic) as compact range tables.

Source: Python's unicodedata (general categories, mappings, combining classes, decompositions),
and Perl's Unicode::UCD for what unicodedata lacks (Script, Alphabetic); both must carry the same
Unicode version, which is written into the output. Run from anywhere:
    /usr/bin/python3 scripts/gen-unicode-tables.py
"""
import os
import subprocess
import sys
import unicodedata

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'core', 'text', 'unicode_tables.cpp')
MAX = 0x110000
# CharCategory's order (memfit/tokenizer/text_backend.h), utf8proc's.
CATEGORIES = ['Cn', 'Lu', 'Ll', 'Lt', 'Lm', 'Lo', 'Mn', 'Mc', 'Me', 'Nd', 'Nl', 'No', 'Pc', 'Pd', 'Ps', 'Pe',
              'Pi', 'Pf', 'Po', 'Sm', 'Sc', 'Sk', 'So', 'Zs', 'Zl', 'Zp', 'Cc', 'Cf', 'Cs', 'Co']
# The scripts \p{Name} may name (tokenizer.json patterns use Han; the others are cheap).
SCRIPTS = ['Han', 'Hiragana', 'Katakana', 'Hangul', 'Latin', 'Greek', 'Cyrillic', 'Arabic', 'Hebrew', 'Thai',
           'Devanagari', 'Common', 'Inherited']


def perl_invlist(prop):
    """Perl's inversion list of `prop` (Unicode::UCD::prop_invlist): [start0, end0+1, start1, ...]."""
    out = subprocess.run(['perl', '-MUnicode::UCD=prop_invlist', '-e', f'print join(",", prop_invlist("{prop}"))'],
                         check=True, capture_output=True, text=True).stdout
    values = [int(v) for v in out.split(',') if v]
    if not values:
        sys.exit(f'perl knows no property {prop}')
    if len(values) % 2:
        values.append(MAX)
    return values


def perl_unicode_version():
    return subprocess.run(['perl', '-MUnicode::UCD', '-e', 'print Unicode::UCD::UnicodeVersion()'],
                          check=True, capture_output=True, text=True).stdout.strip()


def runs(values):
    """[(start, value)] where value changes, over every code point."""
    out = []
    prev = None
    for c in range(MAX):
        v = values(c)
        if v != prev:
            out.append((c, v))
            prev = v
    return out


def simple_lowercase(c):
    low = chr(c).lower()
    if len(low) == 1:
        return ord(low)
    return 0x69 if c == 0x130 else c  # U+0130's simple mapping is 'i' (SpecialCasing gives the full one)


def lowercase_runs():
    """[(first, count, stride, delta)]: c = first + k*stride (k < count) lowercases to c + delta."""
    pairs = [(c, simple_lowercase(c) - c) for c in range(MAX) if simple_lowercase(c) != c]
    out = []
    for c, d in pairs:
        if out:
            first, count, stride, delta = out[-1]
            last = first + (count - 1) * stride
            if delta == d and (count == 1 and c - last in (1, 2) or count > 1 and c - last == stride):
                out[-1] = (first, count + 1, c - last, delta)
                continue
        out.append((c, 1, 1, d))
    return out


def decompositions():
    """[(cp, compat, [code points])] of every character with a decomposition mapping (not Hangul)."""
    out = []
    for c in range(MAX):
        d = unicodedata.decomposition(chr(c))
        if not d:
            continue
        parts = d.split()
        compat = parts[0].startswith('<')
        if compat:
            parts = parts[1:]
        out.append((c, compat, [int(p, 16) for p in parts]))
    return out


def primary_composites(decomps):
    """[(a, b, composite)] sorted: canonical pairs NFC recomposes (not excluded, not singletons)."""
    out = []
    for c, compat, parts in decomps:
        if not compat and len(parts) == 2 and unicodedata.normalize('NFC', chr(c)) == chr(c):
            out.append((parts[0], parts[1], c))
    return sorted(out)


def u32_array(name, values, per_line=8, fmt='0x{:x}'):
    lines = [f'const std::uint32_t {name}[] = {{']
    for i in range(0, len(values), per_line):
        lines.append('    ' + ', '.join(fmt.format(v) for v in values[i:i + per_line]) + ',')
    lines.append('};')
    lines.append(f'const std::size_t {name}_size = {len(values)};')
    return '\n'.join(lines)


def main():
    version = unicodedata.unidata_version
    perl_version = perl_unicode_version()
    if perl_version != version:
        sys.exit(f'Python unicodedata has Unicode {version}, Perl {perl_version}: the tables would mix versions')

    cats = runs(lambda c: CATEGORIES.index(unicodedata.category(chr(c))))
    ccc = runs(lambda c: unicodedata.combining(chr(c)))
    lower = lowercase_runs()
    decomps = decompositions()
    comps = primary_composites(decomps)

    pool = []
    decomp_keys, decomp_spans = [], []
    for c, compat, parts in decomps:
        decomp_keys.append(c | (compat << 21))
        decomp_spans.append((len(pool) << 5) | len(parts))
        pool.extend(parts)

    script_pool, script_index = [], []
    for name in SCRIPTS:
        inv = perl_invlist(f'Script={name}')
        script_index.append((name, len(script_pool), len(inv)))
        script_pool.extend(inv)
    alphabetic = perl_invlist('Alphabetic')

    parts = [
        '// GENERATED by scripts/gen-unicode-tables.py from Python\'s unicodedata and Perl\'s Unicode::UCD',
        f'// (Unicode {version}). Do not edit: change the script and run it again. Layouts: unicode_tables.h.',
        '#include "unicode_tables.h"',
        '',
        'namespace memfit::text::tables {',
        '',
        f'const char kUnicodeVersion[] = "{version}";',
        u32_array('kCategoryRuns', [(s << 5) | v for s, v in cats]),
        u32_array('kCombiningClassRuns', [(s << 8) | v for s, v in ccc]),
        u32_array('kLowercaseFirst', [r[0] for r in lower]),
        u32_array('kLowercaseCountStride', [(r[1] << 2) | r[2] for r in lower]),
        u32_array('kLowercaseDelta', [r[3] & 0xFFFFFFFF for r in lower]),
        u32_array('kDecompositionKeys', decomp_keys),
        u32_array('kDecompositionSpans', decomp_spans),
        u32_array('kDecompositionPool', pool),
        u32_array('kCompositionFirst', [a for a, _, _ in comps]),
        u32_array('kCompositionSecond', [b for _, b, _ in comps]),
        u32_array('kCompositionResults', [c for _, _, c in comps]),
        u32_array('kScriptRanges', script_pool),
        'const ScriptEntry kScripts[] = {',
        *[f'    {{"{n}", {b}, {k}}},' for n, b, k in script_index],
        '};',
        f'const std::size_t kScripts_size = {len(script_index)};',
        u32_array('kAlphabetic', alphabetic),
        '',
        '}  // namespace memfit::text::tables',
        '',
    ]
    with open(OUT, 'w', encoding='utf-8') as f:
        f.write('\n'.join(parts))
    print(f'{OUT}: Unicode {version}, {len(cats)} category runs, {len(lower)} lowercase runs, '
          f'{len(decomps)} decompositions, {len(comps)} composites')


if __name__ == '__main__':
    main()
