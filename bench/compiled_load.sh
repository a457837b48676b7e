#!/usr/bin/env bash
# Load + first inference and peak RSS: ONNX model vs compiled folder (optimium-compile) without
# its packed.bin (kernels pack at load) and with it (packed weights borrowed) vs ONNX Runtime's
# session creation + first run, each in a fresh process, median of N runs.
#   bench/compiled_load.sh [BUILD=build] [N=5] MODEL...      (MODEL: an .onnx file or a model folder)
# Ours: optimium-run --module=<model> on the model's input_0.npy, input_1.npy, ... (or
# sample_input.npy): process start, load, one inference; plus the in-process load + first
# inference and the load alone that --print_statistics reports. ORT: the same in python3 (skipped
# when onnxruntime is not importable; PATH=/path/to/venv/bin:$PATH picks another python3).
# Prints a markdown table; say which CPU the numbers come from when you quote them.
set -euo pipefail
BUILD=${1:-build}; shift || true
N=${1:-5}; shift || true
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
# wall ms and max RSS KiB of one command, via /usr/bin/time.
measure() {
  local out=$TMP/time
  local t0=$(date +%s%N)
  if ! /usr/bin/time -f "%M" -o "$out" "$@" >"$TMP/stdout" 2>&1; then
    echo "bench/compiled_load.sh: failed: $*" >&2; tail -3 "$TMP/stdout" >&2; exit 1
  fi
  local t1=$(date +%s%N)
  echo "$(( (t1 - t0) / 1000000 )) $(cat "$out")"
}
# optimium-run --print_statistics: in-process load + first inference, ms.
inproc() { awk '/model load took/ {l=$5} /inference took/ {i=$4} END {printf "%.1f\n", l + i}' "$TMP/stdout"; }
# ... and the load alone (where packing happens), ms.
loadonly() { awk '/model load took/ {printf "%.1f\n", $5}' "$TMP/stdout"; }
HAVE_ORT=0
python3 -c "import onnxruntime" 2>/dev/null && HAVE_ORT=1
echo "| model | process ms ONNX / compiled unpacked / compiled packed / ORT | packed/ORT | in-process load+1st ms ONNX / unpacked / packed | in-process load ms ONNX / unpacked / packed | peak RSS MiB ONNX / unpacked / packed / ORT |"
echo "|---|---|---|---|---|---|"
for MODEL in "$@"; do
  DIR=$MODEL; ONNX=$MODEL
  if [ -f "$MODEL" ]; then DIR=$(dirname "$MODEL"); else ONNX=$MODEL/model.onnx; fi
  # Every input: input_0.npy, input_1.npy, ... in order (or one sample_input.npy).
  INPUTS=()
  for I in $(seq 0 255); do [ -f "$DIR/input_$I.npy" ] || break; INPUTS+=("$DIR/input_$I.npy"); done
  [ ${#INPUTS[@]} = 0 ] && [ -f "$DIR/sample_input.npy" ] && INPUTS=("$DIR/sample_input.npy")
  [ ${#INPUTS[@]} -gt 0 ] || { echo "| $MODEL | skipped: no input_0.npy / sample_input.npy |"; continue; }
  # A manifest's preserved inputs (a KV cache) live in the runtime: ours take the others (the
  # first ones, as exported), ORT every input_N.npy.
  KEEP=${#INPUTS[@]}
  if [ -f "$DIR/optimium.json" ]; then
    PRESERVED=$(grep -c '"preserved": *true' "$DIR/optimium.json" || true)
    KEEP=$(( KEEP - PRESERVED ))
  fi
  RUN_INPUTS=(); for F in "${INPUTS[@]:0:$KEEP}"; do RUN_INPUTS+=(--input=@"$F"); done
  ORT_FEED=$(printf "'%s'," "${INPUTS[@]}")
  # Both folders are copies of the compiled one, so their files' page-cache state is alike. (Before
  # weights.bin held its small constants first, a file written in one write kept ~9 MiB more of it
  # resident after bert_mini's first inference than a cp of it: the biases read at run time mapped
  # the large folios of the weights around them.)
  # How a file got into the page cache decides its folio sizes, which decide how many faults map
  # it (Linux 6.18 maps a whole large folio per fault): one big write (optimium-compile's own
  # output, dd bs=64M) or a read from disk through the loader's packed.bin mapping gives large
  # folios (ResNet-50's packed.bin: ~150 faults, ~1 ms), cp (copy_file_range) 4 KiB ones (~2500
  # faults, ~8 ms). Both folders are copied the same way: big writes by default, COPY=cp for cp's.
  "$BUILD/optimium-compile" "$MODEL" -o "$TMP/written.opt" >/dev/null
  rm -rf "$TMP/model.opt" "$TMP/unpacked.opt"
  for D in model.opt unpacked.opt; do
    if [ "${COPY:-dd}" = cp ]; then cp -r "$TMP/written.opt" "$TMP/$D"; continue; fi
    mkdir "$TMP/$D"
    for F in "$TMP/written.opt"/*; do dd if="$F" of="$TMP/$D/${F##*/}" bs=64M status=none; done
  done
  rm -rf "$TMP/written.opt"
  rm -f "$TMP/unpacked.opt/packed.bin"
  declare -A MS RSS IN LD
  for KIND in onnx unpacked compiled ort; do
    [ $KIND = ort ] && [ $HAVE_ORT = 0 ] && { MS[$KIND]=-; RSS[$KIND]=-; continue; }
    : > "$TMP/ms"; : > "$TMP/rss"; : > "$TMP/in"; : > "$TMP/ld"
    for _ in $(seq "$N"); do
      case $KIND in
        onnx) R=$(measure "$BUILD/optimium-run" --module="$MODEL" "${RUN_INPUTS[@]}" --print_statistics); inproc >> "$TMP/in"; loadonly >> "$TMP/ld" ;;
        unpacked) R=$(measure "$BUILD/optimium-run" --module="$TMP/unpacked.opt" "${RUN_INPUTS[@]}" --print_statistics); inproc >> "$TMP/in"; loadonly >> "$TMP/ld" ;;
        compiled) R=$(measure "$BUILD/optimium-run" --module="$TMP/model.opt" "${RUN_INPUTS[@]}" --print_statistics); inproc >> "$TMP/in"; loadonly >> "$TMP/ld" ;;
        ort) R=$(measure python3 -c "import numpy, onnxruntime as o; s=o.InferenceSession('$ONNX'); s.run(None, {i.name: numpy.load(f) for i, f in zip(s.get_inputs(), [$ORT_FEED])})") ;;
      esac
      echo "${R% *}" >> "$TMP/ms"; echo "${R#* }" >> "$TMP/rss"
    done
    MS[$KIND]=$(median < "$TMP/ms"); RSS[$KIND]=$(( $(median < "$TMP/rss") / 1024 )); IN[$KIND]=$(median < "$TMP/in")
    LD[$KIND]=$(median < "$TMP/ld")
  done
  RATIO=-
  [ "${MS[ort]}" != - ] && RATIO=$(awk "BEGIN {printf \"%.2f\", ${MS[compiled]} / ${MS[ort]}}")
  echo "| $MODEL | ${MS[onnx]} / ${MS[unpacked]} / ${MS[compiled]} / ${MS[ort]} | $RATIO | ${IN[onnx]} / ${IN[unpacked]} / ${IN[compiled]} | ${LD[onnx]} / ${LD[unpacked]} / ${LD[compiled]} | ${RSS[onnx]} / ${RSS[unpacked]} / ${RSS[compiled]} / ${RSS[ort]} |"
  rm -rf "$TMP/model.opt" "$TMP/unpacked.opt"
done
