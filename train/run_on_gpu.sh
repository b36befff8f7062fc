#!/usr/bin/env bash
# The demo-model pipeline end to end, on the GPU machine (one NVIDIA GPU,
# Python with torch, transformers, tokenizers, safetensors; no internet).
# Run from anywhere; it works in the repository root:
#
#   bash train/run_on_gpu.sh --smoke   # 20 s of training: checks every step (~1-2 min)
#   bash train/run_on_gpu.sh           # the real run (MINUTES of training, ~1.5 min more)
#   bash train/run_on_gpu.sh --smoke-cpu   # no GPU/transformers: plain-torch Qwen3 stand-in
#
# Steps: train.py (train, zero-row check, bf16 rounding, bf16 checkpoint,
# samples, loss curve) -> fixtures.py (float32 reference of that checkpoint)
# -> with $INFERNO: `inferno convert` to GGUF f32 and q8_0, sizes, a logits
# check of both GGUFs against the fixtures, and a short generate and chat.
#
# Environment:
#   OUT      where everything to bring back goes (default train/out/bring-back),
#            at most 8 files, none over 16 MB:
#              run.log  loss.csv  loss.png  samples.txt  train_summary.json
#              ckpt.tar.gz        the bf16 HF checkpoint, folder `demo-ckpt/`
#              fixtures.tar       folder `fixtures/`: fixtures.json + 5 *_last_logits.f32
#              demo-q8_0.gguf.gz  (with $INFERNO) ~45 MB unpacked, mostly the zero
#                                 blocks of the unused embedding rows
#   WORK     scratch folder (default /tmp/inferno-demo; emptied first)
#   INFERNO  path of an inferno binary (optional)
#   MINUTES  training budget in minutes (default 7: with ~1.5 minutes for the
#            rest, the whole run fits one 10-minute device command)
#   SEED     (default 1234); PYTHON (default python3)
set -euo pipefail
cd "$(dirname "$0")/.."

MODE=${1:-real}
case "$MODE" in
  real|--smoke|--smoke-cpu) ;;
  *) echo "usage: $0 [--smoke|--smoke-cpu]"; exit 2 ;;
esac
PY=${PYTHON:-python3}
OUT=${OUT:-train/out/bring-back}
WORK=${WORK:-/tmp/inferno-demo}
MINUTES=${MINUTES:-7}
SEED=${SEED:-1234}
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
T0=$(date +%s)
stage() { echo; echo "=== [$(( $(date +%s) - T0 ))s] $*"; }

