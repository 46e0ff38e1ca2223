#!/usr/bin/env bash
# The evidence of issue 25 (static vectors vs ELMo), one training at a time, resumable.
#
#   nohup nice -n 10 bash scripts/evidence_queue.sh > logs/evidence_queue.log 2>&1 &
#
# Order: the floret vectors (once); NER baseline + vectors: tuning grid (dropout 0.1/0.3 x
# encoder depth 2/4, seed 0, one run per combination), then seeds 0 (the tuning run reused), 1, 2;
# the same for NER ELMo + vectors; the taggers (grid: dropout 0.1/0.3); NER + vectors on the
# first 1,000 train sentences; all four NER variants on the random 1,000 (seed by seed); the
# coreference variants of COREF_VARIANTS (seed by seed).
# After each run: its test scores go into docs/results/<variant>.json (evaluate_runs.py --seeds),
# its log into logs/queue/<RESULTS>/ (git-ignored; LOGS= elsewhere) and the log's summary (dev
# evaluations, /usr/bin/time -v, scores) into docs/results/run-logs.json (summarize_log.py),
# compare.py rewrites docs/results/results.{md,png}, and the JSON and tables are committed, never
# a log (COMMIT=0: nothing). A step is done when its result is in docs/results/
# (a tuning combination: docs/results/tune/<variant>/<combination>.json; a seed: that seed in
# docs/results/<variant>.json), so the queue can be stopped at any time (kill the process group)
# and started again, in this session or a later one: a run cut short is redone from its start.
# One thread (OMP/MKL), for a machine shared with other work. VARIANTS (tuned, on all of NER and
# UPOS, and on the first 1,000), RANDOM_VARIANTS (the random 1,000) and COREF_VARIANTS (GUM, with
# COREF_PY: a Python with the `coref` extra; none by default) choose the variants; BASELINES names
# a folder whose baseline records the tables of RESULTS use where RESULTS has none. A second biLM
# against the same baselines (its records under docs/results/en_base_v2):
#   BILM=en_base_v2 RESULTS=docs/results/en_base_v2 BASELINES=docs/results TRAINING=training/en_base_v2 \
#   VARIANTS=elmo RANDOM_VARIANTS=elmo COREF_VARIANTS=elmo bash scripts/evidence_queue.sh
# The variables below change where it reads and writes, e.g. the whole queue on the smoke data in
# a few minutes:
#   CORPUS=smoke/corpus VECTORS=smoke/vectors/en_floret BILM=smoke/training/bilm/model LOW=50 \
#   SEEDS=0 RESULTS=smoke/queue/results TRAINING=smoke/queue/training COMMIT=0 \
#   TRAIN_ARGS="--training.max_steps 20 --training.eval_frequency 10" bash scripts/evidence_queue.sh
set -euo pipefail
cd "$(dirname "$0")/.."

PY=${PY:-.venv/bin/python}
COMMIT=${COMMIT:-1}
CORPUS=${CORPUS:-corpus}
VECTORS=${VECTORS:-corpus/vectors/en_floret}
BILM=${BILM:-en_base}
LOW=${LOW:-1000}
SEEDS=${SEEDS:-0 1 2}
RESULTS=${RESULTS:-docs/results}
TRAINING=${TRAINING:-training}
TRAIN_ARGS=${TRAIN_ARGS:-}
VARIANTS=${VARIANTS-baseline-vectors elmo-vectors}  # set but empty: none
RANDOM_VARIANTS=${RANDOM_VARIANTS-baseline baseline-vectors elmo elmo-vectors}
COREF_VARIANTS=${COREF_VARIANTS:-}
COREF_PY=${COREF_PY:-.venv-coref/bin/python}
BASELINES=${BASELINES:-}
EVAL_ARGS=${EVAL_ARGS:-}
LOGS=${LOGS:-logs/queue/$RESULTS}  # outside what is committed (.gitignore: logs/)
RUN_LOGS=$RESULTS/run-logs.json  # the logs' summaries: what is committed of them
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
mkdir -p "$LOGS" "$RESULTS"

say() { echo "[$(date -u +%H:%M:%S)] $*"; }

commit() {  # commit MESSAGE PATH...: only these paths; waits for another process's index.lock
  local message=$1
  shift
  [ "$COMMIT" = 1 ] || return 0
  for _ in $(seq 1 60); do
    if git add -- "$@" && git commit -q -m "$message" -- "$@"; then return 0; fi
    git diff --quiet HEAD -- "$@" && return 0
    sleep 5
  done
  say "warning: could not commit $*"
}

summarize() {  # summarize LOG: its dev evaluations, time and scores into RUN_LOGS (the log stays in LOGS)
  $PY scripts/summarize_log.py "$RUN_LOGS" "$1" > /dev/null
}

has_seed() {  # has_seed RECORD SEED: the record holds that seed's test scores
  [ -f "$1" ] && $PY -c "import json, sys; sys.exit(int(sys.argv[2]) not in [r['seed'] for r in json.load(open(sys.argv[1]))['runs']])" "$1" "$2"
}

