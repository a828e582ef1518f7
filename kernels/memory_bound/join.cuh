/* The sum of K's slices inside the launch that computed them (gemv.cuh,
 * thin.cuh).  Each slice writes its partial sums to its own slab; the
 * blocks (or warps) that cover one region of C take a ticket there when
 * their slab is written, and the one that draws the last ticket adds the
 * region's slabs and writes C, with alpha and beta.  Whichever arrives
 * last, the slabs are added in one fixed order, so the result does not
 * depend on scheduling; the last arrival puts its ticket back to 0, so a
 * kept set of tickets (slab_space.h) serves every launch on its stream.
 *
 * Ordering: every writer fences its slab stores before it takes its
 * ticket, and the last arrival fences again before it reads; it reads
 * the slabs at L2 (ld.global.cg), past an L1 that never saw the other
 * SMs' stores.  As threadFenceReduction (CUDA samples) and the serial
 * split-K and stream-K fix-ups of CUTLASS do.
 *
 * gemmcli's own.  Run through the stages that use it (a few rows over a
 * long K), e.g.:
 *   gemmcli mul a.npy b.npy -o c.npy --kernel thin --verify --repeat 20 */
#ifndef GC_KERNELS_JOIN_CUH
#define GC_KERNELS_JOIN_CUH

enum {
    JOIN_MOST_THREADS = 256,
    JOIN_LOADS = 16,            /* values a joining thread reads at most, a level */
    JOIN_FLIGHT = 4             /* of them issued at once */
};

/* part[y * lanes + x] for y < groups (a power of two) added into
 * part[x] in a fixed tree, halving the groups a level; every thread of
 * the block calls it, after a __syncthreads that follows its own store,
 * and finds part[x] complete on return. */
template <typename T>
static __device__ __forceinline__ void join_tree(T *part, int lanes, int groups, int y)
{
    for (int h = groups / 2; h > 0; h /= 2) {
        if (y < h)
            part[threadIdx.x] += part[threadIdx.x + h * lanes];
        __syncthreads();
    }
}

/* Whether this block, one of `arrivals` over a region, is the last there
 * (the same answer in every thread).  Every thread of the block calls it,
 * after its own slab stores. */
static __device__ __forceinline__ bool join_last_block(unsigned *ticket, unsigned arrivals)
{
    __shared__ bool last;
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0) {
        last = atomicAdd(ticket, 1u) == arrivals - 1;
        if (last)
            *ticket = 0;
    }
    __syncthreads();
    if (last)
        __threadfence();
    return last;
}

/* The same for a warp (every lane calls it, after lane 0's stores). */
static __device__ __forceinline__ bool join_last_warp(unsigned *ticket, unsigned arrivals)
{
    const int lane = threadIdx.x % 32;
    bool last = false;
    __threadfence();
    if (lane == 0) {
        last = atomicAdd(ticket, 1u) == arrivals - 1;
        if (last)
            *ticket = 0;
    }
    last = __shfl_sync(0xffffffffu, last, 0);
    if (last)
        __threadfence();
    return last;
}

/* The sum of at[s * stride] over the slices s = first, first + step, ...
 * below `slices`, in order, JOIN_FLIGHT loads issued before their adds. */
template <typename T>
static __device__ __forceinline__ T join_strided(const T *at, long long stride, int first,
                                                 int step, int slices)
{
    T sum = T(0);
    int s = first;
    for (; s + (JOIN_FLIGHT - 1) * step < slices; s += JOIN_FLIGHT * step) {
        T v[JOIN_FLIGHT];
#pragma unroll
        for (int u = 0; u < JOIN_FLIGHT; u++)
            v[u] = __ldcg(at + (long long)(s + u * step) * stride);
#pragma unroll
        for (int u = 0; u < JOIN_FLIGHT; u++)
            sum += v[u];
    }
    for (; s < slices; s += step)
        sum += __ldcg(at + (long long)s * stride);
    return sum;
}

/* out = alpha sum + beta out (out not read when beta is 0). */
template <typename T>
static __device__ __forceinline__ void join_put(T *out, T alpha, T beta, T sum)
{
    *out = beta != T(0) ? alpha * sum + beta * *out : alpha * sum;
}

/* One result from a warp: the slices of one slab element (slice s at
 * from[s * stride]), lane l adding slices l, l + 32, ..., the lanes met
 * in a fixed tree of shuffles; lane 0 writes `into` (the plain sum) or,
 * where that is NULL, out (alpha sum + beta out). */
template <typename T>
static __device__ __forceinline__ void join_warp(const T *from, long long stride, int slices,
                                                 T *into, T *out, T alpha, T beta)
{
    const int lane = threadIdx.x % 32;
    T sum = join_strided(from, stride, lane, 32, slices);
#pragma unroll
    for (int off = 16; off > 0; off /= 2)
        sum += __shfl_xor_sync(0xffffffffu, sum, off);
    if (lane == 0) {
        if (into)
            *into = sum;
        else
            join_put(out, alpha, beta, sum);
    }
}

/* A region's `items` results from the block: item i is slab element
 * off = where(i, &out) (slice s at from[off + s * stride]), and goes to
 * into[off] (the plain sum) or, where `into` is NULL, to *out.  A thread
 * an item, adding its slices in order; where the items are fewer than
 * half the threads, `groups` groups of slices a power of two (each item's
 * group y adds slices y, y + groups, ... in order) that meet in a fixed
 * tree in shared memory.  Every thread calls it (blockDim.x <=
 * JOIN_MOST_THREADS). */
