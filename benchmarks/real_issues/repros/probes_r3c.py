# probe (not an issue's script): facts the batch-C verdicts rest on
import torch
print("LPPool3d", hasattr(torch.nn, "LPPool3d"), hasattr(torch.nn.functional, "lp_pool3d"))
print("resize_as_ doc", repr((torch.resize_as_.__doc__ or "")[:80]), "Tensor.resize_as doc", repr((torch.Tensor.resize_as.__doc__ or "")[:80]))
print("is_grad_enabled doc", repr((torch.is_grad_enabled.__doc__ or "")[:60]))
print("ReLU6 bases", torch.nn.ReLU6.__mro__[:3])
x = torch.tensor(5); print("lgamma cpu int", torch.lgamma(x))
