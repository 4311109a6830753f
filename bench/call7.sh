#!/bin/sh
# session 11 call 7: the fused ct + dbias (correctness, speed beside the unfused kernels), conformance
O=$OUT; export TEGEN_CACHE_DIR=/tmp/tc PATH="$PATH:/usr/local/cuda/bin"
S=$O/summary.txt; : > $S
for h in 256 4096; do sed "s/@H@/$h/" tests/gpu/specs/ct_dbias.yaml > /tmp/ctd$h.yaml; done
for t in 1 5 33 217 993; do build/tegen run /tmp/ctd256.yaml --tokens $t --check --iters 1 > $O/small.log 2>&1; echo "ct_dbias h=256 t=$t rc=$? $(grep -c FAIL $O/small.log) FAIL $(grep -c '^ *ok' $O/small.log) ok" >> $S; grep FAIL $O/small.log | head -3 | cut -c1-200 >> $S; done
timeout 90 compute-sanitizer --tool memcheck build/tegen run /tmp/ctd256.yaml --tokens 217 --iters 1 > $O/san.log 2>&1; echo "memcheck: $(grep -E 'ERROR SUMMARY' $O/san.log)" >> $S
timeout 90 compute-sanitizer --tool racecheck build/tegen run /tmp/ctd256.yaml --tokens 217 --iters 1 > $O/race.log 2>&1; echo "racecheck: $(grep -E 'RACECHECK SUMMARY' $O/race.log)" >> $S
grep -v "dbias: {in: dy" bench/ct_dbias.yaml | sed 's/^ops:$/ops:\n  - dbias: {in: dy, out: db}/' > /tmp/ctdb_unfused.yaml
for i in 1 2; do
build/tegen run bench/ct_dbias.yaml --tokens 16384 --iters 20 > $O/ctdb.log 2>&1; grep -E "^k|whole" $O/ctdb.log | sed 's/^/fused /' >> $S
build/tegen run /tmp/ctdb_unfused.yaml --tokens 16384 --iters 20 > $O/ctdb.log 2>&1; grep -E "^k|whole" $O/ctdb.log | sed 's/^/unfused /' >> $S
done
timeout 280 build/tests/test_gpu > $O/test_gpu.log 2>&1; echo "test_gpu rc=$? $(grep -c '^ok' $O/test_gpu.log) ok $(grep -c '^FAIL' $O/test_gpu.log) FAIL" >> $S
grep '^FAIL' $O/test_gpu.log | head -4 | cut -c1-200 >> $S
timeout 150 python3 tests/conformance/gen.py --gpu --sample 40 --filter '\.db\.' --seed 43 --jobs 8 > $O/conf.log 2>&1; echo "conf db seed 43: $(grep 'cases:' $O/conf.log | tail -1)" >> $S
grep '^FAIL' $O/conf.log | head -4 | cut -c1-200 >> $S
cat $S
