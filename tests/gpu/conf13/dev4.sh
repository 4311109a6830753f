# Device call 4: every GPU test, conf13, a larger conformance sample, sanitizers over part of it.
export TEGEN_CACHE_DIR=/tmp/tc PYTHONUNBUFFERED=1
S=$OUT/summary.txt; : > $S
nvidia-smi --query-gpu=name --format=csv,noheader >> $S
st() { n=$1 t=$2 log=$3; shift 3; s0=$(date +%s); timeout $t "$@" > $log 2>&1; echo "$n: rc=$? $(( $(date +%s) - s0 ))s ok=$(grep -c '^ok' $log) FAIL=$(grep -c '^FAIL' $log) skip=$(grep -c '^skip' $log)" >> $S; grep '^FAIL' $log | head -${FAILN:-8} | cut -c1-400 >> $S; }
st test_gpu 240 $OUT/gpu.log build/tests/test_gpu
st test_gemm 150 $OUT/gemm.log build/tests/test_gemm --no-bench
st conf13 150 $OUT/conf13.log sh tests/gpu/conf13/run.sh
FAILN=40 st conformance ${CONF_T:-300} $OUT/conformance.log python3 tests/conformance/gen.py --gpu --sample ${CONF_N:-800} --out /tmp/confout
grep -A12 '^matrix' $OUT/conformance.log >> $S; tail -2 $OUT/conformance.log >> $S
FAILN=20 st sanitize ${SAN_T:-200} $OUT/sanitize.log sh tests/gpu/sanitize_conf.sh /tmp/confout ${SAN_N:-30}
cat $S
