import torch
v = torch.ones(2, requires_grad=True)
padding = torch.tensor([[False, False], [True, True]])
weights = torch.zeros(2, 2).masked_fill(padding, float("-inf")).softmax(-1)
(weights @ v)[~padding.all(1)].sum().backward()
assert torch.isfinite(v.grad).all(), "non-finite gradient in value.weight"
