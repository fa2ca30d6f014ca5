import torch

input = torch.full((1, 8, 1,), 4.13506, dtype=torch.float)
weight0 = torch.full((5, 8,), 2.47475, dtype=torch.float)
weight1 = torch.full((5, 8,), 8.52373, dtype=torch.float)
weight2 = torch.full((5,), 5.73429, dtype=torch.float)
weight3 = torch.full((5,), 6.42933, dtype=torch.float)
hx_ = torch.full((1, 8,), 9.12846, dtype=torch.float)
cx_ = torch.full((1, 1,), 6.00218, dtype=torch.float)
reverse = False
batch_sizes = []
mode = 2
hidden_size = 8
num_layers = 2
has_biases = True
bidirectional = False
batch_first = False
train = False

torch.mkldnn_rnn_layer(input, weight0, weight1, weight2, weight3, hx_, cx_, reverse, batch_sizes, mode, hidden_size, num_layers, has_biases, bidirectional, batch_first, train)
