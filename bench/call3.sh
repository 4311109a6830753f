#!/bin/sh
# session 10 call 3: the final tree: every GPU test, conformance, sanitizer, the 8B forward beside torch
O=$OUT; export TEGEN_CACHE_DIR=/tmp/tc PATH="$PATH:/usr/local/cuda/bin"
S=$O/summary.txt; : > $S
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader >> $S
timeout 280 build/tests/test_gpu > $O/test_gpu.log 2>&1; echo "test_gpu rc=$? $(grep -c '^ok' $O/test_gpu.log) ok $(grep -c '^FAIL' $O/test_gpu.log) FAIL" >> $S
grep '^FAIL' $O/test_gpu.log | head -3 | cut -c1-200 >> $S
timeout 120 build/tests/test_gemm --no-bench > $O/gemm.log 2>&1; echo "test_gemm rc=$? $(grep -c '^ok' $O/gemm.log) ok $(grep -c FAIL $O/gemm.log) FAIL" >> $S
timeout 240 python3 tests/conformance/gen.py --gpu --sample 160 --seed 94 --jobs 8 > $O/conf.log 2>&1; echo "conf seed 94: $(grep 'cases:' $O/conf.log)" >> $S
timeout 150 python3 tests/conformance/gen.py --gpu --sample 80 --filter '^gglu' --seed 33 --jobs 8 >> $O/conf.log 2>&1; echo "conf gglu seed 33: $(grep 'cases:' $O/conf.log | tail -1)" >> $S
grep '^FAIL' $O/conf.log | head -6 | cut -c1-220 >> $S
for t in 217 993; do timeout 90 compute-sanitizer --tool memcheck build/tegen run tests/gen/plan_glu_epilogue.yaml --tokens $t --check --iters 1 > $O/san.log 2>&1; echo "memcheck glu_epi t=$t: $(grep -E 'ERROR SUMMARY' $O/san.log) $(grep -c FAIL $O/san.log) FAIL" >> $S; done
sed 's/ffn: 160/ffn: 100/' tests/gen/plan_glu_epilogue.yaml > /tmp/odd.yaml
timeout 90 compute-sanitizer --tool memcheck build/tegen run /tmp/odd.yaml --tokens 217 --check --iters 1 > $O/san.log 2>&1; echo "memcheck ffn=100 (register stores) t=217: $(grep -E 'ERROR SUMMARY' $O/san.log) $(grep -c FAIL $O/san.log) FAIL $(grep 'without D' $O/san.log)" >> $S
for i in 1 2; do for gen in 0 1; do TEGEN_GEMM_GEN=$gen build/tegen run specs/llama3_8b_mlp.yaml --tokens 8192 --iters 20 > $O/time.log 2>&1
echo "GEN=$gen: $(grep -E '^k[0-9]|^whole layer ' $O/time.log | tr -s ' ' | cut -d' ' -f1-5 | tr '\n' ';')" >> $S; done; done
timeout 150 python3 bench/mlp_forward_torch.py >> $S 2>$O/torch.err
cat $S
