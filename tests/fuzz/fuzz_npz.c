/* .npz reader (the zip container, then .npy), file and pipe paths. */
#include "fuzz_input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct gc_read_opts o = { .dtype = -1, .delimiter = ',' };
    fuzz_read_both(GC_FMT_NPZ, data, size, &o);
    return 0;
}
