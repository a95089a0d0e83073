#!/usr/bin/env python3
"""Writes the seed corpus of each fuzz target, fuzz/corpus/<target>/, from
the project's own test inputs as committed (git HEAD): response heads and
chunked bodies from the engine's parser and connection tests, the contract's
work-document fixtures, the shipped suites and server manifests, and the
suite and manifest loaders' test texts. Run it again after those change:

    python3 fuzz/seed.py

Each corpus folder it writes (SEEDED) is rewritten whole; the others are
left alone. A file is named after where it came from and a hash of its
bytes.
"""

import hashlib
import json
import re
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "fuzz" / "corpus"


def git(*args):
    return subprocess.run(
        ["git", "-C", str(ROOT), *args], check=True, capture_output=True
    ).stdout


def committed(path):
    return git("show", f"HEAD:{path}").decode()


def tracked(pattern):
    return sorted(git("ls-files", "--", pattern).decode().split())


ESCAPES = {"n": "\n", "r": "\r", "t": "\t", "\\": "\\", '"': '"', "'": "'", "0": "\0"}


def unescape(body):
    """A Rust string literal's body as its text."""
    out, i = [], 0
    while i < len(body):
        c = body[i]
        if c != "\\":
            out.append(c)
            i += 1
            continue
        n = body[i + 1]
        if n == "\n":  # line continuation: the newline and leading blanks go
            i += 2
            while i < len(body) and body[i] in " \t\n":
                i += 1
        elif n == "x":
            out.append(chr(int(body[i + 2 : i + 4], 16)))
            i += 4
        else:
            out.append(ESCAPES[n])
            i += 2
    return "".join(out)


def literals(source):
    """Every string literal of a Rust source file: plain, byte and raw."""
    found = []
    for m in re.finditer(r'r(#+)"(.*?)"\1|b?"((?:[^"\\]|\\.)*)"', source, re.S):
        found.append(m.group(2) if m.group(1) else unescape(m.group(3)))
    return found


def write(target, origin, data):
    if isinstance(data, str):
        data = data.encode()
    assert target in SEEDED, f"add {target} to SEEDED"
    d = CORPUS / target
    d.mkdir(parents=True, exist_ok=True)
    name = f"{origin}-{hashlib.sha1(data).hexdigest()[:10]}"
    (d / name).write_bytes(data)


# The targets this script writes seeds for; their folders are rewritten
# whole. Others (ws_frame's, written by hand) are left as they are.
SEEDED = ["parse_head", "chunked_decoder", "work_answer", "suite_parse", "manifest_parse", "tls_layer"]


def main():
    for target in SEEDED:
        if (CORPUS / target).exists():
            shutil.rmtree(CORPUS / target)

    # Response heads (with whatever body follows them in the tests) and
    # chunked bodies: the engine's parser and connection tests.
    bodies = []
    for path in ["crates/engine/src/parse.rs", "crates/engine/src/conn.rs"]:
        origin = Path(path).stem
        for s in literals(committed(path)):
            if s.startswith("HTTP/") or s.endswith("\r\n\r\n"):
                write("parse_head", origin, s)
                head, sep, rest = s.partition("\r\n\r\n")
                if sep and "chunked" in head.lower() and rest:
                    bodies.append((origin, rest))
            if origin == "parse" and not s.startswith("HTTP/") and "\r\n" in s:
                bodies.append((origin, s))
    # chunked_decoder input: byte 0 is the number of cuts, then the lengths
    # of the pieces before the last, then the body. Each body whole, and cut
    # into short pieces.
    for origin, body in bodies:
        b = body.encode()
        write("chunked_decoder", origin, b"\0" + b)
        write("chunked_decoder", origin, bytes([3, 1, 2, 5]) + b)

    # Work documents: the contract's fixtures, accepted and rejected.
    for line in committed("contract/fixtures/work.jsonl").splitlines():
        if line.strip():
            doc = json.loads(line)["request"]
            write("work_answer", "work", json.dumps(doc, separators=(",", ":"), ensure_ascii=False))
    for line in committed("contract/fixtures/rejected.jsonl").splitlines():
        if line.strip():
            write("work_answer", "rejected", json.loads(line)["body"])

    # Suites: the shipped ones, the loader's test suite, and that one pinned
    # to CPUs (as its test does, but without overlap, so it is accepted).
    for path in tracked("suites/*.toml"):
        write("suite_parse", Path(path).stem, committed(path))
    for s in literals(committed("crates/suite/src/suite.rs")):
        if "[[scenarios]]" in s and "servers" in s:
            write("suite_parse", "suite", s)
            pinned = s.replace(
                'cooldown = "500ms"',
                'cooldown = "1s"\n[placement]\nserver_cpus = "0-1"\nclient_cpus = "2-3"',
            )
            write("suite_parse", "suite-pinned", pinned)

    # Manifests: every server's, and the loader's test texts.
    for path in tracked("servers/*/server.toml"):
        write("manifest_parse", Path(path).parent.name, committed(path))
    for s in literals(committed("crates/suite/src/manifest.rs")):
        if s.startswith("name = "):
            write("manifest_parse", "manifest", s)

    # The TLS layer: byte 0 picks the read size, the rest is what the
    # server sent. A fatal alert, a line of HTTP, and the start of a TLS 1.2
    # ServerHello (the fuzzer grows the rest).
    write("tls_layer", "alert", bytes([0, 21, 3, 3, 0, 2, 2, 40]))
    write("tls_layer", "http", b"\x01HTTP/1.1 400 Bad Request\r\n\r\n")
    hello = bytes([2, 0, 0, 70, 3, 3]) + bytes(range(32)) + bytes([32]) + bytes(32) + bytes([0xC0, 0x2F, 0])
    write("tls_layer", "server-hello", bytes([3, 22, 3, 3, 0, len(hello)]) + hello)

    for d in sorted(CORPUS.iterdir()):
        print(f"{d.relative_to(ROOT)}: {len(list(d.iterdir()))} files")


if __name__ == "__main__":
    main()
