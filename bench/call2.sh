#!/bin/sh
# session 10 call 2: GLU epilogue with SFU math; GEMM variants; the geglu/clamped reference fixes
O=$OUT; export TEGEN_CACHE_DIR=/tmp/tc PATH="$PATH:/usr/local/cuda/bin"
S=$O/summary.txt; : > $S
build/tegen build specs/llama3_8b_mlp.yaml >/dev/null 2>&1
timeout 200 build/tests/test_gemm --gen-bench > $O/genbench.log 2>&1; grep -E "fprop|dgrad|wgrad" $O/genbench.log | cut -c1-250 >> $S
while read f t; do build/tegen run bench/cf/$f --tokens $t --check --iters 1 > $O/cf.log 2>&1; echo "cf $f t=$t rc=$? $(grep FAIL $O/cf.log | head -2)" >> $S; done < bench/cf/list
build/tegen run specs/llama3_8b_mlp.yaml --tokens 217 --check --iters 2 > $O/8b_check.log 2>&1; echo "8b check t=217 rc=$? $(grep -c FAIL $O/8b_check.log) FAIL; $(grep 'without D' $O/8b_check.log)" >> $S
grep -E "act" $O/8b_check.log | head -5 >> $S
timeout 180 python3 tests/conformance/gen.py --gpu --sample 80 --filter '^gglu' --seed 32 --jobs 8 > $O/conf.log 2>&1; echo "conf gglu: $(grep 'cases:' $O/conf.log)" >> $S
grep '^FAIL' $O/conf.log | head -5 | cut -c1-250 >> $S
for i in 1 2; do for gen in 0 1; do TEGEN_GEMM_GEN=$gen build/tegen run specs/llama3_8b_mlp.yaml --tokens 8192 --iters 20 > $O/time.log 2>&1
echo "GEN=$gen: $(grep -E '^k[0-9]|^whole layer ' $O/time.log | tr -s ' ' | cut -d' ' -f1-5 | tr '\n' ';')" >> $S; done; done
timeout 150 python3 bench/mlp_forward_torch.py >> $S 2>$O/torch.err
cat $S
