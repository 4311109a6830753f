#!/bin/sh
# session 11 call 9: the 8B forward with cached weight casts beside torch; test_gpu (cache test included)
O=$OUT; export TEGEN_CACHE_DIR=/tmp/tc PATH="$PATH:/usr/local/cuda/bin"
S=$O/summary.txt; : > $S
for g in 1 0 1 0; do TEGEN_GEMM_GEN=$g build/tegen run specs/llama3_8b_mlp.yaml --tokens 8192 --iters 20 --cache-weights > $O/fwd$g.log 2>&1; echo "fwd cached GEN=$g: $(grep -E '^k[0-9]|^whole layer' $O/fwd$g.log | tr -s ' ' | cut -d' ' -f1-4 | tr '\n' ';')" >> $S; done
TEGEN_GEMM_GEN=1 build/tegen run specs/llama3_8b_mlp.yaml --tokens 8192 --iters 20 > $O/fwdu.log 2>&1; echo "fwd uncached GEN=1: $(grep -E '^whole layer' $O/fwdu.log | tr -s ' ' | cut -d' ' -f1-4 | tr '\n' ';')" >> $S
timeout 200 python3 bench/mlp_forward_torch.py > $O/torchfwd.log 2>&1; echo "torch fwd rc=$?" >> $S; tail -4 $O/torchfwd.log >> $S
timeout 280 build/tests/test_gpu > $O/test_gpu.log 2>&1; echo "test_gpu rc=$? $(grep -c '^ok' $O/test_gpu.log) ok $(grep -c '^FAIL' $O/test_gpu.log) FAIL" >> $S
grep -E '^FAIL|cache-weights' $O/test_gpu.log | head -4 | cut -c1-200 >> $S
cat $S
