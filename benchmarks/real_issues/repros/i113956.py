import torch

win = torch.hann_window(256).cuda()

X = torch.load('x.gz', map_location='cpu').cuda()  # [18, 129, 251]
# 1. batched iSTFT
Xi = torch.istft(X, n_fft=256, hop_length=128, win_length=256, window=win)  # [18, 32000]
Xi_ = torch.istft(X[:16], n_fft=256, hop_length=128, win_length=256, window=win)  # [16, 32000]
# 2. iSTFT individually, and compare results
for b in range(16):
    Xib = torch.istft(X[b], n_fft=256, hop_length=128, win_length=256, window=win)
    print((Xi[b] == Xib).all().item(), (Xi_[b] == Xib).all().item())  # False, True
# the differences between Xi and Xib are large
Xi0 = torch.istft(X[0], n_fft=256, hop_length=128, win_length=256, window=win)
print(Xi0, '\n', Xi_[0], '\n', Xi[0], '\n')
