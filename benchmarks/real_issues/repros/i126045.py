import torch

t1 = torch.tensor(7)
t2 = torch.tensor([4, 5, 6])

torch.isin(elements=7, test_elements=t2) # Error 1
torch.isin(elements=t1, test_elements=4) # Error 2
torch.isin(t1, test_elements=4) # Error 3

torch.isin(7, test_elements=t2)
torch.isin(7, t2)
torch.isin(t1, 4)
# tensor(False)

""" ↓↓↓ Additional ↓↓↓ """

torch.isin(elements=t1, test_elements=t2)
torch.isin(t1, test_elements=t2)
torch.isin(t1, t2)
# tensor([3, 2, 1])
