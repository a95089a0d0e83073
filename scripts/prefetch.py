#!/usr/bin/env python3
"""Downloads the servers' dependencies into the language tools' own caches,
so that `make run` can fetch them while netbench's release build keeps the
CPUs busy, instead of after it, server by server.

On a machine whose caches are empty, the servers' builds spent most of
their time downloading (the runner builds them one at a time, after
netbench's build); fetched beforehand, each build finds its dependencies
where it would have left them, and the build times the runner records are
those of a machine whose caches are warm, as on every run after the first.

What is fetched, by the files a server's folder holds:
  Cargo.lock  cargo fetch --locked              (crates only; no compiling)
  go.mod      go mod download; then, once every server's downloads are
              done, go build -o /dev/null . (Go's build cache: the
              standard library and the modules, compiled)
  pom.xml     mvn dependency:go-offline          (dependencies and plugins)
Anything else (npm, pip, make, ghc, fpc) is left to the build. A variable
set in front of the manifest's `build` (JAVA_HOME=... mvn ...) is set for
the fetch too. The fetches run one at a time at the lowest CPU priority, so
that they take what the build beside them leaves. A fetch that fails or
whose tool is missing is reported and skipped: the build then fetches what
it needs, as it always did, and fails with its own message if it must.

A fetch that succeeded leaves a stamp (target/prefetch/<server>, the hash
of the files that name the dependencies), and is not repeated while they
are unchanged: six Maven starts cost half a minute even with nothing to
download. A stamp outliving a cache it describes costs only speed.

  scripts/prefetch.py [--force] [SERVERS_DIR]   (default: servers/ beside
                                                 this script)

Prints one line per server and a summary last; exits 0 even when a fetch
failed (the build is the judge), 2 when SERVERS_DIR has no server.
"""

import argparse
import hashlib
import os
import pathlib
import shlex
import shutil
import signal
import subprocess
import sys
import time
import tomllib

# Long enough for a slow mirror, short enough that a hung download does not
# hold `make run` past its budget: the build retries whatever is missing.
FETCH_TIMEOUT_S = 600
# Pinned rather than Maven 3.8's default for the plugin (2.8, from 2013),
# so the fetch does not change with the Maven installed.
MAVEN_DEPENDENCY_PLUGIN = "org.apache.maven.plugins:maven-dependency-plugin:3.8.1"


def build_env(build: str) -> dict[str, str]:
    """The NAME=value words in front of a manifest's build command."""
    env = {}
    try:
        words = shlex.split(build)
    except ValueError:
        return env
    for word in words:
        name, eq, value = word.partition("=")
        if not eq or not name.isidentifier():
            break
        env[name] = value
    return env


def fetches(folder: pathlib.Path) -> tuple[list[list[str]], list[list[str]]]:
    """The commands that fill the caches for the server in `folder`: the
    downloads, then those that compile into a cache (run after every
    server's downloads, so that the network work comes first)."""
    if (folder / "Cargo.lock").is_file():
        return [["cargo", "fetch", "--locked"]], []
    if (folder / "go.mod").is_file():
        return [["go", "mod", "download"]], [["go", "build", "-o", os.devnull, "."]]
    if (folder / "pom.xml").is_file():
        return [["mvn", "-q", "-B", f"{MAVEN_DEPENDENCY_PLUGIN}:go-offline"]], []
    return [], []


# The files whose contents decide what a fetch downloads.
DEPENDENCY_FILES = ("Cargo.lock", "go.mod", "go.sum", "pom.xml")


def dependency_digest(folder: pathlib.Path) -> str:
    """A hash of the folder's dependency files, names and contents."""
    h = hashlib.sha256()
    for name in DEPENDENCY_FILES:
        path = folder / name
        if path.is_file():
            h.update(name.encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def run(folder: pathlib.Path, commands: list[list[str]], env: dict[str, str]) -> str | None:
    """None when every command succeeded, else what went wrong."""
    for cmd in commands:
        if shutil.which(cmd[0]) is None:
            return f"{cmd[0]} not found"
        try:
            out = subprocess.run(
                cmd,
                cwd=folder,
                env={**os.environ, **env},
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=FETCH_TIMEOUT_S,
            )
        except subprocess.TimeoutExpired:
            return f"`{shlex.join(cmd)}` took over {FETCH_TIMEOUT_S} s"
        if out.returncode != 0:
            tail = (out.stderr or out.stdout).strip().splitlines()[-3:]
            return f"`{shlex.join(cmd)}` exited {out.returncode}: " + " | ".join(tail)
    return None


def main() -> int:
    here = pathlib.Path(__file__).resolve().parent
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--force", action="store_true", help="fetch even where a stamp says done")
    ap.add_argument(
        "servers",
        nargs="?",
        type=pathlib.Path,
        default=here.parent / "servers",
        help="the folder of server folders (default: servers/ beside scripts/)",
    )
    args = ap.parse_args()
    stamps = args.servers.resolve().parent / "target" / "prefetch"
    manifests = sorted(args.servers.glob("*/server.toml"))
    if not manifests:
        print(f"{args.servers}: no */server.toml here", file=sys.stderr)
        return 2
    # Children inherit the priority: the build beside us comes first.
    os.nice(19)
    # make kills this script when netbench's build fails: SystemExit inside
    # subprocess.run kills the fetch under way too, instead of orphaning it.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    began = time.monotonic()
    fetched, failed, already = 0, 0, 0
    # (folder, build variables, stamp, digest, compiles) of each download that succeeded
    downloaded = []
    for manifest in manifests:
        folder = manifest.parent
        downloads, compiles = fetches(folder)
        if not downloads:
            continue
        try:
            build = tomllib.loads(manifest.read_text()).get("build", "")
        except tomllib.TOMLDecodeError as e:
            print(f"{folder.name}: skipped, {manifest} does not parse: {e}", flush=True)
            failed += 1
            continue
        stamp, digest = stamps / folder.name, dependency_digest(folder)
        if not args.force and stamp.is_file() and stamp.read_text() == digest:
            already += 1
            continue
        env = build_env(build)
        started = time.monotonic()
        problem = run(folder, downloads, env)
        took = time.monotonic() - started
        if problem is None:
            print(f"{folder.name}: downloaded in {took:.1f} s", flush=True)
            downloaded.append((folder, env, stamp, digest, compiles))
        else:
            failed += 1
            print(f"{folder.name}: not fetched ({problem}); its build will fetch", flush=True)
    for folder, env, stamp, digest, compiles in downloaded:
        started = time.monotonic()
        problem = run(folder, compiles, env)
        if problem is None:
            fetched += 1
            stamp.parent.mkdir(parents=True, exist_ok=True)
            stamp.write_text(digest)
            if compiles:
                took = time.monotonic() - started
                print(f"{folder.name}: compiled into the cache in {took:.1f} s", flush=True)
        else:
            failed += 1
            print(f"{folder.name}: not compiled ({problem}); its build will", flush=True)
    parts = [f"{fetched} fetched in {time.monotonic() - began:.0f} s"]
    if already:
        parts.append(f"{already} fetched before (target/prefetch)")
    if failed:
        parts.append(f"{failed} not (their builds will fetch)")
    print("servers' dependencies: " + ", ".join(parts), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
