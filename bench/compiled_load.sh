#!/usr/bin/env bash
# Load + first inference and peak RSS: ONNX model vs compiled folder (optimium-compile) without
# its packed.bin (kernels pack at load) and with it (packed weights borrowed) vs ONNX Runtime's session creation + first run, each in a fresh process, median of N runs.
#   bench/compiled_load.sh [BUILD=build] [N=5] MODEL...      (MODEL: an .onnx file or a model folder)
# Ours: optimium-run --module=<model> on the model's input_0.npy / sample_input.npy (process start,
# load, one inference). ORT: the same in python3 (skipped when onnxruntime is not importable).
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
  /usr/bin/time -f "%M" -o "$out" "$@" >"$TMP/stdout" 2>&1
  local t1=$(date +%s%N)
  echo "$(( (t1 - t0) / 1000000 )) $(cat "$out")"
}
# optimium-run --print_statistics: in-process load + first inference, ms.
inproc() { awk '/model load took/ {l=$5} /inference took/ {i=$4} END {printf "%.1f\n", l + i}' "$TMP/stdout"; }
HAVE_ORT=0
python3 -c "import onnxruntime" 2>/dev/null && HAVE_ORT=1
echo "| model | process ms ONNX / compiled unpacked / compiled packed / ORT | packed/ORT | in-process load+1st ms ONNX / unpacked / packed | peak RSS MiB ONNX / unpacked / packed / ORT |"
echo "|---|---|---|---|---|"
for MODEL in "$@"; do
  DIR=$MODEL; ONNX=$MODEL
  if [ -f "$MODEL" ]; then DIR=$(dirname "$MODEL"); else ONNX=$MODEL/model.onnx; fi
  INPUT=""
  for C in "$DIR/input_0.npy" "$DIR/sample_input.npy"; do [ -f "$C" ] && { INPUT=$C; break; }; done
  [ -n "$INPUT" ] || { echo "| $MODEL | skipped: no input_0.npy / sample_input.npy |"; continue; }
  "$BUILD/optimium-compile" "$MODEL" -o "$TMP/model.opt" >/dev/null
  rm -rf "$TMP/unpacked.opt"; cp -r "$TMP/model.opt" "$TMP/unpacked.opt"; rm -f "$TMP/unpacked.opt/packed.bin"
  declare -A MS RSS IN
  for KIND in onnx unpacked compiled ort; do
    [ $KIND = ort ] && [ $HAVE_ORT = 0 ] && { MS[$KIND]=-; RSS[$KIND]=-; continue; }
    : > "$TMP/ms"; : > "$TMP/rss"; : > "$TMP/in"
    for _ in $(seq "$N"); do
      case $KIND in
        onnx) R=$(measure "$BUILD/optimium-run" --module="$MODEL" --input=@"$INPUT" --print_statistics); inproc >> "$TMP/in" ;;
        unpacked) R=$(measure "$BUILD/optimium-run" --module="$TMP/unpacked.opt" --input=@"$INPUT" --print_statistics); inproc >> "$TMP/in" ;;
        compiled) R=$(measure "$BUILD/optimium-run" --module="$TMP/model.opt" --input=@"$INPUT" --print_statistics); inproc >> "$TMP/in" ;;
        ort) R=$(measure python3 -c "import numpy, onnxruntime as o; s=o.InferenceSession('$ONNX'); s.run(None, {s.get_inputs()[0].name: numpy.load('$INPUT')})") ;;
      esac
      echo "${R% *}" >> "$TMP/ms"; echo "${R#* }" >> "$TMP/rss"
    done
    MS[$KIND]=$(median < "$TMP/ms"); RSS[$KIND]=$(( $(median < "$TMP/rss") / 1024 )); IN[$KIND]=$(median < "$TMP/in")
  done
  RATIO=-
  [ "${MS[ort]}" != - ] && RATIO=$(awk "BEGIN {printf \"%.2f\", ${MS[compiled]} / ${MS[ort]}}")
  echo "| $MODEL | ${MS[onnx]} / ${MS[unpacked]} / ${MS[compiled]} / ${MS[ort]} | $RATIO | ${IN[onnx]} / ${IN[unpacked]} / ${IN[compiled]} | ${RSS[onnx]} / ${RSS[unpacked]} / ${RSS[compiled]} / ${RSS[ort]} |"
  rm -rf "$TMP/model.opt" "$TMP/unpacked.opt"
done
