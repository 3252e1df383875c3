# rltrade — the two commands for a new user:
#   make demo   install dependencies, build, run the main job on built-in data
#   make test   install dependencies, build, run the tests
# Also: make build, make bench, make clean, make test-sanitize, make format-check,
# make fuzz, make fuzz-ci, make docs.
BUILD_DIR ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=Release
# The full build (make build, make test): LibTorch's plug-in and oracle tests, tests,
# benchmarks, the Python module and MPI. The demo's build leaves all of them out; both use
# $(BUILD_DIR), so each sets every option it depends on (a CMake cache keeps the last).
FULL_FLAGS = -DRLT_WITH_TORCH=ON -DRLT_BUILD_TESTS=ON -DRLT_BUILD_BENCHMARKS=ON \
  -DRLT_WITH_PYTHON=ON -DRLT_WITH_MPI=ON
DEMO_FLAGS = -DRLT_WITH_TORCH=OFF -DRLT_BUILD_TESTS=OFF -DRLT_BUILD_BENCHMARKS=OFF \
  -DRLT_WITH_PYTHON=OFF -DRLT_WITH_MPI=OFF

SANITIZE_DIR ?= build-sanitize
SANITIZE ?= address,undefined

.PHONY: all deps configure build demo demo-retrieval test test-sanitize format-check bench clean

all: build

deps:
	bash scripts/install-deps.sh

configure: deps
	cmake -S . -B $(BUILD_DIR) $(CMAKE_FLAGS) $(FULL_FLAGS)

build: configure
	cmake --build $(BUILD_DIR) -j $(JOBS)

# The demo: the rule-based held-out backtest (seconds), PPO training of 3 seeds on the same
# synthetic market (configs/intraday_ppo.toml; one number is not a result), then the
# out-of-sample evaluation of every seed and the spread across seeds with its HTML report.
# Installs and builds only what the demo runs (scripts/install-deps.sh --demo: no LibTorch,
# test frameworks, Python or MPI packages): the rltrade binary without the torch and MPI
# plug-ins, and no tests, benchmarks or Python module. `make test` later reconfigures the
# same build directory with everything and rebuilds only what differs.
demo:
	bash scripts/install-deps.sh --demo
	cmake -S . -B $(BUILD_DIR) $(CMAKE_FLAGS) $(DEMO_FLAGS)
	cmake --build $(BUILD_DIR) -j $(JOBS) --target rltrade
	$(BUILD_DIR)/rltrade demo --out $(BUILD_DIR)/demo
	rm -rf $(BUILD_DIR)/demo/run
	$(BUILD_DIR)/rltrade train configs/intraday_ppo.toml --seeds 3 --run-dir $(BUILD_DIR)/demo/run
	$(BUILD_DIR)/rltrade eval $(BUILD_DIR)/demo/run --range test

# The two-tower retrieval trainer on its synthetic task (about a minute).
demo-retrieval: build
	mkdir -p $(BUILD_DIR)/demo-retrieval
	$(BUILD_DIR)/rltrade retrieval synth --pairs $(BUILD_DIR)/demo-retrieval/pairs.npz \
	  --bank $(BUILD_DIR)/demo-retrieval/bank.npz
	rm -rf $(BUILD_DIR)/demo-retrieval/run
	$(BUILD_DIR)/rltrade retrieval train configs/twotower_synth.toml \
	  --set data.pairs=$(BUILD_DIR)/demo-retrieval/pairs.npz \
	  --set data.bank=$(BUILD_DIR)/demo-retrieval/bank.npz --run-dir $(BUILD_DIR)/demo-retrieval/run
	$(BUILD_DIR)/rltrade retrieval eval $(BUILD_DIR)/demo-retrieval/run --json

test: build
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS) -LE slow

