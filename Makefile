# gigakv — the README's two commands are `make run` and `make test`.
BUILD_DIR ?= build
ASAN_DIR ?= build-asan
FUZZ_DIR ?= build-fuzz
JOBS ?= 2
CONFIG ?= conf/gigakv.conf
CMAKE_FLAGS ?=

.PHONY: all deps build run test unit-test e2e-test bench asan fuzz docker-test format clean

all: build

deps:
	@scripts/install-deps.sh

$(BUILD_DIR)/build.ninja:
	cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS)

build: $(BUILD_DIR)/build.ninja
	cmake --build $(BUILD_DIR) -j $(JOBS)

# Installs missing packages, builds Release and serves on 6379 in the foreground.
run: deps
	@$(MAKE) --no-print-directory build
	@mkdir -p data
	$(BUILD_DIR)/gigakv-server $(CONFIG)

# Installs missing packages, builds with -Werror and runs every tier (unit, command, e2e).
test: deps
	@$(MAKE) --no-print-directory build CMAKE_FLAGS="-DGIGAKV_WERROR=ON"
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS)

bench: deps build
	benchmarks/compare.sh --server $(BUILD_DIR)/gigakv-server

asan: deps
	cmake -S . -B $(ASAN_DIR) -G Ninja -DCMAKE_BUILD_TYPE=Debug -DGIGAKV_SANITIZE=ON \
	  -DGIGAKV_BUILD_BENCHMARKS=OFF
	cmake --build $(ASAN_DIR) -j $(JOBS)
	cd $(ASAN_DIR) && ASAN_OPTIONS=detect_leaks=1 ctest --output-on-failure -j $(JOBS)

# Builds a libFuzzer target with clang and runs it: FUZZ_TARGET is request_parser_fuzzer (the
# default, corpus tests/fuzz/corpus/) or rdb_reader_fuzzer (corpus tests/fuzz/rdb_corpus/).
# FUZZ_SECONDS (default 60) bounds the run.
FUZZ_SECONDS ?= 60
FUZZ_TARGET ?= request_parser_fuzzer
FUZZ_CORPUS = $(if $(filter rdb_reader_fuzzer,$(FUZZ_TARGET)),tests/fuzz/rdb_corpus,tests/fuzz/corpus)
fuzz: deps
	CXX=clang++ cmake -S . -B $(FUZZ_DIR) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DGIGAKV_FUZZ=ON -DGIGAKV_BUILD_BENCHMARKS=OFF -DGIGAKV_BUILD_TESTS=OFF
	cmake --build $(FUZZ_DIR) -j $(JOBS) --target $(FUZZ_TARGET)
	mkdir -p fuzz-artifacts $(FUZZ_DIR)/corpus-$(FUZZ_TARGET)
	$(FUZZ_DIR)/tests/fuzz/$(FUZZ_TARGET) -max_total_time=$(FUZZ_SECONDS) \
	  -artifact_prefix=fuzz-artifacts/ -detect_leaks=1 -timeout=10 \
	  $(FUZZ_DIR)/corpus-$(FUZZ_TARGET) $(FUZZ_CORPUS)

docker-test:
	docker/test-image.sh

format:
	git ls-files '*.h' '*.cc' | xargs clang-format -i

clean:
	rm -rf $(BUILD_DIR) $(ASAN_DIR) $(FUZZ_DIR)
