#!/usr/bin/env bash
# Pretraining speed of this checkout against an earlier commit, side by side, each setting twice
# (2 threads; run it on an otherwise idle machine). The earlier code runs from a `git archive`.
#
#   bash benchmarks/pretrain_speed_compare.sh BASE_COMMIT OUTPUT.jsonl [TEXT]
set -euo pipefail
base=$1 out=$2 text=${3:-corpus/lm/train.txt.gz}
old=$(mktemp -d)
trap 'rm -rf "$old"' EXIT
git archive "$base" spacy_elmo | tar -x -C "$old"
bench() {  # bench LABEL WAIT_POLICY PYTHONPATH ARGS...
  local label=$1 policy=$2 path=$3
  shift 3
  OMP_WAIT_POLICY=$policy PYTHONPATH=$path python benchmarks/pretrain_speed.py --text "$text" --heldout-lines 0 \
    --threads 2 --output "$out" --label "$label" "$@"
}
base_arch=(--arch bundled --tokens 102400)      # en_base's architecture, 40 steps of 128 x 20
small_arch=(--arch small --tokens 76800)        # the small preset, 30 steps of 128 x 20
for repeat in 1 2; do
  bench "$base (CLI default)" PASSIVE "$old" "${base_arch[@]}" --setting negatives=2048
  bench "$base" ACTIVE "$old" "${base_arch[@]}" --setting negatives=2048
  bench "this checkout" ACTIVE "" "${base_arch[@]}" --setting negatives=2048 \
    --setting negatives=2048,precision=bf16,compile=1 --setting negatives=2048,precision=float32,compile=1
  bench "$base" ACTIVE "$old" "${small_arch[@]}" --setting negatives=8192
  bench "this checkout" ACTIVE "" "${small_arch[@]}" --setting negatives=8192 \
    --setting negatives=8192,precision=bf16,compile=1
done
