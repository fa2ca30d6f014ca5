"""A hand-written RMSNorm for fp16 checkpoints, checked against F.rms_norm in float32.

Source: pytorch/pytorch#133085 ("Since FP16 has quite small dynamic range it is very easy to
overflow while computing at::pow(input, 2)") and skyzh/tiny-llm#18 (large float16 inputs make
the sum of squares overflow unless the implementation widens to float32 first). Bug: the
variance is computed after the cast to float16, so activations over ~256 overflow to inf.
Keep: cast:half, pow, rms_norm
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class HalfRMSNorm(nn.Module):
    def __init__(self, hidden, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden))
        self.eps = eps

    def forward(self, hidden_states):
        hidden_states = hidden_states.half()  # BUG: square in float16; widen to float32 first
        variance = hidden_states.pow(2).mean(-1, keepdim=True)
        hidden_states = hidden_states * torch.rsqrt(variance + self.eps)
        return self.weight * hidden_states.float()


def activations(batch, seq, hidden, outliers):
    x = torch.randn(batch, seq, hidden)
    x[..., :outliers] *= 400.0  # massive-activation channels, as in deep decoder layers
    return x


def main():
    torch.manual_seed(0)
    hidden = 64
    norm = HalfRMSNorm(hidden)
    for outliers in (0, 4):
        x = activations(2, 8, hidden, outliers)
        with torch.no_grad():
            ours = norm(x)
            reference = F.rms_norm(x, (hidden,), norm.weight, norm.eps)
        print(f"outliers={outliers} max |x| {x.abs().max().item():.1f}")
        torch.testing.assert_close(ours, reference, rtol=1e-2, atol=1e-2)
    print("RMSNorm matches the reference")


if __name__ == "__main__":
    main()
