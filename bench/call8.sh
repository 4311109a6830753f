#!/bin/sh
# session 11 call 8: generated vs cuBLASLt over token counts; the 8B training block (train, adamw) beside torch
O=$OUT; export TEGEN_CACHE_DIR=/tmp/tc PATH="$PATH:/usr/local/cuda/bin"
S=$O/summary.txt; : > $S
for i in 1 2; do timeout 120 build/tests/test_gemm --gen-sweep > $O/sweep$i.log 2>&1; echo "sweep $i rc=$?" >> $S; done
for g in 0 1 0 1; do for sp in train adamw; do TEGEN_GEMM_GEN=$g build/tegen run specs/llama3_8b_mlp_$sp.yaml --tokens 8192 --iters 20 > $O/time_${sp}_$g.log 2>&1; echo "$sp GEN=$g: $(grep -E '^k3_gemm|^k4_glu|^whole layer ' $O/time_${sp}_$g.log | tr -s ' ' | cut -d' ' -f1-9 | tr '\n' ';')" >> $S; done; done
timeout 170 python3 bench/anchors/torch_anchors3.py > $O/anchors3.log 2>&1; echo "anchors3 rc=$?" >> $S; grep "mlp fwd+bwd" $O/anchors3.log | tail -3 >> $S
paste -d'|' $O/sweep1.log $O/sweep2.log | grep -E "QKV|attn|up|down" | cut -c1-220 >> $S
cat $S
