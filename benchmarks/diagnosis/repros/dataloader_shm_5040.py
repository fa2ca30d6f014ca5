# pytorch/pytorch#5040: "DataLoader worker (pid 13) is killed by signal: Bus error" when a
# container's /dev/shm is smaller than a batch (docker's default is 64 MB).
import torch
from torch.utils.data import DataLoader, Dataset


class Frames(Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, index):
        return torch.zeros(96, 1024, 1024)  # 384 MiB per item


loader = DataLoader(Frames(), batch_size=1, num_workers=2)
for batch in loader:
    print(batch.shape)
