import torch
from torch.utils.data import DataLoader, Dataset


class Clips(Dataset):
    lengths = [16, 16, 12, 16]

    def __len__(self):
        return len(self.lengths)

    def __getitem__(self, index):
        return torch.randn(3, self.lengths[index])


for batch in DataLoader(Clips(), batch_size=4, num_workers=2):
    print(batch.shape)
