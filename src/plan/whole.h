/* The whole job as a model sees it: reading the operands, starting the
 * GPUs and page-locking, the product, copying C out and writing the file,
 * what overlaps and what does not; for --dry-run, beside the kernel's and
 * the tiles' plan.  Rates are the H200 host's (two GPUs, 32 cores, the
 * page cache of an ext4 disk), measured 2026-11-28 with 32768^2 float32
 * .npy operands (README: Beyond one GPU's memory); another host's differ. */
#ifndef GC_WHOLE_H
#define GC_WHOLE_H

/* Reading the operands while each slot crosses to the GPU (in core): 8.6
 * GB in 0.64-0.68 s. */
#define WHOLE_READ_STREAM_BPS 13.0e9
/* Reading them into host memory (tiles): 8.6 GB in 0.29-0.33 s. */
#define WHOLE_READ_HOST_BPS 28.0e9
/* Page-locking them in place, for one GPU: 8.6 GB in 0.21-0.24 s; each
 * further GPU maps the pages too, 0.8 of that again (two: 0.39-0.41 s). */
#define WHOLE_PIN_BPS 38.0e9
#define WHOLE_PIN_MORE 0.8
/* Copying C out of one GPU, page-locked: 4.3 GB in 0.085 s. */
#define WHOLE_D2H_BPS 50.0e9
/* Writing the result alone (4 threads): 4.3 GB in 1.14-1.22 s. */
#define WHOLE_WRITE_BPS 3.6e9
/* With the tiles landing in the file's mapped pages, what is left of
 * writing after them (the last band, the unmapping): 4.3 GB's in
 * 0.08-0.11 s. */
#define WHOLE_WRITE_LEFT_BPS 45.0e9
/* Opening the tiles' GPUs (0.19-0.24 s), then taking their buffers and
 * slots within the tiles' phase (0.2 s beyond each GPU's own time). */
#define WHOLE_TILES_START_S 0.2
#define WHOLE_TILES_SETUP_S 0.2
/* The process's own start and end: 0.14-0.17 s. */
#define WHOLE_PROCESS_S 0.15

struct whole_job {
    double read, start, locking;   /* seconds before the product */
    double product;                /* the kernel, or the tiles' phase */
    double copy_out;               /* C to the host after it (in core) */
    double write;                  /* writing the file, beyond what overlapped */
    double total;                  /* all of it, the process's own time too */
};

/* One GPU, the product in its memory: the operands read as they cross,
 * `product_s` of kernel, C copied out, then written. */
void whole_in_core(double ab_bytes, double c_bytes, double product_s, struct whole_job *w);

/* Tiles on `gpus` GPUs: the operands read to the host and page-locked,
 * the GPUs opened, `tiles_s` of the tiles' own time (the plan's);
 * with `rows_out` each tile lands in the file's pages (tiles of whole
 * rows, the file mapped), else C is written after. */
void whole_tiles(double ab_bytes, double c_bytes, double tiles_s, int gpus, int rows_out,
                 struct whole_job *w);

#endif
