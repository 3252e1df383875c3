# rltrade — the two commands for a new user:
#   make demo   install dependencies, build, run the main job on built-in data
#   make test   install dependencies, build, run the tests
# Also: make build, make bench, make clean.
BUILD_DIR ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=Release

.PHONY: all deps configure build demo test bench clean

all: build

deps:
	bash scripts/install-deps.sh

configure: deps
	cmake -S . -B $(BUILD_DIR) $(CMAKE_FLAGS)

build: configure
	cmake --build $(BUILD_DIR) -j $(JOBS)

# The demo: the rule-based held-out backtest (seconds), PPO training on the same
# synthetic market (configs/intraday_ppo.toml, about two minutes on two cores), then the
# out-of-sample evaluation of the trained policy with its HTML report.
demo: build
	$(BUILD_DIR)/rltrade demo --out $(BUILD_DIR)/demo
	rm -rf $(BUILD_DIR)/demo/run
	$(BUILD_DIR)/rltrade train configs/intraday_ppo.toml --run-dir $(BUILD_DIR)/demo/run
	$(BUILD_DIR)/rltrade eval $(BUILD_DIR)/demo/run --range test

test: build
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS) -LE slow

bench: build
	$(BUILD_DIR)/rltrade bench machine
	$(BUILD_DIR)/rltrade bench env --env intraday --envs 256 --threads 2 --seconds 5
	$(BUILD_DIR)/rltrade bench train --config configs/cartpole_ppo.toml --threads 1,2 --steps 20480
	$(BUILD_DIR)/src/env/env_bench --benchmark_min_time=0.5
	$(BUILD_DIR)/src/features/features_bench --benchmark_min_time=0.5
	$(BUILD_DIR)/src/learn/learn_bench --benchmark_min_time=0.5

clean:
	rm -rf $(BUILD_DIR)
