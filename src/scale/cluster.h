/* Running as one of several processes started by an MPI launcher
 * (mpirun, mpiexec, srun): telling that it is so, loading gemmcli-mpi.so
 * (src/scale/cluster_ops.h) and the collective steps built on it.  Outside a
 * launcher none of this loads anything. */
#ifndef GC_CLUSTER_H
#define GC_CLUSTER_H

#include <stddef.h>
#include <stdint.h>

#include "core/error.h"
#include "src/scale/cluster_ops.h"

struct gc_cluster {
    int rank, size;           /* this process's rank, of size */
    int local_rank;           /* among the ranks on this host */
    int local_size;           /* the ranks on this host */
    const struct gc_cluster_ops *ops;
    void *lib;
};

/* The number of processes the launcher started, from the environment it
 * gives them (Open MPI, MPICH and its kin, Slurm); 1 outside a launcher. */
int cluster_launched_size(void);

/* This process's rank, from the same environment, before MPI starts (for
 * saying things once, from rank 0); 0 outside a launcher. */
int cluster_launched_rank(void);

/* 0 when the launcher started the ranks from several command lines
 * (Open MPI's `mpirun -np 1 A : -np 1 B`), which may differ; else 1, also
 * where the launcher does not tell: every rank then has rank 0's options
 * and finds the same faults in them. */
int cluster_one_command_line(void);

/* A rank other than 0 that leaves a fault every rank finds to rank 0 to
 * say, before any rank has joined: it waits for the launcher to end the
 * job, which Open MPI does as soon as rank 0 exits with its status, so
 * that this rank's own early exit does not end rank 0 before it has
 * spoken.  A launcher that ends nothing gets the fault from this rank too,
 * from `unsaid` (gc_capture), after CLUSTER_DEFER_S seconds; then it
 * returns. */
#define CLUSTER_DEFER_S 5
void cluster_defer_to_rank_0(const struct gc_capture *unsaid);

/* Loads gemmcli-mpi.so ($GEMMCLI_MPI_LIBRARY, else beside the executable,
 * else ../lib/gemmcli/ from it) and joins the job: 0, or GC_EXIT_USAGE
 * after saying why (no library: gemmcli was built without MPI). */
int cluster_join(struct gc_cluster *c);

/* Leaves the job (MPI_Finalize) and unloads nothing: the library stays
 * until the process ends. */
void cluster_leave(struct gc_cluster *c);

/* The collectives and messages, reporting an MPI failure as GC_EXIT_OUTPUT. */
int cluster_allgather(struct gc_cluster *c, const int64_t *mine, int n, int64_t *all);
int cluster_bcast(struct gc_cluster *c, void *buf, size_t bytes, int root);
int cluster_send(struct gc_cluster *c, const void *buf, size_t bytes, int to);
int cluster_recv(struct gc_cluster *c, void *buf, size_t bytes, int from);

/* Groups of ranks split off the job (a grid's rows, its columns): the
 * ranks that give the same color, ranked within the group by key, into
 * *group (NULL when it failed); collective over all ranks. */
int cluster_split(struct gc_cluster *c, int color, int key, void **group);

/* cluster_bcast within a group, from its rank `root`; collective over it. */
int cluster_group_bcast(struct gc_cluster *c, void *group, void *buf, size_t bytes, int root);

/* Releases *group and clears it (NULL: nothing). */
void cluster_group_free(struct gc_cluster *c, void **group);

#endif
