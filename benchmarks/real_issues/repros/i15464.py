# unfenced '>>>' REPL lines turned into a script; `import torch` added; echoed values printed
import torch
a = torch.Tensor([1,2,3])
b = torch.Tensor([2,2,2])
c = a.eq(b) # get correct result in v1.0.0
print(c)
print(a.eq_(b)) # get wrong result in v1.0.0. correct in v0.4.0