template <typename T, typename Where>
static __device__ void join_block(const T *from, long long stride, int slices, int items,
                                  T *into, T alpha, T beta, Where where)
{
    const int threads = blockDim.x;
    int groups = 1;
    while (groups * 2 <= slices && (long long)items * groups * 2 <= threads)
        groups *= 2;
    if (groups == 1) {
        /* (a thread an item: no tree) */
        for (int i = threadIdx.x; i < items; i += threads) {
            T *out = nullptr;
            long long off = where(i, &out);
            T sum = join_strided(from + off, stride, 0, 1, slices);
            if (into)
                into[off] = sum;
            else
                join_put(out, alpha, beta, sum);
        }
        return;
    }
    __shared__ T part[JOIN_MOST_THREADS];
    const int lanes = threads / groups;
    const int x = threadIdx.x % lanes, y = threadIdx.x / lanes;
    const int i = x;   /* items <= lanes: one pass */
    T *out = nullptr;
    long long off = 0;
    T sum = T(0);
    if (i < items && y < groups) {
        off = where(i, &out);
        sum = join_strided(from + off, stride, y, groups, slices);
    }
    if (y < groups)
        part[threadIdx.x] = sum;
    __syncthreads();
    /* (join_tree's loop, written out: called here, it moved the thin and
     * gemv kernels' schedules around this join, in SASS) */
    for (int h = groups / 2; h > 0; h /= 2) {
        if (y < h)
            part[threadIdx.x] += part[threadIdx.x + h * lanes];
        __syncthreads();
    }
    if (y == 0 && i < items) {
        if (into)
            into[off] = part[x];
        else
            join_put(out, alpha, beta, part[x]);
    }
}

/* The join of a launch (join_plan_of): `group` slices to a ticket, and
 * where there are several groups, a ticket over them. */
template <typename T, typename Where>
static __device__ void join_slices(unsigned *tickets, long long region, long long regions,
                                   int slice, int slices, int group, T *slabs, long long stride,
                                   int items, T alpha, T beta, Where where)
{
    const int ng = (slices + group - 1) / group, g = slice / group, first = g * group;
    if (ng == 1) {
        if (join_last_block(tickets + region, (unsigned)slices))
            join_block<T>(slabs, stride, slices, items, nullptr, alpha, beta, where);
        return;
    }
    const int count = min(group, slices - first);
    T *own = slabs + first * stride;
    if (!join_last_block(tickets + regions + region * ng + g, (unsigned)count))
        return;
    join_block<T>(own, stride, count, items, own, T(1), T(0), where);
    if (join_last_block(tickets + region, (unsigned)ng))
        join_block<T>(slabs, stride * group, ng, items, nullptr, alpha, beta, where);
}

/* The same for one result a warp: slice `slice` of slab element `at`
 * (slice s at slabs[at + s * stride]), into *out. */
template <typename T>
static __device__ void join_slices_warp(unsigned *tickets, long long region, long long regions,
                                        int slice, int slices, int group, T *slabs,
                                        long long stride, long long at, T *out, T alpha, T beta)
{
    const int ng = (slices + group - 1) / group, g = slice / group, first = g * group;
    if (ng == 1) {
        if (join_last_warp(tickets + region, (unsigned)slices))
            join_warp<T>(slabs + at, stride, slices, nullptr, out, alpha, beta);
        return;
    }
    const int count = min(group, slices - first);
    T *own = slabs + first * stride + at;
    if (!join_last_warp(tickets + regions + region * ng + g, (unsigned)count))
        return;
    join_warp<T>(own, stride, count, own, nullptr, T(1), T(0));
    if (join_last_warp(tickets + region, (unsigned)ng))
        join_warp<T>(slabs + at, stride * group, ng, nullptr, out, alpha, beta);
}

/* ---- the host ---- */

/* How a launch joins its slices: `group` slices to a ticket (0: it does
 * not; a second launch adds them), `tickets` in all. */
struct join_plan {
    int group;
    long long tickets;
};

/* The plan for `regions` regions of `items` results each, cut into
 * `slices`, joined by `threads` threads (32 for a warp's one result).
 * One ticket a region where its joiner reads at most JOIN_LOADS values a
 * thread; else groups of about sqrt(slices) slices, each joined by its
 * last block, and the groups' sums by the last of those; a second launch
 * where that still reads more, or where the tickets would be more than
 * the space holds. */
static inline struct join_plan join_plan_of(long long regions, long long slices, long long items,
                                            int threads, long long most_tickets)
{
    struct join_plan jp = { 0, 0 };
    if (slices < 2 || regions < 1)
        return jp;
    const long long budget = (long long)JOIN_LOADS * threads;
    long long group = slices;
    if (items * slices > budget) {
        /* Two levels only where a thread joins one item: with more, its
         * items' loads wait on each other's stores (the first level adds
         * in place), and a second launch was faster (README,
         * "Measurements behind the stages"). */
        if (items > threads)
            return jp;
        group = 1;
        while (group * group < slices)
            group++;
    }
    long long ng = (slices + group - 1) / group;
    if ((group > ng ? group : ng) * items > budget)
        return jp;
    long long tickets = regions * (ng > 1 ? 1 + ng : 1);
    if (tickets > most_tickets)
        return jp;
    jp.group = (int)group;
    jp.tickets = tickets;
    return jp;
}

#endif
