"""Supervised fine-tuning: chat template, tokenisation with assistant masks, packing, the loop."""
