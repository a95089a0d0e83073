#!/usr/bin/env python3
"""Writes the files of the contract's `static` part (CONTRACT.md, "static").

usage: python3 make.py DIR

Writes DIR/14k and DIR/1m (DIR is made if missing) and checks each against
the SHA-256 that CONTRACT.md prints. A server's build runs it and serves DIR
at /static/; the files are build output, not committed.
"""

import hashlib
import os
import sys

ALPHABET = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

FILES = [
    ("14k", 14 * 1024, "57a8ca1d858dbeaeac461a9c9cf2bb09a737493e9846b161c4ad840e42d613be"),
    ("1m", 1024 * 1024, "3f055e97e631e61d7f5b9e428abbbcfb07255bc181245e235f5fa8d676d99f3c"),
]


def static_bytes(size):
    """Byte i is a newline when i % 64 == 63, else a letter drawn by the LCG."""
    out = bytearray(size)
    s = size % (1 << 31)
    for i in range(size):
        s = (s * 1103515245 + 12345) % (1 << 31)
        out[i] = 10 if i % 64 == 63 else ALPHABET[(s >> 16) % 64]
    return bytes(out)


def main(argv):
    if len(argv) != 2:
        sys.stderr.write(__doc__)
        return 2
    folder = argv[1]
    os.makedirs(folder, exist_ok=True)
    for name, size, digest in FILES:
        data = static_bytes(size)
        got = hashlib.sha256(data).hexdigest()
        if got != digest:
            sys.stderr.write(f"make.py: {name} has SHA-256 {got}, CONTRACT.md says {digest}\n")
            return 1
        with open(os.path.join(folder, name), "wb") as f:
            f.write(data)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
