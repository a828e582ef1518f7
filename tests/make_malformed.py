#!/usr/bin/env python3
"""Writes the catalogue of malformed inputs that tests/malformed.sh runs.

    tests/make_malformed.py DIR

Each case is a file in DIR and a line of DIR/manifest.tsv:
    FILE <TAB> EXIT STATUS <TAB> TEXT THE MESSAGE MUST CONTAIN <TAB> EXTRA OPTIONS
Every file here is bad input, so every expected status is 3.  The .npz
cases are the faults an archive's headers show (info finds them too);
those in its data are tests/hostile.py's.
"""
import gzip
import os
import struct
import sys
import zlib

import numpy as np

import zipcraft as zc


def npy(header, payload=b"", major=1, minor=0, pad_to=64):
    """A .npy file with this header text, padded as NumPy pads."""
    h = header.encode("latin1")
    pre = 10 if major == 1 else 12
    total = pre + len(h) + 1
    h += b" " * ((-total) % pad_to) + b"\n"
    length = struct.pack("<H" if major == 1 else "<I", len(h))
    return b"\x93NUMPY" + bytes([major, minor]) + length + h + payload


def header(descr="'<f4'", fortran="False", shape="(2, 3)", extra=""):
    return "{'descr': %s, 'fortran_order': %s, 'shape': %s, %s}" % (descr, fortran, shape, extra)


F6 = np.arange(6, dtype="<f4").tobytes()
GOOD = npy(header(), F6)
GZ = gzip.compress(b"1,2,3\n4,5,6\n")
# One member large enough to be inflated on several threads (np.savetxt's text).
BIG_TEXT = "".join("%.18e %.18e %.18e\n" % tuple(r) for r in
                   np.random.default_rng(7).standard_normal((70000, 3)).tolist()).encode()
BIG = gzip.compress(BIG_TEXT, compresslevel=9, mtime=0)
NPY = zc.npy_bytes(np.arange(6, dtype="<f4").reshape(2, 3))


def npz(*members, **how):
    return zc.archive(list(members), **how)


NPZ = npz(zc.member("a.npy", NPY, deflate=True))

