from torchvision.models import swin_v2_t
import torch

model = swin_v2_t()
model = torch.compile(model)
model(torch.rand(1, 3, 224, 224))
