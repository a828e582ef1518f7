/* CSV reader: the first byte picks the delimiter, --header and the dtype. */
#include "fuzz_input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char delims[4] = { ',', ' ', '\t', ';' };
    if (size < 1)
        return 0;
    struct gc_read_opts o = { .dtype = (data[0] & 4) ? GC_F64 : -1,
                              .delimiter = delims[data[0] & 3], .header = (data[0] >> 3) & 1 };
    fuzz_read_both(GC_FMT_CSV, data + 1, size - 1, &o);
    return 0;
}
