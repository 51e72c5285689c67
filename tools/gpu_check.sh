#!/usr/bin/env bash
# The course's GPU check (`make gpu-check`; CONTRIBUTING.md, "On a GPU"). On a machine with CUDA, from the
# repository root, in about 5 minutes on one GPU:
#   1. the GPU benchmarks, alone on the GPU: a pointer-generator + coverage training step against its cuDNN LSTM
#      layers at the `full` and `fast` sizes (benchmarks/lstm_limit.py), batched beam search against one article
#      at a time (benchmarks/beam_search.py);
#   2. then, at once, one process each: every notebook under strict nbval with the README's options (device:
#      CUDA) and executed once more (to keep what its timing cells print), the unit tests, and each model's
#      command line on CUDA (RL from the DCA's MLE run included);
#   3. results/gpu.md from the logs (tools/gpu_report.py): device, driver, PyTorch and CUDA,
#      per-notebook result and wall time, the benchmarks, the command lines, the notebooks' GPU timings.
# It runs in a scratch copy of the tracked files. Logs go to $OUT (default runs/gpu-check), with a copy of gpu.md. A dry run of the script itself on a machine
# without a GPU: GPU_CHECK_DEVICE=cpu NOTEBOOKS=notebooks/00_welcome.ipynb REPORT=/tmp/gpu.md bash tools/gpu_check.sh
# PARTS (default "bench notebooks unit cli") and NOTEBOOKS run a part of it again. Python: $PYTHON, else
# .venv/bin/python when it sees CUDA, else python3. Where the course's Python packages are missing (an offline GPU machine: jupyter,
# nbval, rouge-score, ...), put their wheels in .whl/ first: they are installed into a scratch folder.
set -u
cd "$(dirname "$0")/.."
CHECKOUT=$PWD
OUT=${OUT:-runs/gpu-check}
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd)
REPORT=${REPORT:-results/gpu.md}
mkdir -p "$(dirname "$REPORT")" && REPORT="$(cd "$(dirname "$REPORT")" && pwd)/$(basename "$REPORT")"
DEVICE=${GPU_CHECK_DEVICE:-cuda}
NOTEBOOKS=${NOTEBOOKS:-notebooks/*.ipynb}
PARTS=${PARTS:-bench notebooks unit cli}
part() { case " $PARTS " in *" $1 "*) return 0;; *) return 1;; esac; }
if [ -z "${PYTHON:-}" ]; then
  PYTHON=python3
  if [ -x .venv/bin/python ] && .venv/bin/python -c "import torch, sys; sys.exit(not torch.cuda.is_available())" 2>/dev/null; then
    PYTHON=.venv/bin/python
  fi
fi
case "$PYTHON" in */*) PYTHON="$(cd "$(dirname "$PYTHON")" && pwd)/$(basename "$PYTHON")";; esac
SCRATCH=$(mktemp -d)
trap 'rm -rf "$SCRATCH"' EXIT
# Everything runs in a copy of the files a clean clone has (git's tracked files, as they are in this checkout):
# a folder or module left here that git does not track (an old run, a stale package folder) cannot change a test.
ROOT="$SCRATCH/src"
mkdir -p "$ROOT"
git -C "$CHECKOUT" ls-files -z | (cd "$CHECKOUT" && tar --null -T - --ignore-failed-read -cf - 2>/dev/null) \
  | tar -xf - -C "$ROOT" || { echo "gpu-check: could not copy the tracked files"; exit 2; }
