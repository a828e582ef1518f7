/* Raw reader: the first byte picks the dtype and order, the next two an
 * optional shape; the rest is the payload. */
#include "fuzz_input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const int dtypes[4] = { -1, GC_F32, GC_F64, GC_F16 };
    if (size < 3)
        return 0;
    struct gc_read_opts o = { .dtype = dtypes[data[0] & 3], .delimiter = ',',
                              .fortran_order = (data[0] >> 2) & 1 };
    if (data[0] & 8) {
        o.rows = data[1];
        o.cols = data[2];
    }
    fuzz_read_both(GC_FMT_RAW, data + 3, size - 3, &o);
    return 0;
}
