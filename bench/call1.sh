#!/bin/sh
# session 10 call 1: the GLU epilogue, correctness then speed
O=$OUT; export TEGEN_CACHE_DIR=/tmp/tc PATH="$PATH:/usr/local/cuda/bin"
S=$O/summary.txt; : > $S
nvidia-smi --query-gpu=name --format=csv,noheader >> $S
build/tegen build specs/llama3_8b_mlp.yaml >/dev/null 2>&1
for t in 1 5 217 993; do build/tegen run tests/gen/plan_glu_epilogue.yaml --tokens $t --check --iters 2 > $O/small.log 2>&1; echo "glu_epi t=$t rc=$? $(grep -c FAIL $O/small.log) FAIL $(grep 'without D' $O/small.log | head -1)" >> $S; done
cp $O/small.log $O/small_last.log
build/tegen run specs/llama3_8b_mlp.yaml --tokens 217 --check --iters 2 > $O/8b_check.log 2>&1; echo "8b check t=217 rc=$? $(grep -c FAIL $O/8b_check.log) FAIL; $(grep 'without D' $O/8b_check.log)" >> $S
timeout 150 build/tests/test_gemm --no-bench > $O/gemm.log 2>&1; echo "test_gemm rc=$? $(grep -c '^ok' $O/gemm.log) ok $(grep -c FAIL $O/gemm.log) FAIL" >> $S
timeout 200 python3 tests/conformance/gen.py --gpu --sample 90 --filter '^gglu' --seed 31 --jobs 8 > $O/conf.log 2>&1; echo "conf gglu: $(grep 'cases:' $O/conf.log)" >> $S
grep '^FAIL' $O/conf.log | head -5 >> $S
for i in 1 2; do
for gen in 0 1; do TEGEN_GEMM_GEN=$gen build/tegen run specs/llama3_8b_mlp.yaml --tokens 8192 --iters 20 > $O/time$gen.log 2>&1
echo "GEN=$gen: $(grep -E '^k[0-9]' $O/time$gen.log | awk '{printf "%s=%s ", $1, $3}') | $(grep '^whole layer ' $O/time$gen.log | awk '{print $3}')" >> $S; done; done
timeout 200 python3 bench/mlp_forward_torch.py >> $S 2>$O/torch.err
timeout 60 compute-sanitizer --tool memcheck build/tegen run tests/gen/plan_glu_epilogue.yaml --tokens 217 --check --iters 1 > $O/san.log 2>&1; echo "memcheck: $(grep -E 'ERROR SUMMARY' $O/san.log)" >> $S
cat $S
