"""The app part's session store, shared by all of uvicorn's worker processes.

Neither FastAPI nor Starlette keeps sessions on the server: Starlette's
SessionMiddleware signs the session's data into the cookie itself, which the
contract does not count as a session. A dict per worker would not do either:
the workers are processes, and the connections of one client (the contract's
app-lock check sends 8 at once on one session) land on whichever worker
accepts them, where a session made by another worker is unknown and a
cookie that names no live session must get a new one.

So the sessions live in one table of fixed-size slots in a file mapped
shared (mmap) into every worker, on /dev/shm (memory) where there is one.
The session id says which slot holds it: 8 hex digits of the slot, then 32
of a token of 128 bits from the secrets module, which the slot stores. There
is no hash table to keep consistent between processes: a slot is found from
the id, and each slot has its own lock, a POSIX record lock (fcntl.lockf) on
the slot's byte of the file, which excludes the other processes. A record
lock does not exclude its own process; within a worker, the one event-loop
thread and no await between open() and release() do that.

A new session takes a free slot: an empty one, or one whose session has been
idle for more than 10 minutes (dropped then, as the contract allows: the
sweep is the reuse). Slots are tried from a random one on, each taken only
under its lock, so two workers never take the same slot.
"""

import fcntl
import hmac
import mmap
import os
import re
import secrets
import struct
import tempfile
import time

#: A slot: the token (all zero when the slot is free), visits, since (ms
#: since the Unix epoch), seen (time.monotonic_ns() of the last request;
#: CLOCK_MONOTONIC is one clock for all processes of the machine).
SLOT = struct.Struct("<16sQqq")
#: Where visits is in a slot.
VISITS = struct.Struct("<Q")
VISITS_OFFSET = 16
SEEN = struct.Struct("<q")
SEEN_OFFSET = 32
FREE = bytes(16)

#: How many sessions can be live at once (the file is 40 B a slot, 2.5 MiB;
#: on tmpfs only the pages of slots used take memory). Under load a session
#: lives as long as a connection's 21 requests, so this is far more than the
#: connections netbench opens, even with 10 minutes of abandoned sessions.
CAPACITY = 1 << 16
#: A session idle this long may be dropped (the contract's floor: never sooner).
IDLE_NS = 600 * 10**9

#: A session id: the slot, then the token, in lowercase hex.
ID_RE = re.compile(r"([0-9a-f]{8})([0-9a-f]{32})")


class StoreFull(Exception):
    """Every slot holds a session that is not idle."""


def create_file(capacity=CAPACITY):
    """A new store file of `capacity` free slots; returns its path (the
    caller removes it)."""
    fd, path = tempfile.mkstemp(prefix="netbench-fastapi-sessions-",
                                dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
    try:
        os.ftruncate(fd, capacity * SLOT.size)  # zeros: every slot free
    finally:
        os.close(fd)
    return path


class Held:
    """A session whose slot lock this process holds: count the visit and
    render, then release (a context manager)."""

    __slots__ = ("_store", "_offset", "slot", "id", "created", "since")

    def __init__(self, store, slot, sid, created, since):
        self._store = store
        self._offset = slot * SLOT.size
        self.slot = slot
        self.id = sid
        self.created = created
        self.since = since

    def count(self):
        """visits + 1, written back; returns the new count."""
        at = self._offset + VISITS_OFFSET
        (visits,) = VISITS.unpack_from(self._store.map, at)
        visits += 1
        VISITS.pack_into(self._store.map, at, visits)
        return visits

    def release(self):
        self._store.unlock(self.slot)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.release()


class SessionStore:
    """The table in the file at `path`, mapped into this process."""

    def __init__(self, path):
        self._fd = os.open(path, os.O_RDWR)
        size = os.fstat(self._fd).st_size
        self.capacity = size // SLOT.size
        self.map = mmap.mmap(self._fd, size)  # MAP_SHARED: one table for all processes

    def close(self):
        self.map.close()
        # Closing the descriptor also drops any record lock this process holds.
        os.close(self._fd)

    def lock(self, slot, wait=True):
        """The slot's lock; without `wait`, False when another process holds it.
        Waiting blocks the event loop, but only while another worker renders
        one page of the same session: one client's pages on two connections
        at once, which a browser's keep-alive connection does not do."""
        try:
            fcntl.lockf(self._fd, fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB, 1, slot)
        except (BlockingIOError, PermissionError):  # EAGAIN or EACCES: held elsewhere
            return False
        return True

    def unlock(self, slot):
        fcntl.lockf(self._fd, fcntl.LOCK_UN, 1, slot)

    def _parse(self, sid):
        """(slot, token) of a well-formed id naming a slot of this table, or None."""
        m = ID_RE.fullmatch(sid) if sid else None
        if m is None:
            return None
        slot, token = int(m[1], 16), bytes.fromhex(m[2])
        if slot >= self.capacity or token == FREE:  # a free slot's zeros name no session
            return None
        return slot, token

    def open(self, sid, now=None):
        """The session `sid` names, or a new one under a fresh id (never
        `sid`), its slot locked: a Held. Raises StoreFull."""
        if now is None:
            now = time.monotonic_ns()
        found = self._parse(sid)
        if found is not None:
            slot, token = found
            self.lock(slot)
            stored, _, since, _ = SLOT.unpack_from(self.map, slot * SLOT.size)
            if hmac.compare_digest(stored, token):
                SEEN.pack_into(self.map, slot * SLOT.size + SEEN_OFFSET, now)
                return Held(self, slot, sid, False, since)
            self.unlock(slot)  # dropped (logout, or idle and reused): a new session
        return self._create(sid, now)

    def _create(self, sent, now):
        start = secrets.randbelow(self.capacity)
        for n in range(self.capacity):
            slot = (start + n) % self.capacity
            offset = slot * SLOT.size
            # A look without the lock first, to pass live slots without a
            # system call; the look under the lock decides.
            if not self._free(offset, now) or not self.lock(slot, wait=False):
                continue
            if not self._free(offset, now):
                self.unlock(slot)
                continue
            token = secrets.token_bytes(16)
            sid = f"{slot:08x}{token.hex()}"
            while token == FREE or sid == sent:
                token = secrets.token_bytes(16)
                sid = f"{slot:08x}{token.hex()}"
            since = time.time_ns() // 1_000_000
            SLOT.pack_into(self.map, offset, token, 0, since, now)
            return Held(self, slot, sid, True, since)
        raise StoreFull()

    def _free(self, offset, now):
        token, _, _, seen = SLOT.unpack_from(self.map, offset)
        return token == FREE or now - seen > IDLE_NS

    def drop(self, sid):
        """Ends the session `sid` names, if it is live."""
        found = self._parse(sid)
        if found is None:
            return
        slot, token = found
        self.lock(slot)
        try:
            offset = slot * SLOT.size
            if hmac.compare_digest(SLOT.unpack_from(self.map, offset)[0], token):
                SLOT.pack_into(self.map, offset, FREE, 0, 0, 0)
        finally:
            self.unlock(slot)
