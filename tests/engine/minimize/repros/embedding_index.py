import torch
import torch.nn as nn

VOCAB = ["<pad>", "hello", "world", "foo", "bar"]


def encode(words):
    return torch.tensor([[VOCAB.index(w) + 1 for w in words]])  # off by one: "bar" -> 5


class Classifier(nn.Module):
    def __init__(self, vocab_size, dim=32):
        super().__init__()
        self.emb = nn.Embedding(vocab_size, dim)
        self.fc = nn.Linear(dim, 2)

    def forward(self, ids):
        return self.fc(self.emb(ids).mean(1))


model = Classifier(len(VOCAB))
print(model)
batch = encode(["hello", "world", "bar"])
logits = model(batch)
print(logits.softmax(-1))
