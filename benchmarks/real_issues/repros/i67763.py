import torch
a = torch.tensor([2.0], requires_grad=True)
x = torch.tensor([1.5])
torch.special.gammainc(a, x).sum().backward()
print(a.grad)
