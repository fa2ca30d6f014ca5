import torch
import matplotlib.pyplot as plt

print(torch.version.__version__)

beta = 10
threshold = 0.4
softplus = torch.nn.Softplus(beta=beta, threshold=threshold)
x = torch.arange(-1, 1, 0.01, dtype=torch.float32)
y = softplus(x)
plt.plot(x,y, label="torch.nn.Softplus")
plt.scatter(threshold, softplus(torch.tensor(threshold)), label="threshold value")
plt.legend()
plt.title("torch.nn.Softplus(beta=%s, threshold=%s)"%(beta, threshold))
