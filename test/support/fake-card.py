#!/usr/bin/python3
"""A fake card for tests: one file, /card, served over FUSE with a behaviour the test chooses.

Run as: fake-card.py MOUNTPOINT STORE CLAIMED MODE [ARG...]
  STORE    a file holding the card's real bytes (the test makes it, sparse)
  CLAIMED  the size /card claims, in bytes
  MODE     honest                 every byte is stored in STORE
           limbo REAL             past REAL, writes are dropped and reads give zeros
           wrap REAL              offsets are taken modulo REAL
           bad FROM TO            reads and writes touching [FROM, TO) fail with EIO
           flaky-once AT          the first write covering the 4 KiB block at AT stores it with a
                                  flipped byte; later writes store it intact
           flaky-always AT        every write covering that block stores it with a flipped byte

SLUICE_FAKE_WRITE_DELAY_MS in the environment slows every write by that many milliseconds (time
for a test to interrupt what writes). A file STORE.pulled pulls the card: from then on every read
and write fails with EIO, as a card reader's does when its card is taken out. (A signal would not
do: Python runs its handlers on the main thread, which sits in libfuse's loop.)

Mounted with direct_io, so the kernel's page cache never answers for the card: every read and
write of a loop device over /card reaches this process. It runs in the foreground until unmounted.
"""
import errno
import os
import stat
import sys
import threading
import time

# Debian's python3-fusepy installs the module as fusepy; pip's fusepy as fuse.
try:
    from fusepy import FUSE, FuseOSError, Operations
except ImportError:
    from fuse import FUSE, FuseOSError, Operations

FLAKY_BLOCK = 4096


class Card(Operations):
    def __init__(self, store, claimed, mode, args):
        self.fd = os.open(store, os.O_RDWR)
        self.claimed = claimed
        self.mode = mode
        self.args = args
        self.lock = threading.Lock()
        self.flaky_writes = 0
        self.write_delay = int(os.environ.get('SLUICE_FAKE_WRITE_DELAY_MS', '0')) / 1000
        self.pulled = store + '.pulled'

    # The filesystem: a root directory holding one file.
    def getattr(self, path, fh=None):
        if path == '/':
            return {'st_mode': stat.S_IFDIR | 0o755, 'st_nlink': 2}
        if path == '/card':
            return {'st_mode': stat.S_IFREG | 0o600, 'st_nlink': 1, 'st_size': self.claimed}
        raise FuseOSError(errno.ENOENT)

    def readdir(self, path, fh):
        return ['.', '..', 'card']

    def open(self, path, flags):
        if path != '/card':
            raise FuseOSError(errno.ENOENT)
        return 0

    def truncate(self, path, length, fh=None):
        raise FuseOSError(errno.EPERM)

    def flush(self, path, fh):
        return 0

    def fsync(self, path, datasync, fh):
        return 0

    # Where a byte of the card really lives: (store offset, length) pieces, or None for limbo.
    def pieces(self, offset, size):
        end = min(offset + size, self.claimed)
        if self.mode == 'limbo':
            real = self.args[0]
            out = []
            if offset < real:
                out.append((offset, offset, min(end, real) - offset))
            if end > real:
                start = max(offset, real)
                out.append((start, None, end - start))
            return out
        if self.mode == 'wrap':
            real = self.args[0]
            out = []
            at = offset
            while at < end:
                phys = at % real
                n = min(end - at, real - phys)
                out.append((at, phys, n))
                at += n
            return out
        return [(offset, offset, end - offset)] if end > offset else []

    def check_bad(self, offset, size):
        if os.path.exists(self.pulled):
            raise FuseOSError(errno.EIO)
        if self.mode == 'bad':
            lo, hi = self.args
            if offset < hi and offset + size > lo:
                raise FuseOSError(errno.EIO)

    def read(self, path, size, offset, fh):
        self.check_bad(offset, size)
        out = bytearray()
        for _, phys, n in self.pieces(offset, size):
            if phys is None:
                out += bytes(n)
            else:
                data = os.pread(self.fd, n, phys)
                out += data + bytes(n - len(data))
        return bytes(out)

    def write(self, path, data, offset, fh):
        if self.write_delay > 0:
            time.sleep(self.write_delay)
        self.check_bad(offset, len(data))
        if self.mode in ('flaky-once', 'flaky-always'):
            at = self.args[0]
            if offset <= at < offset + len(data):
                with self.lock:
                    self.flaky_writes += 1
                    corrupt = self.mode == 'flaky-always' or self.flaky_writes == 1
                if corrupt:
                    data = bytearray(data)
                    data[at - offset + 17] ^= 0x5A
                    data = bytes(data)
        for logical, phys, n in self.pieces(offset, len(data)):
            if phys is not None:
                start = logical - offset
                os.pwrite(self.fd, data[start:start + n], phys)
        return len(data)


def main():
    mountpoint, store, claimed, mode = sys.argv[1:5]
    args = [int(a) for a in sys.argv[5:]]
    card = Card(store, int(claimed), mode, args)
    # A forked daemon would leave the test no process to wait for; readiness is told by the mount.
    FUSE(card, mountpoint, foreground=True, direct_io=True, nothreads=False, big_writes=True,
         max_write=1 << 20, max_read=1 << 20, fsname='sluice-fake-card')


if __name__ == '__main__':
    main()
