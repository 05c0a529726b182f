# --- train with a LightningDataModule; predict from the best checkpoint through the Trainer ---
import csv
import json
import math
import os
import sys

import lightning as L
import torch
from lightning.pytorch.callbacks import ModelCheckpoint
from lightning.pytorch.loggers import CSVLogger
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

sys.path.insert(0, "/app")
from model import Classifier

TASK = json.loads(sys.argv[1])


def rows(path, labelled):
    with open(path, newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            try:
                features = [float(v) for k, v in row.items() if k.startswith("f")]
                label = int(row["label"]) if labelled else -1
            except (TypeError, ValueError, KeyError):
                continue
            if all(math.isfinite(v) for v in features) and (not labelled or 0 <= label < TASK["classes"]):
                yield row["id"], features, label


class Tables(L.LightningDataModule):
    def setup(self, stage=None):
        self.sets = {}
        for name in ("train", "val", "test"):
            parsed = list(rows(f"data/{name}.csv", name != "test"))
            self.sets[name] = ([r[0] for r in parsed], torch.tensor([r[1] for r in parsed]),
                               torch.tensor([r[2] for r in parsed]))

    def loader(self, name, shuffle=False):
        _, features, labels = self.sets[name]
        return DataLoader(TensorDataset(features, labels), batch_size=64, shuffle=shuffle)

    def train_dataloader(self):
        return self.loader("train", shuffle=True)

    def val_dataloader(self):
        return self.loader("val")

    def predict_dataloader(self):
        return self.loader("test")


class Trained(Classifier, L.LightningModule):
    def __init__(self, n_features, n_classes):
        super().__init__(n_features, n_classes)
        self.loss = nn.CrossEntropyLoss()

    def training_step(self, batch, batch_idx):
        return self.loss(self(batch[0]), batch[1])

    def validation_step(self, batch, batch_idx):
        self.log("val_loss", self.loss(self(batch[0]), batch[1]), on_epoch=True)

    def predict_step(self, batch, batch_idx):
        return self(batch[0]).argmax(dim=1)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05, momentum=0.9)


L.seed_everything(11)
data = Tables()
data.setup()
model = Trained(data.sets["train"][1].shape[1], TASK["classes"])
keep = ModelCheckpoint(dirpath="out/checkpoints", monitor="val_loss", save_top_k=2, save_last=True)
trainer = L.Trainer(max_epochs=20, accelerator="cpu", callbacks=[keep], logger=CSVLogger("out/logs"),
                    enable_progress_bar=False, enable_model_summary=False)
trainer.fit(model, datamodule=data)
batches = trainer.predict(model, datamodule=data, ckpt_path="best")
labels = torch.cat(batches).tolist()
with open("out/predictions.csv", "w", newline="", encoding="utf-8") as handle:
    handle.write("id,label\n" + "".join(f"{i},{label}\n" for i, label in zip(data.sets["test"][0], labels, strict=True)))
with open("out/run.json", "w", encoding="utf-8") as handle:
    json.dump({"best_checkpoint": os.path.relpath(keep.best_model_path, "/app")}, handle)
