# SPDX-License-Identifier: BSD-2-Clause
# syncq — the two set-up commands, and a few more.
#
#   make test     install what is missing, build, run every test
#   make report   install what is missing, build, run the quick lab suite,
#                 write results/report.html (compared with the previous
#                 make report's verdicts, kept in results/previous.jsonl)
#   make bench    the same at the default sizes (longer)
#   make test-tsan / test-asan   the tests under ThreadSanitizer /
#                 AddressSanitizer + UndefinedBehaviorSanitizer
#   make test-tsan-clang   the tests on the double-width CAS under Clang's
#                 ThreadSanitizer (TSAN_CLANG_TESTS; every test with
#                 TSAN_CLANG_TESTS=all)
#   make build-clang   everything built by clang with warnings as errors
#   make test-clang    that build's tests (the set the sanitizer builds run)
#   make format / format-check   the sources in .clang-format's style
#   make docs     the API reference alone (doxygen and python3; no bootstrap,
#                 no library, test or lab build): $(BUILD)-docs/docs/api/html/index.html,
#                 man pages in $(BUILD)-docs/docs/api/man
#   make clean
#   make test-arm64   cross-build for AArch64, run the tests under qemu-user
#   make fuzz         the hostile-segment fuzzer for FUZZ_SECONDS (AFL++)
#   make spin         the SPIN model checks (models/spin)
#   make genmc        the GenMC weak-memory checks (models/genmc)
#   make portable     the tests and the lab in a relocatable folder and a
#                     tarball, every library included (scripts/portable):
#                     $(BUILD)/portable/syncq-portable-<version>-x86_64/run
#
# Every target but docs runs scripts/bootstrap first: it installs only what
# is missing, so after the first time it costs a second.

BUILD      ?= build
RESULTS    ?= results
BUILD_TYPE ?= RelWithDebInfo
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
PYTHON     := $(CURDIR)/.venv/bin/python
LAB        := $(BUILD)/lab/syncq-lab
CMAKE_ARGS ?=
# A test that runs longer than this has hung: fail it rather than stall CI.
TEST_TIMEOUT ?= 900

.PHONY: all deps build test report bench test-tsan test-asan test-tsan-clang build-clang test-clang format format-check clean docs

all: build

deps:
	@scripts/bootstrap

# configure_and_build(BUILD_DIR, EXTRA_CMAKE_ARGS)
define configure_and_build
	cmake -S . -B $(1) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) -DSYNCQ_PYTHON=$(PYTHON) $(2) $(CMAKE_ARGS) >/dev/null
	cmake --build $(1) -j $(JOBS)
endef

build: deps
	$(call configure_and_build,$(BUILD),)

test: build
	cd $(BUILD) && ctest --output-on-failure --timeout $(TEST_TIMEOUT) -j $(JOBS)

# The previous run's results are kept as previous.jsonl: the report shows
# which verdicts changed since (the lab's stability), when there was one.
# A point that fails does not stop the run (syncq-lab keeps the failure in
# a note and goes on): the report is written either way, and make fails
# when the run did.
define run_and_report
	@mkdir -p $(RESULTS)
	@if [ -f $(RESULTS)/results.jsonl ]; then mv $(RESULTS)/results.jsonl $(RESULTS)/previous.jsonl; fi
	@rc=0; $(LAB) run all $(1) --out $(RESULTS) || rc=$$?; \
	  $(LAB) report $(RESULTS) $$(if [ -f $(RESULTS)/previous.jsonl ]; then echo --compare $(RESULTS)/previous.jsonl; fi) || exit $$?; \
	  if [ $$rc -ne 0 ]; then echo "make: the lab run failed (status $$rc; its FAILED lines above, and in the report's notes); the report shows what was measured"; fi; \
	  exit $$rc
endef

report: build
	$(call run_and_report,--quick)

bench: build
	$(call run_and_report,)

test-tsan: deps
	$(call configure_and_build,$(BUILD)-tsan,-DSYNCQ_SANITIZE=thread -DSYNCQ_BUILD_DOCS=OFF)
	cd $(BUILD)-tsan && ctest --output-on-failure --timeout $(TEST_TIMEOUT) -j $(JOBS) -LE no-sanitizer

test-asan: deps
	$(call configure_and_build,$(BUILD)-asan,-DSYNCQ_SANITIZE=address -DSYNCQ_BUILD_DOCS=OFF)
	cd $(BUILD)-asan && ctest --output-on-failure --timeout $(TEST_TIMEOUT) -j $(JOBS) -LE no-sanitizer

