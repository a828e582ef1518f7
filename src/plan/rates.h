/* auto's rates: how fast the model (src/plan/model.c) takes each kernel to
 * run on the GPU it plans for.  Three sources, the best one there is:
 *
 *   measured  on this GPU by a calibration (src/job/calibrate.c, seconds),
 *             kept in the cache directory beside the tune cache, one file
 *             per GPU model: rates-NAME-CC-SMS.txt;
 *   scaled    the built-in table (kernels/auto_table.c, measured on one
 *             GPU) scaled to this one: compute by SMs x clock, bytes by
 *             memory bandwidth, each against the table's GPU;
 *   table     the built-in table as it is (no device answered).
 *
 * A measured file is stale, and measured again, when its driver, its
 * build (the fingerprint of the kernel and rate tables) or its format
 * differ from this run's, or it is older than RATES_STALE_DAYS.
 *
 * The file is text:
 *
 *   # gemmcli rates 8
 *   device NVIDIA_H100_80GB_HBM3 9.0 132 1980 3352 13000
 *   build 5d1c2e04a7b3f9e1 2026-11-25T10:31:05Z 3004.1 2.6
 *   rate f32 edge_peel 46.12 0.0 1.00 1.35 13.8 0.000 0.000 0.000 0.0 0.560
 *   ...
 *
 *   device: name (blanks made '_'), compute capability, SMs, clock (MHz),
 *           memory bandwidth (GB/s, from the memory clock and bus width),
 *           driver version;
 *   build:  the fingerprint, when measured (UTC), the measured copy
 *           bandwidth (GB/s), the seconds the calibration took;
 *   rate:   signature, kernel, TFLOP/s with every SM busy, GB/s (the
 *           memory-bound kernels' over all they move; a tiled kernel's
 *           stores of C, where a K of 1 makes them bind it; 0: the
 *           copy's), the sliced runs' time over the model's for them (1:
 *           as modelled), the same for products whose rows of A or B are
 *           not whole 16-byte units, the least time (us) the kernel took
 *           at any shape, launches and all (0: none measured), and the
 *           ragged factor for 16-bit rows of an odd number of values (0:
 *           the ragged one), and the ragged factor for products of at
 *           most 32 rows (the thin stages' M path; 0: the one above),
 *           then a memory-bound kernel's TFLOP/s and GB/s over more rows
 *           than that (its N path; a GB/s of 0: the first two serve), and
 *           a tiled kernel's ragged factor for its pipeline's fill and
 *           drain, which a short K is mostly made of (0: the ragged one
 *           throughout), and its factor for the bytes of sliced runs where
 *           they bind (0: the copy's rate).
 *
 * Host code only; nothing printed. */
#ifndef GC_RATES_H
#define GC_RATES_H

#include <stddef.h>
#include <time.h>

#include "kernels/registry.h"

#define RATES_VERSION 8
#define RATES_MAX 96
#define RATES_STALE_DAYS 90

/* What identifies a GPU for its rates, and what scales the table to it. */
struct rates_device {
    char name[256];
    int cc, sm_count;
    int clock_mhz;             /* the SMs' peak clock; 0: unknown */
    double mem_gbps;           /* 2 x memory clock x bus width; 0: unknown */
    int driver;                /* cudaDriverGetVersion's; 0: unknown */
};

enum rates_source { RATES_TABLE, RATES_SCALED, RATES_MEASURED };

