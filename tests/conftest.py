"""One CPU thread for the unit tests: their tensors are tiny, and on a shared 2-core machine
a second thread only fights other processes for the cores (and changes float sums)."""
import torch

torch.set_num_threads(1)
