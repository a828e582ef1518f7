/* gemmcli-mpi.so: MPI for gemmcli, loaded by src/cluster.c only when an
 * MPI launcher started several gemmcli processes.  Built by `make` with
 * mpicc where MPI is installed; the rest of gemmcli never includes mpi.h.
 * One communicator (MPI_COMM_WORLD), calls from one thread. */
#include <limits.h>
#include <mpi.h>
#include <stdio.h>

#include "../cluster_ops.h"

/* The most bytes one MPI call moves (counts are ints). */
#define CHUNK ((size_t)1 << 30)

static int init(int *rank, int *size, int *local_rank)
{
    int rc = MPI_Init(NULL, NULL);
    if (rc != MPI_SUCCESS)
        return rc;
    /* Errors come back as codes, for gemmcli to report and exit cleanly. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm host;
    if ((rc = MPI_Comm_rank(MPI_COMM_WORLD, rank)) != MPI_SUCCESS ||
        (rc = MPI_Comm_size(MPI_COMM_WORLD, size)) != MPI_SUCCESS ||
        (rc = MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, *rank, MPI_INFO_NULL,
                                  &host)) != MPI_SUCCESS)
        return rc;
    rc = MPI_Comm_rank(host, local_rank);
    MPI_Comm_free(&host);
    return rc;
}

static int allgather_i64(const int64_t *mine, int n, int64_t *all)
{
    return MPI_Allgather(mine, n, MPI_INT64_T, all, n, MPI_INT64_T, MPI_COMM_WORLD);
}

static int bcast(void *buf, size_t bytes, int root)
{
    for (size_t off = 0; off < bytes; off += CHUNK) {
        size_t n = bytes - off < CHUNK ? bytes - off : CHUNK;
        int rc = MPI_Bcast((char *)buf + off, (int)n, MPI_BYTE, root, MPI_COMM_WORLD);
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
    GC_CLUSTER_OPS_VERSION, init, allgather_i64, bcast, send, recv, finalize, error_text,
};

const struct gc_cluster_ops *gemmcli_cluster_ops(void)
{
    return &ops;
}
