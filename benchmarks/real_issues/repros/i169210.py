import torch
input_data = torch.randint(low=0, high=100, size=(5,), dtype=torch.int32)
qint32_storage = torch.UntypedStorage(input_data.numel(), allocator=
    input_data.storage().data_ptr())
bfloat16_storage = qint32_storage.bfloat16()
