# Test targets, included from the top Makefile's test / check-gpu / fuzz.
# Run from the repository root.

CUDA_HOME ?= /usr/local/cuda
ARCH      ?= 90
NVCC      ?= $(CUDA_HOME)/bin/nvcc
B         := build/tests
FMT_SRC   := $(wildcard core/*.c) $(wildcard formats/*.c)
HOST_CFLAGS := -std=c11 -O1 -g -Wall -Wextra -pthread -D_GNU_SOURCE -I. -I$(CUDA_HOME)/include
SAN       := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
LIBS      := -ldeflate -lz -lm -lpthread -ldl
# The CUDA objects the top Makefile built; host sources are recompiled here.
CU_OBJ    := $(patsubst %.cu,build/%.o,$(wildcard kernels/*.cu kernels/*/*.cu))
# The host sources of the binary and of the kernel tests: every folder.
SRC_ALL   := $(wildcard src/*/*.c)
KERNEL_C  := $(wildcard kernels/*.c kernels/*/*.c)

.PHONY: test check-gpu check-gpu-full fuzz bench-decimal bench-scale

$(B)/test_formats: tests/test_formats.c $(FMT_SRC) $(wildcard formats/*.h core/*.h)
	@mkdir -p $(B)
	$(CC) $(HOST_CFLAGS) -o $@ tests/test_formats.c $(FMT_SRC) $(LIBS)

$(B)/test_formats_san: tests/test_formats.c $(FMT_SRC) $(wildcard formats/*.h core/*.h)
	@mkdir -p $(B)
	$(CC) $(HOST_CFLAGS) $(SAN) -o $@ tests/test_formats.c $(FMT_SRC) $(LIBS)

# bench's pictures from made-up data, under ASan and UBSan.
$(B)/test_plot: tests/test_plot.c src/bench/plot.c src/bench/plot.h
	@mkdir -p $(B)
	$(CC) $(HOST_CFLAGS) $(SAN) -o $@ tests/test_plot.c src/bench/plot.c -lm
# The tune cache is host C alone: its tests build without CUDA.
$(B)/test_tune_cache: tests/test_tune_cache.c src/plan/tune_cache.c src/plan/tune_cache.h core/newfile.c core/newfile.h
	@mkdir -p $(B)
	$(CC) $(HOST_CFLAGS) -o $@ tests/test_tune_cache.c src/plan/tune_cache.c core/newfile.c -lm

$(B)/test_tiled: tests/check.h tests/test_tiled.c src/plan/tiled.c src/plan/tiled.h src/scale/dist_plan.c src/scale/dist_plan.h src/plan/whole.c src/plan/whole.h
	@mkdir -p $(B)
	$(CC) $(HOST_CFLAGS) $(SAN) -o $@ tests/test_tiled.c src/plan/tiled.c src/plan/whole.c src/scale/dist_plan.c core/error.c -lm

# The Ozaki stage's Chinese remainder sum (kernels/ozaki.h), host C alone.
$(B)/test_ozaki: tests/check.h tests/test_ozaki.c kernels/ozaki.h
	@mkdir -p $(B)
	$(CC) $(HOST_CFLAGS) $(SAN) -o $@ tests/test_ozaki.c -lm

# The product plan from made-up device facts: host C and the kernel tables
# (their launchers linked, never called).
$(B)/test_plan: tests/check.h tests/test_plan.c gemmcli
	@mkdir -p $(B)
	$(CC) $(HOST_CFLAGS) -o $@ tests/test_plan.c core/*.c src/plan/*.c $(KERNEL_C) $(CU_OBJ) \
	    -DGC_CUDA_LIB_DIR='"$(CUDA_HOME)/lib64"' -L$(CUDA_HOME)/lib64 -lcudart_static -ldl -lrt -lm -lpthread -lstdc++

# auto's rates and the model's use of them: host C and the kernel tables.
$(B)/test_rates: tests/check.h tests/test_rates.c gemmcli
	@mkdir -p $(B)
	$(CC) $(HOST_CFLAGS) -o $@ tests/test_rates.c core/*.c src/plan/*.c $(KERNEL_C) $(CU_OBJ) \
	    -DGC_CUDA_LIB_DIR='"$(CUDA_HOME)/lib64"' -L$(CUDA_HOME)/lib64 -lcudart_static -ldl -lrt -lm -lpthread -lstdc++

# auto's choice replayed on an H100's recorded times: host C and the
# kernel tables.
$(B)/test_replay: tests/check.h tests/test_replay.c tests/data/replay-h100.csv gemmcli
	@mkdir -p $(B)
	$(CC) $(HOST_CFLAGS) -o $@ tests/test_replay.c core/*.c src/plan/*.c $(KERNEL_C) $(CU_OBJ) \
	    -DGC_CUDA_LIB_DIR='"$(CUDA_HOME)/lib64"' -L$(CUDA_HOME)/lib64 -lcudart_static -ldl -lrt -lm -lpthread -lstdc++

# --verify's figures from made-up results (src/job/verify.c, report.c):
# host C and the kernel tables the plan links (their launchers never called).
$(B)/test_verify: tests/check.h tests/test_verify.c gemmcli
	@mkdir -p $(B)
	$(CC) $(HOST_CFLAGS) $(SAN) -o $@ tests/test_verify.c core/*.c src/plan/*.c src/job/verify.c \
	    src/job/progress.c src/job/report.c src/job/json.c $(KERNEL_C) $(CU_OBJ) \
	    -DGC_CUDA_LIB_DIR='"$(CUDA_HOME)/lib64"' -L$(CUDA_HOME)/lib64 -lcudart_static -ldl -lrt -lm -lpthread -lstdc++

# auto's model on the kernel table as shipped: host C, launchers linked, never called.
$(B)/test_model: tests/check.h tests/test_model.c src/plan/model.c src/plan/model.h src/plan/rates.c gemmcli
	@mkdir -p $(B)
	$(CC) $(HOST_CFLAGS) -o $@ tests/test_model.c core/*.c src/plan/*.c $(KERNEL_C) $(CU_OBJ) \
	    -DGC_CUDA_LIB_DIR='"$(CUDA_HOME)/lib64"' -L$(CUDA_HOME)/lib64 -lcudart_static -ldl -lrt -lm -lpthread -lstdc++

$(B)/test_tune_cache_san: tests/test_tune_cache.c src/plan/tune_cache.c src/plan/tune_cache.h core/newfile.c core/newfile.h
	@mkdir -p $(B)
	$(CC) $(HOST_CFLAGS) $(SAN) -o $@ tests/test_tune_cache.c src/plan/tune_cache.c core/newfile.c -lm

# gemmcli itself with its host code under ASan and UBSan (kernels as usual).
$(B)/gemmcli_san: gemmcli
	@mkdir -p $(B)
	$(CC) $(HOST_CFLAGS) $(SAN) -DGC_VERSION='"san"' -o $@ core/*.c $(SRC_ALL) formats/*.c \
	    $(KERNEL_C) $(CU_OBJ) \
	    -DGC_CUDA_LIB_DIR='"$(CUDA_HOME)/lib64"' -L$(CUDA_HOME)/lib64 -lcudart_static -ldl -lrt $(LIBS) -lstdc++

$(B)/gpu_kernels: tests/gpu_kernels.c gemmcli
	@mkdir -p $(B)
	$(CC) $(HOST_CFLAGS) -Wno-missing-field-initializers -O2 -o $@ tests/gpu_kernels.c core/*.c \
	    $(filter-out kernels/reference/cublas_lazy.c,$(KERNEL_C)) $(CU_OBJ) \
	    -L$(CUDA_HOME)/lib64 -lcublas -lcudart -lm -lpthread -lstdc++

$(B)/i8_anchor: tests/i8_anchor.c $(CU_OBJ)
	@mkdir -p $(B)
	$(CC) $(HOST_CFLAGS) -O2 -o $@ tests/i8_anchor.c build/kernels/igemm/igemm_03_igmma.o \
	    -L$(CUDA_HOME)/lib64 -lcublas -lcudart -lstdc++

test: $(B)/test_formats $(B)/test_formats_san $(B)/test_plot $(B)/test_tune_cache \
      $(B)/test_tune_cache_san $(B)/test_tiled $(B)/test_plan $(B)/test_rates $(B)/test_verify \
      $(B)/test_model $(B)/test_replay $(B)/test_ozaki $(B)/gemmcli_san $(B)/gpu_kernels $(B)/i8_anchor \
      $(B)/write_floor
	@sh tests/run_tests.sh

check-gpu: $(B)/gpu_kernels $(B)/i8_anchor
	@sh tests/check_gpu.sh

check-gpu-full: $(B)/gpu_kernels $(B)/i8_anchor
	@case "$(PART)" in kernels|race|bench) sh tests/check_gpu.sh full-$(PART) ;; \
	 *) echo "make check-gpu-full: PART=kernels, race or bench" >&2; exit 2 ;; esac

# formats/decimal.c's speed, built as the product builds it (-O2); not a test.
$(B)/bench_decimal: tests/bench_decimal.c formats/decimal.c formats/decimal.h formats/decimal_pow10.h
	@mkdir -p $(B)
	$(CC) -std=c11 -O2 -g -Wall -Wextra -D_GNU_SOURCE -I. -o $@ tests/bench_decimal.c formats/decimal.c -lm

bench-decimal: $(B)/bench_decimal
	$(B)/bench_decimal

# The host's floors for writing a large result, then whole 32768^2 float32
# products in core, in tiles and on every GPU (needs a GPU and 40 GB of
# disk); not a test.
$(B)/write_floor: tests/write_floor.c
	@mkdir -p $(B)
	$(CC) -std=c11 -O2 -Wall -Wextra -D_GNU_SOURCE -pthread -o $@ tests/write_floor.c

bench-scale: $(B)/write_floor
	$(B)/write_floor $${TMPDIR:-/tmp} 4
	python3 tests/tiled_gpu.py ./gemmcli --bench --bench-only

fuzz:
	@sh tests/fuzz/run.sh $${FUZZ_SECONDS:-60}
