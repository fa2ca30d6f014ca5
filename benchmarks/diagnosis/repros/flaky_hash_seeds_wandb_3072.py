import random

import numpy as np
import torch

# The seeding recipe of the W&B PyTorch integration page before wandb/docs#3072.
torch.backends.cudnn.deterministic = True
random.seed(hash("setting random seeds") % 2**32 - 1)
np.random.seed(hash("improves reproducibility") % 2**32 - 1)
torch.manual_seed(hash("by removing stochasticity") % 2**32 - 1)

model = torch.nn.Linear(4, 1)
out = model(torch.ones(1, 4)).item()
print("output", out)
assert out > 0, f"not the output of the first run: {out:.4f}"
