/* zstd CSV and .npy readers (libzstd, loaded at run time), and format
 * detection on the same bytes. */
#include "fuzz_input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct gc_read_opts o = { .dtype = -1, .delimiter = ',' };
    fuzz_read_both(GC_FMT_CSV_ZST, data, size, &o);
    fuzz_read_both(GC_FMT_NPY_ZST, data, size, &o);
    fuzz_read_both(GC_FMT_AUTO, data, size, &o);
    return 0;
}