# Clang's ThreadSanitizer takes other paths than GCC's where the
# compilers differ (syncq/pr.h's double-width CAS is the TSan runtime's,
# called by name, as Clang's 16-byte builtin is a libatomic call TSan does
# not see): the tests of what is built on that CAS run under it too. Only
# those tests' programs are built (everything with TSAN_CLANG_TESTS=all).
TSAN_CLANG_TESTS ?= pr_test reclaim_test record_pool_test stack_test treiber_cache_test \
  clh_test clh_tp_test clh_trylock_race_test \
  queue_test queue_lincheck_test nblfq_test nblfq_race_test linked_queue_test plj_help_test \
  lcrq_test lprq_test lcrq_af_test lprq_af_test scq_test wcq_test scq2_race_test \
  pqueue_test linden_jonsson_test static_inline_test am_test am_hostile_test crash_matrix_test \
  po_test po_fiber_test po_fibers_test po_blocking_test po_stack_test po_sched_test po_sort_test po_runtime_test \
  po_runtime_fiber_test po_links_test po_links_fiber_test po_slots_test po_slots_fiber_test \
  po_slots_race_test po_slab_test po_slot_ring_test po_header_test
empty :=
space := $(empty) $(empty)
TSAN_CLANG_TARGETS = $(if $(filter all,$(TSAN_CLANG_TESTS)),all,$(TSAN_CLANG_TESTS))
TSAN_CLANG_REGEX = $(if $(filter all,$(TSAN_CLANG_TESTS)),.,^($(subst $(space),|,$(strip $(TSAN_CLANG_TESTS))))$$)

test-tsan-clang: deps
	cmake -S . -B $(BUILD)-tsan-clang -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) -DSYNCQ_PYTHON=$(PYTHON) -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DSYNCQ_WERROR=ON -DSYNCQ_SANITIZE=thread -DSYNCQ_BUILD_DOCS=OFF $(CMAKE_ARGS) >/dev/null
	cmake --build $(BUILD)-tsan-clang -j $(JOBS) --target $(TSAN_CLANG_TARGETS)
	cd $(BUILD)-tsan-clang && ctest --output-on-failure --timeout $(TEST_TIMEOUT) -j $(JOBS) -LE no-sanitizer -R '$(TSAN_CLANG_REGEX)'

# The second compiler: clang builds the library, tests, lab and examples
# with -Werror (SYNCQ_WERROR), so code that only gcc accepts quietly fails CI.
build-clang: deps
	$(call configure_and_build,$(BUILD)-clang,-DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DSYNCQ_WERROR=ON -DSYNCQ_BUILD_DOCS=OFF)

# Its tests too: the compilers differ in what they emit for the same C11
# atomics (clang makes a fetch_add of 0 a plain load, which the process
# table's free-slot ring once relied on to write a fresh page first).
test-clang: build-clang
	cd $(BUILD)-clang && ctest --output-on-failure --timeout $(TEST_TIMEOUT) -j $(JOBS) -LE no-sanitizer

format: deps
	scripts/format

format-check: deps
	scripts/format --check

# The reference is Doxygen over the public headers and a script over its
# XML (docs/api/CMakeLists.txt): it needs doxygen and python3, and neither
# the lab's dependencies nor a compiled library. It is configured in a
# folder of its own, so $(BUILD)'s options (the lab, the tests) stay as
# they were, and only its target is built.
DOCS_BUILD ?= $(BUILD)-docs
docs:
	@command -v doxygen >/dev/null 2>&1 || { echo "make docs: doxygen not found (apt-get install doxygen)"; exit 1; }
	@command -v python3 >/dev/null 2>&1 || { echo "make docs: python3 not found"; exit 1; }
	cmake -S . -B $(DOCS_BUILD) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) -DSYNCQ_BUILD_DOCS=ON -DSYNCQ_BUILD_LAB=OFF \
	  -DSYNCQ_BUILD_TESTS=OFF -DSYNCQ_BUILD_FUZZ=OFF -DSYNCQ_MPI=none $(CMAKE_ARGS) >/dev/null
	cmake --build $(DOCS_BUILD) --target syncq_docs
	@echo "API reference: $(DOCS_BUILD)/docs/api/html/index.html; man pages: $(DOCS_BUILD)/docs/api/man (man -M $(DOCS_BUILD)/docs/api/man syncq_queue_create)"

clean:
	rm -rf $(BUILD) $(BUILD)-tsan $(BUILD)-asan $(BUILD)-clang $(BUILD)-tsan-clang $(BUILD)-docs
	rm -rf $(BUILD)-arm64 $(BUILD)-fuzz

# ---- reliability (docs/reliability.md) ----
FUZZ_SECONDS ?= 60
.PHONY: test-arm64 fuzz spin genmc

test-arm64: deps
	scripts/test-arm64 $(BUILD)-arm64

fuzz: deps
	FUZZ_BUILD=$(CURDIR)/$(BUILD)-fuzz fuzz/run $(FUZZ_SECONDS)

spin: deps
	models/spin/run

# GenMC (weak memory): skips with the reason when genmc is missing
# (scripts/genmc-build; GENMC_SRC=dir where GitHub is out of reach).
genmc: deps
	models/genmc/run || [ $$? -eq 77 ]

# ---- the portable folder (README: "Running on a machine where nothing can be installed")
.PHONY: portable

portable: build
	scripts/portable --build $(BUILD)
