#!/usr/bin/env python3
"""No two sibling modules of a crate import each other, directly or around a circle.

For every crate under crates/, each `.rs` file is a module (`a/b.rs` and `a/b/mod.rs` are
`crate::a::b`, `lib.rs`/`main.rs` the crate root). Every path it names that starts with
`crate::`, `super::` or `self::` (in `use` declarations, braces expanded, and in code) is
resolved to the deepest module file it reaches. An import from module `P::x::…` to module
`P::y::…` is an edge between the siblings `P::x` and `P::y` (a parent using its child, or a
child its parent, is not: that is how a module owns its helpers). A circle of siblings is a
strongly connected component of more than one of them: a knot where no file can be read,
tested or replaced without the others.

  python3 scripts/check-cycles.py            # exit 1 and the circles if any
  python3 scripts/check-cycles.py --list     # every circle, even the known ones

Circles that existed when this check was written are listed in KNOWN below, to be cut one by
one (issue 34); a new circle, or a known one that grew, fails.
"""
import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")

# Circles present when the check was added (crate: sorted members); each must only shrink.
KNOWN: dict = {}


TEST_MOD = re.compile(r"#\[cfg\(test\)\]\s*(pub(\([^)]*\))?\s*)?mod\s+\w+\s*([;{])")


def without_test_modules(text):
    """`text` without its `#[cfg(test)]` module declarations and inline test modules."""
    out, pos = [], 0
    while True:
        m = TEST_MOD.search(text, pos)
        if not m:
            out.append(text[pos:])
            return "".join(out)
        out.append(text[pos:m.start()])
        end = m.end()
        if m.group(3) == "{":
            depth = 1
            while end < len(text) and depth:
                depth += {"{": 1, "}": -1}.get(text[end], 0)
                end += 1
        pos = end


def modules(src):
    """Module path (tuple) of every .rs file under src."""
    out = {}
    for dirpath, _, files in os.walk(src):
        for f in files:
            if not f.endswith(".rs"):
                continue
            rel = os.path.relpath(os.path.join(dirpath, f), src)
            parts = rel[:-3].split(os.sep)
            # Test-only modules (`tests.rs`, `*_tests.rs`, `testutil.rs`) are not the design.
            if any(p == "tests" or p.endswith("_tests") or p == "testutil" for p in parts):
                continue
            if parts[-1] in ("mod", "lib", "main") and (parts[-1] == "mod" or len(parts) == 1):
                parts = parts[:-1]
            out[os.path.join(dirpath, f)] = tuple(parts)
    return out


def expand(path):
    """`a::{b, c::{d, e}}` → [a::b, a::c::d, a::c::e] (as strings)."""
    path = re.sub(r"\s+", "", path)
    i = path.find("{")
    if i < 0:
        return [path]
    depth, j = 0, i
    for j in range(i, len(path)):
        depth += {"{": 1, "}": -1}.get(path[j], 0)
        if depth == 0:
            break
    head, inner, tail = path[:i], path[i + 1 : j], path[j + 1 :]
    parts, depth, start = [], 0, 0
    for k, ch in enumerate(inner):
        depth += {"{": 1, "}": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            parts.append(inner[start:k])
            start = k + 1
    parts.append(inner[start:])
    out = []
    for p in parts:
        if p:
            out.extend(expand(head + p + tail))
    return out


USE = re.compile(r"\buse\s+((?:crate|super|self)\b[^;]*);", re.S)
INLINE = re.compile(r"\b((?:crate|super|self)(?:::[A-Za-z_][A-Za-z0-9_]*)+)")


def strip(text):
    # Unit tests are not the module's design: drop each `#[cfg(test)] mod name;` and each
    # `#[cfg(test)] mod name { … }` block (brace-matched), wherever it stands in the file;
    # what follows one is still read.
    text = without_test_modules(text)
    text = re.sub(r"//[^\n]*", "", text)
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return re.sub(r'"(?:\\.|[^"\\])*"', '""', text)


def targets(text, here, is_dir_module):
    """Module paths named by the file whose module is `here`."""
    text = strip(text)
    paths = []
    for m in USE.finditer(text):
        paths.extend(expand(m.group(1)))
    paths.extend(m.group(1) for m in INLINE.finditer(text))
    out = []
    for p in paths:
        segs = [s for s in p.split("::") if s and s != "*"]
        segs = [s.split(" as ")[0] for s in segs]
        # `self` is the module itself; `super` its parent.
        base = list(here)
        if segs and segs[0] == "crate":
            base, segs = [], segs[1:]
        while segs and segs[0] in ("self", "super"):
            if segs[0] == "super":
                base = base[:-1]
            segs = segs[1:]
        out.append(tuple(base + segs))
    return out


def circles(crate_src, show_edges=False):
    mods = modules(crate_src)
    known = set(mods.values())
    edges = {}
    for f, here in mods.items():
        is_dir = f.endswith("mod.rs") or f.endswith("lib.rs") or f.endswith("main.rs")
        for t in targets(open(f, encoding="utf-8").read(), here, is_dir):
            # The deepest module file the path reaches.
            while t and t not in known:
                t = t[:-1]
            # Siblings: the first components where the two paths part, both present.
            n = 0
            while n < min(len(here), len(t)) and here[n] == t[n]:
                n += 1
            if n < len(here) and n < len(t):
                a, b = here[: n + 1], t[: n + 1]
                edges.setdefault(a, set()).add(b)
                if show_edges:
                    print(f"  {os.path.relpath(f, crate_src)} -> {'::'.join(t)}")
    # Tarjan's strongly connected components.
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted("::".join(c) for c in comp))

    sys.setrecursionlimit(10000)
    for v in list(edges):
        if v not in index:
            visit(v)
    return sorted(out)


def main():
    show_all = "--list" in sys.argv
    bad = 0
    crates = os.path.join(ROOT, "crates")
    for crate in sorted(os.listdir(crates)):
        src = os.path.join(crates, crate, "src")
        if not os.path.isdir(src):
            continue
        allowed = [set(c) for c in KNOWN.get(crate, [])]
        for c in circles(src):
            new = not any(set(c) <= k for k in allowed)
            if new or show_all:
                print(f"{crate}: {'NEW ' if new else ''}circle: {' -> '.join(c)}")
            bad += new
    if bad:
        print(f"check-cycles: {bad} new circle(s) of sibling modules importing each other")
        return 1
    print("check-cycles: no new circles of sibling modules")
    return 0


if __name__ == "__main__":
    sys.exit(main())
