"""SmolLM2's tokenizer with either tool template: TRL accepts it for tool calling, the prompt
lists the environment's tools, and what the model writes is parsed back into tool calls (or
left as text) by the parser TRL uses during rollouts."""

from __future__ import annotations

from typing import Any

import pytest
from skillgym_trainer.commands import resolve_base_model
from skillgym_trainer.rl.environment import SkillGymEnvironment
from skillgym_trainer.rl.template import ChatTemplateName, use_tool_template
from transformers import AutoTokenizer
from trl.chat_template_utils import is_chat_template_prefix_preserving, parse_response, supports_tool_calling

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("template", ["qwen2_5", "skillgym"])
def test_tool_calls_render_and_parse_with_smollm2(template: ChatTemplateName) -> None:
    model_dir, _ = resolve_base_model("smollm2")
    tokenizer = use_tool_template(AutoTokenizer.from_pretrained(model_dir), template)
    assert supports_tool_calling(tokenizer) and is_chat_template_prefix_preserving(tokenizer)
    env = SkillGymEnvironment("http://127.0.0.1:1")
    tools: list[Any] = [env.bash, env.read_file, env.write_file]
    messages = [{"role": "system", "content": "Use the tools."}, {"role": "user", "content": "Total the ledger."}]
    prompt: Any = tokenizer.apply_chat_template(messages, tools=tools, add_generation_prompt=True, tokenize=False)
    assert all(f'"name": "{name}"' in prompt for name in ("bash", "read_file", "write_file"))
    assert prompt.endswith("<|im_start|>assistant\n")
    prefix: Any = tokenizer.apply_chat_template(messages, tools=tools, add_generation_prompt=True, return_dict=False)

    def parsed(text: str) -> dict[str, object]:
        ids = tokenizer(text, add_special_tokens=False)["input_ids"]
        return parse_response(tokenizer, ids, prefix=prefix, tools=tools)

    call = parsed('<tool_call>\n{"name": "bash", "arguments": {"command": "cat ledger.csv"}}\n</tool_call><|im_end|>')
    assert call["tool_calls"] == [{"type": "function", "function": {"name": "bash",
                                                                    "arguments": {"command": "cat ledger.csv"}}}]  # fmt: skip
    assert parsed("The total is 42.<|im_end|>") == {"role": "assistant", "content": "The total is 42."}
    broken = parsed('<tool_call>\n{"name": "bash", "arguments": {"command": "ls"</tool_call><|im_end|>')
    assert "tool_calls" not in broken  # unparseable JSON stays text: no call reaches the server
