#!/usr/bin/env python3
"""Fails on an #include that goes against the layering of docs/architecture.md.

The layers and what each links are read from CMakeLists.txt (`lancelet_layer(name deps...)`),
so the build is the one statement of the table. A file of src/L/ may include src/M/ headers
only when M is L or a layer L links, directly or through others; a public header
lancelet/X.h counts as the layer that implements it (PUBLIC_HEADERS below), and public
headers may include only public headers of their layer or below. The library's consumers
(CONSUMERS below: the CLI, the Python module, the examples) include public headers and
their own folder only.

Usage: check_layering.py [ROOT]   (ROOT: the source tree, default the current directory)
"""
import pathlib
import re
import sys

# The layer that implements each public header; a new header must be added here.
PUBLIC_HEADERS = {
    "array": "array", "builder": "array", "c_data": "array", "error": "array", "float16": "array",
    "ipc": "array", "record_batch": "array", "scalar": "array", "type": "array", "decimal": "array",
    "storage_options": "io", "expr": "expr", "text": "text", "progress": "text", "dataset": "table", "overlay_writer": "table",
    "session": "table", "vector_search": "table", "fragments": "table",
    "sql": "sql", "merge_insert": "sql", "loader": "loader",
    "version": None,  # generated, no code: any layer may include it
}
# Folders built on the public library alone (they link lancelet_library, liblancelet.a, in CMakeLists.txt), with the
# folder each may include from besides lancelet/.
CONSUMERS = {"src/cli": "cli", "python": None, "examples": None}
INCLUDE = re.compile(r'\s*#\s*include\s+"(\w+)/(\w+)\.h"')


def layers(root):
    text = (root / "CMakeLists.txt").read_text()
    links = {}
    for name, args in re.findall(r"^lancelet_layer\((\w+)([^)]*)\)", text, re.M):
        links[name] = [a[len("lancelet_"):] for a in args.split() if a.startswith("lancelet_")]
    below = {}

    def reach(layer, seen):
        for dep in links.get(layer, []):
            if dep in links and dep not in seen:
                seen.add(dep)
                reach(dep, seen)
        return seen

    for name in links:
        below[name] = reach(name, set()) | {name}
    return below


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".")
    below = layers(root)
    if not below:
        print(f"{root}/CMakeLists.txt declares no lancelet_layer()")
        return 1
    problems = []

    def check(path, layer):
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            match = INCLUDE.match(line)
            if not match:
                continue
            folder, header = match.groups()
            where = f"{path.relative_to(root)}:{number}"
            if folder == "lancelet":
                if header not in PUBLIC_HEADERS:
                    problems.append(f"{where}: lancelet/{header}.h has no layer in scripts/check_layering.py")
                    continue
                target = PUBLIC_HEADERS[header]
            elif folder in below:
                target = folder
                if layer in PUBLIC_HEADERS.values() and path.parts[-2] == "lancelet":
                    problems.append(f"{where}: a public header includes the internal {folder}/{header}.h")
                    continue
            else:
                continue  # a generated or third-party header
            if target is not None and target not in below[layer]:
                problems.append(f"{where}: layer '{layer}' includes {folder}/{header}.h of layer '{target}', "
                                f"which it does not link (CMakeLists.txt)")

    for layer in below:
        for path in sorted((root / "src" / layer).glob("*")):
            if path.suffix in (".h", ".cc"):
                check(path, layer)
    for folder, own in CONSUMERS.items():
        for path in sorted((root / folder).glob("*")):
            if path.suffix not in (".h", ".cc"):
                continue
            for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
                match = INCLUDE.match(line)
                if match and match.group(1) in below and match.group(1) != own:
                    problems.append(f"{path.relative_to(root)}:{number}: {folder} builds on the public library and "
                                    f"includes the internal {match.group(1)}/{match.group(2)}.h")
    for path in sorted((root / "include" / "lancelet").glob("*.h")):
        layer = PUBLIC_HEADERS.get(path.stem, "missing")
        if layer == "missing":
            problems.append(f"{path.relative_to(root)}: a public header with no layer in scripts/check_layering.py")
        elif layer is not None:
            check(path, layer)
    for problem in problems:
        print(problem)
    if problems:
        print(f"{len(problems)} includes against the layering")
        return 1
    print(f"layering: {len(below)} layers, every include goes down")
    return 0


if __name__ == "__main__":
    sys.exit(main())
