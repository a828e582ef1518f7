# gemmcli: multiply and transpose matrices on NVIDIA GPUs.
#
#   make              build ./gemmcli
#   make run          the main job on the bundled samples (CPU kernel if no GPU)
#   make test         every test that needs no GPU (what CI runs)
#   make check-gpu    the GPU check: every kernel under the sanitizers, the GPU
#                     tests and a short bench, one go of a few minutes
#   make check-gpu-full PART=kernels|race|bench
#                     the exhaustive GPU check, a part at a time
#   make bench        kernel benchmark (needs a GPU); rewrites kernels/auto_table.c
#   make bench-e2e    whole-process timings against NumPy, CuPy, PyTorch (GPU)
#   make bench-decimal ns a value to parse and format float text, one thread (no GPU)
#   make fuzz         run the format fuzzers for FUZZ_SECONDS each
#   make install PREFIX=/usr/local
#   make mpi          gemmcli-mpi.so, for mpirun (also built by make where mpicc is)
#
# Overridable: CUDA_HOME, ARCH (compute capability, default 90), CC, NVCC.

CUDA_HOME ?= /usr/local/cuda
ARCH      ?= 90
PREFIX    ?= /usr/local
CC        ?= gcc
NVCC      ?= $(CUDA_HOME)/bin/nvcc
VERSION   := 0.1.0

BUILD := build
BIN   := gemmcli
# MPI, where mpicc is found: gemmcli loads this library only when an MPI
# launcher starts it as one of several processes (src/scale/cluster.h), so that
# the binary itself neither links MPI nor needs it.
MPICC   ?= mpicc
MPI_LIB := gemmcli-mpi.so
HAVE_MPI := $(shell command -v $(MPICC) >/dev/null 2>&1 && echo yes)

CPPFLAGS := -I. -I$(CUDA_HOME)/include -D_GNU_SOURCE -DGC_VERSION='"$(VERSION)"' \
            -DGC_CUDA_LIB_DIR='"$(CUDA_HOME)/lib64"'
CFLAGS   ?= -O2 -g
CFLAGS   += -std=c11 -Wall -Wextra -pthread -MMD -MP
NVCCFLAGS ?= -O3 -lineinfo
NVCCFLAGS += -std=c++17 -I. -MMD -MP -Xptxas -v -Xcompiler -Wall,-Wextra
# SASS for the target plus PTX, so that newer GPUs can still run the binary;
# the Hopper stages (the files that include kernels/hgemm/hgemm_hopper.cuh: wgmma,
# setmaxnreg, TMA multicast) exist for sm_90a alone, whatever ARCH is.
GENCODE   := -gencode arch=compute_$(ARCH),code=sm_$(ARCH) \
             -gencode arch=compute_$(ARCH),code=compute_$(ARCH)
SM90A_CU  := $(shell grep -l 'kernels/hgemm/hgemm_hopper.cuh"' kernels/*/*.cu 2>/dev/null)
# cuBLAS is not linked: kernels/reference/cublas_lazy.c loads it on first use.  The CUDA
# runtime and libdeflate are linked statically: starting costs no library
# loading, and the binary runs where libdeflate is not installed.
LDLIBS   := -L$(CUDA_HOME)/lib64 -lcudart_static -Wl,-Bstatic -ldeflate -Wl,-Bdynamic -lz -lpthread -ldl -lrt -lm -lstdc++

CORE_C    := $(wildcard core/*.c)
SRC_C     := $(filter-out src/cli/main.c,$(wildcard src/*/*.c))
FORMAT_C  := $(wildcard formats/*.c)
KERNEL_C  := $(wildcard kernels/*.c kernels/*/*.c)
KERNEL_CU := $(wildcard kernels/*.cu kernels/*/*.cu)

HOST_OBJ   := $(patsubst %.c,$(BUILD)/%.o,$(CORE_C) $(SRC_C) $(FORMAT_C))
KERNEL_OBJ := $(patsubst %.c,$(BUILD)/%.o,$(KERNEL_C)) $(patsubst %.cu,$(BUILD)/%.o,$(KERNEL_CU))
MAIN_OBJ   := $(BUILD)/src/cli/main.o

