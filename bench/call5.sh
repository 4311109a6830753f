#!/bin/sh
# session 10 call 5: the float GLU (split argument, p - p q near saturation); the final tree
build/tegen run bench/geglu_case.yaml --tokens 993 --check --iters 1 > $OUT/geglu.log 2>&1; echo "geglu case rc=$? $(grep -E "y.data" $OUT/geglu.log | head -1)" > $OUT/pre.txt
O=$OUT; export TEGEN_CACHE_DIR=/tmp/tc PATH="$PATH:/usr/local/cuda/bin"
S=$O/summary.txt; : > $S
timeout 200 python3 tests/conformance/gen.py --gpu --sample 80 --filter '^gglu' --seed 33 --jobs 8 > $O/conf.log 2>&1; echo "conf gglu seed 33: $(grep 'cases:' $O/conf.log | tail -1)" >> $S
timeout 200 python3 tests/conformance/gen.py --gpu --sample 80 --filter '^gglu' --seed 35 --jobs 8 >> $O/conf.log 2>&1; echo "conf gglu seed 35: $(grep 'cases:' $O/conf.log | tail -1)" >> $S
timeout 200 python3 tests/conformance/gen.py --gpu --sample 80 --filter '^glu' --seed 36 --jobs 8 >> $O/conf.log 2>&1; echo "conf glu seed 36: $(grep 'cases:' $O/conf.log | tail -1)" >> $S
grep '^FAIL' $O/conf.log | head -6 | cut -c1-220 >> $S
timeout 280 build/tests/test_gpu > $O/test_gpu.log 2>&1; echo "test_gpu rc=$? $(grep -c '^ok' $O/test_gpu.log) ok $(grep -c '^FAIL' $O/test_gpu.log) FAIL" >> $S
for i in 1 2; do for gen in 0 1; do TEGEN_GEMM_GEN=$gen build/tegen run specs/llama3_8b_mlp.yaml --tokens 8192 --iters 20 > $O/time.log 2>&1
echo "GEN=$gen: $(grep -E '^k[0-9]|^whole layer ' $O/time.log | tr -s ' ' | cut -d' ' -f1-5 | tr '\n' ';')" >> $S; done; done
timeout 150 python3 bench/mlp_forward_torch.py >> $S 2>$O/torch.err
cat $O/pre.txt $S
