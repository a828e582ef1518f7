#include "stream.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "../core/error.h"
#include "report.h"

#define CHUNK_BYTES (8u << 20)

int stream_can_write(int fmt, enum gc_dtype dt, enum gc_dtype wanted)
{
    return fmt >= 0 && fmt < GC_FMT_COUNT && gc_formats[fmt].write_header && dt == wanted;
}

static int write_fd(int fd, const char *name, const unsigned char *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return gc_fail(GC_EXIT_OUTPUT, "%s: write error: %s", name,
                           w < 0 ? strerror(errno) : "no progress");
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Chunk i goes device -> staging[i % 2] on the stream, then out to the file
 * descriptor once its event fires, while chunk i + 1 is being copied. */
static int pump(struct gc_device *dev, const unsigned char *d, size_t bytes, int fd,
                const char *name, unsigned char *staging[2], cudaEvent_t done[2],
                double *d2h_ms, double *write_ms)
{
    size_t n_chunks = (bytes + CHUNK_BYTES - 1) / CHUNK_BYTES;
    int rc = 0;
    for (size_t i = 0; i <= n_chunks && !rc; i++) {
        if (i < n_chunks) {
            size_t off = i * CHUNK_BYTES;
            size_t len = bytes - off < CHUNK_BYTES ? bytes - off : CHUNK_BYTES;
            if ((rc = CUDA_CALL(cudaMemcpyAsync(staging[i % 2], d + off, len,
                                                cudaMemcpyDeviceToHost, dev->stream))) ||
                (rc = CUDA_CALL(cudaEventRecord(done[i % 2], dev->stream))))
                break;
        }
        if (i > 0) {
            size_t prev = i - 1, off = prev * CHUNK_BYTES;
            size_t len = bytes - off < CHUNK_BYTES ? bytes - off : CHUNK_BYTES;
            double t = now_ms();
            if ((rc = CUDA_CALL(cudaEventSynchronize(done[prev % 2]))))
                break;
            double t2 = now_ms();
            *d2h_ms += t2 - t;
            rc = write_fd(fd, name, staging[prev % 2], len);
            *write_ms += now_ms() - t2;
        }
    }
    return rc;
}

int stream_write_result(struct gc_output *out, int fmt, struct gc_device *dev,
                        const void *d, const struct gc_tensor *shape, double *d2h_ms,
                        double *write_ms)
{
    size_t bytes;
    if (!gc_tensor_bytes(shape, &bytes))
        return gc_fail(GC_EXIT_OUTPUT, "%s: result too large", out->name);
    unsigned char *staging[2] = { NULL, NULL };
    cudaEvent_t done[2] = { NULL, NULL };
    int rc;
    double t = now_ms();
    if ((rc = CUDA_CALL(cudaMallocHost((void **)&staging[0], CHUNK_BYTES))) ||
        (rc = CUDA_CALL(cudaMallocHost((void **)&staging[1], CHUNK_BYTES))) ||
        (rc = CUDA_CALL(cudaEventCreateWithFlags(&done[0], cudaEventDisableTiming))) ||
        (rc = CUDA_CALL(cudaEventCreateWithFlags(&done[1], cudaEventDisableTiming))) ||
        (rc = gc_formats[fmt].write_header(out->f, out->name, shape)))
        goto out;
    if (fflush(out->f) != 0) {
        rc = gc_fail(GC_EXIT_OUTPUT, "%s: write error: %s", out->name, strerror(errno));
        goto out;
    }
    *write_ms += now_ms() - t;
    rc = pump(dev, d, bytes, fileno(out->f), out->name, staging, done, d2h_ms, write_ms);
out:
    for (int i = 0; i < 2; i++) {
        if (done[i])
            cudaEventDestroy(done[i]);
        cudaFreeHost(staging[i]);
    }
    return rc;
}
