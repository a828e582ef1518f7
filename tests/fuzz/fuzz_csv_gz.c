/* gzip CSV reader, and format detection on the same bytes. */
#include "fuzz_input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct gc_read_opts o = { .dtype = -1, .delimiter = ',' };
    fuzz_read_both(GC_FMT_CSV_GZ, data, size, &o);
    fuzz_read_both(GC_FMT_AUTO, data, size, &o);
    return 0;
}
