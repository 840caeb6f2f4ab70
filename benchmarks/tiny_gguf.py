"""Write a tiny llama GGUF with random weights, for checking `--llm` against a real server.

    pip install "llama-cpp-python[server]" gguf numpy      # (compiles llama.cpp: a few minutes)
    python benchmarks/tiny_gguf.py /tmp/tiny.gguf
    python -m llama_cpp.server --model /tmp/tiny.gguf --port 8011 --n_ctx 4096 --model_alias tiny &
    toolgym generate SPEC --out OUT --llm http://127.0.0.1:8011/v1 --llm-model tiny --json

No model weights are needed: the server is llama.cpp's own OpenAI-compatible one, and the model
(2 layers, 64 wide, a byte vocabulary) says nothing useful, so every reply is refused and every
template kept. What it checks is the endpoint: requests, replies, the length cap, the counts.
"""

from __future__ import annotations

import sys

import gguf
import numpy as np

WIDTH, HIDDEN, LAYERS, HEADS, CONTEXT = 64, 128, 2, 4, 4096


def vocabulary() -> tuple[list[bytes], list[float], list[int]]:
    """SentencePiece-style tokens: unknown, start, end, the 256 bytes, some words and letters."""
    tokens: list[bytes] = [b"<unk>", b"<s>", b"</s>"]
    types = [gguf.TokenType.UNKNOWN, gguf.TokenType.CONTROL, gguf.TokenType.CONTROL]
    tokens += [f"<0x{b:02X}>".encode() for b in range(256)]
    types += [gguf.TokenType.BYTE] * 256
    plain = "the a of to and is in for please could you order name email update delete what total".split()
    tokens += [("\u2581" + w).encode() for w in plain]
    tokens += [
        c.encode() for c in "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.,!?'\"{}[]:-_"
    ]
    types += [gguf.TokenType.NORMAL] * (len(tokens) - len(types))
    scores = [0.0] * 259 + [-float(i + 1) for i in range(len(tokens) - 259)]
    return tokens, scores, [int(t) for t in types]


def write(path: str) -> None:
    rng = np.random.default_rng(0)
    tokens, scores, types = vocabulary()
    out = gguf.GGUFWriter(path, "llama")
    out.add_name("tiny-random-llama")
    out.add_context_length(CONTEXT)
    out.add_embedding_length(WIDTH)
    out.add_block_count(LAYERS)
    out.add_feed_forward_length(HIDDEN)
    out.add_head_count(HEADS)
    out.add_head_count_kv(HEADS)
    out.add_layer_norm_rms_eps(1e-5)
    out.add_rope_dimension_count(WIDTH // HEADS)
    out.add_file_type(gguf.LlamaFileType.ALL_F32)
    out.add_tokenizer_model("llama")
    out.add_token_list(tokens)
    out.add_token_scores(scores)
    out.add_token_types(types)
    out.add_bos_token_id(1)
    out.add_eos_token_id(2)
    out.add_unk_token_id(0)
    out.add_chat_template(
        "{% for m in messages %}<|{{ m['role'] }}|>\n{{ m['content'] }}\n{% endfor %}<|assistant|>\n"
    )

    def tensor(name: str, *shape: int) -> None:
        out.add_tensor(name, (rng.standard_normal(shape) * 0.05).astype(np.float32))

    ones = np.ones(WIDTH, dtype=np.float32)
    tensor("token_embd.weight", len(tokens), WIDTH)
    out.add_tensor("output_norm.weight", ones)
    tensor("output.weight", len(tokens), WIDTH)
    for i in range(LAYERS):
        out.add_tensor(f"blk.{i}.attn_norm.weight", ones)
        out.add_tensor(f"blk.{i}.ffn_norm.weight", ones)
        for name in ("attn_q", "attn_k", "attn_v", "attn_output"):
            tensor(f"blk.{i}.{name}.weight", WIDTH, WIDTH)
        tensor(f"blk.{i}.ffn_gate.weight", HIDDEN, WIDTH)
        tensor(f"blk.{i}.ffn_up.weight", HIDDEN, WIDTH)
        tensor(f"blk.{i}.ffn_down.weight", WIDTH, HIDDEN)
    out.write_header_to_file()
    out.write_kv_data_to_file()
    out.write_tensors_to_file()
    out.close()


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    write(sys.argv[1])
    print(sys.argv[1])
