# REPL transcript (>>> lines) turned into a script; each expression printed
import torch
import numpy as np

theta = torch.tensor(-np.pi)
print(torch.arctan2(torch.sin(theta), torch.cos(theta)))
theta = -np.pi
print(np.arctan2(np.sin(theta), np.cos(theta)))

theta = torch.tensor(np.pi)
print(torch.arctan2(torch.sin(theta), torch.cos(theta)))
theta = np.pi
print(np.arctan2(np.sin(theta), np.cos(theta)))
