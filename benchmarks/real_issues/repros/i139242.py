import torch

device = torch.device('cpu')
dtype = torch.bfloat16

n = 512

x = torch.tensor([0, 1], dtype=dtype, device=device).repeat(n // 2)
y = torch.zeros(n, device=device, dtype=torch.int32)

print("x[:10] =", x[:10])
print('index_reduce mean :', torch.zeros(1, dtype=dtype, device=device).index_reduce(0, y, x, 'mean').item())
print('mean              :', x.mean().item())