if ls "$CHECKOUT"/.whl/*.whl >/dev/null 2>&1; then
  "$PYTHON" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target "$SCRATCH/site" \
    "$CHECKOUT"/.whl/*.whl || exit 1
  export PYTHONPATH="$SCRATCH/site:$ROOT"
else
  export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}"
fi
export PYTHONUNBUFFERED=1 OMP_NUM_THREADS=1
cd "$ROOT"
L="$OUT/logs"; rm -rf "$L"; mkdir -p "$L"
STARTED=$(date +%s)

DEVICE=$DEVICE PARTS="$PARTS" "$PYTHON" - > "$L/info.json" <<'PY' || { echo "gpu-check: no CUDA here (see $L/info.json)"; exit 2; }
import json, os, subprocess, sys, torch
if os.environ["DEVICE"] == "cpu":        # a dry run of the script
    print(json.dumps({"gpu": "none (a dry run on the CPU)", "torch": torch.__version__})); sys.exit(0)
if not torch.cuda.is_available():
    print(json.dumps({"error": "torch.cuda.is_available() is False"})); sys.exit(1)
try:
    smi = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader"],
                         capture_output=True, text=True, timeout=30).stdout.strip().splitlines()[0]
    name, driver, memory = [part.strip() for part in smi.split(",")]
except Exception:
    name, driver, memory = torch.cuda.get_device_name(), "unknown", "unknown"
print(json.dumps({"gpu": name, "driver": driver, "gpu_memory": memory, "torch": torch.__version__,
                  "cuda": torch.version.cuda, "cudnn": torch.backends.cudnn.version(), "python": sys.version.split()[0],
                  "cpu_cores": os.cpu_count(), "seed": int(os.environ.get("DCA_SEED", "0") or 0),
                  "parts": os.environ.get("PARTS", "")}))
PY

# 1. benchmarks, one at a time, alone on the GPU
B=benchmarks
part bench && {
timeout 90 "$PYTHON" $B/lstm_limit.py --profile full --device $DEVICE --steps 10 --rounds 3 > "$L/bench_lstm_full.txt" 2>&1
timeout 60 "$PYTHON" $B/lstm_limit.py --profile fast --device $DEVICE --steps 10 --rounds 3 > "$L/bench_lstm_fast.txt" 2>&1
timeout 60 "$PYTHON" $B/lstm_limit.py --profile fast --device $DEVICE --steps 10 --rounds 3 --input-feeding \
  > "$L/bench_lstm_fast_input_feeding.txt" 2>&1
timeout 90 "$PYTHON" $B/beam_search.py --device $DEVICE --n 64 > "$L/bench_beam.txt" 2>&1
}

# 2. notebooks (under nbval, and executed once more to keep their GPU timings), unit tests and command lines,
#    at once
mkdir -p "$L/executed"
cat > "$SCRATCH/execute.py" <<'PY'
import sys, nbformat
from nbclient import NotebookClient
nb = nbformat.read(sys.argv[1], as_version=4)
NotebookClient(nb, timeout=280, kernel_name="python3", allow_errors=True,
               resources={"metadata": {"path": "notebooks"}}).execute()
nbformat.write(nb, sys.argv[2])
PY
part notebooks && for nb in $NOTEBOOKS; do
  name=$(basename "$nb" .ipynb)
  ( s=$(date +%s)
    timeout 300 "$PYTHON" -m pytest "$nb" --nbval --nbval-current-env --nbval-sanitize-with notebooks/sanitize.cfg \
      --nbval-cell-timeout 280 -p no:cacheprovider -q > "$L/nb_$name.log" 2>&1
    echo "rc=$? wall=$(( $(date +%s) - s ))" >> "$L/nb_$name.log" ) &
  ( timeout 300 "$PYTHON" "$SCRATCH/execute.py" "$nb" "$L/executed/$name.ipynb" > "$L/executed/$name.txt" 2>&1 ) &
done
part unit && ( s=$(date +%s); timeout 290 "$PYTHON" -m pytest tests -q -p no:cacheprovider -x > "$L/unit.log" 2>&1
  echo "rc=$? wall=$(( $(date +%s) - s ))" >> "$L/unit.log" ) &
R="$SCRATCH/runs"
cli() {   # cli NAME ARGS...: one command line on CUDA, its last line (the metrics' JSON) kept in the log
  local name=$1; shift
  local s=$(date +%s)
  timeout 240 "$PYTHON" -m dca_course train "$@" --device $DEVICE > "$L/cli_$name.log" 2>&1
  local rc=$? shown="$*"
  echo "rc=$rc wall=$(( $(date +%s) - s )) command=python -m dca_course train ${shown//$R/RUN_DIR} --device $DEVICE" \
    >> "$L/cli_$name.log"
  return $rc
}
if part cli; then
  cli dmn dmn --data babi:1 --time-limit 40 --out "$R/dmn" &
  cli seq2seq seq2seq --data toy:dates --epochs 1 --out "$R/seq2seq" &
  cli copynet copynet --data synthnews --time-limit 40 --out "$R/copynet" &
  cli pointer-generator pointer-generator --coverage --data synthnews --time-limit 60 --out "$R/pg" &
  ( cli dca dca --agents 3 --data synthnews-long --time-limit 60 --out "$R/dca" \
    && cli dca-rl dca --agents 3 --rl --init "$R/dca" --data synthnews-long --time-limit 40 --out "$R/dca-rl" ) &
fi
wait

# 3. the report
"$PYTHON" tools/gpu_report.py "$L" --seconds $(( $(date +%s) - STARTED )) --out "$REPORT"
cp "$REPORT" "$OUT/gpu.md"
cat "$REPORT"
grep -q "^\*\*All passed\.\*\*" "$REPORT"
