#!/usr/bin/env python3
"""The house's rules, read from the code: data flows one way, so no file
includes one from a floor above its own (core < formats < kernels <
src/plan < src/job < src/scale < src/bench < src/exec < src/cli), no module (a .c and
its .h) reaches another that reaches back to it, and no function in
core/, formats/ or src/ runs past 150 lines.  Prints 'layers: N passed,
M failed'.

    layers.py            (from anywhere: it reads the repository it sits in)
"""
import os
import re
import sys

from checks import Checks

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
FLOORS = ["core", "formats", "kernels", "src/plan", "src/job", "src/scale", "src/bench",
          "src/exec", "src/cli"]
LONGEST = 150
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def floor_of(path):
    best = None
    for i, f in enumerate(FLOORS):
        if path == f or path.startswith(f + "/"):
            best = i
    return best


def sources():
    for top in ("core", "formats", "kernels", "src"):
        for dirpath, _, names in os.walk(os.path.join(ROOT, top)):
            for n in sorted(names):
                if n.endswith((".c", ".h", ".cu", ".cuh")):
                    yield os.path.relpath(os.path.join(dirpath, n), ROOT)


def module(path):
    """A .c or .cu and its header are one module."""
    return os.path.splitext(path)[0]


def through_interfaces(graph, built):
    """Module-to-module arrows, where a module that is only a header (an
    interface several files implement: formats/format_impl.h,
    kernels/gemm.h) is passed through rather than counted as a module."""
    out = {}
    for v in graph:
        if v not in built:
            continue
        seen, todo, reach = set(), list(graph[v]), set()
        while todo:
            w = todo.pop()
            if w in seen:
                continue
            seen.add(w)
            if w in built:
                reach.add(w)
            else:
                todo.extend(graph.get(w, ()))
        reach.discard(v)
        out[v] = reach
    return out


def cycles(graph):
    """The strongly connected components of more than one module."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
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
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def long_functions(path):
    """Functions whose body, from the '{' alone on its line to the '}' alone
    on its line, is longer than LONGEST lines (the house's brace style)."""
    lines = open(os.path.join(ROOT, path), errors="replace").read().split("\n")
    found, start = [], None
    for i, line in enumerate(lines):
        if line == "{" and i > 0:
            start = i
        elif line == "}" and start is not None:
            if i - start + 1 > LONGEST:
                j = start - 1
                while j > 0 and "(" not in lines[j]:
                    j -= 1
                found.append((lines[j].strip()[:70], i - start + 1))
            start = None
    return found


def main():
    check = Checks()
    files = list(sources())
    graph = {}
    for f in files:
        me = floor_of(f)
        check(f"{f}: on a floor", me is not None, "not under " + ", ".join(FLOORS))
        text = open(os.path.join(ROOT, f), errors="replace").read()
        for inc in INCLUDE.findall(text):
            target = os.path.normpath(inc)
            if not os.path.exists(os.path.join(ROOT, target)):
                continue       # a header beside the file or the toolkit's
            up = floor_of(target)
            check(f"{f} includes {target}: not from a floor above",
                  up is not None and me is not None and up <= me,
                  f"{FLOORS[me] if me is not None else '?'} reaches up to "
                  f"{FLOORS[up] if up is not None else '?'}")
            if module(target) != module(f):
                graph.setdefault(module(f), set()).add(module(target))
    built = {module(f) for f in files if f.endswith((".c", ".cu"))}
    for comp in cycles(through_interfaces(graph, built)):
        check("no circle of modules", False, " <-> ".join(comp))
    check("no circle of modules", True)
    for f in files:
        if f.endswith(".c") and f.split("/")[0] in ("core", "formats", "src"):
            for name, n in long_functions(f):
                check(f"{f}: {name}: at most {LONGEST} lines", False, f"{n} lines")
    check(f"functions of core/, formats/, src/: at most {LONGEST} lines", True)
    return check.summary("layers")


if __name__ == "__main__":
    sys.exit(main())
