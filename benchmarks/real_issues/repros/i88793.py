import torch
input_data = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10] 
storage = torch.CharStorage(input_data)
torch.save(input_data, storage)
