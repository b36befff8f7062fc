#!/bin/sh
# Runs the CUDA backend's correctness ladder and benchmarks on a GPU machine
# where Go need not be installed. From the repository root, after building
# the test binary elsewhere:
#
#   CGO_ENABLED=0 GOOS=linux GOARCH=amd64 go test -c -o bin/cuda.test ./backend/cuda
#   sh backend/cuda/devrun.sh [info] [kernels] [quant] [model] [shapes] [batch] [arch] [options] [rss] [bench] [batchbench] [sampling] [sampbench] [ncu] [report]
#   INFERNO_OLD=bin/inferno-old sh backend/cuda/devrun.sh startup
#
# T names the test binary (default bin/cuda.test). Tests run with
# -test.run; benchmarks (bench_test.go, batch_bench_test.go: Benchmark*
# functions whose sub-benchmarks are the tuning variants) with
# -test.run '^$' -test.bench PATTERN, on synth's 0.6B Q8_0 built in memory
# or the GGUF file -model names. startup times, on synth's 0.6B (written
# by INFERNO_OLD, an earlier build of the command), `inferno generate -n 1`
# of INFERNO_OLD with an empty, then a warm JIT cache, and the test
# binary's TestStartup (the same: open, upload, one token) with
# CUDA_CACHE_DISABLE=1; then INFERNO_OLD's `inferno bench` (pp512, tg128;
# tg128 x1 on the BatchRunner after 128 tokens) and the same measured by
# BenchmarkSingle and BenchmarkBatchDecode. Every model-level test runs a
# sequence as the commands do: engine.Single, a batch of one on a
# BatchRunner of a Model (model: golden logits, graph against no graph,
# transcripts, long context, memory freed; batch: batched against alone,
# prefix copy, pool refusal, shared weights, the lookahead, a steady
# decode step).
#
# MODEL=file.gguf runs the bench and batchbench stages on that file.
# Each stage's full log goes to $OUT/<stage>.log (OUT defaults to
# /tmp/inferno-cuda); a summary is printed.
OUT=${OUT:-/tmp/inferno-cuda}
mkdir -p "$OUT"
T=${T:-$(pwd)/bin/cuda.test}
case $T in /*) ;; *) T=$(pwd)/$T ;; esac
ROOT=$(pwd)
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
		timeout 150 "$T" -test.v -test.timeout 140s -test.run 'TestAvailable|TestPTXStamp|TestPack|TestKernel|TestErrors|TestBatchKernel|TestMatvec|TestBatchTuning|TestSkinny' >"$OUT/kernels.log" 2>&1
		echo "kernels: exit $?"
		;;
	batch)
		timeout 200 "$T" -test.v -test.timeout 190s -test.run 'TestBatchEqualsAlone|TestBatchPrefixCopy|TestBatchMemoryAndErrors|TestSequencesShareWeights|TestLookaheadOff|TestSingleSteadyState' >"$OUT/batch.log" 2>&1
		echo "batch: exit $?"
		;;
	sampling)
		# The GPU sampler (sample.go, kernels/sample.cuh): distributions
		# against sampling.Distribution, seeds across batch compositions,
		# logprobs against the CPU, sampled decoding with the lookahead;
		# the lookahead's greedy test for regressions.
		(
			[ -f "$OUT/cubin90/sm90.cubin.gz" ] && export INFERNO_CUDA_PTX="$OUT/cubin90/sm90.cubin.gz"
			timeout 400 "$T" -test.v -test.timeout 390s -test.run 'TestSample|TestPhilox|TestBatchSampledLookahead|TestBatchLookahead' >"$OUT/sampling.log" 2>&1
		)
		echo "sampling: exit $?"
		grep -E "chi-squared|reference|agree|lookahead:" "$OUT/sampling.log" | cut -c1-200
		;;
	sampbench)
		# Sampled against greedy throughput on synth's 0.6B Q8_0, one
		# process each, in one run: bench --parallel greedy, temperature 1,
		# Qwen3's settings; tg128/pp512; then the server under 64
		# streaming clients (tools/loadgen), greedy and temperature 1.
		# INFERNO names the command (default bin/inferno), LOADGEN the
		# load generator (default bin/loadgen).
		(
			I=$ROOT/${INFERNO:-bin/inferno}
			L=$ROOT/${LOADGEN:-bin/loadgen}
			M=/tmp/inferno-samp-06b.gguf
			# After the cubin90 stage, its cubin (what will be embedded).
			if [ -f "$OUT/cubin90/sm90.cubin.gz" ]; then
				export INFERNO_CUDA_PTX="$OUT/cubin90/sm90.cubin.gz"
				echo "kernels: $INFERNO_CUDA_PTX"
			fi
			[ -f $M ] || "$I" synth $M --preset 0.6b --type q8_0 >/dev/null
			"$I" bench $M --backend cuda -p 512 -n 128 -r 5
			for s in "" "--temperature 1" "--temperature 0.6 --top-p 0.95 --top-k 20"; do
				# shellcheck disable=SC2086
				"$I" bench $M --backend cuda --parallel 1,8,64,256 -p 128 -n 128 -r 3 $s
			done
			"$I" serve $M --backend cuda --parallel 64 --addr 127.0.0.1:18080 >"$OUT/serve.log" 2>&1 &
			srv=$!
			for t in 0 1; do
				"$L" -url http://127.0.0.1:18080 -wait 120s -clients 64 -requests 1 -prompt 128 -max-tokens 128 -temperature $t >/dev/null 2>&1 # warm-up
				"$L" -url http://127.0.0.1:18080 -clients 64 -requests 3 -prompt 128 -max-tokens 128 -temperature $t
			done
			kill $srv
			wait $srv 2>/dev/null
		) >"$OUT/sampbench.log" 2>&1
		echo "sampbench: exit $?"
		cat "$OUT/sampbench.log"
		;;
	batchbench)
		# S_TG at B = 1..256 and B = 1 after 4,096 tokens, pp512 at depth 0
		# and 4,096, on the BatchRunner (synth 0.6B Q8_0, or MODEL=file.gguf).
		timeout 400 "$T" -test.run '^$' -test.bench 'Batch(Decode|Prefill)/(default|pp)' -test.benchtime 3x -test.timeout 390s ${MODEL:+-model "$MODEL"} >"$OUT/batchbench.log" 2>&1
		echo "batchbench: exit $?"
		;;
	arch)
		# Llama 3 and Qwen2.5 (rope.go: Q/K/V biases, no QK-norm, normal
		# RoPE, frequency factors, tied/untied heads) on synth's presets at
		# small widths, Q8_0 and Q4_K_M: GPU against the CPU, batched
		# against alone (arch_test.go).
		timeout 200 "$T" -test.v -test.timeout 190s -test.run 'TestArch|TestRopeRows' >"$OUT/arch.log" 2>&1
		echo "arch: exit $?"
		grep -E "worst logits|^--- FAIL" "$OUT/arch.log" | cut -c1-200
		;;
	options)
		# The options beyond Qwen3's (options.go, moe.go's biases, rope.go):
		# the extended attention kernels (windows, sinks) and the per-row
		# kernels against float64 and the CPU; Gemma 3, gpt-oss (Q8_0 and
		# MXFP4 experts) and Phi-4 (fused tensors, partial RoPE) on synth's
		# presets at small widths against the CPU, batched against alone
		# and sampled (arch_options_test.go).
		timeout 400 "$T" -test.v -test.timeout 390s -test.run 'TestRowsKernels|TestGLUEpilogues|TestAttentionWindowSinks|TestArchOption|TestRopeRows' >"$OUT/options.log" 2>&1
		echo "options: exit $?"
		grep -E "worst logits|worst relative|^--- FAIL|lookahead:" "$OUT/options.log" | cut -c1-200
		;;
	shapes)
		timeout 200 "$T" -test.v -test.timeout 190s -test.run 'TestShapes|TestShapeModels|TestFit|TestReleaseHostPages|TestKernelChoice' >"$OUT/shapes.log" 2>&1
		echo "shapes: exit $?"
		;;
	rss)
		timeout 200 "$T" -test.v -test.timeout 190s -test.run 'TestHostMemory' -rss >"$OUT/rss.log" 2>&1
		echo "rss: exit $?"
		;;
	startup)
		(
			M=/tmp/inferno-startup-06b.gguf
			O=$ROOT/${INFERNO_OLD:-bin/inferno-old}
			[ -f $M ] || "$O" synth --preset 0.6b $M
			wall() { # label, command...: the command's wall time
				l=$1
				shift
				s=$(date +%s.%N)
				"$@" >"$OUT/startup-$l.out" 2>&1 || echo "$l failed: $(tail -n 3 "$OUT/startup-$l.out")"
				echo "$l: $(awk "BEGIN{print $(date +%s.%N) - $s}") s"
			}
			rm -rf /tmp/jit-old
			wall old-generate-empty-jit-cache env CUDA_CACHE_PATH=/tmp/jit-old "$O" generate $M Hello -n 1 --backend cuda
			wall old-generate-warm-jit-cache env CUDA_CACHE_PATH=/tmp/jit-old "$O" generate $M Hello -n 1 --backend cuda
			for i in 1 2; do
				wall new-cubin-$i env CUDA_CACHE_DISABLE=1 "$T" -test.v -test.run '^TestStartup$' -model $M
				grep -h "kernels:" "$OUT/startup-new-cubin-$i.out"
			done
			CUDA_CACHE_PATH=/tmp/jit-old "$O" bench $M --backend cuda -p 512 -n 128 -r 5 2>&1 | sed 's/^/old: /'
			CUDA_CACHE_PATH=/tmp/jit-old "$O" bench $M --backend cuda -p 128 -n 128 -r 5 --parallel 1 2>&1 | sed 's/^/old: /'
			{
				"$T" -test.run '^$' -test.bench 'Single/default/(tg128-d0|pp512)' -test.benchtime 5x -model $M
				"$T" -test.run '^$' -test.bench 'BatchDecode/default/B=1$' -test.benchtime 5x -model $M
			} 2>&1 | grep -E "^Benchmark|FAIL|panic" | sed 's/^/new: /'
		) >"$OUT/startup.log" 2>&1
		echo "startup: exit $?"
		cat "$OUT/startup.log"
		;;
	quant)
		# Block formats other than Q8_0, and F32/F16/BF16 matrices (TestHalf): every type's kernels, mixture models vs the CPU, batched vs alone.
		timeout 400 "$T" -test.v -test.timeout 390s -test.run 'TestQuant|TestHalf' >"$OUT/quant.log" 2>&1
		echo "quant: exit $?"
		;;
	cubin90)
		# The sm_90 cubin assembled by this machine's ptxas (CUDA 13: the
		# compiler of the driver's JIT) from the committed PTX, into
		# $OUT/cubin90/ (then, in the tree: backend/cuda/build_ptx.sh
		# --import DIR); then its speed against the embedded cubin's. The
		# PTX is read with zstd, else UNZSTD (default bin/unzstd: build it
		# with CGO_ENABLED=0 go build -o bin/unzstd ./tools/unzstd).
		(
			UNZSTD=${UNZSTD:-$ROOT/bin/unzstd} PTXAS90=$(dirname "$(command -v nvcc)")/ptxas ./build_ptx.sh --cubin90 "$OUT/cubin90" &&
				gzip -dc "$OUT/cubin90/sm90.cubin.gz" >/tmp/kernels_sm90.cubin &&
				M=/tmp/inferno-startup-06b.gguf &&
				{ [ -f $M ] || "$ROOT/${INFERNO_OLD:-bin/inferno-old}" synth --preset 0.6b $M; } &&
				CUDA_CACHE_DISABLE=1 INFERNO_CUDA_PTX=/tmp/kernels_sm90.cubin "$T" -test.v -test.run '^TestStartup$' -model $M &&
				"$T" -test.run '^$' -test.bench 'Single/(default|file)/(tg128-d0|pp512)' -test.count 2 -test.benchtime 5x -image /tmp/kernels_sm90.cubin -model $M
		) >"$OUT/cubin90.log" 2>&1
		echo "cubin90: exit $?"
		grep -E "wrote|kernels:|^Benchmark|FAIL|panic|rror" "$OUT/cubin90.log"
		;;
	model)
		timeout 200 "$T" -test.v -test.timeout 190s -test.run 'TestGolden|TestTranscript|TestLongContext|TestLongPrompt|TestMemoryFreed' >"$OUT/model.log" 2>&1
		echo "model: exit $?"
		;;
	bench)
		nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,utilization.gpu --format=csv -lms 500 >"$OUT/clocks.log" 2>&1 &
		smi=$!
		# One sequence (tg128 at depth 0 and 4,096, pp512, pp4096) with
		# and without graphs, and the graph nodes' cost (synth 0.6B Q8_0,
		# or MODEL=file.gguf for BenchmarkSingle).
		{
			timeout 200 "$T" -test.run '^$' -test.bench 'Single/(default|nograph)/' -test.benchtime 5x -test.timeout 190s ${MODEL:+-model "$MODEL"} &&
				timeout 100 "$T" -test.run '^$' -test.bench 'GraphNodes' -test.benchtime 5x -test.timeout 90s
		} >"$OUT/bench.log" 2>&1
		echo "bench: exit $?"
		kill "$smi" 2>/dev/null
		sort -t, -k2 -n "$OUT/clocks.log" | awk -F, 'NR>1{print "clocks sample:" $0}' | tail -n 3
		;;
	ncu)
		# Kernels of a decode step at 4,096 tokens of context (layer 2 onwards),
		# then the output head: BenchmarkSingle without graphs (kernels one
		# by one), the prompt first.
		for k in "regex:mvf_q8|pattn_dec@10@6" "regex:argmax_r@1@1"; do
			timeout 150 ncu --clock-control none -k "${k%%@*}" \
				--launch-skip "$(echo "$k" | cut -d@ -f2)" --launch-count "$(echo "$k" | cut -d@ -f3)" \
				--section SpeedOfLight --section LaunchStats --section Occupancy --section WarpStateStats \
				"$T" -test.run '^$' -test.bench 'Single/nograph/tg128-d4096' -test.benchtime 1x
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
		grep -E '^(=== RUN|--- FAIL|--- PASS|--- SKIP|FAIL|ok|PASS|panic|Benchmark)|relative L2|error|divergence|explained|identical|tok/s|floor|tg128|pp512|pp4096|sweep|decode step at|calls|MiB|S_TG|near tie|mismatch' "$OUT/$stage.log" | grep -v '^=== RUN' | cut -c1-220 | head -120
	echo "$stage took $(($(date +%s) - start))s"
done
