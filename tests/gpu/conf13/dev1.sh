# One device call: the issue-13 regression specs, the GPU test suite, the row harness (quick).
export TEGEN_CACHE_DIR=/tmp/tc PYTHONUNBUFFERED=1
S=$OUT/summary.txt; : > $S
nvidia-smi --query-gpu=name --format=csv,noheader >> $S
sh tests/gpu/conf13/run.sh $OUT/conf13.log >> $S 2>&1
python3 tests/gpu/conf13/nvfp4_tiny_blocks.py /tmp/nvin 5 256
build/tegen run tests/gpu/conf13/nvfp4_zero_scale.yaml --tokens 5 --check --in /tmp/nvin --out /tmp/nvout --iters 1 > $OUT/nvfp4.log 2>&1; echo "nvfp4 crafted rc=$?" >> $S
python3 -c "
import numpy as np
q=np.load('/tmp/nvout/xq.npy'); s=np.load('/tmp/nvout/xq.scale_inv.npy')
print('data row0', q.reshape(5,-1)[0][:12].tolist()); print('scales row0', s.reshape(-1)[:16].tolist())" >> $S 2>&1
[ "$1" = quick ] || { timeout 300 build/tests/test_gpu > $OUT/test_gpu.log 2>&1; echo "test_gpu rc=$? ok=$(grep -c '^ok' $OUT/test_gpu.log) FAIL=$(grep -c '^FAIL' $OUT/test_gpu.log)" >> $S; grep '^FAIL' $OUT/test_gpu.log | head -20 >> $S; }
[ "$1" = quick ] || { OUT=$OUT timeout 300 sh bench/run_rows.sh --quick > $OUT/rows.out 2>&1; echo "rows rc=$?" >> $S; tail -5 $OUT/rows.out >> $S; }
cat $S
