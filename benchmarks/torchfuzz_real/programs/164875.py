# Source: https://github.com/pytorch/pytorch/issues/164875 (issue description, 2025-10-07, bobrenjc93)
# "[Fuzzer][Eager/Compile Divergence] The size of tensor a (s67) must match the size of tensor b (u0)
# at non-singleton dimension 0)"
# Verbatim from the issue text as stored by the search index, up to and including
# `result_original = fuzzed_program(*args)` and the start of the next `print`, where the stored
# excerpt ends. Completed from there with TorchFuzz's own EagerVsFullGraphDynamicCompileCheck
# epilogue (tools/experimental/torchfuzz/checks.py), whose first lines the issue text shows.
# Device: none set (tensors on the default device); the `device=cuda` comments are TorchFuzz's.
import torch
torch._dynamo.config.capture_scalar_outputs = True
torch._dynamo.config.capture_dynamic_output_shape_ops = True

torch.manual_seed(1014698)

def fuzzed_program(arg_0, sentinel):
    var_node_1 = arg_0 # size=(20, 0), stride=(1, 20), dtype=int64, device=cuda
    var_node_3 = torch.full((), True, dtype=torch.bool) # size=(), stride=(), dtype=bool, device=cuda
    _x_nz = torch.zeros((), dtype=torch.bool, device=var_node_3.device)
    _x_nz_flat = _x_nz.reshape(-1)
    _x_nz_flat[:20] = True
    var_node_2 = torch.nonzero(_x_nz) # size=(20, 0), stride=(1, 20), dtype=int64, device=cuda
    var_node_0 = torch.add(var_node_1, var_node_2) # size=(20, 0), stride=(1, 20), dtype=int64, device=cuda
    # Ensure gradient computation by multiplying with sentinel and taking real part
    result = var_node_0 * sentinel
    if result.is_complex():
        result = result.real
    return result

# Sentinel tensor to ensure gradient computation
sentinel = torch.tensor(1.0, requires_grad=True)

arg_0 = torch.as_strided(torch.randint(5, 30, (20,)).to(torch.int64), (20, 0), (1, 20))

args = (arg_0,) + (sentinel,)
result_original = fuzzed_program(*args)
print('✅ eager success')
compiled_program = torch.compile(fuzzed_program, fullgraph=True, dynamic=True)
result_compiled = compiled_program(*args)
print('✅ compile success')
