"""A bag-of-embeddings text classifier on a toy corpus.

Reported: `IndexError: index out of range in self` during the first training step.
"""
import argparse
import collections
import json
import logging
import random
import re

import torch
import torch.nn as nn
import torch.nn.functional as F

logging.basicConfig(level=logging.INFO)
log = logging.getLogger(__name__)

CORPUS = [
    ("the movie was wonderful and moving", 1),
    ("a dull and boring film", 0),
    ("great acting, great story", 1),
    ("i fell asleep halfway through", 0),
    ("an instant classic with a superb cast", 1),
    ("terrible pacing and a weak script", 0),
    ("the soundtrack alone is worth it", 1),
    ("not worth the ticket price", 0),
]


def tokenize(text):
    return re.findall(r"[a-z']+", text.lower())


class Vocab:
    def __init__(self, texts, max_size=None, specials=("<pad>", "<unk>")):
        counts = collections.Counter(tok for text in texts for tok in tokenize(text))
        self.itos = list(specials) + [w for w, _ in counts.most_common(max_size)]
        self.stoi = {w: i for i, w in enumerate(self.itos)}

    def __len__(self):
        return len(self.itos)

    def encode(self, text):
        return [self.stoi.get(tok, 1) for tok in tokenize(text)]


def pad_batch(sequences, pad=0):
    longest = max(len(s) for s in sequences)
    return torch.tensor([s + [pad] * (longest - len(s)) for s in sequences])


class BagClassifier(nn.Module):
    def __init__(self, vocab_size, dim, num_classes, dropout=0.2):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, dim, padding_idx=0)
        self.dropout = nn.Dropout(dropout)
        self.proj = nn.Linear(dim, dim)
        self.out = nn.Linear(dim, num_classes)

    def forward(self, tokens):
        mask = (tokens != 0).float().unsqueeze(-1)
        embedded = self.embedding(tokens) * mask
        pooled = embedded.sum(1) / mask.sum(1).clamp(min=1)
        hidden = torch.tanh(self.proj(self.dropout(pooled)))
        return self.out(hidden)


def batches(data, batch_size, shuffle=True):
    order = list(range(len(data)))
    if shuffle:
        random.shuffle(order)
    for start in range(0, len(order), batch_size):
        chunk = [data[i] for i in order[start:start + batch_size]]
        yield pad_batch([c[0] for c in chunk]), torch.tensor([c[1] for c in chunk])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dim", type=int, default=64)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--lr", type=float, default=1e-2)
    args = parser.parse_args([])
    random.seed(0)
    torch.manual_seed(0)
    texts = [t for t, _ in CORPUS]
    vocab = Vocab(texts)
    log.info("vocab size %d", len(vocab))
    data = [(vocab.encode(t), y) for t, y in CORPUS]
    # BUG: the model is sized from the number of *distinct labels* instead of the vocabulary
    model = BagClassifier(vocab_size=len(set(y for _, y in CORPUS)) + 8, dim=args.dim, num_classes=2)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    history = []
    for epoch in range(args.epochs):
        model.train()
        total = 0.0
        for tokens, labels in batches(data, args.batch_size):
            logits = model(tokens)
            loss = F.cross_entropy(logits, labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item()
        history.append(total)
        log.info("epoch %d loss %.4f", epoch, total)
    with open("/tmp/history.json", "w") as f:
        json.dump(history, f)
    print("final loss", history[-1])


if __name__ == "__main__":
    main()
