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

.PHONY: all deps build-deps build test test-unit test-asan test-vm kernel-full demo install uninstall bench fuzz clean

all: build

# Every package `make test` and `make demo` use (the lab's qemu, kernels, NFS server, engines,
# slapd/SSSD, clang...): installed by those two targets only.
deps:
	@scripts/install-deps all

# `make build` and `make install` install nothing: they say which build dependencies are
# missing and stop.
build-deps:
	@scripts/install-deps --check build

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) $(CMAKE_FLAGS)

build: build-deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

# Every tier: unit, integration (real namespaces and keyrings), fuzz corpus replay,
# the same unit+integration tiers under ASan+UBSan, and the qemu kernel lab (label vm).
# Not the lab on the whole patched kernel (label kernel-full): that is `make kernel-full`;
# not the second kernel of kernel-independent scenarios (label vm-extra): `make test-vm`.
test: deps
	$(MAKE) build
	cmake -S . -B $(ASAN_BUILD) $(CMAKE_FLAGS) -DNSID_SANITIZE=ON -DNSID_VM_TESTS=OFF >/dev/null
	cmake --build $(ASAN_BUILD) -j $(JOBS)
	ctest --test-dir $(ASAN_BUILD) --output-on-failure -LE 'vm|valgrind|nosan' -j $(JOBS)
	ctest --test-dir $(BUILD) --output-on-failure -LE 'kernel-full|vm-extra' -j 2

test-unit: deps
	$(MAKE) build
	ctest --test-dir $(BUILD) --output-on-failure -L unit

test-vm: deps
	$(MAKE) build
	ctest --test-dir $(BUILD) --output-on-failure -L vm -j 2

# One lab kernel built from Debian's linux-source-6.12 with both patches of kernel/patches/6.12
# (the keys core one is built-in code), everything built in (kernel/build-kernel; a rerun with
# the same inputs does nothing), then the lab scenarios that boot it (label kernel-full).
kernel-full: deps
	$(MAKE) build
	kernel/build-kernel --out $(BUILD)/kernel/full-6.12 --jobs $(JOBS)
	ctest --test-dir $(BUILD) --output-on-failure -L kernel-full

demo: deps
	$(MAKE) build
	tests/vm/demo.sh $(BUILD)

# Where each file goes for a prefix: cmake/install-dirs.cmake. The list of what was installed
# is $(BUILD)/install_manifest.txt (with DESTDIR in its paths), which `make uninstall` removes
# again, then the directories of nsid's own that are left empty.
install: build
	DESTDIR=$(DESTDIR) cmake --install $(BUILD) --prefix $(PREFIX)
	@if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" = 0 ]; then ldconfig; fi

uninstall:
	@test -f $(BUILD)/install_manifest.txt || { echo "make uninstall: no $(BUILD)/install_manifest.txt (nothing installed from $(BUILD))" >&2; exit 1; }
	@while IFS= read -r f || [ -n "$$f" ]; do \
	  if [ -e "$$f" ] || [ -L "$$f" ]; then rm -f "$$f" && echo "removed $$f"; fi; \
	done < $(BUILD)/install_manifest.txt
	@sed 's|/[^/]*$$||' $(BUILD)/install_manifest.txt | sort -ru | grep -E '/(nsid|nfs-idmapd\.service\.d)(/|$$)' | \
	  while IFS= read -r d; do rmdir "$$d" 2>/dev/null && echo "removed $$d/" || true; done
	@if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" = 0 ]; then ldconfig; fi

bench: deps
	$(MAKE) build
	cmake --build $(BUILD) --target bench

fuzz: deps
	CC=clang cmake -S . -B $(FUZZ_BUILD) -DNSID_FUZZ=ON -DNSID_VM_TESTS=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo
	cmake --build $(FUZZ_BUILD) -j $(JOBS)
	FUZZ_SECONDS=$(FUZZ_SECONDS) tests/fuzz/run-fuzzers.sh $(FUZZ_BUILD)

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD)
