#!/bin/sh
# session 10 call 8: the review commit's kernels
O=$OUT; export TEGEN_CACHE_DIR=/tmp/tc PATH="$PATH:/usr/local/cuda/bin"
S=$O/summary.txt; : > $S
timeout 120 build/tests/test_gemm --no-bench > $O/gemm.log 2>&1; echo "test_gemm rc=$? $(grep -c '^ok' $O/gemm.log) ok $(grep -c FAIL $O/gemm.log) FAIL" >> $S
for t in 1 217 993; do build/tegen run tests/gen/plan_glu_epilogue.yaml --tokens $t --check --iters 1 > $O/small.log 2>&1; echo "glu_epi t=$t rc=$? $(grep -c FAIL $O/small.log) FAIL $(grep 'without D' $O/small.log | head -1)" >> $S; done
sed 's/ffn: 160/ffn: 100/' tests/gen/plan_glu_epilogue.yaml > /tmp/odd.yaml
build/tegen run /tmp/odd.yaml --tokens 217 --check --iters 1 > $O/odd.log 2>&1; echo "ffn=100 t=217 rc=$? $(grep -c FAIL $O/odd.log) FAIL" >> $S
timeout 280 build/tests/test_gpu > $O/test_gpu.log 2>&1; echo "test_gpu rc=$? $(grep -c '^ok' $O/test_gpu.log) ok $(grep -c '^FAIL' $O/test_gpu.log) FAIL" >> $S
timeout 250 python3 tests/conformance/gen.py --gpu --sample 160 --seed 96 --jobs 8 > $O/conf.log 2>&1; echo "conf seed 96: $(grep 'cases:' $O/conf.log)" >> $S
timeout 120 python3 tests/conformance/gen.py --gpu --sample 40 --filter '^gglu' --seed 38 --jobs 8 >> $O/conf.log 2>&1; echo "conf gglu seed 38: $(grep 'cases:' $O/conf.log | tail -1)" >> $S
grep '^FAIL' $O/conf.log | head -4 | cut -c1-200 >> $S
TEGEN_GEMM_GEN=1 build/tegen run specs/llama3_8b_mlp.yaml --tokens 8192 --iters 20 > $O/time.log 2>&1; echo "GEN=1: $(grep -E '^k2|^whole layer ' $O/time.log | tr -s ' ' | cut -d' ' -f1-5 | tr '\n' ';')" >> $S
cat $S
