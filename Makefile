# The README's commands. Everything goes through CMake in $(BUILD); this file only
# orders the steps: install missing packages, configure, build, run.
BUILD      ?= build
ASAN_BUILD ?= build-asan
FUZZ_BUILD ?= build-fuzz
PREFIX     ?= /usr/local
DESTDIR    ?=
FUZZ_SECONDS ?= 60
JOBS       ?= $(shell nproc)
CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNSID_WERROR=ON

.PHONY: all deps build test test-unit test-asan test-vm kernel-full demo install bench fuzz clean

all: build

deps:
	@scripts/install-deps all

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) $(CMAKE_FLAGS)

build: deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

# Every tier: unit, integration (real namespaces and keyrings), fuzz corpus replay,
# the same unit+integration tiers under ASan+UBSan, and the qemu kernel lab (label vm).
# Not the lab on the whole patched kernel (label kernel-full): that is `make kernel-full`.
test: build
	cmake -S . -B $(ASAN_BUILD) $(CMAKE_FLAGS) -DNSID_SANITIZE=ON -DNSID_VM_TESTS=OFF >/dev/null
	cmake --build $(ASAN_BUILD) -j $(JOBS)
	ctest --test-dir $(ASAN_BUILD) --output-on-failure -LE 'vm|valgrind|nosan' -j $(JOBS)
	ctest --test-dir $(BUILD) --output-on-failure -LE kernel-full -j 2

test-unit: build
	ctest --test-dir $(BUILD) --output-on-failure -L unit

test-vm: build
	ctest --test-dir $(BUILD) --output-on-failure -L vm -j 2

# One lab kernel built from Debian's linux-source-6.12 with both patches of kernel/patches/6.12
# (the keys core one is built-in code), everything built in (kernel/build-kernel; a rerun with
# the same inputs does nothing), then the lab scenarios that boot it (label kernel-full).
kernel-full: build
	kernel/build-kernel --out $(BUILD)/kernel/full-6.12 --jobs $(JOBS)
	ctest --test-dir $(BUILD) --output-on-failure -L kernel-full

demo: build
	tests/vm/demo.sh $(BUILD)

install: build
	DESTDIR=$(DESTDIR) cmake --install $(BUILD) --prefix $(PREFIX)

bench: build
	cmake --build $(BUILD) --target bench

fuzz: deps
	CC=clang cmake -S . -B $(FUZZ_BUILD) -DNSID_FUZZ=ON -DNSID_VM_TESTS=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo
	cmake --build $(FUZZ_BUILD) -j $(JOBS)
	FUZZ_SECONDS=$(FUZZ_SECONDS) tests/fuzz/run-fuzzers.sh $(FUZZ_BUILD)

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD)
