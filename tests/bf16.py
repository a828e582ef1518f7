"""bfloat16 in NumPy, which has no such dtype: float32 values rounded to
the nearest even bfloat16 as uint16 bits, and back."""
import numpy as np


def to_bf16_bits(x):
    b = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    return ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16)


def from_bf16_bits(h):
    return (np.asarray(h, np.uint16).astype(np.uint32) << 16).view(np.float32)
