import torch
import torch.nn.functional as F

x = torch.randn(1, 6, 10)


def fn(device: str):
    try:
        folded = F.fold(x.to(device), output_size=(4, 5), kernel_size=(2, 3))
        folded.to("cpu")
        print(f"Succeed on {device}:\n {folded.shape}")
    except Exception as e:
        print(f"Error on {device}:\n", e)

    print()


fn("cpu")

if torch.backends.mps.is_available():
    fn("mps")

# if torch.cuda.is_available():
#     fn("cuda")

