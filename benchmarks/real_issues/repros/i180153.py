import torch
import numpy as np

torch.manual_seed(0)
x = torch.randn(10_000, dtype=torch.float32) * 1e10

ref = torch.cumsum(x.double(), dim=0).float()   # float64 reference
cpu = torch.cumsum(x, dim=0)
gpu = torch.cumsum(x.cuda(), dim=0).cpu()

cpu_err = (cpu - ref).norm().item()
gpu_err = (gpu - ref).norm().item()

print(f"Reference (float64): cumsum of N=10,000 float32 values scaled to ~1e10")
print(f"CPU error vs float64: {cpu_err:.4e} ")
print(f"GPU error vs float64: {gpu_err:.4e} ")
