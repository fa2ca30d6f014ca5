import torch

torch.set_default_dtype(torch.float64)

x = torch.tensor(-40.0, requires_grad=True)

y = torch.expm1(x)
y.backward()

actual = x.grad
expected = torch.tensor(4.248354255291589e-18, dtype=torch.float64)

print("actual:")
print(actual)
print("expected:")
print(expected)
