#include "src/scale/cluster.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/error.h"

/* The first of `vars` set to a number in [0, INT_MAX), else -1. */
static int launcher_number(const char *const *vars, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const char *v = getenv(vars[i]);
        char *end;
        long x = v && *v ? strtol(v, &end, 10) : -1;
        if (v && *v && !*end && x >= 0 && x < INT_MAX)
            return (int)x;
    }
    return -1;
}

/* Open MPI; MPICH, Intel MPI and Slurm's PMI; MVAPICH. */
int cluster_launched_size(void)
{
    static const char *const vars[] = { "OMPI_COMM_WORLD_SIZE", "PMI_SIZE",
                                        "MV2_COMM_WORLD_SIZE" };
    int n = launcher_number(vars, sizeof vars / sizeof vars[0]);
    return n > 0 ? n : 1;
}

int cluster_launched_rank(void)
{
    static const char *const vars[] = { "OMPI_COMM_WORLD_RANK", "PMI_RANK",
                                        "MV2_COMM_WORLD_RANK" };
    int r = launcher_number(vars, sizeof vars / sizeof vars[0]);
    return r > 0 ? r : 0;
}

int cluster_one_command_line(void)
{
    static const char *const vars[] = { "OMPI_NUM_APP_CTX" };
    return launcher_number(vars, 1) <= 1;
}

void cluster_defer_to_rank_0(const struct gc_capture *unsaid)
{
    struct timespec left = { CLUSTER_DEFER_S, 0 };
    while (nanosleep(&left, &left) != 0 && errno == EINTR)
        ;
    if (unsaid)
        gc_capture_emit(unsaid);
}

/* dlopen one candidate; *why keeps the first failure's text. */
static void *try_open(const char *path, char *why, size_t n)
{
    void *lib = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
    if (!lib && !why[0])
        snprintf(why, n, "%s", dlerror());
    return lib;
}

static void *open_library(char *tried, size_t n)
{
    char why[512] = "";
    const char *env = getenv("GEMMCLI_MPI_LIBRARY");
    if (env && *env) {
        void *lib = try_open(env, why, sizeof why);
        if (!lib)
            snprintf(tried, n, "%s", why);
        return lib;
    }
    char exe[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len <= 0) {
        snprintf(tried, n, "cannot find gemmcli's own path");
        return NULL;
    }
    exe[len] = 0;
    char *slash = strrchr(exe, '/');
    if (slash)
        *slash = 0;
    static const char *const places[] = { "%s/gemmcli-mpi.so", "%s/../lib/gemmcli/gemmcli-mpi.so" };
    void *lib = NULL;
    for (size_t i = 0; i < sizeof places / sizeof places[0] && !lib; i++) {
        char path[PATH_MAX + 64];
        snprintf(path, sizeof path, places[i], exe);
        if (access(path, F_OK) == 0)
            lib = try_open(path, why, sizeof why);
    }
    if (!lib)
        snprintf(tried, n, "%s", why[0] ? why : "no gemmcli-mpi.so beside gemmcli or in "
                 "../lib/gemmcli/ (gemmcli was built without MPI)");
    return lib;
}

int cluster_join(struct gc_cluster *c)
{
    memset(c, 0, sizeof *c);
    char why[600];
    int size = cluster_launched_size();
    c->lib = open_library(why, sizeof why);
    if (!c->lib)
        return gc_fail(GC_EXIT_USAGE, "started by an MPI launcher as one of %d processes, but "
                       "cannot load MPI: %s; run gemmcli as one process, or build it where "
                       "mpicc is found", size, why);
    gc_cluster_ops_fn get = (gc_cluster_ops_fn)dlsym(c->lib, GC_CLUSTER_OPS_SYMBOL);
    c->ops = get ? get() : NULL;
    if (!c->ops || c->ops->version != GC_CLUSTER_OPS_VERSION)
        return gc_fail(GC_EXIT_USAGE, "gemmcli-mpi.so is not this gemmcli's (rebuild both with "
                       "make)");
    int rc = c->ops->init(&c->rank, &c->size, &c->local_rank, &c->local_size);
    if (rc) {
        gc_fail(GC_EXIT_USAGE, "MPI_Init failed: %s", c->ops->error_text(rc));
        c->ops = NULL;
        return GC_EXIT_USAGE;
    }
    return 0;
}

void cluster_leave(struct gc_cluster *c)
{
    if (c->ops)
        c->ops->finalize();
    c->ops = NULL;
}

static int mpi_status(struct gc_cluster *c, int rc, const char *what)
{
    if (!rc)
        return 0;
    /* Messages already name the rank (gc_error_origin). */
    return gc_fail(GC_EXIT_OUTPUT, "MPI %s failed: %s", what, c->ops->error_text(rc));
}

int cluster_allgather(struct gc_cluster *c, const int64_t *mine, int n, int64_t *all)
{
    return mpi_status(c, c->ops->allgather_i64(mine, n, all), "allgather");
}

int cluster_bcast(struct gc_cluster *c, void *buf, size_t bytes, int root)
{
    return cluster_group_bcast(c, NULL, buf, bytes, root);
}

int cluster_group_bcast(struct gc_cluster *c, void *group, void *buf, size_t bytes, int root)
{
    return mpi_status(c, c->ops->bcast(group, buf, bytes, root), "broadcast");
}

int cluster_split(struct gc_cluster *c, int color, int key, void **group)
{
    return mpi_status(c, c->ops->split(color, key, group), "communicator split");
}

void cluster_group_free(struct gc_cluster *c, void **group)
{
    if (*group)
        c->ops->group_free(*group);
    *group = NULL;
}

int cluster_send(struct gc_cluster *c, const void *buf, size_t bytes, int to)
{
    return mpi_status(c, c->ops->send(buf, bytes, to), "send");
}

int cluster_recv(struct gc_cluster *c, void *buf, size_t bytes, int from)
{
    return mpi_status(c, c->ops->recv(buf, bytes, from), "receive");
}
