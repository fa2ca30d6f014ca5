"""Fine-tune a small transformer classifier on tokenized reviews: crashes on the validation set.

Shape of the held-out report in issue #26 (an embedding index out of range caused in
preprocessing, which the earlier minimizer kept at 3.1x the hand-written size) and of the
"sequence longer than the position table" reports (huggingface/transformers#1791: `IndexError:
index out of range in self` once special tokens are added after truncation). Bug: `encode`
truncates to `max_len` and only then adds [CLS] and [SEP], so a long review is `max_len + 2`
tokens while the position table has `max_len` rows.
Reported: `IndexError: index out of range in self` in the first validation batch.
"""
import argparse
import collections
import logging
import re

import torch
import torch.nn as nn
import torch.nn.functional as F

logging.basicConfig(level=logging.INFO)
log = logging.getLogger("reviews")

TRAIN = [
    ("a warm and funny film", 1), ("the plot makes no sense", 0), ("great cast and a clever script", 1),
    ("too long and far too loud", 0), ("i would watch it again", 1), ("flat characters and dull jokes", 0),
]
VALID = [
    ("a long sprawling and ambitious film with a great cast a clever script and a warm heart", 1),
    ("dull", 0),
]
SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]"]


class Tokenizer:
    def __init__(self, texts, max_len):
        counts = collections.Counter(w for text in texts for w in self.words(text))
        self.itos = SPECIALS + sorted(counts)
        self.stoi = {w: i for i, w in enumerate(self.itos)}
        self.max_len = max_len

    @staticmethod
    def words(text):
        return re.findall(r"[a-z']+", text.lower())

    def encode(self, text):
        ids = [self.stoi.get(w, self.stoi["[UNK]"]) for w in self.words(text)][: self.max_len]
        return [self.stoi["[CLS]"]] + ids + [self.stoi["[SEP]"]]  # BUG: truncate after this

    def batch(self, texts):
        encoded = [self.encode(t) for t in texts]
        longest = max(len(e) for e in encoded)
        return torch.tensor([e + [0] * (longest - len(e)) for e in encoded])


class Classifier(nn.Module):
    def __init__(self, vocab, dim, max_len, classes=2):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim, padding_idx=0)
        self.pos = nn.Embedding(max_len, dim)
        layer = nn.TransformerEncoderLayer(dim, nhead=2, dim_feedforward=2 * dim, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)
        self.head = nn.Linear(dim, classes)

    def forward(self, ids):
        h = self.tok(ids) + self.pos(torch.arange(ids.size(1)))
        h = self.encoder(h, src_key_padding_mask=ids == 0)
        return self.head(h[:, 0])


def evaluate(model, tokenizer, data):
    model.eval()
    with torch.no_grad():
        logits = model(tokenizer.batch([t for t, _ in data]))
    labels = torch.tensor([y for _, y in data])
    return (logits.argmax(-1) == labels).float().mean().item()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dim", type=int, default=32)
    parser.add_argument("--max-len", type=int, default=12)
    parser.add_argument("--epochs", type=int, default=3)
    args = parser.parse_args([])
    torch.manual_seed(0)
    tokenizer = Tokenizer([t for t, _ in TRAIN], args.max_len)
    model = Classifier(len(tokenizer.itos), args.dim, args.max_len)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    ids, labels = tokenizer.batch([t for t, _ in TRAIN]), torch.tensor([y for _, y in TRAIN])
    for epoch in range(args.epochs):
        model.train()
        loss = F.cross_entropy(model(ids), labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        log.info("epoch %d loss %.3f valid accuracy %.2f", epoch, loss.item(), evaluate(model, tokenizer, VALID))


if __name__ == "__main__":
    main()
