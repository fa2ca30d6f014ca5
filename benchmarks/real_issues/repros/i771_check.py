# probe (not the script): the unpooled values sit where the pool took them
import torch
import torch.nn as nn
torch.manual_seed(0)
pool = nn.MaxPool1d(kernel_size=3, stride=2, return_indices=True)
unpool = nn.MaxUnpool1d(kernel_size=3, stride=2)
x = torch.rand(32, 128, 263)
out, idx = pool(x)
y = unpool(out, idx)
print(tuple(y.shape), bool(torch.equal(y.gather(2, idx), out)), int(idx.max()))
