#!/usr/bin/env python3
"""Section 3 man pages from the public headers' doc comments.

  gen_man.py --out TAR --version V HEADER...

One page per public function (and per documented function-like macro):
NAME, SYNOPSIS (the include, the prototype, and the definitions of the
wharf structs it takes), DESCRIPTION (the comment's text, parameters as a
list), RETURN VALUE, ERRORS (every -E... of the return text, with its
clause), CONTEXT (thread, blocking, RCU), SEE ALSO.  A public function
without a doc comment, a summary line or a Context: is an error: the
header is the one source of the API's documentation.
"""

import argparse
import io
import os
import re
import sys
import tarfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import api_parse  # noqa: E402

DATE = "2026-11-25"

# For an errno that the Return: text names without a clause of its own.
DEFAULT_ERRNO_TEXT = {
    "ENOMEM": "out of memory",
    "EINVAL": "an invalid argument",
}


def esc(text):
    """Plain text -> roff text (no requests, no escapes)."""
    text = text.replace("\\", "\\e")
    text = text.replace("-", "\\-")
    return text


def inline(text, params):
    """Escaped text with @param in italics and name() in bold."""
    text = esc(text)
    text = re.sub(r"@(\w+)", r"\\fI\1\\fP", text)
    text = re.sub(r"\b(wharf_\w+|rdma_\w+|ibv_\w+|urcu_\w+)\(\)",
                  r"\\fB\1\\fP()", text)
    return text


def para_lines(text):
    """Roff lines of a paragraph: no line may start with . or '."""
    out = []
    for line in text.split("\n"):
        line = line.strip()
        if not line:
            continue
        if line[0] in ".'":
            line = "\\&" + line
        out.append(line)
    return out


def split_doc(name, doc):
    """(summary, params, body paragraphs, return text, context text)."""
    lines = doc.split("\n")
    first = lines[0]
    m = re.match(r"%s\s+-\s+(.*)" % re.escape(name), first)
    if not m:
        raise ValueError("%s: the doc comment must start with '%s - '"
                         % (name, name))
    summary = [m.group(1)]
    i = 1
    head = re.compile(r"^(@\w+:|Return( and Context)?:|Context:)")
    while i < len(lines) and lines[i] and not head.match(lines[i]):
        summary.append(lines[i])
        i += 1
    params, body, ret, ctx = [], [], [], []
    cur = None
    para = []

    def flush():
        if para:
            body.append("\n".join(para))
            para.clear()

    for line in lines[i:]:
        m = re.match(r"^@(\w+):\s*(.*)", line)
        if m:
            flush()
            params.append([m.group(1), m.group(2)])
            cur = params[-1]
            continue
        m = re.match(r"^Return and Context:\s*(.*)", line)
        if m:
            flush()
            ret.append(m.group(1))
            ctx.append(m.group(1))
            cur = "both"
            continue
        m = re.match(r"^Return:\s*(.*)", line)
        if m:
            flush()
            ret.append(m.group(1))
            cur = ret
            continue
        m = re.match(r"^Context:\s*(.*)", line)
        if m:
            flush()
            ctx.append(m.group(1))
            cur = ctx
            continue
        if not line:
            flush()
            cur = None
            continue
        if cur is None:
            para.append(line)
        elif cur == "both":
            ret.append(line)
            ctx.append(line)
        elif isinstance(cur, list) and cur in params:
            cur[1] += " " + line
        else:
            cur.append(line)
    flush()
    return (" ".join(summary), params, body, " ".join(ret), " ".join(ctx))


def errors(ret):
    """[(errno names, clause)] from a Return: text."""
    out = []
    for clause in re.split(r";\s*", ret):
        names = re.findall(r"-(E[A-Z0-9]+)\b", clause)
        if names:
            seen = []
            for n in names:
                if n not in seen:
                    seen.append(n)
            text = re.sub(r"^(-E[A-Z0-9]+\s*(/|,|or)?\s*)+", "",
                          clause.strip().rstrip("."))
            if not text:
                text = DEFAULT_ERRNO_TEXT.get(seen[0], "")
            out.append((seen, text[:1].upper() + text[1:]))
    return out


