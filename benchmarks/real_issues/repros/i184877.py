import torch

class Foo(list):
    def __iter__(self):
        raise Exception
    def __len__(self):
        raise Exception

x = Foo()
x.append("a")
torch.randn(x)
