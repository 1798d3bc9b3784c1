# crescent: build, dependencies, tests, benchmarks.
# `make` builds ./crescent and build/lua/crescent/core.so.
# `make demo` installs what is missing, builds, generates data, runs examples/mf.lua.
# `make test` runs every C unit test, busted spec and integration test.

CC      ?= gcc
# wordnet-base and dict-gcide are the sources of the real datasets (make data);
# installed with the rest so that make test also checks the builders on them.
# openmpi-bin, openssh-server and slurm-wlm: the emulated-cluster tests (tests/cluster)
# start ranks under a real mpirun, over ssh, and under a real Slurm.
DEBS    := liblua5.4-dev lua5.4 libzmq3-dev libopenblas-dev zlib1g-dev lua-busted \
           libreadline-dev libmetis-dev pkg-config wordnet-base dict-gcide lua-cjson \
           iproute2 openmpi-bin openssh-server openssh-client slurm-wlm
WARN    := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Werror
OPT     ?= -O2 -g
CFLAGS  += -std=c11 -D_GNU_SOURCE -fPIC $(OPT) $(WARN) -Isrc -I/usr/include/lua5.4 \
           -I/usr/include/x86_64-linux-gnu/openblas-pthread $(EXTRA_CFLAGS)
LIBS    := -lzmq -lopenblas -lz -lreadline -lpthread -lm
LUALIB  := -llua5.4
BUILD   ?= build
BIN     ?= crescent
# make install PREFIX=... (DESTDIR for staged installs); layout in mk/install.sh
PREFIX  ?= /usr/local

