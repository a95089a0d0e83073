#!/usr/bin/env python3
"""The Debian packages the servers under servers/ need, read from their
manifests (`packages = [...]`), plus the replacement allocators' libraries
when any server says `allocator = "glibc"` (crates/suite/src/allocator.rs
names the same three), plus PostgreSQL when any server offers `db` (the
runner starts a private one for db scenarios, crates/suite/src/postgres.rs),
plus iproute2, which the runner itself uses (`ip` and `tc` for scenarios in
a network namespace, crates/suite/src/netns.rs; `ss` for a storm's listen
queue).
`make run` and `make test` install what is missing.

  scripts/server_packages.py            every package, one per line
  scripts/server_packages.py --missing  only those dpkg says are not installed
"""

import pathlib
import subprocess
import sys
import tomllib

# Allocator::library() in crates/suite/src/allocator.rs: keep in step.
ALLOCATOR_PACKAGES = ["libjemalloc2", "libmimalloc2.0", "libtcmalloc-minimal4"]
# initdb and postgres for the runner's private database; psql for people.
DB_PACKAGES = ["postgresql"]
# ip, tc and ss for the runner: always wanted, whatever the servers are.
RUNNER_PACKAGES = ["iproute2"]


def wanted(servers: pathlib.Path) -> list[str]:
    packages: set[str] = set(RUNNER_PACKAGES)
    for manifest in sorted(servers.glob("*/server.toml")):
        try:
            m = tomllib.loads(manifest.read_text())
        except tomllib.TOMLDecodeError as e:
            sys.exit(f"{manifest}: {e}")
        packages.update(m.get("packages", []))
        if m.get("allocator") == "glibc":
            packages.update(ALLOCATOR_PACKAGES)
        if "db" in m.get("offers", []):
            packages.update(DB_PACKAGES)
    return sorted(packages)


def installed(package: str) -> bool:
    out = subprocess.run(
        ["dpkg-query", "-W", "-f=${Status}", package],
        capture_output=True,
        text=True,
    )
    return out.returncode == 0 and "install ok installed" in out.stdout


def main() -> None:
    root = pathlib.Path(__file__).resolve().parent.parent
    packages = wanted(root / "servers")
    if "--missing" in sys.argv[1:]:
        packages = [p for p in packages if not installed(p)]
    for p in packages:
        print(p)


if __name__ == "__main__":
    main()
