/* gemmcli-mpi.so: MPI for gemmcli, loaded by src/scale/cluster.c only when an
 * MPI launcher started several gemmcli processes.  Built by `make` with
 * mpicc where MPI is installed; the rest of gemmcli never includes mpi.h.
 * MPI_COMM_WORLD and the groups split from it; every call from the main
 * thread (MPI_THREAD_FUNNELED: a product may run on other threads while
 * the main thread moves the next panel). */
#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "src/scale/cluster_ops.h"

/* The most bytes one MPI call moves (counts are ints). */
#define CHUNK ((size_t)1 << 30)

static int init(int *rank, int *size, int *local_rank, int *local_size)
{
    int provided;
    int rc = MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided);
    if (rc != MPI_SUCCESS)
        return rc;
    /* Errors come back as codes, for gemmcli to report and exit cleanly;
     * the groups split off later inherit this. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm host;
    if ((rc = MPI_Comm_rank(MPI_COMM_WORLD, rank)) != MPI_SUCCESS ||
        (rc = MPI_Comm_size(MPI_COMM_WORLD, size)) != MPI_SUCCESS ||
        (rc = MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, *rank, MPI_INFO_NULL,
                                  &host)) != MPI_SUCCESS)
        return rc;
    if ((rc = MPI_Comm_rank(host, local_rank)) == MPI_SUCCESS)
        rc = MPI_Comm_size(host, local_size);
    MPI_Comm_free(&host);
    return rc;
}

static int allgather_i64(const int64_t *mine, int n, int64_t *all)
{
    return MPI_Allgather(mine, n, MPI_INT64_T, all, n, MPI_INT64_T, MPI_COMM_WORLD);
}

/* A group is its communicator, held on the heap for gemmcli's handle. */
static MPI_Comm comm_of(void *group)
{
    return group ? *(MPI_Comm *)group : MPI_COMM_WORLD;
}

static int split(int color, int key, void **group)
{
    MPI_Comm comm;
    *group = NULL;
    int rc = MPI_Comm_split(MPI_COMM_WORLD, color, key, &comm);
    if (rc != MPI_SUCCESS)
        return rc;
    MPI_Comm *held = malloc(sizeof *held);
    if (!held) {
        MPI_Comm_free(&comm);
        return MPI_ERR_NO_MEM;
    }
    *held = comm;
    *group = held;
    return MPI_SUCCESS;
}

static int group_free(void *group)
{
    if (!group)
        return MPI_SUCCESS;
    int rc = MPI_Comm_free(group);
    free(group);
    return rc;
}

static int bcast(void *group, void *buf, size_t bytes, int root)
{
    for (size_t off = 0; off < bytes; off += CHUNK) {
        size_t n = bytes - off < CHUNK ? bytes - off : CHUNK;
        int rc = MPI_Bcast((char *)buf + off, (int)n, MPI_BYTE, root, comm_of(group));
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}

static int send(const void *buf, size_t bytes, int to)
{
    for (size_t off = 0; off < bytes; off += CHUNK) {
        size_t n = bytes - off < CHUNK ? bytes - off : CHUNK;
        int rc = MPI_Send((const char *)buf + off, (int)n, MPI_BYTE, to, 0, MPI_COMM_WORLD);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}

static int recv(void *buf, size_t bytes, int from)
{
    for (size_t off = 0; off < bytes; off += CHUNK) {
        size_t n = bytes - off < CHUNK ? bytes - off : CHUNK;
        int rc = MPI_Recv((char *)buf + off, (int)n, MPI_BYTE, from, 0, MPI_COMM_WORLD,
                          MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}

static int finalize(void)
{
    return MPI_Finalize();
}

static const char *error_text(int code)
{
    static char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(code, text, &len) != MPI_SUCCESS)
        snprintf(text, sizeof text, "MPI error %d", code);
    return text;
}

static const struct gc_cluster_ops ops = {
    .version = GC_CLUSTER_OPS_VERSION,
    .init = init,
    .allgather_i64 = allgather_i64,
    .bcast = bcast,
    .split = split,
    .group_free = group_free,
    .send = send,
    .recv = recv,
    .finalize = finalize,
    .error_text = error_text,
};

const struct gc_cluster_ops *gemmcli_cluster_ops(void)
{
    return &ops;
}
