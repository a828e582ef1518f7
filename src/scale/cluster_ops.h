/* The few MPI operations gemmcli uses, as a table of functions that
 * src/scale/mpi/gemmcli_mpi.c (built with mpicc into gemmcli-mpi.so) fills in.
 * The binary itself never links MPI: src/scale/cluster.c loads the library only
 * when an MPI launcher started more than one process, so that a plain run
 * starts as fast as ever and gemmcli builds where MPI is absent.
 *
 * Every function is collective over all ranks unless it says otherwise,
 * returns 0 or an MPI error code, and takes sizes in bytes (split into
 * messages of at most INT_MAX bytes inside). */
#ifndef GC_CLUSTER_OPS_H
#define GC_CLUSTER_OPS_H

#include <stddef.h>
#include <stdint.h>

/* Bumped when the table changes, so that a stale library is refused. */
#define GC_CLUSTER_OPS_VERSION 2

struct gc_cluster_ops {
    int version;
    /* MPI_Init_thread (MPI calls from the main thread only); this
     * process's rank, the number of ranks, and its rank among the ranks
     * of its own host and their number. */
    int (*init)(int *rank, int *size, int *local_rank, int *local_size);
    /* all[r * n + i] = rank r's mine[i]. */
    int (*allgather_i64)(const int64_t *mine, int n, int64_t *all);
    /* bytes at buf from rank `root` of `group` to each of its ranks,
     * collective over the group; group NULL: every rank. */
    int (*bcast)(void *group, void *buf, size_t bytes, int root);
    /* The ranks that give the same color, ranked by key, as a group of
     * their own (MPI_Comm_split) in *group; collective over all ranks. */
    int (*split)(int color, int key, void **group);
    /* Releases a group (NULL: nothing); collective over it. */
    int (*group_free)(void *group);
    /* Point to point (not collective). */
    int (*send)(const void *buf, size_t bytes, int to);
    int (*recv)(void *buf, size_t bytes, int from);
    /* MPI_Finalize. */
    int (*finalize)(void);
    /* The library's text for an MPI error code. */
    const char *(*error_text)(int code);
};

/* The one symbol gemmcli-mpi.so exports. */
typedef const struct gc_cluster_ops *(*gc_cluster_ops_fn)(void);
#define GC_CLUSTER_OPS_SYMBOL "gemmcli_cluster_ops"

#endif
