#!/usr/bin/env python3
"""Lists the C++ functions longer than a limit, longest first.

A census for keeping functions short (issue 42): it scans src/ and python/*.cc with brace
matching, not a parser. Comments, string and character literals are blanked first (raw
strings included) so their braces do not count. A brace block is a function body when the
scope it opens in is a namespace, a class or the file (so lambdas and local classes count
towards the function around them), and the text since the previous ';', '{' or '}' holds a
'(' and does not start a control statement or a type definition. A function's length is
its lines from the one naming it through its closing brace.

Usage: function_lengths.py [--max N] [--check] [ROOT]
  --max N   list functions over N lines (default 100)
  --check   exit 1 when any is listed
  ROOT      the source tree (default: the parent of this script's folder)
"""
import argparse
import pathlib
import re
import sys

CONTROL = re.compile(r"^(if|for|while|switch|catch|do|else|try)\b")
TYPE_DEF = re.compile(r"\b(class|struct|union|enum)\b[^()]*$")
NAMESPACE = re.compile(r"^(inline\s+)?namespace\b|^extern\s+\"")
NAME = re.compile(r"(operator\s*(\(\)|[^\s(]+)|[~\w:]+(<[^()]*>)?)\s*$")


def blank(text):
    """Returns text with comments and literals replaced by spaces, newlines kept."""
    out = []
    i, n = 0, len(text)
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
        elif c == "R" and text.startswith('R"', i) and not (i and (text[i - 1].isalnum() or text[i - 1] == "_")):
            open_paren = text.find("(", i + 2)
            delim = text[i + 2:open_paren]
            j = text.find(")" + delim + '"', open_paren)
            j = n if j < 0 else j + len(delim) + 2
            out.append('"' + re.sub(r"[^\n]", " ", text[i + 1:j - 1]) + '"')
            i = j
        elif c in "\"'":
            # A digit separator (1'000) is not a character literal.
            if c == "'" and i and text[i - 1].isalnum() and i + 1 < n and text[i + 1].isalnum() \
                    and not text[i - 1].isalpha():
                out.append(c)
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(c + re.sub(r"[^\n]", " ", text[i + 1:j - 1]) + c)
            i = j
        elif c == "#" and (i == 0 or text[text.rfind("\n", 0, i) + 1:i].strip() == ""):
            # A preprocessor line (with its continuations) holds no function braces.
            j = i
            while True:
                j = text.find("\n", j)
                if j < 0:
                    j = n
                    break
                if text[j - 1] != "\\":
                    break
                j += 1
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def functions(path):
    """Yields (line, length, name) for each function body in the file."""
    text = blank(path.read_text(errors="replace"))
    scopes = []  # per open brace: "scope" (namespace/class/file level) or "body"
    starts = []  # per open brace: (start line, name) of a function body, else None
    head_start = 0  # where the text before the next brace begins
    for i, c in enumerate(text):
        if c == ";":
            head_start = i + 1
        elif c == "{":
            head = text[head_start:i].strip()
            inside_body = bool(scopes) and scopes[-1] == "body"
            start = None
            if inside_body:
                kind = "body"
            elif NAMESPACE.search(head) or TYPE_DEF.search(head) or "(" not in head \
                    or CONTROL.search(head) or head.endswith("="):
                kind = "scope" if (NAMESPACE.search(head) or TYPE_DEF.search(head)) else "body"
            else:
                kind = "body"
                paren = head.find("(")
                match = NAME.search(head[:paren])
                name = match.group(1) if match else head[:paren].split()[-1:] or "?"
                offset = head_start + (text[head_start:i].find(head)) + (match.start(1) if match else 0)
                start = (text.count("\n", 0, offset) + 1, "".join(name).strip())
            scopes.append(kind)
            starts.append(start)
            head_start = i + 1
        elif c == "}":
            if scopes:
                scopes.pop()
                start = starts.pop()
                if start:
                    end = text.count("\n", 0, i) + 1
                    yield start[0], end - start[0] + 1, start[1]
            head_start = i + 1


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max", type=int, default=100)
    parser.add_argument("--check", action="store_true")
    parser.add_argument("root", nargs="?", default=pathlib.Path(__file__).resolve().parent.parent)
    args = parser.parse_args()
    root = pathlib.Path(args.root)
    files = sorted(p for p in (root / "src").rglob("*") if p.suffix in (".cc", ".h"))
    files += sorted((root / "python").glob("*.cc"))
    long_ones = []
    for path in files:
        for line, length, name in functions(path):
            if length > args.max:
                long_ones.append((length, f"{path.relative_to(root)}:{line}", name))
    for length, where, name in sorted(long_ones, key=lambda f: (-f[0], f[1])):
        print(f"{length:5d}  {where}  {name}")
    print(f"{len(long_ones)} functions over {args.max} lines", file=sys.stderr)
    return 1 if args.check and long_ones else 0


if __name__ == "__main__":
    sys.exit(main())
