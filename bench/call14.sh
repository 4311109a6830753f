#!/bin/sh
# session 11 call 14: SM clock and power while the generated GEMM and cuBLASLt run back to back
O=$OUT; export TEGEN_CACHE_DIR=/tmp/tc PATH="$PATH:/usr/local/cuda/bin"
S=$O/summary.txt; : > $S
nvidia-smi --query-gpu=clocks.max.sm,power.limit,enforced.power.limit --format=csv >> $S
timeout 100 build/tests/test_gemm --gen-bench 1 > /dev/null 2>&1 # compile the variants first
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_throttle_reasons.active --format=csv,noheader -lms 50 > $O/smi.csv 2>&1 &
P=$!
for i in 1 2 3; do date +%H:%M:%S.%N > $O/mark_$i; timeout 100 build/tests/test_gemm --gen-bench 1 >> $O/gb.log 2>&1; done
kill $P
grep "up fprop" $O/gb.log | cut -c40- >> $S
awk -F', ' '{gsub(/ MHz/,"",$2); gsub(/ W/,"",$3); if ($3+0 > 300) { n++; c[n]=$2; p[n]=$3; r[$5]++ } } END { print "samples under load:", n; for (k in r) print "throttle reasons", k, r[k] }' $O/smi.csv >> $S
awk -F', ' '{gsub(/ MHz/,"",$2); gsub(/ W/,"",$3); if ($3+0 > 300) print $2, $3}' $O/smi.csv | sort -n | awk '{a[NR]=$1; b[NR]=$2} END {print "SM MHz under load: min", a[1], "median", a[int(NR/2)+1], "max", a[NR]}' >> $S
awk -F', ' '{gsub(/ W/,"",$3); if ($3+0 > 300) print $3}' $O/smi.csv | sort -n | awk '{a[NR]=$1} END {print "power W under load: min", a[1], "median", a[int(NR/2)+1], "max", a[NR]}' >> $S
cat $S