struct rate_entry {
    char type[16];             /* a signature's name */
    char kernel[48];
    double tflops;             /* with every SM busy; 0: not measured */
    double gbps;               /* memory-bound kernels' bytes a second, a tiled kernel's
                                  stores of C; 0: the copy's */
    double slice_eff;          /* sliced runs' measured time over the model's; 1: as modelled */
    double ragged_eff;         /* the same where A's or B's rows are not whole 16-byte units */
    double floor_ms;           /* the least time it took at any shape; 0: none measured */
    double odd_eff;            /* ragged_eff where 16-bit rows are an odd number of values
                                  (single 2-byte loads, not pairs); 0: ragged_eff's */
    double few_eff;            /* ragged_eff where A has at most MODEL_FEW_ROWS rows (the
                                  thin stages' M path, which loads otherwise than the N
                                  path); 0: odd_eff's or ragged_eff's */
    double tall_tflops;        /* a memory-bound kernel's tflops and gbps for products of
                                  more than MODEL_FEW_ROWS rows (gemv's and the thin
                                  stages' N path, which reads A where the M path reads B);
                                  tall_gbps 0: the two above serve both */
    double tall_gbps;
    double short_eff;          /* a tiled kernel's ragged factor for the k_fill values of k
                                  its pipeline fills and drains over, fitted where K is at
                                  most MODEL_SHORT_K; the model blends it with the factor
                                  above by their shares of the tile's k (model.h,
                                  model_fill_share); 0: that factor throughout */
    double stream_eff;         /* a tiled kernel's sliced runs where its operands' bytes
                                  bind: the measured time over the model's time for the
                                  bytes (a tile streams them at its own rate, not the
                                  copy's); 0: the copy's rate */
};

struct model_rates {
    enum rates_source source;
    char measured_on[256];     /* the GPU the figures were measured on */
    char date[24];             /* when: "2026-11-22" or "2026-11-25T10:31:05Z" */
    int sm_count;              /* the GPU planned for */
    double copy_gbps;          /* its device-to-device copy, bytes read and written */
    double compute_scale, memory_scale;   /* RATES_SCALED: the table's figures times these */
    double seconds;            /* RATES_MEASURED: the calibration's time */
    struct rates_device device;           /* RATES_MEASURED, RATES_SCALED: the GPU */
    size_t count;
    struct rate_entry e[RATES_MAX];
};

/* The rates the model uses now: the table until rates_use says otherwise. */
const struct model_rates *rates_active(void);
void rates_use(const struct model_rates *r);

/* The built-in table, as it is or scaled to device d. */
void rates_table(struct model_rates *out);
void rates_scaled(const struct rates_device *d, struct model_rates *out);

/* The entry for a signature and kernel, or NULL. */
const struct rate_entry *rates_find(const struct model_rates *r, const char *type,
                                    const char *kernel);

/* A fingerprint of this build's kernel and rate tables (16 hex digits). */
const char *rates_fingerprint(void);

/* The file of d's measured rates into buf: 0, or -1 without a cache
 * directory (src/plan/tune_cache.h) or an unusable name. */
int rates_path(const struct rates_device *d, char *buf, size_t n);

enum rates_state {
    RATES_LOADED,              /* measured rates of this GPU, this build and driver */
    RATES_MISSING,             /* no file, or no cache directory */
    RATES_STALE,               /* another driver, build or format; older than
                                  RATES_STALE_DAYS; or unreadable */
};

/* d's measured rates from its file into *out, as of `now`: a state, and
 * the reason for RATES_STALE in why[0..n). */
enum rates_state rates_load(const struct rates_device *d, time_t now, struct model_rates *out,
                            char *why, size_t n);

/* Writes r (source RATES_MEASURED, device filled) as d's file: 0, or -1
 * with the reason in why[0..n). */
int rates_store(const struct model_rates *r, char *why, size_t n);

/* The file's text for r into buf (at least RATES_TEXT_MAX bytes); its
 * length. */
#define RATES_TEXT_MAX (512 + RATES_MAX * 160)
size_t rates_text(const struct model_rates *r, char *buf, size_t n);

/* A rates file's first three lines, of any format version. */
struct rates_head {
    int version;
    char name[256];            /* the device's name, blanks as '_' */
    int cc, sm_count, clock_mhz, driver;
    double mem_gbps;
    char fingerprint[32], date[24];
    double copy_gbps, seconds;
    size_t rates;              /* the rate lines after them */
};

/* *h from a file's text, and *body after the build line: 0, or -1 when
 * the three lines are not there. */
int rates_read_head(const char *text, struct rates_head *h, const char **body);

/* Parses a file's text for device d (the header, device and build lines
 * checked against d and this build): a state as rates_load. */
enum rates_state rates_parse(const char *text, const struct rates_device *d, time_t now,
                             struct model_rates *out, char *why, size_t n);

/* One line on where the rates came from, for `kernels --for` and the
 * reports. */
void rates_describe(const struct model_rates *r, char *buf, size_t n);
const char *rates_source_name(enum rates_source s);

#endif
