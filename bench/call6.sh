#!/bin/sh
# session 10 call 6: the GLU epilogue on the producer warpgroup's warps 1-3 (consumers only stage)
O=$OUT; export TEGEN_CACHE_DIR=/tmp/tc PATH="$PATH:/usr/local/cuda/bin"
S=$O/summary.txt; : > $S
for t in 1 5 217 993; do build/tegen run tests/gen/plan_glu_epilogue.yaml --tokens $t --check --iters 2 > $O/small.log 2>&1; echo "glu_epi t=$t rc=$? $(grep -c FAIL $O/small.log) FAIL $(grep 'without D' $O/small.log | head -1)" >> $S; done
sed 's/ffn: 160/ffn: 100/' tests/gen/plan_glu_epilogue.yaml > /tmp/odd.yaml
timeout 90 compute-sanitizer --tool memcheck build/tegen run /tmp/odd.yaml --tokens 217 --check --iters 1 > $O/san.log 2>&1; echo "memcheck ffn=100 t=217: $(grep -E 'ERROR SUMMARY' $O/san.log) $(grep -c FAIL $O/san.log) FAIL" >> $S
timeout 90 compute-sanitizer --tool memcheck build/tegen run tests/gen/plan_glu_epilogue.yaml --tokens 993 --check --iters 1 > $O/san2.log 2>&1; echo "memcheck ffn=160 t=993: $(grep -E 'ERROR SUMMARY' $O/san2.log) $(grep -c FAIL $O/san2.log) FAIL" >> $S
timeout 90 compute-sanitizer --tool racecheck build/tegen run tests/gen/plan_glu_epilogue.yaml --tokens 217 --check --iters 1 > $O/race.log 2>&1; echo "racecheck t=217: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $O/race.log | head -1)" >> $S
build/tegen run specs/llama3_8b_mlp.yaml --tokens 217 --check --iters 2 > $O/8b_check.log 2>&1; echo "8b check t=217 rc=$? $(grep -c FAIL $O/8b_check.log) FAIL; $(grep 'without D' $O/8b_check.log)" >> $S
timeout 150 python3 tests/conformance/gen.py --gpu --sample 80 --filter '^gglu' --seed 37 --jobs 8 > $O/conf.log 2>&1; echo "conf gglu seed 37: $(grep 'cases:' $O/conf.log | tail -1)" >> $S
grep '^FAIL' $O/conf.log | head -4 | cut -c1-220 >> $S
timeout 200 build/tests/test_gemm --gen-bench > $O/genbench.log 2>&1; grep -E "up fprop" $O/genbench.log | cut -c1-250 >> $S
for i in 1 2; do for gen in 0 1; do TEGEN_GEMM_GEN=$gen build/tegen run specs/llama3_8b_mlp.yaml --tokens 8192 --iters 20 > $O/time.log 2>&1
echo "GEN=$gen: $(grep -E '^k[0-9]|^whole layer ' $O/time.log | tr -s ' ' | cut -d' ' -f1-5 | tr '\n' ';')" >> $S; done; done
timeout 150 python3 bench/mlp_forward_torch.py >> $S 2>$O/torch.err
cat $S
