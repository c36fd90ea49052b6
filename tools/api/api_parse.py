"""Reads wharf's public headers: declarations and their doc comments.

The headers are the one source of truth for the API's documentation: the
man pages (gen_man.py) and the ABI record (abi.py) are derived from what
this module finds.  It understands the layout the headers keep (and
clang-format enforces): top-level declarations, each optionally preceded
by a `/** ... */` doc comment; function prototypes end with `;`, struct
and enum definitions with `};`.
"""

import os
import re


class Decl:
    """One top-level declaration of a header."""

    def __init__(self, kind, name, text, doc, header):
        self.kind = kind  # function, macro, struct, enum, opaque, typedef, inline
        self.name = name
        self.text = text  # the declaration as written (comments kept)
        self.doc = doc  # the doc comment's text, or None
        self.header = header  # e.g. "wharf/core.h"
        self.members = []  # struct: member names, in order

    def __repr__(self):
        return "Decl(%s %s)" % (self.kind, self.name)


def _doc_text(comment):
    """'/** ... */' -> its lines without the leading ' * '."""
    body = comment[3:-2]
    lines = []
    for line in body.split("\n"):
        line = line.strip()
        if line.startswith("*"):
            line = line[1:]
            if line.startswith(" "):
                line = line[1:]
        lines.append(line.rstrip())
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines)


def _strip_comments(text):
    return re.sub(r"/\*.*?\*/", " ", text, flags=re.S)


def _split_depth0(text, sep):
    """Splits at `sep` outside parentheses and brackets."""
    parts, depth, cur = [], 0, []
    for ch in text:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == sep and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return parts


def struct_members(body):
    """Member names of a struct body (the text between its braces)."""
    names = []
    for decl in _split_depth0(_strip_comments(body), ";"):
        decl = " ".join(decl.split())
        if not decl:
            continue
        m = re.search(r"\(\s*\*\s*(\w+)\s*\)\s*\(", decl)
        if m:  # function pointer
            names.append(m.group(1))
            continue
        for i, d in enumerate(_split_depth0(decl, ",")):
            d = re.sub(r"\[.*?\]", "", d).strip()
            m = re.search(r"(\w+)\s*$", d)
            if m:
                names.append(m.group(1))
    return names


def _match_close(text, i, open_ch, close_ch):
    """Index just past the `close_ch` matching text[i] == open_ch."""
    depth = 0
    while i < len(text):
        if text.startswith("/*", i):
            i = text.index("*/", i) + 2
            continue
        ch = text[i]
        if ch == open_ch:
            depth += 1
        elif ch == close_ch:
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    raise ValueError("unbalanced %s" % open_ch)


def parse_header(path, include_name=None):
    """Every top-level declaration of the header at `path`."""
    with open(path) as f:
        src = f.read()
    header = include_name or "wharf/" + os.path.basename(path)
    decls = []
    i, n = 0, len(src)
    doc = None
    while i < n:
        if src[i].isspace():
            i += 1
            continue
        if src.startswith("/**", i) and not src.startswith("/**/", i):
            j = src.index("*/", i) + 2
            doc = _doc_text(src[i:j])
            i = j
            continue
        if src.startswith("/*", i):
            i = src.index("*/", i) + 2
            doc = None
            continue
        if src.startswith("//", i):
            i = src.index("\n", i)
            continue
        if src[i] == "#":
            j = i
            while True:
                e = src.find("\n", j)
                e = n if e < 0 else e
                if src[e - 1] != "\\":
                    break
                j = e + 1
            line = src[i:e]
            m = re.match(r"#\s*define\s+(wharf_\w+|WHARF_\w+)(\()?", line)
            if m and doc is not None:
                kind = "macro" if m.group(2) else "constant"
                decls.append(Decl(kind, m.group(1), line, doc, header))
            doc = None
            i = e
            continue
        if src.startswith('extern "C"', i):
            i = src.index("{", i) + 1
            continue
        if src[i] == "}":  # end of extern "C"
            i += 1
            continue
        # A declaration: up to ';' at depth 0, braces included.
        j, depth = i, 0
        while j < n:
            if src.startswith("/*", j):
                j = src.index("*/", j) + 2
                continue
            ch = src[j]
            if ch in "(":
                depth += 1
            elif ch == ")":
                depth -= 1
            elif ch == "{" and depth == 0:
                j = _match_close(src, j, "{", "}")
                # a function definition ends at its brace
                head = src[i:j]
                if re.match(r"\s*(struct|enum|union)\b", head) is None:
                    break
                continue
            elif ch == ";" and depth == 0:
                j += 1
                break
            j += 1
        text = src[i:j].strip()
        decls.append(_classify(text, doc, header))
        doc = None
        i = j
    return [d for d in decls if d is not None]


def _classify(text, doc, header):
    flat = " ".join(_strip_comments(text).split())
    m = re.match(r"(struct|enum|union) (\w+) \{", flat)
    if m:
        d = Decl(m.group(1), m.group(2), text, doc, header)
        if m.group(1) == "struct":
            body = text[text.index("{") + 1 : text.rindex("}")]
            d.members = struct_members(body)
        return d
    m = re.match(r"(struct|enum|union) (\w+) ;$", flat + " " if flat.endswith(";") else flat)
    if re.match(r"(struct|enum|union) \w+;$", flat):
        return Decl("opaque", flat.split()[1].rstrip(";"), text, doc, header)
    if flat.startswith("typedef"):
        m = re.search(r"\(\s*\*\s*(\w+)\s*\)", flat) or re.search(r"(\w+)\s*;$", flat)
        return Decl("typedef", m.group(1), text, doc, header)
    m = re.search(r"(\w+)\s*\(", flat)
    if m:
        kind = "inline" if flat.startswith("static") else "function"
        return Decl(kind, m.group(1), text, doc, header)
    return Decl("other", flat, text, doc, header)


def parse_headers(paths):
    decls = []
    for p in paths:
        decls.extend(parse_header(p))
    return decls


def public_functions(decls):
    return [d for d in decls if d.kind == "function" and d.name.startswith("wharf_")]
