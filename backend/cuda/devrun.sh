#!/bin/sh
# Runs the CUDA backend's correctness ladder and benchmarks on a GPU machine
# where Go need not be installed. From the repository root, after building
# the test binary elsewhere:
#
#   CGO_ENABLED=0 GOOS=linux GOARCH=amd64 go test -c -o bin/cuda.test ./backend/cuda
#   sh backend/cuda/devrun.sh [info] [kernels] [model] [batch] [bench] [batchbench] [report]
#
# Each stage's full log goes to $OUT/<stage>.log (OUT defaults to
# /tmp/inferno-cuda); a summary is printed. INFERNO_CUDA_SWEEP passes
# tunings to the benchmark (see bench_test.go).
OUT=${OUT:-/tmp/inferno-cuda}
mkdir -p "$OUT"
T=$(pwd)/bin/cuda.test
cd backend/cuda || exit 1
[ $# -eq 0 ] && set -- info kernels model bench
for stage in "$@"; do
	start=$(date +%s)
	case $stage in
	info)
		{
			nvidia-smi --query-gpu=name,driver_version,memory.total,memory.used,clocks.sm,clocks.max.sm,power.draw --format=csv
			nvcc --version | tail -n 1
			uname -r
			nproc
		} >"$OUT/info.log" 2>&1
		cat "$OUT/info.log"
		;;
	kernels)
		timeout 150 "$T" -test.v -test.timeout 140s -test.run 'TestAvailable|TestPTXStamp|TestPack|TestKernel|TestErrors|TestBatchKernel' >"$OUT/kernels.log" 2>&1
		echo "kernels: exit $?"
		;;
	batch)
		timeout 200 "$T" -test.v -test.timeout 190s -test.run 'TestBatchEqualsAlone|TestBatchPrefixCopy|TestBatchMemoryAndErrors|TestSequencesShareWeights' >"$OUT/batch.log" 2>&1
		echo "batch: exit $?"
		;;
	batchbench)
		INFERNO_CUDA_BENCH=1 timeout 240 "$T" -test.v -test.timeout 230s -test.run 'TestBatchBench' >"$OUT/batchbench.log" 2>&1
		echo "batchbench: exit $?"
		;;
	model)
		timeout 200 "$T" -test.v -test.timeout 190s -test.run 'TestGolden|TestTranscript|TestLongContext|TestMemoryFreed' >"$OUT/model.log" 2>&1
		echo "model: exit $?"
		;;
	bench)
		nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,utilization.gpu --format=csv -lms 500 >"$OUT/clocks.log" 2>&1 &
		smi=$!
		INFERNO_CUDA_BENCH=1 timeout 200 "$T" -test.v -test.timeout 190s -test.run 'TestBench' >"$OUT/bench.log" 2>&1
		echo "bench: exit $?"
		kill "$smi" 2>/dev/null
		sort -t, -k2 -n "$OUT/clocks.log" | awk -F, 'NR>1{print "clocks sample:" $0}' | tail -n 3
		;;
	ncu)
		# Kernels of a decode step at 4,096 tokens of context (layer 2 onwards),
		# then the output head.
		for k in "regex:mv_q8|attn_fd@10@6" "regex:argmax_r@1@1"; do
			INFERNO_CUDA_NCU=1 timeout 150 ncu --clock-control none -k "${k%%@*}" \
				--launch-skip "$(echo "$k" | cut -d@ -f2)" --launch-count "$(echo "$k" | cut -d@ -f3)" \
				--section SpeedOfLight --section LaunchStats --section Occupancy --section WarpStateStats \
				"$T" -test.run TestNCU
		done >"$OUT/ncu.log" 2>&1
		echo "ncu: exit $?"
		grep -E '^  [a-z_0-9]+\(|Duration|DRAM Throughput|Memory Throughput|Achieved Occupancy|Registers Per|Warp Cycles Per Issued|Block Limit Reg|Stall|Grid Size|One or More' "$OUT/ncu.log" | cut -c1-160 | head -150
		;;
	report)
		./build_ptx.sh --report >"$OUT/report.log" 2>&1
		echo "report: exit $?"
		;;
	*)
		echo "unknown stage $stage"
		;;
	esac
	[ -f "$OUT/$stage.log" ] && [ "$stage" != info ] &&
		grep -E '^(=== RUN|--- FAIL|--- PASS|--- SKIP|FAIL|ok|PASS|panic)|relative L2|error|divergence|explained|identical|tok/s|floor|tg128|pp512|pp4096|sweep|decode step at|calls|MiB|S_TG|near tie|mismatch' "$OUT/$stage.log" | grep -v '^=== RUN' | cut -c1-220 | head -120
	echo "$stage took $(($(date +%s) - start))s"
done
