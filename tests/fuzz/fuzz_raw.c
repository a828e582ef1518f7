/* Raw reader.  The first byte picks the dtype (bits 0-1, and 7), the order
 * (bit 2) and whether a --shape is given (bit 3); bits 4-6 its number of
 * dimensions (0 means 2), taken one a byte from the bytes that follow,
 * two of them at least.  The rest is the payload. */
#include "fuzz_input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const int dtypes[8] = { -1, GC_F32, GC_F64, GC_F16, GC_I8, GC_I64, GC_U16, GC_BOOL };
    if (size < 1)
        return 0;
    int code = (data[0] >> 4) & 7, ndim = code ? code : 2;
    size_t head = 1 + (ndim < 2 ? 2 : (size_t)ndim);
    if (size < head)
        return 0;
    struct gc_read_opts o = { .dtype = dtypes[(data[0] & 3) | (data[0] >> 5 & 4)],
                              .delimiter = ',', .fortran_order = (data[0] >> 2) & 1 };
    if (data[0] & 8) {
        o.has_shape = 1;
        o.ndim = ndim;
        for (int d = 0; d < ndim; d++)
            o.shape[d] = data[1 + d];
    }
    fuzz_read_both(GC_FMT_RAW, data + head, size - head, &o);
    return 0;
}
