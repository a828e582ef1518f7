/* auto's rates measured on the GPU that runs the product (src/plan/rates.h
 * says what is kept and when it goes stale).
 *
 * A calibration times every kernel auto may pick, in every signature, at
 * a few shapes chosen to take about a millisecond each: one that fills
 * every SM (the full rate), a short K over a large C, a long K over few
 * tiles (the sliced kernels' runs), the thin and short shapes of the
 * memory-bound kernels, and rows of A and B that are not whole 16-byte
 * units; then fits the model's rates to those times with
 * the rules `gemmcli bench --auto-table` uses (rates_fit).  It took 1.5
 * to 2.2 s on an H100 and an H200 (2026-11-26) and takes about 1.3 GB of
 * device memory (its operand pools), once per GPU model, driver and
 * build. */
#ifndef GC_CALIBRATE_H
#define GC_CALIBRATE_H

#include "src/job/device.h"
#include "src/plan/rates.h"

/* The identity of an open device for its rates. */
void calibrate_device_of(const struct gc_device *dev, struct rates_device *d);

/* Measures the rates on dev into *out (source RATES_MEASURED), saying
 * what it does on stderr unless `quiet`.  0, or an exit status it has
 * reported. */
int calibrate_measure(struct gc_device *dev, int quiet, struct model_rates *out);

enum calibrate_when {
    CALIBRATE_IF_MISSING,      /* measure when there are no fresh rates for this GPU */
    CALIBRATE_NEVER,           /* the rates in hand: measured earlier, or the table's scaled */
    CALIBRATE_NOW,             /* measure again whatever there is */
};

/* Makes the model use dev's rates: its measured file when fresh, else
 * (as `when` says) a calibration stored for the next run, else the
 * table's scaled to dev.  Without a cache directory that can be written,
 * CALIBRATE_IF_MISSING measures nothing (it would measure at every run).  A calibration that fails or cannot be stored
 * is said on stderr (unless `quiet`) and never fails the caller: the
 * model goes on with what it has.  Returns 0, or for CALIBRATE_NOW the
 * failure's status. */
int calibrate_ready(struct gc_device *dev, enum calibrate_when when, int quiet);

#endif
