#!/bin/sh
# session 12 call 4: dglu with the sigmoid on the SFU (TG_DGLU_FAST) vs bit-exact, harness_bwd, alternating; ncu of t256r32 each
O=${OUT:-/tmp/o}; mkdir -p $O
export PATH="$PATH:/usr/local/cuda/bin"
B=build/harness
for i in 1 2; do
 for v in harness_bwd harness_bwd_fast; do echo "== $v $i" >> $O/bwd.log; timeout 120 $B/$v --only dg_bench_sw_e5m2 >> $O/bwd.log 2>&1; done
done
for v in harness_bwd harness_bwd_fast; do
 echo "== ncu $v" >> $O/ncu.log
 timeout 150 ncu --section SpeedOfLight --section WarpStateStats --section Occupancy --section LaunchStats --section InstructionStats -k regex:rowcol_t256r32 -c 1 $B/$v --only dg_bench_sw_e5m2_rowcol_t256r32 >> $O/ncu.log 2>&1
done
grep -E "^== |bench bwd" $O/bwd.log
grep -E "^== |Duration|DRAM Throughput|Compute \(SM\)|Executed Ipc|Issue Slots Busy|Registers Per|Achieved Occupancy|Stall|Warp Cycles Per Issued|Executed Instructions  " $O/ncu.log
