#!/usr/bin/env python3
"""Functions in src/ longer than a limit (test code, `#[cfg(test)]` modules, left out): a
function whose steps have names is split at them, and one that passes a screen usually has
(docs/development.md). Prints each function over the limit, longest first, and exits 1 when
there is one.

    scripts/fnlen.py              # over 120 lines fails
    scripts/fnlen.py --max 80     # list those over 80 (still exits 1 on any)

A function's length runs from its `fn` line to its closing brace. Strings, characters and
comments are blanked before braces are counted, so a `{` in a format string does not count; a
function nested in another counts in both.
"""

import argparse
import pathlib
import re
import sys

SRC = pathlib.Path(__file__).resolve().parent.parent / "src"
FN = re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?(?:(?:async|const|unsafe|extern\s+\"C\")\s+)*fn\s+(\w+)")


def blank(text: str) -> str:
    """The text with string and char literals and comments replaced by spaces (newlines
    kept), so that only code braces remain."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "r" and re.match(r'r#*"', text[i:i + 8]) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            hashes = re.match(r'r(#*)"', text[i:]).group(1)
            end = '"' + hashes
            j = text.find(end, i + len(hashes) + 2)
            j = n if j < 0 else j + len(end)
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "'":
            # A char literal ('x', '\n', '{'), not a lifetime ('a).
            m = re.match(r"'(?:\\.|\\u\{[0-9a-fA-F]+\}|[^\\'])'", text[i:i + 12])
            if m:
                out.append(" " * len(m.group(0)))
                i += len(m.group(0))
            else:
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def strip_tests(lines: list[str]) -> list[str]:
    """Lines from the first `#[cfg(test)]` module with a body on are test code (the unit
    tests sit at the end of each file); a `#[cfg(test)]` item that ends on its own line
    (`mod testdata;`) is passed over."""
    for i, line in enumerate(lines):
        if line.strip().startswith("#[cfg(test)]"):
            following = next((x.strip() for x in lines[i + 1:] if x.strip()), "")
            if following.endswith(";"):
                continue
            return lines[:i]
    return lines


def functions(path: pathlib.Path):
    lines = strip_tests(blank(path.read_text()).split("\n"))
    for i, line in enumerate(lines):
        m = FN.match(line)
        if not m:
            continue
        depth, started = 0, False
        for j in range(i, len(lines)):
            for ch in lines[j]:
                if ch == "{":
                    depth += 1
                    started = True
                elif ch == "}":
                    depth -= 1
            if started and depth == 0:
                yield m.group(1), i + 1, j - i + 1
                break
            if not started and lines[j].rstrip().endswith(";"):
                break


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--max", type=int, default=120, help="the longest a function may be")
    a = ap.parse_args()
    over = []
    for f in sorted(SRC.rglob("*.rs")):
        for name, line, length in functions(f):
            if length > a.max:
                over.append((length, f"{f.relative_to(SRC.parent)}:{line}", name))
    for length, at, name in sorted(over, reverse=True):
        print(f"{at}: fn {name} is {length} lines (over {a.max})")
    print(f"{len(over)} function(s) over {a.max} lines")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
