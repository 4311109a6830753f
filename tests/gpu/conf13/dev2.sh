# Device call 2: GEMM tests (padding), conf13, backward harness, conformance sample.
export TEGEN_CACHE_DIR=/tmp/tc PYTHONUNBUFFERED=1
S=$OUT/summary.txt; : > $S
nvidia-smi --query-gpu=name --format=csv,noheader >> $S
st() { n=$1 t=$2 log=$3; shift 3; s0=$(date +%s); timeout $t "$@" > $log 2>&1; echo "$n: rc=$? $(( $(date +%s) - s0 ))s ok=$(grep -c '^ok' $log) FAIL=$(grep -c '^FAIL' $log) skip=$(grep -c '^skip' $log)" >> $S; grep '^FAIL' $log | head -${FAILN:-8} | cut -c1-300 >> $S; }
st test_gemm 150 $OUT/gemm.log build/tests/test_gemm --no-bench
st conf13 150 $OUT/conf13.log sh tests/gpu/conf13/run.sh
st harness_bwd 120 $OUT/bwd.log build/harness/harness_bwd --no-bench
FAILN=30 st conformance ${CONF_T:-200} $OUT/conformance.log python3 tests/conformance/gen.py --gpu --sample ${CONF_N:-120} --out /tmp/confout
tail -30 $OUT/conformance.log >> $S
cat $S
