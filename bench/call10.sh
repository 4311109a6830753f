#!/bin/sh
# session 11 call 10: the final tree: test_gemm, conformance over the whole space (and the generated GEMM forced)
O=$OUT; export TEGEN_CACHE_DIR=/tmp/tc PATH="$PATH:/usr/local/cuda/bin"
S=$O/summary.txt; : > $S
timeout 150 build/tests/test_gemm --no-bench > $O/gemm.log 2>&1; echo "test_gemm rc=$? $(grep -c '^ok' $O/gemm.log) ok $(grep -c FAIL $O/gemm.log) FAIL" >> $S
timeout 260 python3 tests/conformance/gen.py --gpu --sample 160 --seed 98 --jobs 8 > $O/conf.log 2>&1; echo "conf seed 98: $(grep 'cases:' $O/conf.log | tail -1)" >> $S
grep '^FAIL' $O/conf.log | head -4 | cut -c1-200 >> $S
TEGEN_GEMM_GEN=2 timeout 150 python3 tests/conformance/gen.py --gpu --sample 60 --filter '^(gemm|gglu)' --seed 99 --jobs 8 > $O/conf2.log 2>&1; echo "conf GEN=2 gemm/gglu seed 99: $(grep 'cases:' $O/conf2.log | tail -1)" >> $S
grep '^FAIL' $O/conf2.log | head -4 | cut -c1-200 >> $S
cat $S
