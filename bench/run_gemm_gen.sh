#!/bin/sh
# run_gemm_gen.sh: build and run tests/gpu/harness_gemm_gen.cu (issue 22 stage 1: the wgmma + TMA FP8 GEMM),
# then torch._scaled_mm (cuBLASLt) at the same shapes. Logs in ${OUT:-/tmp}. Exit: the harness's.
cd "$(dirname "$0")/.." || exit 2
O=${OUT:-/tmp}
CUDA=${CUDA:-/usr/local/cuda}
mkdir -p build/harness
"$CUDA/bin/nvcc" -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -Xptxas -v tests/gpu/harness_gemm_gen.cu \
	-o build/harness/gemm_gen -lcuda > "$O/gemm_gen_build.log" 2>&1 || { cat "$O/gemm_gen_build.log"; exit 1; }
grep -E "registers|spill" "$O/gemm_gen_build.log" | head -3
timeout 60 build/harness/gemm_gen | tee "$O/gemm_gen.log"
rc=$?
python3 bench/gemm_gen_torch.py 2>&1 | tee "$O/gemm_gen_torch.log"
exit $rc