prepare() {
  if [[ " $VARIANTS $RANDOM_VARIANTS " == *-vectors\ * ]]; then
    [ -d "$VECTORS" ] || $PY -m spacy project run floret-vectors
    cp "$(dirname "$VECTORS")/floret.json" "$RESULTS/vectors-floret.json"
    commit "Vectors evidence: the floret training record" "$RESULTS/vectors-floret.json"
  fi
  [ -f "$CORPUS/ner/train-$LOW-random.spacy" ] || $PY -m spacy project run convert-ner
  [ -f "$CORPUS/pos/test.spacy" ] || $PY -m spacy project run convert-pos
  if [ -n "$COREF_VARIANTS" ] && [ ! -f "$CORPUS/coref/test.spacy" ]; then
    $COREF_PY -m spacy project run convert-coref
  fi
}

# tune VARIANT CONFIG -- SPACY_ARGS...: every combination of the grid of the other configs of its
# task not yet done (NER: dropout 0.1/0.3 x encoder depth 2/4; tagger: dropout 0.1/0.3), then the
# merged ranking; sets OVERRIDES to the best setting.
tune() {
  local variant=$1 config=$2
  shift 3
  local parts=$RESULTS/tune/$variant stem depths=(-)
  stem=$(basename "$config" .cfg)
  [[ $variant == ner-* ]] && depths=(2 4)
  mkdir -p "$parts"
  local dropout depth name combination
  for dropout in 0.1 0.3; do
    for depth in "${depths[@]}"; do
      if [ "$depth" = - ]; then
        name="dropout=$dropout"
        combination=(--grid "training.dropout=$dropout")
      else
        name="dropout=${dropout}_depth=$depth"
        combination=(--grid "training.dropout=$dropout" --grid "components.ner.model.tok2vec.encode.depth=$depth")
      fi
      [ -f "$parts/$name.json" ] && continue
      say "tune $variant $name"
      rm -rf "$TRAINING/tune/$stem/$name"
      # shellcheck disable=SC2086  # TRAIN_ARGS: words
      /usr/bin/time -v $PY scripts/tune_config.py "$config" "$parts/$name.json" "${combination[@]}" \
        --runs-dir "$TRAINING/tune" "$@" $TRAIN_ARGS \
        > "$LOGS/tune-$variant-$name.log" 2>&1
      summarize "$LOGS/tune-$variant-$name.log"
      commit "Vectors evidence: tuning run $variant $name (dev)" "$parts/$name.json" "$RUN_LOGS"
    done
  done
  OVERRIDES=$($PY scripts/merge_tuning.py "$RESULTS/tune/$variant.json" "$parts"/*.json)
  commit "Vectors evidence: tuning of $variant ranked on dev" "$RESULTS/tune/$variant.json"
  say "$variant tuned: $OVERRIDES"
}

# seed OUTPUT CONFIG TEST SEED TUNING_RUN -- SPACY_ARGS...: train (or reuse TUNING_RUN as seed 0,
# "-" for none), score on TEST, compare, commit.
seed() {
  local output=$1 config=$2 test=$3 seed=$4 tuning_run=$5
  shift 6
  local record=$RESULTS/$output.json log=$LOGS/train-$output-seed$seed.log
  has_seed "$record" "$seed" && return 0
  say "train $output seed $seed"
  rm -rf "$TRAINING/$output/seed$seed"
  # shellcheck disable=SC2086  # TRAIN_ARGS: words
  if [ "$seed" = 0 ] && [ "$tuning_run" != - ] && [ -d "$tuning_run/model-best" ] &&
    $PY scripts/reuse_tuning_run.py "$config" "$tuning_run" "$TRAINING/$output/seed0" "$@" $TRAIN_ARGS > "$log" 2>&1; then
    echo "(the training log of this run is the tuning log of $tuning_run)" >> "$log"
  else
    /usr/bin/time -v $PY scripts/train_seeds.py "$config" "$TRAINING/$output" --seeds "$seed" "$@" $TRAIN_ARGS > "$log" 2>&1
  fi
  # shellcheck disable=SC2086  # EVAL_ARGS: words
  $PY scripts/evaluate_runs.py "$TRAINING/$output" "$test" "$record" --seeds "$seed" $EVAL_ARGS >> "$log" 2>&1
  summarize "$log"
  $PY scripts/compare.py "$RESULTS" "$RESULTS/results.md" "$RESULTS/results.png" ${BASELINES:+--baselines "$BASELINES"} > /dev/null
  commit "Vectors evidence: $output seed $seed scored on test" "$record" "$RUN_LOGS" "$RESULTS/results.md" "$RESULTS/results.png"
}

best_run() {  # best_run CONFIG OVERRIDES: the tuning run folder of the chosen setting
  local stem name
  stem=$(basename "$1" .cfg)
  name=$(echo "$2" | sed -E 's/--[a-z0-9_.]*\.([a-z_]+) ([^ ]+)/\1=\2/g; s/ /_/g')
  echo "$TRAINING/tune/$stem/$name"
}

NER_DEV=(--paths.dev "$CORPUS/ner/dev.spacy")
POS=(--paths.train "$CORPUS/pos/train.spacy" --paths.dev "$CORPUS/pos/dev.spacy")
COREF=(--paths.train "$CORPUS/coref/train.spacy" --paths.dev "$CORPUS/coref/dev.spacy")
ELMO=(--paths.elmo_model "$BILM")

prepare

declare -A NER_CONFIG=([baseline]=configs/ner_baseline.cfg [baseline-vectors]=configs/ner_baseline_vectors.cfg
  [elmo]=configs/ner.cfg [elmo-vectors]=configs/ner_vectors.cfg)
declare -A TAGGER_CONFIG=([baseline]=configs/tagger_baseline.cfg [baseline-vectors]=configs/tagger_baseline_vectors.cfg
  [elmo]=configs/tagger.cfg [elmo-vectors]=configs/tagger_vectors.cfg)
declare -A NER_OVERRIDES

features() {  # features VARIANT: sets EXTRA to the ELMo and vectors arguments of the variant
  EXTRA=()
  [[ $1 == elmo* ]] && EXTRA+=("${ELMO[@]}")
  [[ $1 == *-vectors ]] && EXTRA+=(--paths.vectors "$VECTORS")
  return 0
}

# NER on the full train set, then UPOS: tune, then 3 seeds, per variant.
for variant in $VARIANTS; do
  config=${NER_CONFIG[$variant]}
  features "$variant"
  tune "ner-$variant" "$config" -- --paths.train "$CORPUS/ner/train.spacy" "${NER_DEV[@]}" "${EXTRA[@]}"
  NER_OVERRIDES[$variant]=$OVERRIDES
  for s in $SEEDS; do
    # shellcheck disable=SC2086  # OVERRIDES: "--key value ..." words
    seed "ner-$variant" "$config" "$CORPUS/ner/test.spacy" "$s" "$(best_run "$config" "$OVERRIDES")" -- \
      --paths.train "$CORPUS/ner/train.spacy" "${NER_DEV[@]}" "${EXTRA[@]}" $OVERRIDES
  done
done
for variant in $VARIANTS; do
  config=${TAGGER_CONFIG[$variant]}
  features "$variant"
  tune "tagger-$variant" "$config" -- "${POS[@]}" "${EXTRA[@]}"
  for s in $SEEDS; do
    # shellcheck disable=SC2086
    seed "tagger-$variant" "$config" "$CORPUS/pos/test.spacy" "$s" "$(best_run "$config" "$OVERRIDES")" -- \
      "${POS[@]}" "${EXTRA[@]}" $OVERRIDES
  done
done

# NER on the first 1,000 train sentences: the vectors variants (baseline and ELMo have theirs),
# with the setting tuned on the full train set.
for variant in $VARIANTS; do
  [[ $variant == *-vectors ]] || continue
  features "$variant"
  for s in $SEEDS; do
    # shellcheck disable=SC2086
    seed "ner-$variant-low" "${NER_CONFIG[$variant]}" "$CORPUS/ner/test.spacy" "$s" - -- \
      --paths.train "$CORPUS/ner/train-$LOW.spacy" "${NER_DEV[@]}" "${EXTRA[@]}" ${NER_OVERRIDES[$variant]}
  done
done

# NER on the random 1,000 (all genres), seed by seed: a vectors variant with the setting tuned
# on the full train set, the others with their config's.
for variant in $RANDOM_VARIANTS; do
  if [[ $variant == *-vectors && -z ${NER_OVERRIDES[$variant]:-} ]]; then
    say "error: $variant on the random $LOW needs its tuning on the full train set: add it to VARIANTS"
    exit 1
  fi
done
for s in $SEEDS; do
  for variant in $RANDOM_VARIANTS; do
    features "$variant"
    overrides=()
    # shellcheck disable=SC2206  # "--key value ..." words
    [[ $variant == *-vectors ]] && overrides=(${NER_OVERRIDES[$variant]})
    seed "ner-$variant-low-random" "${NER_CONFIG[$variant]}" "$CORPUS/ner/test.spacy" "$s" - -- \
      --paths.train "$CORPUS/ner/train-$LOW-random.spacy" "${NER_DEV[@]}" "${EXTRA[@]}" "${overrides[@]}"
  done
done

# Coreference on GUM (spaCy 3.7 with the coref extra: COREF_PY), seed by seed, the config's setting.
declare -A COREF_CONFIG=([baseline]=configs/coref_baseline.cfg [elmo]=configs/coref.cfg)
for s in $SEEDS; do
  for variant in $COREF_VARIANTS; do
    features "$variant"
    PY=$COREF_PY EVAL_ARGS=--gold-tokens seed "coref-$variant" "${COREF_CONFIG[$variant]}" "$CORPUS/coref/test.spacy" "$s" - -- \
      "${COREF[@]}" "${EXTRA[@]}"
  done
done
say "all done"