# The build without LibTorch (every subsystem and the command line; no Python module) in
# Debug at -O1 (line tables only) with AddressSanitizer + UndefinedBehaviorSanitizer and
# -Werror: RLT_DCHECK is live (no NDEBUG), so e.g. the env's self-financing check runs; -O1
# keeps the training tests of the command line within minutes (GCC 12 warns falsely of
# maybe-uninitialized std::function members inside libstdc++'s std::regex at -O1 with the
# sanitizers, hence -Wno-maybe-uninitialized here only). Tests under mpirun (label mpi) run
# with LeakSanitizer off: OpenMPI leaves its own allocations at exit, in components it has
# already unloaded, so no suppression can name them. It proves that training,
# evaluation, tuning and paper trading need no LibTorch. Fast tests only (-LE slow).
# .ci/run runs this after `make test`.
# It also runs the tests on other float kernels than `make test`, so a tolerance that only
# holds for one summation order fails in CI rather than on a user's machine: no
# -march=native (RLT_NATIVE=OFF: our loop kernels are the portable build's, chosen at load
# time among x86-64-v4, v3 and the baseline as in the Python wheel, so these tests check the
# kernels the wheel runs) and OpenBLAS's Haswell (AVX2) kernels instead of the ones it picks
# for this CPU (forced only where the CPU has AVX2 and FMA, which those kernels need).
SANITIZE_BLAS_CORE := $(shell grep -qw avx2 /proc/cpuinfo 2>/dev/null && grep -qw fma /proc/cpuinfo && echo Haswell)
test-sanitize: deps
	cmake -S . -B $(SANITIZE_DIR) -DCMAKE_BUILD_TYPE=Debug \
	  -DCMAKE_CXX_FLAGS_DEBUG="-g1 -O1 -Wno-maybe-uninitialized" \
	  -DRLT_WITH_TORCH=OFF -DRLT_WITH_PYTHON=OFF \
	  -DRLT_SANITIZE=$(SANITIZE) -DRLT_WERROR=ON -DRLT_BUILD_BENCHMARKS=OFF -DRLT_NATIVE=OFF
	cmake --build $(SANITIZE_DIR) -j $(JOBS)
	cd $(SANITIZE_DIR) && ASAN_OPTIONS=detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 $(if $(SANITIZE_BLAS_CORE),OPENBLAS_CORETYPE=$(SANITIZE_BLAS_CORE)) \
	  ctest --output-on-failure -j $(JOBS) -LE 'slow|mpi'
	cd $(SANITIZE_DIR) && ASAN_OPTIONS=detect_leaks=0:strict_string_checks=1:detect_stack_use_after_return=1 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 $(if $(SANITIZE_BLAS_CORE),OPENBLAS_CORETYPE=$(SANITIZE_BLAS_CORE)) \
	  ctest --output-on-failure -j $(JOBS) -L mpi -LE slow

# Fuzzing (fuzz/README.md): the readers of outside input as libFuzzer targets,
# built with clang, ASan + UBSan and live RLT_DCHECKs in $(FUZZ_DIR) (LibTorch-free).
#   make fuzz      fuzzes each target for FUZZ_SECONDS (new inputs go to $(FUZZ_DIR)/corpus,
#                  crashes to $(FUZZ_DIR)/artifacts); fails if any target crashed
#   make fuzz-ci   replays fuzz/corpus, then FUZZ_RUNS inputs per target with -seed=1
#                  (deterministic; .ci/run; about 3 minutes once built)
# Needs clang and libclang-rt-14-dev: `bash scripts/install-deps.sh --fuzz` (make test does not).
FUZZ_DIR ?= build-fuzz
FUZZ_SECONDS ?= 60
FUZZ_RUNS ?= 50000
# Mutations depend on compared values, some of them heap addresses: fuzz-ci turns address
# space randomisation off (setarch -R) where the system allows it, so runs repeat exactly.
FUZZ_NO_ASLR := $(shell setarch -R true >/dev/null 2>&1 && echo setarch -R)
FUZZ_TARGETS = bars_csv_fuzz config_fuzz returns_csv_fuzz state_reader_fuzz \
  vec_env_state_fuzz tensor_file_fuzz normalizer_json_fuzz eval_dir_fuzz \
  mining_schedule_fuzz npz_fuzz journal_fuzz protocol_fuzz
