# probe (not the script): the three calls one by one
import torch as th
import torch.nn as nn
layer = nn.InstanceNorm2d(3)
layer.eval()
for shape in [(1, 3, 2, 2), (2, 3, 1, 1), (1, 3, 1, 1)]:
    try:
        layer(th.rand(*shape)); print(shape, "ok")
    except Exception as e:
        print(shape, type(e).__name__, e)
