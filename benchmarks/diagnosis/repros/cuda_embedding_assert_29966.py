import torch

USE_CUDA = True
max_embedding = torch.nn.Embedding(3, 5)
max = torch.tensor([3])
if USE_CUDA:
    max_embedding = max_embedding.cuda()
    max = max.cuda()
embedded = max_embedding(max)
print(embedded.sum().item())
