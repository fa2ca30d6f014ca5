import torch
import numpy as np

input_tensor=torch.tensor(np.array([[float('inf'), float('nan'), 5],[float('inf'), float('nan'), 5],[float('inf'), float('nan'), 5]], dtype=np.float32))

cpu = torch.matrix_exp(input_tensor)
print(cpu)

input_tensor = input_tensor.cuda()
gpu = torch.matrix_exp(input_tensor)
print(gpu)
