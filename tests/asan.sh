#!/bin/sh
# asan.sh: build the CLI with AddressSanitizer + UBSan into build-asan/ and
# run the golden tests against it (leaks are errors too).
# Prints "ok asan" or "FAIL asan". Run from anywhere.
cd "$(dirname "$0")/.." || exit 1
mkdir -p build-asan
yaml_a=/usr/lib/x86_64-linux-gnu/libyaml.a
if ! gcc -std=c11 -D_GNU_SOURCE -g -O1 -fsanitize=address,undefined -fno-sanitize-recover=undefined \
	-fno-omit-frame-pointer -Wall -Wextra -Werror -Wno-unused-parameter -Igen \
	gen/main.c gen/spec.c gen/ir.c gen/util.c $yaml_a -o build-asan/tegen 2>build-asan/build.log; then
	echo "FAIL asan (build)"
	tail -20 build-asan/build.log
	exit 1
fi
if TEGEN=build-asan/tegen ASAN_OPTIONS=detect_leaks=1 sh tests/golden.sh >build-asan/golden.log 2>&1; then
	echo "ok asan ($(grep -c '^ok' build-asan/golden.log) cases)"
else
	echo "FAIL asan"
	grep -v '^ok' build-asan/golden.log | head -40
	exit 1
fi
