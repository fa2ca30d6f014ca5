# `import torch` added
import torch
print(torch.histc(torch.tensor([[ 2.7771e+38, -1.7855e+38]])))
