import torch
import torch.nn.functional as F
prev_features = torch.ones((2,22,22,4))*0.1
prev_features =prev_features.cuda()
F.interpolate(prev_features, scale_factor=2)# mode="nearest")
