#!/usr/bin/env python3
"""Checks the project's Markdown documentation, with the standard library only.

  scripts/check_docs.py [ROOT]      (default: the folder above scripts/)

What it checks, in README.md, CONTRIBUTING.md and docs/**/*.md:
  - README.md has at most 300 lines (it is the front door; the rest lives
    in docs/);
  - every relative link and image points at a file or folder that exists,
    inside ROOT;
  - every #anchor of a link, to the same file or to another Markdown file,
    names a heading of that file, by GitHub's rule: the heading's text in
    lower case, punctuation other than - and _ dropped, each space a -, and
    a heading whose slug was already taken gets -1, -2, ... (explicit
    <a name="..."> or id="..." anchors count too);
  - every docs/**/*.md can be reached from README.md by following links
    between these files.

Links inside fenced code blocks and `code spans` are not links and are
skipped, as are URLs with a scheme (https:, mailto:). Setext headings
(underlined with === or ---) are not recognised: the docs use # headings.

Prints one line per problem (FILE:LINE: what is wrong) and exits 1, or
prints a one-line summary and exits 0 when everything resolves.
"""

import os
import re
import sys
import urllib.parse

README_MAX_LINES = 300

FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$")
CODE_SPAN = re.compile(r"(`+)(.+?)\1")
REFERENCE_DEF = re.compile(r"^ {0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)")
HTML_ANCHOR = re.compile(r"""<a\s[^>]*?(?:name|id)\s*=\s*["']([^"']+)["']""", re.I)
HTML_ID = re.compile(r"""\sid\s*=\s*["']([^"']+)["']""", re.I)
SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def doc_files(root):
    """The Markdown files checked, as paths relative to root, sorted."""
    files = []
    for top in ("README.md", "CONTRIBUTING.md"):
        if os.path.isfile(os.path.join(root, top)):
            files.append(top)
    docs = os.path.join(root, "docs")
    for dirpath, dirnames, filenames in os.walk(docs):
        dirnames.sort()
        for name in sorted(filenames):
            if name.endswith(".md"):
                files.append(os.path.relpath(os.path.join(dirpath, name), root))
    return [f.replace(os.sep, "/") for f in files]


def prose_lines(text):
    """(line number, line) of every line outside fenced code blocks."""
    fence = None
    for number, line in enumerate(text.splitlines(), 1):
        m = FENCE.match(line)
        if fence is None:
            if m:
                fence = m.group(1)
                continue
            yield number, line
        elif m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) \
                and not line.strip()[len(m.group(1)):].strip():
            fence = None


def heading_text(raw):
    """The text GitHub renders for a heading's Markdown source."""
    text = re.sub(r"[ \t]+#+$", "", raw.strip())
    if set(text) == {"#"}:
        text = ""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)   # links and images: their text
    text = re.sub(r"<[^>]+>", "", text)                       # inline HTML tags
    return text


def slug(text):
    """GitHub's anchor for a heading's rendered text (before de-duplication)."""
    text = text.strip().lower()
    text = "".join(ch for ch in text if ch.isalnum() or ch in "-_ " or ch == "\t")
    return re.sub(r"[ \t]", "-", text)


def anchors(text):
    """Every anchor a Markdown file offers: heading slugs (duplicates numbered
    as GitHub numbers them) and explicit HTML name/id anchors."""
    seen = {}
    found = set()
    for _, line in prose_lines(text):
        m = HEADING.match(line)
        if m:
            base = slug(heading_text(m.group(2) or ""))
            n = seen.get(base, 0)
            seen[base] = n + 1
            found.add(base if n == 0 else f"{base}-{n}")
        for rx in (HTML_ANCHOR, HTML_ID):
            found.update(a.lower() for a in rx.findall(line))
    return found


