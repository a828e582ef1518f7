/* CSV reader: the first byte picks the delimiter (bits 0-1), --header
 * (bit 3) and the dtype read (bits 4-7: the default, each float, each
 * integer type, bool). */
#include "fuzz_input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char delims[4] = { ',', ' ', '\t', ';' };
    static const int dtypes[16] = { -1, GC_F32, GC_F64, GC_F16, GC_BF16, GC_I8, GC_I16, GC_I32,
                                    GC_I64, GC_U8, GC_U16, GC_U32, GC_U64, GC_BOOL, -1, GC_F32 };
    if (size < 1)
        return 0;
    struct gc_read_opts o = { .dtype = dtypes[data[0] >> 4], .delimiter = delims[data[0] & 3],
                              .header = (data[0] >> 3) & 1 };
    fuzz_read_both(GC_FMT_CSV, data + 1, size - 1, &o);
    return 0;
}
