#include "src/plan/whole.h"

static void whole_sum(struct whole_job *w)
{
    w->total = w->read + w->start + w->locking + w->product + w->copy_out + w->write +
               WHOLE_PROCESS_S;
}

void whole_in_core(double ab_bytes, double c_bytes, double product_s, struct whole_job *w)
{
    *w = (struct whole_job){ 0 };
    w->read = ab_bytes / WHOLE_READ_STREAM_BPS;
    w->product = product_s;
    w->copy_out = c_bytes / WHOLE_D2H_BPS;
    w->write = c_bytes / WHOLE_WRITE_BPS;
    whole_sum(w);
}

void whole_tiles(double ab_bytes, double c_bytes, double tiles_s, int gpus, int rows_out,
                 struct whole_job *w)
{
    *w = (struct whole_job){ 0 };
    w->read = ab_bytes / WHOLE_READ_HOST_BPS;
    w->start = WHOLE_TILES_START_S;
    w->locking = ab_bytes / WHOLE_PIN_BPS * (1 + WHOLE_PIN_MORE * (gpus > 1 ? gpus - 1 : 0));
    w->product = tiles_s + WHOLE_TILES_SETUP_S;
    if (rows_out) {
        /* The tiles land in the file's pages within the phase. */
        w->write = c_bytes / WHOLE_WRITE_LEFT_BPS;
    } else {
        w->write = c_bytes / WHOLE_WRITE_BPS;
    }
    whole_sum(w);
}
