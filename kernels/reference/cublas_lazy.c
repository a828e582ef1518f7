/* cuBLAS, loaded on first use.
 *
 * Linking libcublas makes every start of the program load it and its
 * libcublasLt, about 120 ms even for `gemmcli --help`, although most runs
 * never call it (auto picks gemmcli's own kernels; cuBLAS runs only when
 * named, for --verify, and in bench).  So gemmcli defines the few cuBLAS
 * entry points it uses here, with the prototypes of cublas_api.h, and each
 * forwards to the real function, which the first call looks up with dlopen.
 *
 * The table of looked-up functions is the one piece of process-wide state:
 * like the dynamic linker's own, it is filled once (pthread_once) and only
 * read after that. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

#include <cublas_v2.h>

#include "core/error.h"

#define STR_(x) #x
#define STR(x) STR_(x)

struct cublas_api {
    void *lib;
    cublasStatus_t (*create)(cublasHandle_t *);
    cublasStatus_t (*destroy)(cublasHandle_t);
    cublasStatus_t (*set_stream)(cublasHandle_t, cudaStream_t);
    cublasStatus_t (*set_math_mode)(cublasHandle_t, cublasMath_t);
    const char *(*status_string)(cublasStatus_t);
    cublasStatus_t (*gemm_ex)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int,
                              int, const void *, const void *, cudaDataType, int, const void *,
                              cudaDataType, int, const void *, void *, cudaDataType, int,
                              cublasComputeType_t, cublasGemmAlgo_t);
    cublasStatus_t (*gemm_batched)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int,
                                   int, int, const void *, const void *, cudaDataType, int,
                                   long long, const void *, cudaDataType, int, long long,
                                   const void *, void *, cudaDataType, int, long long, int,
                                   cublasComputeType_t, cublasGemmAlgo_t);
    cublasStatus_t (*sgeam)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int,
                            const float *, const float *, int, const float *, const float *,
                            int, float *, int);
    cublasStatus_t (*dgeam)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int,
                            const double *, const double *, int, const double *,
                            const double *, int, double *, int);
};

static struct cublas_api api;
static pthread_once_t api_once = PTHREAD_ONCE_INIT;

static void *symbol(void *lib, const char *name, int *missing)
{
    void *p = dlsym(lib, name);
    if (!p)
        *missing = 1;
    return p;
}

static void load_api(void)
{
    static const char *const names[] = {
        "libcublas.so." STR(CUBLAS_VER_MAJOR),
#ifdef GC_CUDA_LIB_DIR
        GC_CUDA_LIB_DIR "/libcublas.so." STR(CUBLAS_VER_MAJOR),
#endif
    };
    void *lib = NULL;
    for (size_t i = 0; i < sizeof names / sizeof names[0] && !lib; i++)
        lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        gc_fail(GC_EXIT_GPU, "cannot load cuBLAS: %s", dlerror());
        return;
    }
    int missing = 0;
    struct cublas_api a = { .lib = lib };
    *(void **)&a.create = symbol(lib, "cublasCreate_v2", &missing);
    *(void **)&a.destroy = symbol(lib, "cublasDestroy_v2", &missing);
    *(void **)&a.set_stream = symbol(lib, "cublasSetStream_v2", &missing);
    *(void **)&a.set_math_mode = symbol(lib, "cublasSetMathMode", &missing);
    *(void **)&a.status_string = symbol(lib, "cublasGetStatusString", &missing);
    *(void **)&a.gemm_ex = symbol(lib, "cublasGemmEx", &missing);
    *(void **)&a.gemm_batched = symbol(lib, "cublasGemmStridedBatchedEx", &missing);
    *(void **)&a.sgeam = symbol(lib, "cublasSgeam", &missing);
    *(void **)&a.dgeam = symbol(lib, "cublasDgeam", &missing);
    if (missing) {
        gc_fail(GC_EXIT_GPU, "cannot load cuBLAS: %s lacks a function gemmcli needs", names[0]);
        dlclose(lib);
        return;
    }
    api = a;
}

/* 1 when the library is there; every entry point checks first. */
static int loaded(void)
{
    pthread_once(&api_once, load_api);
    return api.lib != NULL;
}

