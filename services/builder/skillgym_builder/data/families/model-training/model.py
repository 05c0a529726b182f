"""The network to train: a small multilayer perceptron over the tabular features."""

import torch
from torch import nn


class Classifier(nn.Module):
    def __init__(self, n_features: int, n_classes: int, hidden: int = 32) -> None:
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(n_features, hidden),
            nn.ReLU(),
            nn.Linear(hidden, hidden),
            nn.ReLU(),
            nn.Linear(hidden, n_classes),
        )

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        return self.net(features)
