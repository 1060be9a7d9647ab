"""Workload for xpu-asm's llama.cpp test (tests/tests/llama.rs).

llama.cpp's SYCL backend from PyPI (cyllama-sycl 0.7.0: llama.cpp with a
`libggml-sycl.so` built with DPC++ 2025.3.3, SPIR-V only) decoding fixed
tokens with a tiny model this script writes itself with the `gguf` package:
a llama of two layers, random weights, its matrices in f16, Q8_0 and
Q4_0.

    python decode.py DIR PROMPT DECODES

writes DIR/tiny.gguf (its embeddings and output in f16, layer 0's matrices
in Q8_0, layer 1's in Q4_0), loads it with every layer on the SYCL device, decodes a prompt of PROMPT fixed tokens in one batch,
then DECODES single fixed tokens one after the other, and prints
`model <path>`, `devices <ggml's devices>`, `decoded <n>` (one per decode call) and
`preload <LD_PRELOAD>`.

Without hardware no kernel executes, so the logits are never read and
nothing is sampled: sampled tokens would take other kernel paths from run
to run. The test counts the launches independently (the Unified Runtime's
trace of the same run) and compares.
"""

import os
import sys

import numpy as np

import gguf

N_VOCAB = 64
N_EMBD = 64
N_HEAD = 4
N_FF = 128
N_CTX = 64

F16 = gguf.GGMLQuantizationType.F16
# Each layer's matrices in a type of their own.
LAYER_TYPES = (gguf.GGMLQuantizationType.Q8_0, gguf.GGMLQuantizationType.Q4_0)


def write_model(path):
    """A llama of two layers: random weights (seeded), the embeddings
    and output in f16, each layer's matrices in its LAYER_TYPES, norms in
    f32, a SentencePiece-like vocabulary of N_VOCAB tokens."""
    rng = np.random.default_rng(46)
    w = gguf.GGUFWriter(path, "llama")
    w.add_context_length(N_CTX)
    w.add_embedding_length(N_EMBD)
    w.add_block_count(len(LAYER_TYPES))
    w.add_feed_forward_length(N_FF)
    w.add_head_count(N_HEAD)
    w.add_head_count_kv(N_HEAD)
    w.add_rope_dimension_count(N_EMBD // N_HEAD)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_file_type(gguf.LlamaFileType.MOSTLY_Q8_0)
    w.add_tokenizer_model("llama")
    tokens = ["<unk>", "<s>", "</s>"] + [f"t{i}" for i in range(N_VOCAB - 3)]
    w.add_token_list(tokens)
    w.add_token_scores([0.0] * N_VOCAB)
    w.add_token_types([2, 3, 3] + [1] * (N_VOCAB - 3))
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    w.add_unk_token_id(0)
    def matrix(name, rows, cols, qtype):
        data = rng.standard_normal((rows, cols), dtype=np.float32) * 0.02
        if qtype == F16:
            w.add_tensor(name, data.astype(np.float16))
        else:
            q = gguf.quants.quantize(data, qtype)
            w.add_tensor(name, q, raw_shape=q.shape, raw_dtype=qtype)

    def norm(name):
        w.add_tensor(name, np.ones(N_EMBD, dtype=np.float32))

    matrix("token_embd.weight", N_VOCAB, N_EMBD, F16)
    norm("output_norm.weight")
    matrix("output.weight", N_VOCAB, N_EMBD, F16)
    for i, qtype in enumerate(LAYER_TYPES):
        norm(f"blk.{i}.attn_norm.weight")
        for t in ("q", "k", "v", "output"):
            matrix(f"blk.{i}.attn_{t}.weight", N_EMBD, N_EMBD, qtype)
        norm(f"blk.{i}.ffn_norm.weight")
        matrix(f"blk.{i}.ffn_gate.weight", N_FF, N_EMBD, qtype)
        matrix(f"blk.{i}.ffn_up.weight", N_FF, N_EMBD, qtype)
        matrix(f"blk.{i}.ffn_down.weight", N_EMBD, N_FF, qtype)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def main(argv):
    if len(argv) != 3:
        sys.exit(f"usage: {sys.argv[0]} DIR PROMPT DECODES")
    folder = argv[0]
    prompt, decodes = int(argv[1]), int(argv[2])
    path = os.path.join(folder, "tiny.gguf")
    write_model(path)
    print(f"model {path}", flush=True)

    import cyllama.llama.llama_cpp as L

    L.ggml_backend_load_all()
    L.llama_backend_init()
    devices = L.ggml_backend_dev_info()
    mp = L.LlamaModelParams()
    mp.n_gpu_layers = 99
    model = L.LlamaModel(path, mp)
    cp = L.LlamaContextParams()
    cp.n_ctx = N_CTX
    cp.n_batch = N_CTX
    cp.n_ubatch = N_CTX
    cp.n_threads = 1
    cp.n_threads_batch = 1
    ctx = L.LlamaContext(model, cp)
    print(f"devices {devices!r}", flush=True)
    # Fixed tokens: 1 (<s>), then 3, 4, 5, ... never sampled.
    tokens = [1] + [3 + i for i in range(prompt - 1)]
    ctx.decode(L.llama_batch_get_one(tokens))
    print(f"decoded {len(tokens)}", flush=True)
    for i in range(decodes):
        t = 3 + (prompt + i) % (N_VOCAB - 3)
        ctx.decode(L.llama_batch_get_one([t], len(tokens) + i))
        print("decoded 1", flush=True)
    ctx.synchronize()
    print(f"preload {os.environ.get('LD_PRELOAD', '')}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
