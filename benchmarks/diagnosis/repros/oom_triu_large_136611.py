import torch

q_len = 100000
causal_mask = torch.full((q_len, q_len), float('-inf'))
causal_mask.triu_(1)  # Fill lower triangular part with 0
print(causal_mask)