CORE_SRC := $(wildcard src/base/*.c src/net/*.c src/ps/*.c src/optim/*.c src/partition/*.c \
                      src/data/*.c src/kernels/*.c src/eval/*.c)
LUA_SRC  := $(wildcard src/lua/*.c)
CLI_SRC  := $(wildcard src/cli/*.c)
CORE_OBJ := $(CORE_SRC:%.c=$(BUILD)/%.o)
LUA_OBJ  := $(LUA_SRC:%.c=$(BUILD)/%.o)
CLI_OBJ  := $(CLI_SRC:%.c=$(BUILD)/%.o) $(BUILD)/src/main.o
CTESTS   := $(patsubst tests/c/%.c,$(BUILD)/tests/%,$(wildcard tests/c/test_*.c))
# Helpers the integration tests run (not unit tests: tests/run.sh runs test_* only).
CHELPERS := $(BUILD)/tests/probe_data $(BUILD)/tests/utf8_check
BENCHES  := $(patsubst tests/bench/%.c,$(BUILD)/bench/%,$(wildcard tests/bench/*.c))

.PHONY: all deps demo test asan fuzz bench data clean check-deps install uninstall
all: check-deps $(BIN) $(BUILD)/lua/crescent/core.so $(CTESTS) $(CHELPERS) $(BENCHES)

# Install missing Debian packages (we are root on the target machines).
deps:
	@missing=""; for p in $(DEBS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then echo "installing:$$missing"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; fi

check-deps:
	@test -f /usr/include/lua5.4/lua.h -a -f /usr/include/zmq.h -a -f /usr/include/metis.h \
	  || { echo "missing build dependencies: run 'make deps' (or 'make demo')"; exit 1; }

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

# AdaGrad's sqrtf: without errno to set, GCC vectorises the update loop
# (sqrtps); results are bitwise the same (IEEE sqrt and division either way).
$(BUILD)/src/optim/cr_optim.o: CFLAGS += -fno-math-errno

# The LDA MH sampler finds a topic's slot in a compact row by counting bits
# (a popcount per lookup, several per token): on x86-64 with the POPCNT
# instruction (every x86-64 CPU since 2008) instead of a bit-twiddling loop.
ifeq ($(shell uname -m),x86_64)
$(BUILD)/src/kernels/cr_lda.o: CFLAGS += -mpopcnt
endif

$(BUILD)/libcrescent.a: $(CORE_OBJ) $(LUA_OBJ)
	@rm -f $@; ar rcs $@ $^

$(BIN): $(CLI_OBJ) $(BUILD)/libcrescent.a
	$(CC) $(CFLAGS) -o $@ $(CLI_OBJ) $(BUILD)/libcrescent.a $(LUALIB) $(LIBS) -Wl,-E

# The Lua C module: symbols of liblua come from the host interpreter.
$(BUILD)/lua/crescent/core.so: $(CORE_OBJ) $(LUA_OBJ)
	@mkdir -p $(dir $@)
	$(CC) -shared $(CFLAGS) -o $@ $^ $(LIBS)

$(BUILD)/tests/%: tests/c/%.c $(wildcard tests/c/*.h) $(BUILD)/libcrescent.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Itests/c -o $@ $< $(BUILD)/libcrescent.a $(LUALIB) $(LIBS)

$(BUILD)/bench/%: tests/bench/%.c $(BUILD)/libcrescent.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -O3 -Itests/c -o $@ $< $(BUILD)/libcrescent.a $(LUALIB) $(LIBS)

# The binary, Lua modules and models, configs, examples, docs and the man
# page; `crescent run` then works from any directory with no environment
# variable. uninstall removes exactly what install wrote (its manifest).
install: check-deps $(BIN)
	@sh mk/install.sh install "$(DESTDIR)$(PREFIX)" $(BIN)

uninstall:
	@sh mk/install.sh uninstall "$(DESTDIR)$(PREFIX)"

demo: deps
	$(MAKE) all
	./crescent data zipf-mf --rows 20000 --cols 2000 --cells 1000000 --rank 16 --noise 0.1 \
	  --test-fraction 0.1 --seed 1 --out data/mf
	./crescent run examples/mf.lua --nodes 2

test: deps
	@$(MAKE) --no-print-directory all >$(BUILD).log 2>&1 || { cat $(BUILD).log; echo "0 passed, 1 failed"; exit 1; }
	@BUILD=$(BUILD) SANITIZE=$(SANITIZE) CRESCENT_BIN=$(CURDIR)/$(BIN) tests/run.sh

# -fno-sanitize-recover: undefined behaviour aborts the process (UBSan
# otherwise prints and goes on, and a test that still passes hides it).
SANITIZE_OPT = -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer

# Busted loads core.so into lua5.4, so the sanitizer runtimes are preloaded
# there (tests/run.sh does it when SANITIZE is set); leak checks are off for
# the interpreter, which keeps its state alive at exit.
asan:
	$(MAKE) BUILD=build-asan OPT="$(SANITIZE_OPT)" \
	  BIN=crescent-asan SANITIZE=1 test

# Long mutation fuzzing of every data reader and of the checkpoint reader
# under ASan/UBSan (make test runs the same fuzzers with 1500 mutants per
# case). CRESCENT_FUZZ_N mutants per case (default 40000), a new seed each
# run unless CRESCENT_FUZZ_SEED is given; the seed is printed to replay a failure.
fuzz: deps
	@$(MAKE) --no-print-directory BUILD=build-asan OPT="$(SANITIZE_OPT)" BIN=crescent-asan all >build-asan.log 2>&1 \
	  || { cat build-asan.log; exit 1; }
	@seed=$${CRESCENT_FUZZ_SEED:-$$(date +%s)}; n=$${CRESCENT_FUZZ_N:-40000}; \
	echo "fuzz: $$n mutants per case, seed $$seed (CRESCENT_FUZZ_SEED=$$seed make fuzz replays it)"; \
	for t in test_data_fuzz test_ckpt; do \
	  echo "== $$t"; CRESCENT_FUZZ_N=$$n CRESCENT_FUZZ_SEED=$$seed UBSAN_OPTIONS=halt_on_error=1 build-asan/tests/$$t || exit 1; \
	done

bench: deps all
	@BUILD=$(BUILD) tests/bench/run.sh

data: deps all
	@BUILD=$(BUILD) tests/make_data.sh

clean:
	rm -rf build build-asan crescent crescent-asan build.log build-asan.log

-include $(CORE_OBJ:.o=.d) $(LUA_OBJ:.o=.d) $(CLI_OBJ:.o=.d)
