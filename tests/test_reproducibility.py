"""Stored notebook outputs hold on any x86 machine only if PyTorch's CPU kernels use the same
vector width everywhere: ``dca_course.setup()`` (and ``configure_process()``, which the scripts
call) pins them to AVX2 unless the user chose; importing ``dca_course`` changes nothing."""
import os
import platform
import subprocess
import sys

import pytest

x86 = platform.machine().lower() in ("x86_64", "amd64")
SETUP = ("import torch, dca_course; dca_course.setup(plots=False); torch.ones(3).sum(); "
         "print(torch.backends.cpu.get_cpu_capability())")


def run(code, env_value=None):
    env = {k: v for k, v in os.environ.items() if k not in ("ATEN_CPU_CAPABILITY", "DCA_KEEP_MEMORY")}
    if env_value is not None:
        env["ATEN_CPU_CAPABILITY"] = env_value
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stderr == "", out.stderr
    return out.stdout.strip()


@pytest.mark.skipif(not x86, reason="the pin is for x86 processors")
def test_setup_pins_avx2_even_after_torch_and_dca_course_were_imported():
    assert run(SETUP) in ("AVX2", "DEFAULT")      # DEFAULT only on a processor without AVX2


@pytest.mark.skipif(not x86, reason="the pin is for x86 processors")
def test_a_users_own_choice_wins():
    assert run(SETUP, "default") == "DEFAULT"


def test_importing_dca_course_changes_no_global_state():
    """No environment variable set, no allocator setting made: ``setup()`` or ``configure_process()`` does it."""
    code = ("import os, torch, numpy, matplotlib.pyplot, rouge_score.rouge_scorer\nfrom unittest import mock\n"
            "with mock.patch('ctypes.CDLL') as libc:\n"             # glibc's mallopt is reached through it
            "    import dca_course, dca_course.recipes, dca_course.registry, dca_course.fast, dca_course.viz\n"
            "print(os.environ.get('ATEN_CPU_CAPABILITY'), libc.called)")
    assert run(code).split() == ["None", "False"]
