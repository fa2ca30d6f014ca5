import torch

self = torch.full((1,), 0.5, dtype=torch.float64, requires_grad=False)
observer_on = torch.full((1,), 1, dtype=torch.int32, requires_grad=False)
fake_quant_on = torch.full((1,), 1, dtype=torch.int64, requires_grad=False)
running_min = torch.full((1,), 0.5, dtype=torch.float64, requires_grad=False)
running_max = torch.full((1,), 0.5, dtype=torch.float64, requires_grad=False)
scale = torch.full((1,), 0.5, dtype=torch.float64, requires_grad=False)
zero_point = torch.full((1,), 0.5, dtype=torch.float64, requires_grad=False)
averaging_const = 0
quant_min = 0
quant_max = 0
ch_axis = -1250999896764
per_row_fake_quant = True
symmetric_quant = True
torch._fused_moving_avg_obs_fq_helper(self, observer_on, fake_quant_on, running_min, running_max, scale, zero_point, averaging_const, quant_min, quant_max, ch_axis, per_row_fake_quant, symmetric_quant)