.PHONY: all run test check-gpu check-gpu-full bench bench-e2e bench-decimal bench-scale fuzz install clean deps test-deps mpi

all: $(BIN) $(if $(HAVE_MPI),$(MPI_LIB))

# Build dependencies beyond the CUDA toolkit: zlib and libdeflate headers.
deps:
	@sh tests/setup.sh build

$(BIN): $(MAIN_OBJ) $(HOST_OBJ) $(KERNEL_OBJ)
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/%.o: %.c | deps
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

$(patsubst %.cu,$(BUILD)/%.o,$(SM90A_CU)): GENCODE := -gencode arch=compute_90a,code=sm_90a

# ptxas's resource report (registers, spills) stays beside each object, for
# tests/sass_check.sh; anything else the compiler says is shown.
$(BUILD)/%.o: %.cu
	@mkdir -p $(dir $@)
	@echo "$(NVCC) $(NVCCFLAGS) $(GENCODE) -c -o $@ $<"
	@$(NVCC) $(NVCCFLAGS) $(GENCODE) -c -o $@ $< 2> $@.ptxas || { cat $@.ptxas >&2; exit 1; }
	@grep -v -e '^ptxas info' -e 'bytes stack frame' $@.ptxas >&2 || true

$(MPI_LIB): src/scale/mpi/gemmcli_mpi.c src/scale/cluster_ops.h
	$(MPICC) -O2 -g -std=c11 -Wall -Wextra -I. -shared -fPIC -o $@ $<

# The MPI library if MPI is there now (make test installs it first).
mpi:
	@if command -v $(MPICC) >/dev/null 2>&1; then $(MAKE) --no-print-directory $(MPI_LIB); \
	else echo "make: no $(MPICC): $(MPI_LIB) not built (gemmcli runs as one process)"; fi

run: $(BIN)
	@sh samples/run.sh ./$(BIN) $(BUILD)

test: $(BIN)
	@sh tests/setup.sh test
	@$(MAKE) --no-print-directory mpi
	@$(MAKE) --no-print-directory -f tests/tests.mk test

check-gpu: $(BIN)
	@$(MAKE) --no-print-directory mpi
	@$(MAKE) --no-print-directory -f tests/tests.mk check-gpu

check-gpu-full: $(BIN)
	@$(MAKE) --no-print-directory mpi
	@$(MAKE) --no-print-directory -f tests/tests.mk check-gpu-full PART=$(PART)

# Also rewrites auto's table for this device: rebuild afterwards with make.
bench: $(BIN)
	@mkdir -p $(BUILD)
	./$(BIN) bench --bench-out $(BUILD)/bench --auto-table kernels/auto_table.c

# Whole-process timings against NumPy, CuPy and PyTorch (needs a GPU).
bench-e2e: $(BIN)
	python3 tests/bench_e2e.py --gemmcli ./$(BIN)

bench-decimal:
	@$(MAKE) --no-print-directory -f tests/tests.mk bench-decimal

# The host's write floors and whole 32768^2 products on one and every GPU.
bench-scale: $(BIN)
	@$(MAKE) --no-print-directory -f tests/tests.mk bench-scale

fuzz:
	@sh tests/setup.sh fuzz
	@$(MAKE) --no-print-directory -f tests/tests.mk fuzz

install: $(BIN)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 \
	    $(DESTDIR)$(PREFIX)/share/bash-completion/completions
	install -m 755 $(BIN) $(DESTDIR)$(PREFIX)/bin/$(BIN)
	install -m 644 man/gemmcli.1 $(DESTDIR)$(PREFIX)/share/man/man1/gemmcli.1
	./$(BIN) completion bash > $(BUILD)/gemmcli.bash
	install -m 644 $(BUILD)/gemmcli.bash $(DESTDIR)$(PREFIX)/share/bash-completion/completions/gemmcli
	if [ -f $(MPI_LIB) ]; then install -d $(DESTDIR)$(PREFIX)/lib/gemmcli && \
	    install -m 644 $(MPI_LIB) $(DESTDIR)$(PREFIX)/lib/gemmcli/$(MPI_LIB); fi

clean:
	rm -rf $(BUILD) $(BIN) $(MPI_LIB) tests/out

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
