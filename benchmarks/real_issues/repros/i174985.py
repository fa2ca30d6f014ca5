import torch

scalar = torch.tensor(float('nan'), dtype=torch.float16)
tensor = torch.zeros(13, 2, 12, dtype=torch.float16)

result = torch.isclose(scalar, tensor, rtol=1e-5, atol=1e-8, equal_nan=True)