FUZZ_FLAGS = -timeout=10 -rss_limit_mb=2048 -max_len=8192 -print_final_stats=1

.PHONY: fuzz-build fuzz fuzz-ci
fuzz-build:
	bash scripts/install-deps.sh --fuzz
	cmake -S . -B $(FUZZ_DIR) -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=Debug \
	  -DCMAKE_CXX_FLAGS_DEBUG="-g -O1" -DRLT_WITH_TORCH=OFF -DRLT_WITH_PYTHON=OFF -DRLT_BUILD_TESTS=OFF \
	  -DRLT_BUILD_BENCHMARKS=OFF -DRLT_SANITIZE=address,undefined -DRLT_FUZZ=ON
	cmake --build $(FUZZ_DIR) -j $(JOBS) --target $(FUZZ_TARGETS)

fuzz: fuzz-build
	@mkdir -p $(FUZZ_DIR)/artifacts; failed=""; \
	for t in $(FUZZ_TARGETS); do \
	  mkdir -p $(FUZZ_DIR)/corpus/$$t; \
	  echo "== $$t ($(FUZZ_SECONDS) s)"; \
	  $(FUZZ_DIR)/fuzz/$$t $(FUZZ_FLAGS) -max_total_time=$(FUZZ_SECONDS) \
	    -artifact_prefix=$(FUZZ_DIR)/artifacts/$$t- $(FUZZ_DIR)/corpus/$$t fuzz/corpus/$$t \
	    > $(FUZZ_DIR)/$$t.log 2>&1 || { failed="$$failed $$t"; \
	    grep -E 'ERROR|SUMMARY|FUZZ_REQUIRE|runtime error|what\(\)|written to' $(FUZZ_DIR)/$$t.log | head -6; }; \
	  grep -E '^stat::number_of_executed_units|^stat::new_units_added' $(FUZZ_DIR)/$$t.log; \
	done; \
	if [ -n "$$failed" ]; then echo "fuzz: findings in:$$failed (logs $(FUZZ_DIR)/<target>.log, inputs $(FUZZ_DIR)/artifacts/)" >&2; exit 1; fi

fuzz-ci: fuzz-build
	@failed=""; \
	for t in $(FUZZ_TARGETS); do \
	  rm -rf $(FUZZ_DIR)/ci-corpus/$$t; mkdir -p $(FUZZ_DIR)/ci-corpus/$$t $(FUZZ_DIR)/artifacts; \
	  echo "== $$t ($(FUZZ_RUNS) runs, seed 1)"; \
	  $(FUZZ_NO_ASLR) $(FUZZ_DIR)/fuzz/$$t $(FUZZ_FLAGS) -runs=$(FUZZ_RUNS) -seed=1 -reload=0 \
	    -artifact_prefix=$(FUZZ_DIR)/artifacts/$$t- $(FUZZ_DIR)/ci-corpus/$$t fuzz/corpus/$$t \
	    > $(FUZZ_DIR)/$$t.ci.log 2>&1 || { failed="$$failed $$t"; tail -40 $(FUZZ_DIR)/$$t.ci.log; }; \
	  grep -E '^#[0-9]+[[:space:]]+DONE' $(FUZZ_DIR)/$$t.ci.log; \
	done; \
	if [ -n "$$failed" ]; then echo "fuzz-ci: findings in:$$failed" >&2; exit 1; fi

