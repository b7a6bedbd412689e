#!/usr/bin/env python3
"""Import circles between ingestbench's modules: builds the graph of `crate::` and `super::`
paths in src/ (test code, `#[cfg(test)]` modules, left out), at the depth given (1: the
top-level modules, `results`, `report`, ...; 2: their submodules too), and prints every
strongly connected component of more than one module. Exits 1 when there is one.

    scripts/modgraph.py            # top-level modules
    scripts/modgraph.py --depth 2  # and submodules (results::summary, engine::cell, ...)
    scripts/modgraph.py --edges    # the edges as well
"""

import argparse
import pathlib
import re
import sys

SRC = pathlib.Path(__file__).resolve().parent.parent / "src"
PATH = re.compile(r"\b(crate|super)((?:::[A-Za-z_][A-Za-z0-9_]*)+)")
GROUP = re.compile(r"\b(crate|super)((?:::[A-Za-z_][A-Za-z0-9_]*)*)::\{")


def module_of(path: pathlib.Path) -> list[str]:
    rel = path.relative_to(SRC).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] in ("mod", "lib", "main"):
        parts = parts[:-1]
    return parts


def strip_tests(text: str) -> str:
    """Drops `#[cfg(test)]` items (a module or a function) by brace matching."""
    out, i = [], 0
    while True:
        j = text.find("#[cfg(test)]", i)
        if j < 0:
            out.append(text[i:])
            return "".join(out)
        out.append(text[i:j])
        k = text.find("{", j)
        semi = text.find(";", j)
        if k < 0 or (0 <= semi < k):
            i = semi + 1
            continue
        depth, m = 0, k
        while m < len(text):
            if text[m] == "{":
                depth += 1
            elif text[m] == "}":
                depth -= 1
                if depth == 0:
                    break
            m += 1
        i = m + 1


def strip_comments(text: str) -> str:
    return re.sub(r"//[^\n]*", "", text)


def group_paths(text: str, start: int) -> list[list[str]]:
    """The paths inside a `use` group opening at `start` (just past its `{`), nested groups
    flattened: `{a::B, c::{d, e}}` gives `a::B`, `c::d`, `c::e`."""
    out, prefix, cur, i = [], [[]], "", start
    while i < len(text):
        ch = text[i]
        if ch == "{":
            prefix.append(prefix[-1] + [p for p in cur.split("::") if p])
            cur = ""
        elif ch in ",}":
            item = [p for p in cur.strip().split(" as ")[0].split("::") if p]
            if item and item != ["self"]:
                out.append(prefix[-1] + item)
            elif item == ["self"]:
                out.append(prefix[-1])
            cur = ""
            if ch == "}":
                prefix.pop()
                if not prefix:
                    break
        elif not ch.isspace():
            cur += ch
        i += 1
    return out


def layers() -> dict[str, int]:
    """The layer order `lib.rs` states in its header, a numbered list of top-level modules
    (bottom first): module name -> its line's number."""
    text = (SRC / "lib.rs").read_text()
    order, item = {}, None
    for line in text.splitlines():
        if not line.startswith("//!"):
            continue
        body = line[3:].strip()
        m = re.match(r"(\d+)\.\s+(.*)", body)
        if m:
            item = int(m.group(1))
            head = re.split(r"(?<=`):|^[^`]*?:", m.group(2), maxsplit=1)[0]
            for name in re.findall(r"`([a-z_][a-z0-9_]*)`", head):
                order[name] = item
    return order


def resolve(kind: str, rest: list[str], here: list[str]) -> list[str]:
    if kind == "crate":
        return rest
    # `super` from a file `a/b.rs` (module a::b) is `a`; from `a/mod.rs` (module a) is root.
    base = here[:-1]
    while rest and rest[0] == "super":
        base, rest = base[:-1], rest[1:]
    return base + rest


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--depth", type=int, default=1)
    ap.add_argument("--edges", action="store_true")
    ap.add_argument("--files", action="store_true", help="a module file and its children count as apart")
    ap.add_argument("--check", action="store_true",
                    help="also list every edge against the layer order of lib.rs's header (exit 1 on any)")
    a = ap.parse_args()
    files = sorted(SRC.rglob("*.rs"))
    known = {tuple(module_of(f)) for f in files}
    edges: dict[str, set[str]] = {}

    def node(parts: list[str]) -> str | None:
        # The longest known module prefix of the path, cut to the depth; a path to an item
        # of the crate root itself is the root, `crate`.
        for n in range(len(parts), 0, -1):
            if tuple(parts[:n]) in known:
                return "::".join(parts[: min(n, a.depth)])
        return "crate" if parts and parts[0][:1].isupper() or len(parts) == 1 else None

    for f in files:
        here = module_of(f)
        if not here:
            continue
        src = node(here)
        text = strip_comments(strip_tests(f.read_text()))
        targets = []
        for m in PATH.finditer(text):
            rest = [p for p in m.group(2).split("::") if p]
            targets.append(resolve(m.group(1), rest, here))
        for m in GROUP.finditer(text):
            rest = [p for p in m.group(2).split("::") if p]
            for inner in group_paths(text, m.end()):
                targets.append(resolve(m.group(1), rest + inner, here))
        for t in targets:
            dst = node(t)
            if dst and src and dst != src:
                # A module's own children are part of it at this depth.
                if not a.files and (dst.startswith(src + "::") or src.startswith(dst + "::")):
                    continue
                edges.setdefault(src, set()).add(dst)
    nodes = sorted(set(edges) | {d for ds in edges.values() for d in ds})
    # Tarjan's strongly connected components.
    index, low, stack, on, comps = {}, {}, [], set(), []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
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
            comps.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in nodes:
        if v not in index:
            visit(v)
    if a.edges:
        for v in nodes:
            for w in sorted(edges.get(v, ())):
                print(f"{v} -> {w}")
    circles = [c for c in comps if len(c) > 1]
    for c in circles:
        inside = [f"{v} -> {w}" for v in c for w in sorted(edges.get(v, ())) if w in c]
        print("circle: " + ", ".join(c))
        for e in inside:
            print("  " + e)
    against = []
    if a.check:
        order = layers()
        for v in nodes:
            for w in sorted(edges.get(v, ())):
                lv, lw = order.get(v.split("::")[0]), order.get(w.split("::")[0])
                if w == "crate" or lv is None or lw is None or lw > lv:
                    why = ("the crate root declares modules only" if w == "crate"
                           else "not in lib.rs's layer order" if lv is None or lw is None
                           else f"layer {lv} imports layer {lw}")
                    against.append(f"{v} -> {w} ({why})")
        for e in against:
            print("against the layers: " + e)
    print(f"{len(nodes)} modules, {sum(len(v) for v in edges.values())} edges, "
          f"{len(circles)} circle(s) at depth {a.depth}"
          + (f", {len(against)} edge(s) against the layer order" if a.check else ""))
    return 1 if circles or against else 0


if __name__ == "__main__":
    sys.exit(main())
