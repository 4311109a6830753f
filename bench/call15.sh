#!/bin/sh
# session 11 call 15: ncu of dreduce (why 10.7 us for 8 MB of partials)
O=$OUT; export TEGEN_CACHE_DIR=/tmp/tc PATH="$PATH:/usr/local/cuda/bin"
timeout 200 ncu --kernel-name regex:dreduce --launch-count 2 --section SpeedOfLight --section LaunchStats --section Occupancy --section WarpStateStats --section MemoryWorkloadAnalysis build/tegen run bench/ct_dbias.yaml --tokens 16384 --iters 1 > $O/ncu.log 2>&1
echo "rc=$?"; grep -E "Duration|DRAM Throughput|Memory Throughput|Achieved Occupancy|Grid Size|Block Size|Registers|Stall|Elapsed Cycles|SM Frequency|Warp Cycles Per Issued|L2 Hit|Compute \(SM\)" $O/ncu.log | head -40