# Fails (and lists the differences) when a C++ file under src/ is not formatted as
# .clang-format says. Debian's clang-format (14); nothing is rewritten.
format-check:
	@command -v clang-format >/dev/null || { echo "format-check: clang-format not found (apt-get install clang-format)" >&2; exit 1; }
	@find src fuzz \( -name '*.h' -o -name '*.cc' \) -print0 | sort -z | \
	  xargs -0 clang-format --dry-run --Werror || { echo "format-check: the files above are not formatted; fix with clang-format -i FILE" >&2; exit 1; }

# `bench threads`: for every PPO config (not the retrieval configs or tune spaces), threads = 0 (the default) must reach 95% of the
# best of 1 and 2 threads (medians of 3 interleaved runs each); the target fails if not.
# SCALING_CONFIGS, whose update is large enough to split, must also not run slower on 2
# threads than on 1 (--check-scaling, same tolerance). options_rppo runs there with 16
# environments of 256 steps (4,096 steps per update instead of 32,768: the update's cost per
# sample is the same, and a measurement takes an eighth of the time).
SCALING_CONFIGS ?= configs/intraday_ppo.toml configs/cartpole_ppo.toml configs/intraday_original.toml
PPO_CONFIGS ?= $(filter-out configs/twotower_% configs/%_space.toml configs/options_rppo.toml $(SCALING_CONFIGS),$(wildcard configs/*.toml))

bench: build
	$(BUILD_DIR)/rltrade bench machine
	$(BUILD_DIR)/rltrade bench startup --repeats 20
	$(BUILD_DIR)/rltrade bench threads --threads 1,2 --repeats 3 --tolerance 0.05 \
	  $(addprefix --config ,$(PPO_CONFIGS))
	$(BUILD_DIR)/rltrade bench threads --threads 1,2 --repeats 3 --tolerance 0.05 --check-scaling \
	  $(addprefix --config ,$(SCALING_CONFIGS))
	$(BUILD_DIR)/rltrade bench threads --threads 1,2 --repeats 3 --tolerance 0.05 --check-scaling \
	  --config configs/options_rppo.toml --set env.num_envs=16 --set algo.n_steps=256
	$(BUILD_DIR)/rltrade bench env --env intraday --envs 256 --threads 2 --seconds 5
	$(BUILD_DIR)/rltrade bench train --config configs/cartpole_ppo.toml --threads 1,2 --steps 20480
	$(BUILD_DIR)/src/env/env_bench --benchmark_min_time=0.5
	$(BUILD_DIR)/src/features/features_bench --benchmark_min_time=0.5
	$(BUILD_DIR)/rltrade bench pricing --threads 2
	$(BUILD_DIR)/src/pricing/pricing_bench --benchmark_min_time=0.5
	$(BUILD_DIR)/src/learn/learn_bench --benchmark_min_time=0.5

clean:
	rm -rf $(BUILD_DIR)

# docs/cli.md and docs/config.md, generated from the code by the binary (`rltrade docs cli`,
# `rltrade docs config`); the test docs_cli_test (make test, CI) fails when the committed files
# differ from what the code generates. Builds the binary only, in an already configured
# $(BUILD_DIR) (make build or make demo configures it).
.PHONY: docs
docs:
	@test -f $(BUILD_DIR)/CMakeCache.txt || { echo "docs: $(BUILD_DIR)/ is not configured; run make build (or make demo) first" >&2; exit 1; }
	cmake --build $(BUILD_DIR) -j $(JOBS) --target rltrade
	$(BUILD_DIR)/rltrade docs cli --out docs/cli.md
	$(BUILD_DIR)/rltrade docs config --out docs/config.md

# Fails when a source file includes a folder, LibTorch or another folder's internal::
# names that docs/ARCHITECTURE.md's table does not allow (scripts/check_layers.py reads
# the rules from that table), and when a function in src/ is longer than 150 lines
# (scripts/check_function_length.py, which tests itself first).
.PHONY: check-layers
check-layers:
	python3 scripts/check_layers.py
	python3 scripts/check_function_length.py --self-test
	python3 scripts/check_function_length.py
