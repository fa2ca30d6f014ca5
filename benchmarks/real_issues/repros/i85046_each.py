# probe (not the script): each of the eight calls on its own, errors caught
import torch
calls = [
 lambda: torch.bitwise_or(input=torch.ones([1,1]), other=torch.tensor([1]), out=torch.ones([2,1,4,13])),
 lambda: torch.bitwise_xor(input=torch.ones([1,1]), other=torch.tensor([1]), out=torch.ones([2,1,4,13])),
 lambda: torch.bitwise_and(input=torch.ones([1,1]), other=torch.tensor([1]), out=torch.ones([2,1,4,13])),
 lambda: torch.bitwise_or(input=torch.tensor([-1]), other=torch.tensor([1]), out=torch.ones([1,0,1])),
 lambda: torch.bitwise_xor(input=torch.tensor([-1]), other=torch.tensor([1]), out=torch.ones([1,0,1])),
 lambda: torch.bitwise_and(input=torch.tensor([-1]), other=torch.tensor([1]), out=torch.ones([1,0,1])),
 lambda: torch.logical_or(input=torch.ones([1,1]), other=torch.tensor([1]), out=torch.ones([2,1,4,13])),
 lambda: torch.logical_xor(input=torch.ones([1,1]), other=torch.tensor([1]), out=torch.ones([2,1,4,13])),
]
for i, c in enumerate(calls):
    try:
        r = c(); print(i, "ok", tuple(r.shape))
    except Exception as e:
        print(i, type(e).__name__, str(e).splitlines()[0])
