#!/bin/sh
# session 11 call 3: act rowwise from registers with act_t (no mid-tile wait)
O=$OUT; export TEGEN_CACHE_DIR=/tmp/tc PATH="$PATH:/usr/local/cuda/bin"
S=$O/summary.txt; : > $S
for h in 256 320; do sed "s/@H@/$h/" tests/gpu/specs/gemm_glu_epilogue.yaml > /tmp/ge$h.yaml; done
sed 's/ffn: 160/ffn: 100/' tests/gen/plan_glu_epilogue.yaml > /tmp/odd.yaml
for t in 1 217 256 1024; do for f in /tmp/ge320.yaml /tmp/odd.yaml tests/gen/plan_glu_epilogue.yaml; do build/tegen run $f --tokens $t --check --iters 1 > $O/small.log 2>&1; echo "$f t=$t rc=$? $(grep -c FAIL $O/small.log) FAIL $(grep -c '^ *ok' $O/small.log) ok" >> $S; grep FAIL $O/small.log | head -3 | cut -c1-200 >> $S; done; done
timeout 120 build/tegen run specs/llama3_8b_mlp_train.yaml --tokens 993 --check --iters 1 > $O/train_check.log 2>&1; echo "8b train check t=993 rc=$? $(grep -c FAIL $O/train_check.log) FAIL" >> $S
for t in 217 256; do timeout 90 compute-sanitizer --tool memcheck build/tegen run /tmp/ge320.yaml --tokens $t --iters 1 > $O/san.log 2>&1; echo "memcheck t=$t: $(grep -E 'ERROR SUMMARY' $O/san.log)" >> $S; done
timeout 90 compute-sanitizer --tool racecheck build/tegen run /tmp/ge256.yaml --tokens 256 --iters 1 > $O/race.log 2>&1; echo "racecheck: $(grep -E 'RACECHECK SUMMARY|ERROR SUMMARY' $O/race.log)" >> $S
timeout 100 build/tests/test_gemm --gen-bench > $O/genbench.log 2>&1; echo "gen-bench rc=$?" >> $S; grep "up fprop" $O/genbench.log | head -1 >> $S
for g in 0 1 0 1; do TEGEN_GEMM_GEN=$g build/tegen run specs/llama3_8b_mlp_train.yaml --tokens 8192 --iters 20 > $O/time$g.log 2>&1; echo "train GEN=$g: $(grep -E '^k3|^k4|^whole layer ' $O/time$g.log | tr -s ' ' | cut -d' ' -f1-5 | tr '\n' ';')" >> $S; done
cat $S