cublasStatus_t CUBLASWINAPI cublasCreate_v2(cublasHandle_t *handle)
{
    return loaded() ? api.create(handle) : CUBLAS_STATUS_NOT_INITIALIZED;
}

cublasStatus_t CUBLASWINAPI cublasDestroy_v2(cublasHandle_t handle)
{
    return loaded() ? api.destroy(handle) : CUBLAS_STATUS_NOT_INITIALIZED;
}

cublasStatus_t CUBLASWINAPI cublasSetStream_v2(cublasHandle_t handle, cudaStream_t stream)
{
    return loaded() ? api.set_stream(handle, stream) : CUBLAS_STATUS_NOT_INITIALIZED;
}

cublasStatus_t CUBLASWINAPI cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode)
{
    return loaded() ? api.set_math_mode(handle, mode) : CUBLAS_STATUS_NOT_INITIALIZED;
}

const char *CUBLASWINAPI cublasGetStatusString(cublasStatus_t status)
{
    return loaded() ? api.status_string(status) : "cuBLAS could not be loaded";
}

cublasStatus_t CUBLASWINAPI cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa,
                                         cublasOperation_t transb, int m, int n, int k,
                                         const void *alpha, const void *a, cudaDataType atype,
                                         int lda, const void *b, cudaDataType btype, int ldb,
                                         const void *beta, void *c, cudaDataType ctype, int ldc,
                                         cublasComputeType_t compute, cublasGemmAlgo_t algo)
{
    if (!loaded())
        return CUBLAS_STATUS_NOT_INITIALIZED;
    return api.gemm_ex(handle, transa, transb, m, n, k, alpha, a, atype, lda, b, btype, ldb,
                       beta, c, ctype, ldc, compute, algo);
}

cublasStatus_t CUBLASWINAPI cublasGemmStridedBatchedEx(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n,
    int k, const void *alpha, const void *a, cudaDataType atype, int lda, long long stride_a,
    const void *b, cudaDataType btype, int ldb, long long stride_b, const void *beta, void *c,
    cudaDataType ctype, int ldc, long long stride_c, int batch, cublasComputeType_t compute,
    cublasGemmAlgo_t algo)
{
    if (!loaded())
        return CUBLAS_STATUS_NOT_INITIALIZED;
    return api.gemm_batched(handle, transa, transb, m, n, k, alpha, a, atype, lda, stride_a, b,
                            btype, ldb, stride_b, beta, c, ctype, ldc, stride_c, batch, compute,
                            algo);
}

cublasStatus_t CUBLASWINAPI cublasSgeam(cublasHandle_t handle, cublasOperation_t transa,
                                        cublasOperation_t transb, int m, int n,
                                        const float *alpha, const float *a, int lda,
                                        const float *beta, const float *b, int ldb, float *c,
                                        int ldc)
{
    if (!loaded())
        return CUBLAS_STATUS_NOT_INITIALIZED;
    return api.sgeam(handle, transa, transb, m, n, alpha, a, lda, beta, b, ldb, c, ldc);
}

cublasStatus_t CUBLASWINAPI cublasDgeam(cublasHandle_t handle, cublasOperation_t transa,
                                        cublasOperation_t transb, int m, int n,
                                        const double *alpha, const double *a, int lda,
                                        const double *beta, const double *b, int ldb,
                                        double *c, int ldc)
{
    if (!loaded())
        return CUBLAS_STATUS_NOT_INITIALIZED;
    return api.dgeam(handle, transa, transb, m, n, alpha, a, lda, beta, b, ldb, c, ldc);
}
