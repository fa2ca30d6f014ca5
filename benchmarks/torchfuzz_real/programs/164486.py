# Source: https://github.com/pytorch/pytorch/issues/164486 (issue description, 2025-10-02, bobrenjc93)
# "[Fuzzer][Eager/Compile Divergence] torch._inductor.exc.InductorError: ImportError:"
# Verbatim from the issue text as stored by the search index, up to and including the line
# `compiled_program = torch.compile(fuzzed_program, fullgraph=True`, where the stored excerpt ends.
# Completed from there with TorchFuzz's own EagerVsFullGraphDynamicCompileWithNumericsCheck
# epilogue (tools/experimental/torchfuzz/checks.py), whose first lines the issue text shows.
# Device: none set (tensors on the default device); the `device=cuda` comments are TorchFuzz's.
import torch
torch._dynamo.config.capture_scalar_outputs = True

torch.manual_seed(238)

def fuzzed_program(arg_0, sentinel):
    var_node_2 = torch.full((), 1, dtype=torch.int16) # size=(), stride=(), dtype=int16, device=cuda
    var_node_3 = arg_0 # size=(), stride=(), dtype=int16, device=cuda
    var_node_1 = torch.add(var_node_2, var_node_3) # size=(), stride=(), dtype=int16, device=cuda
    var_node_5 = torch.full((1,), 3, dtype=torch.int16) # size=(1,), stride=(1,), dtype=int16, device=cuda
    var_node_4 = torch.squeeze(var_node_5) # size=(), stride=(), dtype=int16, device=cuda
    var_node_0 = torch.div(var_node_1, var_node_4) # size=(), stride=(), dtype=int16, device=cuda
    # Ensure gradient computation by multiplying with sentinel and taking real part
    result = var_node_0 * sentinel
    if result.is_complex():
        result = result.real
    return result

# Sentinel tensor to ensure gradient computation
sentinel = torch.tensor(1.0, requires_grad=True)

arg_0 = torch.as_strided(torch.randn(1).to(torch.int16), (), ())

args = (arg_0,) + (sentinel,)
out_eager = fuzzed_program(*args)
out_eager.sum().backward()
print('Eager Success! ✅')
compiled_program = torch.compile(fuzzed_program, fullgraph=True, dynamic=True)
out_compiled = compiled_program(*args)
out_compiled.sum().backward()
print('Compile Success! ✅')
out_eager_sum = out_eager.sum()
out_compiled_sum = out_compiled.sum()
diff = (out_eager_sum - out_compiled_sum).abs().item()
rel_diff = diff / (out_eager_sum.abs().item() + 1e-12) * 100
print(f'Relative diff (sum): {rel_diff:.6f}%')
if rel_diff > 5 and diff > 1:
    print(f'❌ Forward output sums differ significantly (relative and absolute)!')
    print('out_eager_sum:', out_eager_sum.item())
    print('out_compiled_sum:', out_compiled_sum.item())
    print('Absolute diff:', diff)
    print('Relative diff (%):', rel_diff)
    import sys; sys.exit(1)
