"""Zip archives built field by field, for the .npz tests that need one
NumPy would never write: every size, CRC, flag, method and name can be
set to a lie.  Left alone, an archive is laid out as np.savez writes one
(zip64 sizes in every local header, 32-bit ones in the directory), and
Python's zipfile and np.load read it.

    member("a.npy", npy_bytes(x), deflate=True, crc=0)   # a CRC that lies
    archive([m1, m2], zip64=True)                        # zip64 end records
"""
import io
import struct
import zlib

import numpy as np


def npy_bytes(a):
    b = io.BytesIO()
    np.save(b, a)
    return b.getvalue()


def deflate(data, level=6):
    c = zlib.compressobj(level, zlib.DEFLATED, -15)
    return c.compress(data) + c.flush()


class Member:
    """One member: its data as stored and every field the headers carry;
    local_* override the local header's copy only."""

    def __init__(self, name, data, deflate_it=False, comp=None, crc=None, usize=None,
                 csize=None, flags=0, method=None, local_name=None, local_usize=None,
                 local_csize=None, local_method=None):
        self.name = name.encode() if isinstance(name, str) else name
        self.method = method if method is not None else (8 if deflate_it else 0)
        self.comp = comp if comp is not None else (deflate(data) if deflate_it else data)
        self.crc = zlib.crc32(data) if crc is None else crc
        self.usize = len(data) if usize is None else usize
        self.csize = len(self.comp) if csize is None else csize
        self.flags = flags
        self.local_name = self.name if local_name is None else local_name
        self.local_usize = self.usize if local_usize is None else local_usize
        self.local_csize = self.csize if local_csize is None else local_csize
        self.local_method = self.method if local_method is None else local_method

    def local(self):
        extra = struct.pack("<HHQQ", 1, 16, self.local_usize, self.local_csize)
        return struct.pack("<IHHHHHIIIHH", 0x04034B50, 45, self.flags, self.local_method, 0,
                           0x21, self.crc, 0xFFFFFFFF, 0xFFFFFFFF, len(self.local_name),
                           len(extra)) + self.local_name + extra + self.comp

    def central(self, offset, zip64):
        zip64 = zip64 or max(self.usize, self.csize, offset) >= 0xFFFFFFFF
        extra = struct.pack("<HHQQQ", 1, 24, self.usize, self.csize, offset) if zip64 else b""
        big = 0xFFFFFFFF
        return struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 45, 45, self.flags, self.method, 0,
                           0x21, self.crc, big if zip64 else self.csize,
                           big if zip64 else self.usize, len(self.name), len(extra), 0, 0, 0,
                           0, big if zip64 else offset) + self.name + extra


def member(name, data, deflate=False, **fields):
    return Member(name, data, deflate_it=deflate, **fields)


def archive(members, zip64=False, count=None):
    """The archive's bytes: the members, the directory and the end record
    (zip64's too with `zip64`, as for more than 65535 members); `count`
    lies about the number of members."""
    out, cd = b"", b""
    for m in members:
        cd += m.central(len(out), zip64)
        out += m.local()
    n = len(members) if count is None else count
    cd_at = len(out)
    out += cd
    if zip64:
        end64 = len(out)
        out += struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, 45, 45, 0, 0, n, n, len(cd), cd_at)
        out += struct.pack("<IIQI", 0x07064B50, 0, end64, 1)
        return out + struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF,
                                 0xFFFFFFFF, 0)
    return out + struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, min(n, 0xFFFF), min(n, 0xFFFF),
                             len(cd), cd_at, 0)
