# Two commands on a fresh machine with Python 3.10+:
#   make lab    set up .venv and open the course in JupyterLab
#   make test   set up .venv and run the unit tests and every notebook under nbval
# For contributors (CONTRIBUTING.md):
#   make claims run every notebook under nbval with DCA_SEED=1, then DCA_SEED=2, and report each claim
#   make device-check  the notebooks and every model on a CPU stand-in for a GPU that fails where CUDA fails
#                      (DCA_DEVICE_CHECK=1, dca_course/device_check.py; make test runs its notebook part)
#   make gpu-check     on a machine with CUDA: every notebook under nbval on the GPU, the unit tests, the
#                      command lines and the GPU benchmarks; writes results/gpu.md (about 5 minutes)
#   make browser-test  run every notebook in JupyterLab in headless Chromium (Playwright; not part of make test)
#   make results-status  list the stored results whose measured code behaves differently now (docstrings, help: not)
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
NBVAL := --nbval --nbval-current-env --nbval-sanitize-with notebooks/sanitize.cfg --nbval-cell-timeout 600

.PHONY: lab test unit notebooks device-check gpu-check claims browser-test results-status clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	@# Where pip already knows a local CPU build of torch (a wheel in its find-links), take it
	@# first: it saves gigabytes of CUDA wheels. Elsewhere this finds nothing and pip's usual
	@# torch is installed by the next line.
	-$(BIN)/python -m pip install --quiet --no-index --no-deps torch 2>/dev/null
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

# Jupyter refuses to run as root unless told; containers often run as root.
LAB_ARGS ?= $(if $(filter 0,$(shell id -u)),--allow-root,)

lab: $(STAMP)
	$(BIN)/jupyter lab notebooks/ $(LAB_ARGS)

# The notebooks run once, under the device check: it changes no number, so the same nbval run
# compares the stored outputs and catches a tensor left on the CPU (see make device-check).
test: $(STAMP)
	$(BIN)/python -m pytest tests -p no:cacheprovider --durations=10
	DCA_DEVICE_CHECK=1 $(BIN)/python -m pytest notebooks $(NBVAL) -p no:cacheprovider --durations=10

unit: $(STAMP)
	$(BIN)/python -m pytest tests -p no:cacheprovider

notebooks: $(STAMP)
	$(BIN)/python -m pytest notebooks $(NBVAL) -p no:cacheprovider

# Every notebook in notebooks/ and every model's training step, evaluation and decoding, on the
# device check's stand-in for a GPU (no GPU needed).
device-check: $(STAMP)
	DCA_DEVICE_CHECK=1 $(BIN)/python -m pytest tests/test_device_check.py notebooks $(NBVAL) -p no:cacheprovider

# Needs CUDA; uses .venv's Python when it sees the GPU, else python3 (PYTHON=... to choose).
gpu-check:
	bash tools/gpu_check.sh

# SEEDS and CLAIMS_ARGS may be set, e.g. make claims SEEDS="0 1 2" CLAIMS_ARGS="--cpu-capability default --out results"
SEEDS ?= 1 2
claims: $(STAMP)
	$(BIN)/python tools/notebook_claims.py --seeds $(SEEDS) $(CLAIMS_ARGS)

# Playwright goes into .venv only for this target (it is no dependency of the course). The browser:
# a system Chromium when there is one (Debian/Ubuntu: apt-get install chromium), else Playwright's
# own, downloaded by the script where the network allows. BROWSER_ARGS, e.g. "03 05" for two notebooks.
BROWSER_STAMP := $(VENV)/.browser-installed
$(BROWSER_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet 'playwright>=1.40'
	touch $(BROWSER_STAMP)

browser-test: $(BROWSER_STAMP)
	$(BIN)/python tools/browser_test.py $(BROWSER_ARGS)

# Stored results (results/) older than the last change to the code they measure (git only, no venv).
results-status:
	$(PYTHON) tools/results_status.py

clean:
	rm -rf $(VENV) runs .pytest_cache
