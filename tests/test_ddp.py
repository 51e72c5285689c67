"""Two CPU processes with gloo train like one process with the same global batch."""
import os
import subprocess
import sys
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent


def test_two_gloo_processes_agree_with_each_other_and_with_one_process(tmp_path):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE.parent), os.environ.get("PYTHONPATH", "")]),
           "OMP_NUM_THREADS": "1"}
    cmd = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2", "--standalone",
           str(HERE / "ddp_worker.py"), str(tmp_path), "4"]
    run = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    single = tmp_path / "single"
    single.mkdir()
    env1 = {k: v for k, v in env.items() if k not in ("RANK", "WORLD_SIZE", "LOCAL_RANK")}
    run1 = subprocess.run([sys.executable, str(HERE / "ddp_worker.py"), str(single), "8"], env=env1,
                          capture_output=True, text=True, timeout=300)
    assert run1.returncode == 0, run1.stderr[-3000:]
    r0 = torch.load(tmp_path / "rank0.pt", weights_only=True)
    r1 = torch.load(tmp_path / "rank1.pt", weights_only=True)
    one = torch.load(single / "rank0.pt", weights_only=True)
    for name in r0:
        assert torch.equal(r0[name], r1[name]), f"{name} differs between ranks"
        assert torch.allclose(r0[name], one[name], atol=1e-4), f"{name}: DDP and one process disagree"
    assert r0.keys() == one.keys()


def test_early_stopping_decided_by_rank_0_stops_every_process(tmp_path):
    """Rank 0 alone scores the held-out examples; the other process must stop (and decay its
    learning rate) with it, or the next all-reduce would wait for ever."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE.parent), os.environ.get("PYTHONPATH", "")]),
           "OMP_NUM_THREADS": "1"}
    cmd = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2", "--standalone",
           str(HERE / "ddp_worker.py"), str(tmp_path), "4", "early"]
    run = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=180)
    assert run.returncode == 0, run.stderr[-3000:]
    assert (tmp_path / "rank0.txt").read_text() == (tmp_path / "rank1.txt").read_text() == "3 0.0025"
    r0 = torch.load(tmp_path / "rank0.pt", weights_only=True)
    r1 = torch.load(tmp_path / "rank1.pt", weights_only=True)
    for name in r0:
        assert torch.equal(r0[name], r1[name]), f"{name}: the processes return different weights"
