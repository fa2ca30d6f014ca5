import torch
import numpy as np
print("Hey, I'm not in main()")

def train(model, optimizer, epochs):
    model.train()
    for epoch in range(epochs):
        x = np.random.uniform(size=(64, 100))
        y = np.random.randint(2, size=(64,))
        x.requires_grad_()
        loss = (model(x) + torch.log((1 - model(x))))
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    return

def main4():
    X = torch.randn(64, 100)
    y = torch.randint(2, size=(64,))
    X = torch.cat((torch.ones(X.shape[0], 1), X), dim=1)
    (R, Q) = torch.qr(X, out=(X, X))
main4()