main() {
  stage "environment ($MODE)"
  if [ "$MODE" = --smoke-cpu ]; then
    $PY -c 'import sys, torch, numpy; print("python", sys.version.split()[0], "| torch", torch.__version__, "| numpy", numpy.__version__)'
  else
    nvidia-smi -L || true
    $PY -c 'import sys, torch, transformers, tokenizers, safetensors, numpy
print("python", sys.version.split()[0], "| torch", torch.__version__, "| cuda", torch.cuda.is_available(),
      "| transformers", transformers.__version__, "| tokenizers", tokenizers.__version__,
      "| safetensors", safetensors.__version__, "| numpy", numpy.__version__)'
  fi
  $PY -c 'import matplotlib; print("matplotlib", matplotlib.__version__)' 2>/dev/null ||
    echo "matplotlib missing: loss.png comes from the built-in PNG writer"
  test -f train/data/kjv.txt.gz || { echo "train/data/kjv.txt.gz missing: run train/prepare_corpus.py"; return 1; }

  stage "train"
  local args=(--corpus train/data/kjv.txt.gz --tokenizer testdata/qwen3-tokenizer --out "$WORK/train" --seed "$SEED")
  case "$MODE" in
    --smoke) args+=(--smoke) ;;
    --smoke-cpu) args+=(--smoke-cpu) ;;
    *) args+=(--minutes "$MINUTES") ;;
  esac
  # TRAIN_ARGS: more train.py flags (e.g. --keep-best --evals 30).
  # shellcheck disable=SC2206
  args+=(${TRAIN_ARGS:-})
  $PY train/train.py "${args[@]}"
  cp "$WORK/train/loss.csv" "$WORK/train/loss.png" "$WORK/train/samples.txt" "$WORK/train/train_summary.json" "$OUT/"

  stage "checkpoint"
  # Only the checkpoint's own files go into the tarball (and the repository).
  local ckpt="$WORK/demo-ckpt" f
  mkdir -p "$ckpt"
  for f in config.json generation_config.json model.safetensors tokenizer.json tokenizer_config.json; do
    cp "$WORK/train/$f" "$ckpt/"
  done
  tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -C "$WORK" -cf - demo-ckpt | gzip -n -9 > "$OUT/ckpt.tar.gz"
  ls -l "$ckpt"
  echo "ckpt.tar.gz: $(stat -c %s "$OUT/ckpt.tar.gz") bytes"

  stage "fixtures"
  local fx=(--ckpt "$ckpt" --corpus train/data/kjv.txt.gz --out "$WORK/fixtures")
  if [ "$MODE" = --smoke-cpu ]; then fx+=(--standin); fi
  $PY train/fixtures.py "${fx[@]}"
  tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -C "$WORK" -cf "$OUT/fixtures.tar" fixtures
  echo "fixtures.tar: $(stat -c %s "$OUT/fixtures.tar") bytes"

  if [ -n "${INFERNO:-}" ]; then
    stage "convert with $INFERNO"
    "$INFERNO" convert "$ckpt" "$WORK/demo-f32.gguf" --type f32
    "$INFERNO" convert "$ckpt" "$WORK/demo-q8_0.gguf" --type q8_0
    echo "demo-f32.gguf: $(stat -c %s "$WORK/demo-f32.gguf") bytes"
    $PY - "$WORK/demo-q8_0.gguf" <<'PYEOF'
import sys, zlib
data = open(sys.argv[1], "rb").read()
z = len(zlib.compress(data, 6))
print(f"demo-q8_0.gguf: {len(data)} bytes, {z} zlib-compressed (about what git stores; budget 10 MB)")
PYEOF
    gzip -n -9 -c "$WORK/demo-q8_0.gguf" > "$OUT/demo-q8_0.gguf.gz"
    echo "demo-q8_0.gguf.gz: $(stat -c %s "$OUT/demo-q8_0.gguf.gz") bytes"

    stage "inferno logits vs fixtures: f32 GGUF (expect ~1e-6..1e-4), q8_0 GGUF (expect ~1e-2)"
    $PY train/fixtures.py --compare "$WORK/fixtures" --inferno "$INFERNO" --gguf "$WORK/demo-f32.gguf" || true
    $PY train/fixtures.py --compare "$WORK/fixtures" --inferno "$INFERNO" --gguf "$WORK/demo-q8_0.gguf" || true

    stage "inferno generate and chat (q8_0)"
    timeout 120 "$INFERNO" generate "$WORK/demo-q8_0.gguf" "In the beginning" -n 60 || true
    echo
    printf 'Tell me about Moses.\nTell me more.\n' | timeout 120 "$INFERNO" chat "$WORK/demo-q8_0.gguf" -n 100 || true
  fi

  stage "bring back: $OUT"
  ls -l "$OUT"
  local n big total
  n=$(find "$OUT" -type f | wc -l)
  big=$(find "$OUT" -type f -size +16M)
  total=$(du -sb "$OUT" | cut -f1)
  echo "$n files (run.log included), $total bytes"
  if [ "$n" -gt 8 ] || [ -n "$big" ] || [ "$total" -gt $((64 * 1024 * 1024)) ]; then
    echo "WARNING: over the bring-back limits (8 files, 16 MB each, 64 MB in all): $big"
  fi
  stage "done"
}

mkdir -p "$OUT"
rm -rf "$WORK"
mkdir -p "$WORK"
main 2>&1 | tee "$OUT/run.log"
exit "${PIPESTATUS[0]}"
