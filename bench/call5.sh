#!/bin/sh
# session 11 call 5: the GLU epilogue's D and act_t paths, A/B in one call, repeated (machine noise)
O=$OUT; export TEGEN_CACHE_DIR=/tmp/tc PATH="$PATH:/usr/local/cuda/bin"
S=$O/summary.txt; : > $S
for i in 1 2 3 4 5; do timeout 100 build/tests/test_gemm --gen-bench 2 > $O/genbench.log 2>&1; grep "up fprop" $O/genbench.log | cut -c40- >> $S; done
for g in 0 1 0 1; do TEGEN_GEMM_GEN=$g build/tegen run specs/llama3_8b_mlp_train.yaml --tokens 8192 --iters 20 > $O/time$g.log 2>&1; echo "train GEN=$g: $(grep -E '^k3|^whole layer ' $O/time$g.log | tr -s ' ' | cut -d' ' -f1-5 | tr '\n' ';')" >> $S; done
cat $S