def struct_types(proto):
    return re.findall(r"struct (wharf_\w+)", proto)


def page(decl, structs, names, version):
    summary, params, body, ret, ctx = split_doc(decl.name, decl.doc)
    if not ctx:
        raise ValueError("%s: no Context: in its doc comment" % decl.name)
    first, _, rest = summary.partition(". ")
    if rest:
        body.insert(0, rest)
    name_line = first.rstrip(".")
    out = []
    title = decl.name.upper()
    out.append('.TH %s 3 %s "wharf %s" "wharf Programmer\'s Manual"'
               % (title, DATE, version))
    out.append(".nh")
    out.append(".ad l")
    out.append(".SH NAME")
    out.append("%s \\- %s" % (esc(decl.name), inline(name_line, params)))
    out.append(".SH SYNOPSIS")
    out.append(".nf")
    out.append("\\fB#include <%s>\\fP" % decl.header)
    out.append("")
    for line in api_parse._strip_comments(decl.text).split("\n"):
        out.append(esc(line.rstrip()) if line.strip() else "")
    shown = []
    for s in struct_types(decl.text):
        if s in structs and s not in shown:
            shown.append(s)
            out.append("")
            for line in structs[s].text.split("\n"):
                out.append(esc(line.rstrip()).replace("\t", "    "))
    out.append(".fi")
    while out[-2] == "":
        del out[-2]
    if body or params:
        out.append(".SH DESCRIPTION")
        for i, p in enumerate(body):
            if i:
                out.append(".PP")
            out.extend(para_lines(inline(p, params)))
        if params:
            if body:
                out.append(".PP")
            out.append("Parameters:")
            for pname, ptext in params:
                out.append(".TP")
                out.append("\\fI%s\\fP" % pname)
                out.extend(para_lines(inline(ptext, params)))
    if ret:
        out.append(".SH RETURN VALUE")
        out.extend(para_lines(inline(ret, params)))
        errs = errors(ret)
        if errs:
            out.append(".SH ERRORS")
            for enames, clause in errs:
                out.append(".TP")
                out.append(", ".join("\\fB%s\\fP" % e for e in enames))
                out.extend(para_lines(inline(clause, params)))
    out.append(".SH CONTEXT")
    out.extend(para_lines(inline(ctx, params)))
    see = []
    for ref in re.findall(r"\b(wharf_\w+)\(\)", decl.doc):
        if ref != decl.name and ref in names and ref not in see:
            see.append(ref)
    out.append(".SH SEE ALSO")
    refs = ["\\fB%s\\fP(3)" % esc(r) for r in see] + ["\\fBwharf\\fP(7)"]
    out.append(",\n".join(refs))
    return "\n".join(out) + "\n"


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--out", required=True, help="tar of man3/*.3")
    p.add_argument("--version", required=True)
    p.add_argument("headers", nargs="+")
    args = p.parse_args()
    decls = api_parse.parse_headers(args.headers)
    structs = {d.name: d for d in decls if d.kind == "struct"}
    documented = [d for d in decls if d.name.startswith("wharf_") and
                  (d.kind == "function" or (d.kind == "macro" and d.doc))]
    names = {d.name for d in documented}
    problems, pages = [], {}
    for d in documented:
        if not d.doc:
            problems.append("%s (%s): no doc comment" % (d.name, d.header))
            continue
        try:
            pages[d.name] = page(d, structs, names, args.version)
        except ValueError as e:
            problems.append("%s: %s" % (d.header, e))
    for msg in problems:
        print("gen_man: " + msg, file=sys.stderr)
    if problems:
        return 1
    with tarfile.open(args.out, "w") as tar:
        for name in sorted(pages):
            data = pages[name].encode()
            info = tarfile.TarInfo("man3/%s.3" % name)
            info.size = len(data)
            info.mtime = 0
            info.mode = 0o644
            tar.addfile(info, io.BytesIO(data))
    return 0


if __name__ == "__main__":
    sys.exit(main())
