#!/usr/bin/env python3
"""Where a wasm module's bytes go: the code of each function summed by crate (and, for the
playground's own crate, by its top module), raw and gzip -9 (each group compressed on its
own, so the gzip column over-counts a little against the whole file).

It needs the function names, which the shipped files no longer carry (wasm-bindgen and
wasm-opt strip them). Build the inference engine as `cargo xtask build` does and read
cargo's output before wasm-bindgen:

    RUSTFLAGS="-C target-feature=+simd128" CARGO_PROFILE_RELEASE_LTO=fat \\
    CARGO_PROFILE_RELEASE_CODEGEN_UNITS=1 cargo build --target wasm32-unknown-unknown \\
      -p tplay --lib --release --no-default-features
    python3 tools/wasm-size/wasm_size.py target/wasm32-unknown-unknown/release/tplay.wasm

(`--features lab` instead of nothing for the whole engine). The `wasm-bindgen describe`
functions are listed apart: wasm-bindgen removes them.
"""

import collections
import gzip
import re
import sys


def leb(b, i):
    """An unsigned LEB128 at b[i]: (value, index after it)."""
    r = s = 0
    while True:
        x = b[i]
        i += 1
        r |= (x & 0x7F) << s
        s += 7
        if x < 0x80:
            return r, i


def sections(data):
    i = 8
    while i < len(data):
        sid = data[i]
        size, i = leb(data, i + 1)
        yield sid, i, size
        i += size


def imported_functions(data, off):
    n, j = leb(data, off)
    count = 0
    for _ in range(n):
        for _ in range(2):  # module, field
            l, j = leb(data, j)
            j += l
        kind = data[j]
        j += 1
        if kind == 0:  # function: a type index
            _, j = leb(data, j)
            count += 1
        elif kind == 1:  # table: reftype, limits
            j += 1
            fl, j = leb(data, j)
            _, j = leb(data, j)
            if fl & 1:
                _, j = leb(data, j)
        elif kind == 2:  # memory: limits
            fl, j = leb(data, j)
            _, j = leb(data, j)
            if fl & 1:
                _, j = leb(data, j)
        elif kind == 3:  # global: valtype, mutability
            j += 2
        else:
            raise ValueError(f"unknown import kind {kind}")
    return count


def function_names(data, off, size):
    names = {}
    l, j = leb(data, off)
    if data[j : j + l] != b"name":
        return names
    j += l
    end = off + size
    while j < end:
        sub = data[j]
        sl, j = leb(data, j + 1)
        if sub == 1:
            n, k = leb(data, j)
            for _ in range(n):
                idx, k = leb(data, k)
                nl, k = leb(data, k)
                names[idx] = data[k : k + nl].decode("utf8", "replace")
                k += nl
        j += sl
    return names


def group(name):
    """The crate a (mangled) Rust symbol belongs to; `tplay::<module>` for our own."""
    if name.startswith("__wbindgen_describe"):
        return "(wasm-bindgen describe, removed)"
    parts = []
    if name.startswith("_ZN"):  # legacy mangling: _ZN<len><ident><len><ident>…
        j = 3
        while j < len(name) and name[j].isdigit():
            m = re.match(r"(\d+)", name[j:])
            k = int(m.group(1))
            j += len(m.group(1))
            parts.append(name[j : j + k])
            j += k
        if parts and parts[0].startswith("_$LT$"):  # an impl: <path as Trait>
            inner = re.match(r"_\$LT\$(?:\$RF\$)?(?:mut\$u20\$)?([a-z_0-9]+)\.\.([a-z_0-9]+)", parts[0])
            if inner:
                parts = [inner.group(1), inner.group(2)]
    elif name.startswith("_R"):  # v0 mangling: the crate after C<s…>_
        m = re.search(r"C[sh][0-9a-zA-Z]*_(\d+)", name)
        if m:
            k = int(m.group(1))
            parts.append(name[m.end() : m.end() + k])
            m2 = re.match(r"(\d+)", name[m.end() + k :])
            if m2:
                s = m.end() + k + len(m2.group(1))
                parts.append(name[s : s + int(m2.group(1))])
    if not parts:
        return "(other) " + re.split(r"[^A-Za-z_]", name.lstrip("_"))[0][:24]
    return f"tplay::{parts[1]}" if parts[0] == "tplay" and len(parts) > 1 else parts[0]


def main(path):
    data = open(path, "rb").read()
    imports, names, bodies, data_bytes = 0, {}, [], 0
    for sid, off, size in sections(data):
        if sid == 2:
            imports = imported_functions(data, off)
        elif sid == 10:
            n, j = leb(data, off)
            for _ in range(n):
                l, j = leb(data, j)
                bodies.append(data[j : j + l])
                j += l
        elif sid == 11:
            data_bytes = size
        elif sid == 0:
            names.update(function_names(data, off, size))
    if not names:
        sys.exit(f"{path} has no function names (build it as the docstring says)")
    raw, gz = collections.Counter(), collections.Counter()
    for k, body in enumerate(bodies):
        g = group(names.get(imports + k, "?"))
        raw[g] += len(body)
        gz[g] += len(gzip.compress(body, 9))
    total = sum(raw.values())
    print(f"{path}: {len(data) / 1024:.1f} KiB; code {total / 1024:.1f} KiB; data segments {data_bytes / 1024:.1f} KiB")
    print(f"{'group':40} {'raw KiB':>9} {'gzip KiB':>9} {'share':>6}")
    for g, v in raw.most_common(40):
        print(f"{g:40} {v / 1024:9.1f} {gz[g] / 1024:9.1f} {100 * v / total:5.1f}%")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "target/wasm32-unknown-unknown/release/tplay.wasm")
