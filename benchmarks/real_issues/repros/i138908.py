import torch

@torch.compile(backend="inductor", dynamic=True)
def test1_fn(x, y):
    x = x + 10
    y[x] += y[x]

def test_1():
    x = torch.randint(-10, -9, (1 ,2),  dtype=torch.int64)
    y = torch.randn((2, 32), dtype=torch.float32)
    x_clone = x.clone()
    y_clone = y.clone()
    print(x_clone)
    print(y_clone)
    with torch.no_grad():
        x_clone = x_clone + 10
        print(x_clone)
        y_clone[x_clone] += y_clone[x_clone]
        print(y_clone)
        print(y)
        test1_fn(x, y)

        print(y_clone)
        print(y)
        assert torch.allclose(y_clone, y)

test_1()
