"""QLoRA fine-tuning of a causal language model on a JSONL instruction dataset (4-bit base, LoRA adapters)."""

from __future__ import annotations

import argparse
import os

import torch
from datasets import load_dataset
from peft import LoraConfig, get_peft_model, prepare_model_for_kbit_training
from transformers import AutoModelForCausalLM, AutoTokenizer, BitsAndBytesConfig, Trainer, TrainingArguments

PROMPT = "### Instruction:\n{instruction}\n\n### Response:\n{output}"


def load_model(name: str) -> tuple[AutoModelForCausalLM, AutoTokenizer]:
    quant = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4", bnb_4bit_compute_dtype=torch.bfloat16)
    token = os.environ.get("HF_TOKEN")
    tokenizer = AutoTokenizer.from_pretrained(name, token=token)
    tokenizer.pad_token = tokenizer.pad_token or tokenizer.eos_token
    model = AutoModelForCausalLM.from_pretrained(name, quantization_config=quant, device_map={"": 0}, token=token)
    model = prepare_model_for_kbit_training(model)
    lora = LoraConfig(r=16, lora_alpha=32, lora_dropout=0.05, task_type="CAUSAL_LM",
                      target_modules=["q_proj", "k_proj", "v_proj", "o_proj"])
    return get_peft_model(model, lora), tokenizer


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", default="meta-llama/Llama-3.1-8B")
    parser.add_argument("--data", required=True, help="JSONL with instruction and output fields")
    parser.add_argument("--out", default="adapter")
    parser.add_argument("--epochs", type=float, default=2)
    parser.add_argument("--max-length", type=int, default=1024)
    args = parser.parse_args()

    if not torch.cuda.is_available():
        raise SystemExit("a CUDA (or ROCm) GPU is required: 4-bit bitsandbytes kernels do not run on the CPU")
    model, tokenizer = load_model(args.model)
    data = load_dataset("json", data_files=args.data, split="train")
    data = data.map(lambda row: tokenizer(PROMPT.format(**row), truncation=True, max_length=args.max_length),
                    remove_columns=data.column_names)
    training = TrainingArguments(output_dir=args.out, num_train_epochs=args.epochs, per_device_train_batch_size=4,
                                 gradient_accumulation_steps=4, learning_rate=2e-4, bf16=True, logging_steps=10,
                                 save_strategy="epoch", optim="paged_adamw_8bit")
    Trainer(model=model, args=training, train_dataset=data).train()
    model.save_pretrained(args.out)
    tokenizer.save_pretrained(args.out)


if __name__ == "__main__":
    main()
