"""Graph dumps of tiny current ``transformers`` models (optional ``gen`` extra), in the forms transformers 5
exports.

Each model is built from a config object (no hub download, random weights, fixed seed), cast to bfloat16
(transformers then routes experts through ``torch.nn.functional.grouped_mm``, exported as
``aten._grouped_mm`` over stacked, transposed expert weights: the GPU form), exported with
``torch.export`` (eager attention, no KV cache), its parameters unlifted back to ``get_attr`` (AutoDeploy's
dumps never write them) and written as one D3 dump (``compile/compile_model``) by
:func:`fixturegen.dump_writer.render_d3`.

- ``mixtral``: ``MixtralForCausalLM``, 2 layers, 4 experts, top-2: router ``linear -> softmax(float32) ->
  topk``, renormalised; tokens grouped by ``histc -> sort -> cumsum -> index``; experts as two
  ``_grouped_mm``.
- ``gpt_oss``: ``GptOssForCausalLM``, 2 layers (sliding window, then full attention), 4 experts, top-2:
  router with a bias, ``topk -> softmax``; attention with a learned sink logit concatenated before the
  softmax and sliced off after it.

Needs ``transformers`` (``pip install -e .[gen]``); the committed fixtures do not.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import fx

from fixturegen.dump_writer import graph_modules, render_d3

SEED = 7
DYNAMIC = True
"""Export with symbolic batch and sequence sizes (``s0``, ``s1``)."""
_COMMON: dict[str, Any] = {
    "vocab_size": 64,
    "hidden_size": 32,
    "intermediate_size": 16,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "num_local_experts": 4,
    "num_experts_per_tok": 2,
    "max_position_embeddings": 64,
    "attn_implementation": "eager",
}


def _models() -> dict[str, Any]:
    import transformers as tf  # optional: only the generator needs it

    return {
        "mixtral": (tf.MixtralConfig, tf.MixtralForCausalLM, {}),
        "gpt_oss": (
            tf.GptOssConfig,
            tf.GptOssForCausalLM,
            {"head_dim": 8, "sliding_window": 4, "layer_types": ["sliding_attention", "full_attention"]},
        ),
    }


def export(name: str) -> fx.GraphModule:
    """The exported, unlifted graph of model ``name`` (``mixtral`` or ``gpt_oss``)."""
    config_cls, model_cls, extra = _models()[name]
    torch.manual_seed(SEED)
    model = model_cls(config_cls(**_COMMON, **extra)).to(torch.bfloat16).eval()
    ids = torch.randint(0, _COMMON["vocab_size"], (2, 8))
    auto = torch.export.Dim.AUTO  # batch and sequence symbolic, as AutoDeploy exports them
    ep = torch.export.export(
        model,
        (ids,),
        kwargs={"use_cache": False},
        dynamic_shapes={"input_ids": {0: auto, 1: auto}, "use_cache": None} if DYNAMIC else None,
        strict=False,
    )
    gm = ep.module()
    assert isinstance(gm, fx.GraphModule)
    return gm


def render(name: str) -> str:
    """The D3 dump text of model ``name`` after ``compile_model``."""
    return render_d3("compile", "compile_model", graph_modules(export(name)))
