# Thin wrapper: each target installs missing dependencies, builds, then runs.
# Release build in build-release/, Debug + ASan/UBSan build in build-asan/, the libFuzzer
# harnesses (clang) in build-fuzz/.

RELEASE := build-release
ASAN    := build-asan
FUZZ    := build-fuzz
JOBS    ?= $(shell nproc)
FUZZ_SECONDS ?= 60

.PHONY: all deps build build-asan build-fuzz demo demo-simulated demo-sim test test-release test-asan fuzz fuzz-ci bench bench-smoke clean

all: build

deps:
	@scripts/install-deps

build: deps
	@cmake -S . -B $(RELEASE) -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
	@cmake --build $(RELEASE) -j $(JOBS)

build-asan: deps
	@cmake -S . -B $(ASAN) -G Ninja -DCMAKE_BUILD_TYPE=Debug -DALLOT_SANITIZE=ON -DALLOT_BUILD_BENCH=OFF >/dev/null
	@cmake --build $(ASAN) -j $(JOBS)

# The main job on embedded defaults: allotd with two node agents on the fake NVML (8 × H100
# each) running real sandboxed workloads, driven by the CLI; stays up until Ctrl-C.
# `make demo-simulated`: allotd on a simulated 64-GPU fleet; `make demo-sim`: the simulator.
demo: build
	@B=$(RELEASE) scripts/demo

demo-simulated: build
	@B=$(RELEASE) scripts/demo-simulated

demo-sim: build
	@$(RELEASE)/allot sim scenarios/example.yaml --json $(RELEASE)/example-report.json
	@echo
	@echo "JSON report: $(RELEASE)/example-report.json"

# Every test, in the Release build and again under AddressSanitizer + UndefinedBehaviorSanitizer
# (the Debug build also verifies scheduler invariants after every pass).
test: test-release test-asan

test-release: build
	@cd $(RELEASE) && ctest --output-on-failure -j $(JOBS)

test-asan: build-asan
	@cd $(ASAN) && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --output-on-failure -j $(JOBS)

# Each parser's libFuzzer harness (fuzz/, docs/fuzzing.md) for FUZZ_SECONDS, the corpora growing
# in build-fuzz/work between runs; `fuzz-ci`: 30 s each on a copy of the kept corpus (CI).
build-fuzz: deps
	@cmake -S . -B $(FUZZ) -G Ninja -DALLOT_FUZZ=ON -DCMAKE_CXX_COMPILER=clang++ >/dev/null
	@cmake --build $(FUZZ) -j $(JOBS) --target fuzz

fuzz: build-fuzz
	@B=$(FUZZ) FUZZ_SECONDS=$(FUZZ_SECONDS) FUZZ_WORK=$(FUZZ)/work scripts/fuzz

fuzz-ci: build-fuzz
	@B=$(FUZZ) FUZZ_SECONDS=30 scripts/fuzz

bench: build
	@scripts/bench

# Every benchmark once at small sizes (CI): a benchmark that measures nothing fails.
bench-smoke: build
	@BENCH_SMOKE=1 scripts/bench

clean:
	rm -rf $(RELEASE) $(ASAN) $(FUZZ)
