import torch

input = torch.randint(0, 2, [1], dtype=torch.bool)
other = torch.rand([3], dtype=torch.float32, requires_grad=True)

res = torch.logaddexp2(input, other)

res.sum().backward()
# Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.