def link_targets(line):
    """The targets of the inline links, images and reference definitions on
    one line of prose, code spans removed."""
    line = CODE_SPAN.sub(lambda m: " " * len(m.group(0)), line)
    m = REFERENCE_DEF.match(line)
    if m:
        yield m.group(1).strip("<>")
        return
    start = 0
    while True:
        i = line.find("](", start)
        if i < 0:
            return
        j = i + 2
        while j < len(line) and line[j] in " \t":
            j += 1
        if j < len(line) and line[j] == "<":
            end = line.find(">", j)
            if end < 0:
                return
            yield line[j + 1:end]
            start = end
            continue
        depth, k = 0, j
        while k < len(line):
            ch = line[k]
            if ch in " \t":
                break
            if ch == "(":
                depth += 1
            elif ch == ")":
                if depth == 0:
                    break
                depth -= 1
            k += 1
        if k > j:
            yield line[j:k]
        start = k


def check(root):
    """Every problem found under root, as (file, line, message), in order."""
    root = os.path.abspath(root)
    problems = []
    files = doc_files(root)
    checked = set(files)
    texts = {}
    for f in files:
        with open(os.path.join(root, f), encoding="utf-8") as fh:
            texts[f] = fh.read()

    if "README.md" not in texts:
        return [("README.md", 0, "missing")]
    count = len(texts["README.md"].splitlines())
    if count > README_MAX_LINES:
        problems.append(("README.md", count,
                         f"{count} lines, more than {README_MAX_LINES}: move text to docs/ and link it"))

    anchor_cache = {}

    def anchors_of(rel):
        if rel not in anchor_cache:
            text = texts.get(rel)
            if text is None:
                with open(os.path.join(root, rel), encoding="utf-8") as fh:
                    text = fh.read()
            anchor_cache[rel] = anchors(text)
        return anchor_cache[rel]

    links = {f: set() for f in files}
    for f in files:
        base = os.path.dirname(f)
        for number, line in prose_lines(texts[f]):
            for target in link_targets(line):
                if not target or SCHEME.match(target) or target.startswith("//"):
                    continue
                path, _, fragment = target.partition("#")
                path = urllib.parse.unquote(path.split("?", 1)[0])
                if path:
                    if path.startswith("/"):
                        resolved = os.path.normpath(path.lstrip("/"))
                    else:
                        resolved = os.path.normpath(os.path.join(base, path))
                    resolved = resolved.replace(os.sep, "/")
                    if resolved == ".." or resolved.startswith("../"):
                        problems.append((f, number, f"link {target} leaves the repository"))
                        continue
                    full = os.path.join(root, resolved)
                    if not os.path.exists(full):
                        problems.append((f, number, f"link {target}: {resolved} does not exist"))
                        continue
                else:
                    resolved = f
                if resolved in checked:
                    links[f].add(resolved)
                if fragment:
                    if not resolved.endswith(".md") or not os.path.isfile(os.path.join(root, resolved)):
                        continue
                    want = urllib.parse.unquote(fragment).lower()
                    if want not in anchors_of(resolved):
                        problems.append((f, number, f"link {target}: no heading #{want} in {resolved}"))

    reached, todo = {"README.md"}, ["README.md"]
    while todo:
        for nxt in sorted(links[todo.pop()]):
            if nxt not in reached:
                reached.add(nxt)
                todo.append(nxt)
    for f in files:
        if f.startswith("docs/") and f not in reached:
            problems.append((f, 0, "not reachable by links from README.md"))
    return problems


def main(argv):
    if len(argv) > 2 or (len(argv) == 2 and argv[1] in ("-h", "--help")):
        print(__doc__.strip())
        return 0 if len(argv) == 2 else 2
    root = argv[1] if len(argv) == 2 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    problems = check(root)
    for f, line, message in problems:
        print(f"{f}:{line}: {message}" if line else f"{f}: {message}")
    if problems:
        return 1
    with open(os.path.join(root, "README.md"), encoding="utf-8") as fh:
        lines = len(fh.read().splitlines())
    print(f"docs ok: {len(doc_files(root))} files, README.md {lines} lines")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
