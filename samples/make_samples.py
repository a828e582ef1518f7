#!/usr/bin/env python3
"""Regenerates the bundled sample matrices (small, fixed seed)."""
import gzip
import numpy as np

rng = np.random.default_rng(20261121)
a = rng.standard_normal((96, 64)).astype(np.float32)
b = rng.standard_normal((64, 80)).astype(np.float32)
c0 = rng.standard_normal((96, 80)).astype(np.float32)

np.save("a.npy", a)
np.save("b.npy", b)
np.save("c0.npy", c0)
np.save("b_f64.npy", b.astype(np.float64))
np.save("a_fortran.npy", np.asfortranarray(a))
a.tofile("a.bin")                      # raw float32, 96x64: needs --shape 96x64
b.tofile("b.bin")                      # raw float32, 64x80
np.savetxt("a.csv", a, fmt="%.9g", delimiter=",")
with gzip.open("b.csv.gz", "wt") as f:
    np.savetxt(f, b, fmt="%.9g", delimiter=",")
np.savez_compressed("ab.npz", a=a, b=b)  # gemmcli mul ab.npz:a ab.npz:b -o c.npy
sq = rng.standard_normal((64, 64)).astype(np.float32)
sq.tofile("square.bin")                # 64x64: the shape is inferred
