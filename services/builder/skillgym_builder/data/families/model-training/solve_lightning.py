# --- train the network with Lightning: best checkpoint by val_loss, CSV logs, predictions ---
import csv
import json
import math
import os
import sys

import lightning as L
import torch
from lightning.pytorch.callbacks import EarlyStopping, ModelCheckpoint
from lightning.pytorch.loggers import CSVLogger
from torch.nn import functional as F
from torch.utils.data import DataLoader, TensorDataset

sys.path.insert(0, "/app")
from model import Classifier

TASK = json.loads(sys.argv[1])


def load(path, labelled=True):
    """(ids, features, labels) of the rows that parse; a malformed row is not data."""
    ids, rows, labels = [], [], []
    with open(path, newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        columns = [c for c in reader.fieldnames if c.startswith("f")]
        for row in reader:
            try:
                values = [float(row[c]) for c in columns]
                label = int(row["label"]) if labelled else 0
            except (TypeError, ValueError, KeyError):
                continue
            if not all(math.isfinite(v) for v in values) or not 0 <= label < TASK["classes"]:
                continue
            ids.append(row["id"])
            rows.append(values)
            labels.append(label)
    return ids, torch.tensor(rows, dtype=torch.float32), torch.tensor(labels)


class Module(L.LightningModule):
    def __init__(self, n_features, n_classes, lr=0.01):
        super().__init__()
        self.save_hyperparameters()
        self.model = Classifier(n_features, n_classes)

    def forward(self, features):
        return self.model(features)

    def training_step(self, batch, batch_idx):
        features, labels = batch
        loss = F.cross_entropy(self(features), labels)
        self.log("train_loss", loss, on_step=False, on_epoch=True)
        return loss

    def validation_step(self, batch, batch_idx):
        features, labels = batch
        logits = self(features)
        self.log("val_loss", F.cross_entropy(logits, labels))
        self.log("val_acc", (logits.argmax(dim=1) == labels).float().mean())

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.hparams.lr)


L.seed_everything(7, workers=True)
_, train_x, train_y = load("data/train.csv")
_, val_x, val_y = load("data/val.csv")
test_ids, test_x, _ = load("data/test.csv", labelled=False)
print(f"{len(train_y)} training rows, {len(val_y)} validation rows, {len(test_ids)} to classify")
module = Module(train_x.shape[1], TASK["classes"])
checkpoint = ModelCheckpoint(dirpath="out/checkpoints", filename="{epoch}-{val_loss:.4f}", monitor="val_loss",
                             mode="min", save_top_k=1)
trainer = L.Trainer(max_epochs=40, accelerator="cpu", devices=1, deterministic=True, log_every_n_steps=1,
                    callbacks=[checkpoint, EarlyStopping(monitor="val_loss", mode="min", patience=6)],
                    logger=CSVLogger("out/logs", name="classifier"), enable_progress_bar=False,
                    enable_model_summary=False)
trainer.fit(module, DataLoader(TensorDataset(train_x, train_y), batch_size=64, shuffle=True),
            DataLoader(TensorDataset(val_x, val_y), batch_size=256))
print("best", checkpoint.best_model_path, float(checkpoint.best_model_score))
best = Module.load_from_checkpoint(checkpoint.best_model_path)
best.eval()
with torch.no_grad():
    predicted = best(test_x).argmax(dim=1).tolist()
with open("out/predictions.csv", "w", newline="", encoding="utf-8") as handle:
    writer = csv.writer(handle)
    writer.writerow(["id", "label"])
    writer.writerows(zip(test_ids, predicted, strict=True))
with open("out/run.json", "w", encoding="utf-8") as handle:
    json.dump({"best_checkpoint": os.path.relpath(checkpoint.best_model_path, "/app")}, handle)
