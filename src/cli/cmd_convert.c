/* gemmcli convert: a matrix from one file format (and dtype) to another,
 * on the host alone. */
#include <stdio.h>

#include "core/error.h"
#include "src/cli/commands.h"
#include "src/job/io.h"
#include "src/job/output.h"
#include "src/job/report.h"

int cmd_convert(const struct gc_opts *o)
{
    struct gc_opts oo = *o;
    if (oo.n_operands == 2 && !oo.output) {
        oo.output = oo.operands[1];
        oo.n_operands = 1;
    }
    if (oo.n_operands != 1 || !oo.output)
        return gc_fail(GC_EXIT_USAGE, "convert takes one input and one output: "
                       "convert IN -o OUT (see 'gemmcli convert --help')");
    o = &oo;
    int fb = format_by_extension(o->operands[0]), fmt = -1;
    int rc = io_output_check(o);
    if (rc)
        return rc;
    struct gc_tensor m = { 0 };
    double t0 = now_ms();
    int read_as = -1;
    rc = io_read_operand(o, 0, o->operands[0], NULL, &m, &read_as);
    if (!rc)
        rc = io_output_format(o, read_as, fb >= 0 ? fb : GC_FMT_CSV, &fmt);
    double t1 = now_ms();
    if (!rc)
        rc = io_check_ndim(o, fmt, m.ndim, m.shape, o->out_dtype >= 0 ? o->out_dtype : (int)m.dtype);
    if (!rc)
        rc = io_to_c_order(&m, o->out_dtype);
    struct gc_output out = { 0 };
    char shape[96];
    gc_shape_text(m.ndim, m.shape, shape, sizeof shape);
    if (!rc && !(rc = output_begin(&out, o->output, io_output_flags(o, fmt))) &&
        !(rc = io_write_tensor(&out, o, fmt, &m)) && !o->quiet) {
        clearerr(stderr);
        fprintf(stderr, "gemmcli convert: %s %s -> %s: read %.3f ms, write %.3f ms\n", shape,
                gc_dtypes[m.dtype].name, gc_formats[fmt].name, t1 - t0, now_ms() - t1);
        rc = io_summary_check(stderr);
    }
    if (!rc)
        rc = output_commit(&out);
    output_abort(&out);
    gc_tensor_free(&m);
    return rc;
}
