#!/bin/sh
# session 11 call 16: dreduce with the next round's loads in flight (bit-exactness, speed), test_gpu
O=$OUT; export TEGEN_CACHE_DIR=/tmp/tc PATH="$PATH:/usr/local/cuda/bin"
S=$O/summary.txt; : > $S
timeout 200 build/harness/harness_bwd > $O/bwd.log 2>&1; echo "harness_bwd rc=$? $(grep -c '^ok' $O/bwd.log) ok $(grep -c '^FAIL' $O/bwd.log) FAIL" >> $S
grep -E '^FAIL' $O/bwd.log | head -3 >> $S; grep -E 'copy|dn1_bench_rms_bf16 |db_bench|dr_|rowcol_t256r32' $O/bwd.log | grep bench >> $S
for i in 1 2; do build/tegen run bench/ct_dbias.yaml --tokens 16384 --iters 20 > $O/ctdb.log 2>&1; grep -E "^k|whole" $O/ctdb.log >> $S; done
timeout 280 build/tests/test_gpu > $O/test_gpu.log 2>&1; echo "test_gpu rc=$? $(grep -c '^ok' $O/test_gpu.log) ok $(grep -c '^FAIL' $O/test_gpu.log) FAIL" >> $S
grep '^FAIL' $O/test_gpu.log | head -3 | cut -c1-200 >> $S
cat $S
