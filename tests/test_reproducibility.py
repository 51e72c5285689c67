"""Stored notebook outputs hold on any x86 machine only if PyTorch's CPU kernels use the same
vector width everywhere: importing dca_course pins them to AVX2 unless the user chose."""
import os
import platform
import subprocess
import sys

import pytest

x86 = platform.machine().lower() in ("x86_64", "amd64")
PROBE = ("import torch, dca_course; torch.ones(3).sum(); "
         "print(torch.backends.cpu.get_cpu_capability())")


def capability(env_value=None):
    env = {k: v for k, v in os.environ.items() if k != "ATEN_CPU_CAPABILITY"}
    if env_value is not None:
        env["ATEN_CPU_CAPABILITY"] = env_value
    out = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, check=True)
    assert out.stderr == "", out.stderr
    return out.stdout.strip()


@pytest.mark.skipif(not x86, reason="the pin is for x86 processors")
def test_import_pins_avx2_even_after_torch_was_imported():
    assert capability() in ("AVX2", "DEFAULT")      # DEFAULT only on a processor without AVX2


@pytest.mark.skipif(not x86, reason="the pin is for x86 processors")
def test_a_users_own_choice_wins():
    assert capability("default") == "DEFAULT"