# (file name, bytes, extra options, expected text in the message)
CASES = [
    ("bad_magic.npy", b"\x93NUMPZ" + GOOD[6:], "", "bad magic"),
    ("not_numpy_at_all.npy", b"PK\x03\x04 a zip file", "", "bad magic"),
    ("version_4.npy", npy(header(), F6, major=4), "", "unsupported .npy version 4.0"),
    ("version_1_1.npy", npy(header(), F6, minor=1), "", "unsupported .npy version 1.1"),
    ("prefix_only.npy", b"\x93NUMPY\x01", "", "truncated .npy header"),
    ("header_length_past_end.npy", GOOD[:8] + b"\xff\x7f" + GOOD[10:], "", "past the end"),
    ("oversized_header.npy", npy(header() + " " * (2 << 20), F6, major=2), "",
     "exceeds the limit"),
    ("missing_shape.npy", npy("{'descr': '<f4', 'fortran_order': False}", F6), "",
     "key 'shape' missing"),
    ("missing_descr.npy", npy("{'fortran_order': False, 'shape': (2, 3)}", F6), "",
     "key 'descr' missing"),
    ("extra_key.npy", npy(header(extra="'version': 1, "), F6), "", "unexpected key 'version'"),
    ("repeated_key.npy", npy(header(extra="'shape': (2, 3), "), F6), "", "repeated"),
    ("not_a_dict.npy", npy("[('descr', '<f4')]", F6), "", "not a dict"),
    ("unterminated_string.npy", npy("{'descr: '<f4', 'fortran_order': False}", F6), "",
     "bad .npy header"),
    ("text_after_dict.npy", npy(header() + " garbage", F6), "", "text after the dict"),
    ("shape_not_tuple.npy", npy(header(shape="[2, 3]"), F6), "", "'shape' is not a tuple"),
    ("shape_of_floats.npy", npy(header(shape="(2.0, 3.0)"), F6), "", "tuple of integers"),
    ("shape_missing_comma.npy", npy(header(shape="(6)"), F6), "", "comma"),
    ("negative_dimension.npy", npy(header(shape="(-2, 3)"), F6), "", "negative dimension"),
    ("overflowing_dimension.npy", npy(header(shape="(184467440737095516160, 1)"), F6), "",
     "NumPy's limit"),
    ("dimension_past_ssize_max.npy", npy(header(shape="(18446744073709551615, 0)"), b""), "",
     "NumPy's limit"),
    ("overflowing_size.npy", npy(header(shape="(4294967296, 4294967296)"), F6), "",
     "too large"),
    ("zero_dimensional_cut_short.npy", npy(header(shape="()"), F6[:2]), "", "truncated"),
    ("too_many_dimensions.npy", npy(header(shape="(" + "1, " * 65 + ")"), F6[:4]), "",
     "more than 64 dimensions"),
    ("fortran_order_not_bool.npy", npy(header(fortran="1"), F6), "", "neither True nor False"),
    ("complex_dtype.npy", npy(header(descr="'<c8'"), F6 * 2), "", "complex"),
    ("object_dtype.npy", npy(header(descr="'|O'"), bytes(48)), "", "object arrays"),
    ("structured_dtype.npy", npy(header(descr="[('x', '<f4')]"), F6), "", "structured"),
    ("bool_of_wrong_size.npy", npy(header(descr="'|b2'"), bytes(12)), "", "unsupported dtype '|b2'"),
    ("unicode_dtype.npy", npy(header(descr="'<U1'"), bytes(24)), "", "unsupported dtype"),
    ("float128_dtype.npy", npy(header(descr="'<f16'"), bytes(96)), "", "unsupported dtype"),
    ("one_byte_short.npy", GOOD[:-1], "", "truncated"),
    ("trailing_bytes.npy", GOOD + b"\0", "", "trailing bytes"),
    ("header_only.npy", npy(header()), "", "truncated"),
    ("raw_not_square.bin", np.arange(12, dtype="<f4").tobytes(), "", "not a square"),
    ("raw_partial_element.bin", bytes(10), "", "not a whole number of f32"),
    ("raw_shape_mismatch.bin", bytes(44), "--shape 3x4", "needs 48 bytes of data, found 44"),
    ("raw_too_long.bin", bytes(52), "--shape 3x4", "trailing bytes"),
    ("raw_empty.bin", b"", "", "empty"),
    ("ragged.csv", b"1,2,3\n4,5\n", "", "ragged.csv:2:4: 2 fields where line 1 has 3"),
    ("ragged_longer.csv", b"1,2\n3,4,5\n", "", "ragged_longer.csv:2:5: more than 2 fields"),
    ("non_numeric.csv", b"1,2\n3,abc\n", "", "non_numeric.csv:2:3: not a number: 'abc'"),
    ("empty.csv", b"", "", "no data"),
    ("only_comments.csv", b"# nothing\n\n  \n# here\n", "", "no data"),
    ("empty_field.csv", b"1,,3\n", "", "empty_field.csv:1:3: empty field"),
    ("trailing_delimiter.csv", b"1,2,\n3,4,\n", "", "trailing_delimiter.csv:1:5: trailing"),
    ("quoted_field.csv", b'"1","2"\n', "", "quoted_field.csv:1:1: quoted"),
    ("hex_number.csv", b"1,0x1f\n", "", "hex_number.csv:1:3: not a number"),
    ("decimal_comma.csv", b"1,5;2,5\n", "--delimiter ;", "decimal_comma.csv:1:1: not a number"),
    ("header_only.csv", b"a,b,c\n", "--header", "no data after the header"),
    ("unlabelled_header.csv", b"a,b\n1,2\n", "", "unlabelled_header.csv:1:1: not a number"),
    ("nul_byte.csv", b"1,2\n3,\x004\n", "", "nul_byte.csv:2:3: not a number"),
    ("truncated.csv.gz", GZ[:-6], "", "truncated gzip data"),
    ("bad_crc.csv.gz", GZ[:-8] + bytes([GZ[-8] ^ 1]) + GZ[-7:], "", "bad CRC"),
    ("bad_length.csv.gz", GZ[:-4] + bytes([GZ[-4] ^ 1]) + GZ[-3:], "", "bad length"),
    ("trailing_garbage.csv.gz", GZ + b"garbage", "", "trailing garbage"),
    ("corrupt_deflate.csv.gz", GZ[:10] + b"\xff" * 20, "", "corrupt gzip data"),
    ("not_gzip.csv.gz", b"1,2\n", "", "not gzip data"),
    ("big_cut.csv.gz", BIG[:len(BIG) // 2], "", "truncated gzip data"),
    ("big_bad_crc.csv.gz", BIG[:-8] + bytes([BIG[-8] ^ 1]) + BIG[-7:], "", "bad CRC"),
    ("big_flipped_middle.csv.gz", BIG[:len(BIG) // 2] + bytes([BIG[len(BIG) // 2] ^ 4]) +
     BIG[len(BIG) // 2 + 1:], "", "gzip data"),
    ("bad_text_in.csv.gz", gzip.compress(b"1,2\n3,x\n"), "", "bad_text_in.csv.gz:2:3"),
    ("ragged_second_member.csv.gz", GZ + gzip.compress(b"7,8\n"), "",
     "ragged_second_member.csv.gz:3:4"),
    ("raw_deflate_no_gzip_header.csv.gz", zlib.compress(b"1,2\n"), "", "not gzip data"),
    ("not_zip.npz", b"1,2,3\n" * 8, "", "not a zip archive"),
    ("no_end_record.npz", NPZ[:-22], "", "truncated zip archive: no zip end record"),
    ("cut_in_directory.npz", NPZ[:-30], "", "truncated zip archive"),
    ("encrypted.npz", npz(zc.member("a.npy", NPY, flags=1)), "", "encrypted"),
    ("bzip2_member.npz", npz(zc.member("a.npy", NPY, method=12)), "",
     "bzip2_member.npz:a: compression method 12 (bzip2) is not read"),
    ("duplicate_names.npz", npz(zc.member("a.npy", NPY), zc.member("a", NPY)), "",
     "two members are both named 'a'"),
    ("nul_in_name.npz", npz(zc.member(b"a\0.npy", NPY)), "", "NUL byte"),
    ("local_name_differs.npz", npz(zc.member("a.npy", NPY, local_name=b"../b.npy")), "",
     "the member's header and the directory give different name"),
    ("local_size_differs.npz", npz(zc.member("a.npy", NPY, deflate=True,
                                             local_usize=len(NPY) + 1)), "",
     "different sizes"),
    ("local_method_differs.npz", npz(zc.member("a.npy", NPY, local_method=8)), "",
     "different compression method"),
    ("compressed_size_past_end.npz", npz(zc.member("a.npy", NPY, deflate=True, csize=1 << 30,
                                                   local_csize=1 << 30)), "", "run past"),
    ("stored_sizes_differ.npz", npz(zc.member("a.npy", NPY, csize=len(NPY) - 1,
                                              local_csize=len(NPY) - 1)), "",
     "a stored member of"),
    ("size_past_header.npz", npz(zc.member("a.npy", NPY + bytes(8), usize=len(NPY) + 8)), "",
     "8 trailing bytes after the data"),
    ("header_claims_more.npz", npz(zc.member("a.npy", NPY.replace(b"(2, 3)", b"(9, 3)"),
                                             deflate=True)), "", "truncated: shape 9x3"),
    ("member_count_lies.npz", npz(zc.member("a.npy", NPY), count=60000), "",
     "members cannot fit its directory"),
    ("bad_npy_member.npz", npz(zc.member("a.npy", b"\x93NUMPZ" + NPY[6:])), "",
     "bad_npy_member.npz:a: not a .npy file (bad magic)"),
]


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "manifest.tsv"), "w") as m:
        for name, data, opts, want in CASES:
            with open(os.path.join(out, name), "wb") as f:
                f.write(data)
            m.write("%s\t3\t%s\t%s\n" % (name, want, opts))
    print("make_malformed: %d cases in %s" % (len(CASES), out))


if __name__ == "__main__":
    main()
