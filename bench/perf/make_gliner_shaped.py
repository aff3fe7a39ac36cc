#!/usr/bin/python3
"""A random-weight GLiNER shaped like urchade/gliner_multi-v2.1, saved and exported to ONNX by
GLiNER's own code, with the inputs its ONNX graph takes for the bundled texts.

    /usr/bin/python3 bench/perf/make_gliner_shaped.py --transformers /work/tf-mb \
        --gliner /work/gliner-src --out bench/out/perf/gliner-multi-shaped [--texts 16]

OUT gets:
  model/        GLiNER's save_pretrained: gliner_config.json (encoder_config included),
                pytorch_model.bin (~1.1 GB), the tokenizer files. `onepass serve` loads it.
  onnx/         GLiNER's export_to_onnx (UniEncoderSpanGLiNER: inputs input_ids, attention_mask,
                words_mask, text_lengths, span_idx, span_mask; output logits [batch, words,
                max_width, labels]), opset 17 (torch 1.13's newest; GLiNER asks for 19).
  inputs.json   per text: the text, the labels, and the six ONNX inputs (shape and values) that
                GLiNER's own preprocessing (prepare_inputs, its collator: the batch
                _build_dummy_batch builds for export) gives for that text alone (batch 1), and
                GLiNER's logits for them (for the ORT side's check).

The shape (bench/perf/models/README.md, "GLiNER"): the backbone is microsoft/mdeberta-v3-base's
config (DeBERTa-v2: 12 layers, hidden 768, 12 heads, intermediate 3072, vocab 250105 as
gliner_multi-v2.1 saves it after adding its three tokens, 256 position buckets, relative
attention c2p/p2c); GLiNER's markerV0 span mode, max_width 12, hidden_size 512, max_len 384, one
LSTM layer. The tokenizer is the tiny fixture's SentencePiece model (4,000 pieces: mdeberta's
250,000-piece model is not in this repository); its ids index the full 250,105-row table, so the
tokens per word differ from mdeberta's, which both engines see alike.
"""

import argparse
import json
import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
FIXTURES = os.path.join(REPO, "tools", "fixtures")
VOCAB_FROM = os.path.join(REPO, "tests", "data", "fixtures", "models", "deberta-v2-tiny-ner")
DATASET = os.path.join(REPO, "bench", "datasets", "nli-multilingual.jsonl")
LABELS = ["person", "organization", "location", "date"]  # bench's default_extract_labels
SEED = 4021

# microsoft/mdeberta-v3-base's config.json.
MDEBERTA = dict(
    hidden_size=768, num_hidden_layers=12, num_attention_heads=12, intermediate_size=3072,
    max_position_embeddings=512, relative_attention=True, position_buckets=256,
    norm_rel_ebd="layer_norm", share_att_key=True, pos_att_type=["p2c", "c2p"],
    layer_norm_eps=1e-7, max_relative_positions=-1, position_biased_input=False,
    type_vocab_size=0, pad_token_id=0, hidden_act="gelu", hidden_dropout_prob=0.1,
    attention_probs_dropout_prob=0.1, initializer_range=0.02,
)
VOCAB = 250105


def texts(count):
    seen = []
    with open(DATASET, encoding="utf-8") as f:
        for line in f:
            text = json.loads(line)["text"]
            if text not in seen:
                seen.append(text)
    return seen[:count]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--transformers", required=True)
    parser.add_argument("--gliner", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--texts", type=int, default=16)
    args = parser.parse_args()

    # tools/fixtures/gliner.py (GLiNER on Debian's torch 1.13), under another name than the
    # GLiNER package it imports.
    import importlib.util

    spec = importlib.util.spec_from_file_location("fixture_gliner",
                                                  os.path.join(FIXTURES, "gliner.py"))
    fixture_gliner = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fixture_gliner)

    fixture_gliner.setup(args.transformers, args.gliner)
    import torch
    from transformers import DebertaV2Config
    from gliner.model import UniEncoderSpanGLiNER

    torch.set_num_threads(os.cpu_count() or 1)
    out = os.path.abspath(args.out)
    backbone_dir = os.path.join(out, "backbone")
    os.makedirs(backbone_dir, exist_ok=True)
    for f in ("spm.model", "tokenizer_config.json", "special_tokens_map.json", "added_tokens.json"):
        shutil.copy(os.path.join(VOCAB_FROM, f), backbone_dir)
    backbone = DebertaV2Config(vocab_size=VOCAB, **MDEBERTA)
    backbone.save_pretrained(backbone_dir)

    torch.manual_seed(SEED)
    config = dict(model_name=backbone_dir, span_mode="markerV0", max_width=12, hidden_size=512,
                  dropout=0.4, max_len=384, max_types=25, num_rnn_layers=1,
                  words_splitter_type="whitespace", encoder_config=backbone.to_dict())
    model = UniEncoderSpanGLiNER.load_from_config(config, backbone_from_pretrained=False)
    # GLiNER sized the table to the tiny tokenizer plus its tokens; gliner_multi-v2.1's has
    # 250,105 rows (mdeberta's 250,102 and GLiNER's three).
    encoder = model.model.token_rep_layer.bert_layer.model
    encoder.resize_token_embeddings(VOCAB)
    model.config.vocab_size = VOCAB
    model.config.encoder_config.vocab_size = VOCAB
    with torch.no_grad():
        encoder.embeddings.word_embeddings.weight.normal_(0.0, 0.02)
    model.config.model_name = "microsoft/mdeberta-v3-base"
    model_dir = os.path.join(out, "model")
    model.save_pretrained(model_dir)
    print("saved", model_dir, sum(p.numel() for p in model.model.parameters()), "parameters")

    loaded = UniEncoderSpanGLiNER.from_pretrained(model_dir, load_tokenizer=True,
                                                  local_files_only=True)
    fixture_gliner.with_word_ids(loaded.data_processor.transformer_tokenizer)
    loaded.eval()

    # GLiNER's export, on torch 1.13: no `dynamo` argument, opset 17 at most.
    export = torch.onnx.export

    def export_113(*a, **k):
        k.pop("dynamo", None)
        return export(*a, **k)

    torch.onnx.export = export_113
    paths = loaded.export_to_onnx(os.path.join(out, "onnx"), opset=17, labels=LABELS)
    torch.onnx.export = export
    print("exported", paths["onnx_path"])

    names = loaded._get_onnx_input_spec()["input_names"]
    records = []
    for text in texts(args.texts):
        batch = loaded._build_dummy_batch(labels=LABELS, text=text)
        inputs = {name: batch[name] for name in names}
        with torch.no_grad():
            logits = loaded.model(**inputs).logits
        records.append({
            "text": text, "labels": LABELS,
            "inputs": {name: {"shape": list(t.shape), "dtype": str(t.dtype).replace("torch.", ""),
                              "data": t.flatten().tolist()} for name, t in inputs.items()},
            "logits": {"shape": list(logits.shape), "data": logits.flatten().tolist()},
        })
    with open(os.path.join(out, "inputs.json"), "w", encoding="utf-8") as f:
        json.dump({"labels": LABELS, "input_names": names, "cases": records}, f)
    print("inputs", len(records))


if __name__ == "__main__":
    main()
