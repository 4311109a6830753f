#!/bin/sh
# session 11 call 6: dglu with the shorter exp (A/B against the old header), ct + dbias baseline, test_gpu
O=$OUT; export TEGEN_CACHE_DIR=/tmp/tc PATH="$PATH:/usr/local/cuda/bin"
S=$O/summary.txt; : > $S
timeout 200 build/harness/harness_bwd > $O/bwd.log 2>&1; echo "harness_bwd rc=$? $(grep -c '^ok' $O/bwd.log) ok $(grep -c '^FAIL' $O/bwd.log) FAIL" >> $S
grep '^FAIL' $O/bwd.log | head -3 >> $S
for i in 1 2; do
timeout 60 build/harness/harness_bwd_old --only rowcol > $O/bwd_old.log 2>&1; grep -E "copy|rowcol" $O/bwd_old.log | grep bench | sed 's/^/OLD /' >> $S
timeout 60 build/harness/harness_bwd --only rowcol > $O/bwd_new.log 2>&1; grep -E "copy|rowcol" $O/bwd_new.log | grep bench | sed 's/^/NEW /' >> $S
done
build/tegen run bench/ct_dbias.yaml --tokens 16384 --iters 20 > $O/ctdb.log 2>&1; grep -E "^k|whole" $O/ctdb.log >> $S
timeout 280 build/tests/test_gpu > $O/test_gpu.log 2>&1; echo "test_gpu rc=$? $(grep -c '^ok' $O/test_gpu.log) ok $(grep -c '^FAIL' $O/test_gpu.log) FAIL" >> $S
grep '^FAIL' $O/test_gpu.log | head -4 | cut -c1-200 >> $S
cat $S
