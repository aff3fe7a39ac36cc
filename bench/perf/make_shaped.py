#!/usr/bin/env python3
"""Makes the repo's own full-size perf models (bench/perf/models/NAME) with Hugging Face code.

  /usr/bin/python3 bench/perf/make_shaped.py --transformers /work/tf-src [--work DIR] NAME ...

NAME is a key of SPECS below. For each one it writes, in the format of the shared perf kit
(../shared/perf-models, see its README.md):
  bench/perf/models/NAME/  manifest.json (gen_weights.py's manifest), config.json, the tokenizer
                           files of the tiny fixture of the same architecture, model.onnx,
                           golden.json (the only files committed)
  DIR/NAME/                a complete model folder: the same files plus model.safetensors
                           (DIR defaults to bench/out/perf, which bench/perf/run.sh reads)

Steps: the manifest lists the model's state_dict in order with the kit's value kinds; the kit's
own gen_weights.py writes model.safetensors from it (so `gen_weights.py --model` regenerates the
same bytes later without transformers); the transformers model loads those weights strictly;
golden.json holds its float32 logits (one thread) for the kit's golden texts; torch.onnx.export
(opset 14, no constant folding, eager attention) writes the graph, whose initializers larger than
4096 bytes are then pointed at their bytes in model.safetensors (external data).

Runs on Debian 12's python3-torch 1.13.1 with python3-onnx, through tools/fixtures' stand-ins
(tools/fixtures/README.md says how to get the transformers tree).
"""

import argparse
import importlib.util
import json
import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
MODELS = os.path.join(HERE, "models")
FIXTURES = os.path.join(REPO, "tests", "data", "fixtures", "models")
SHARED = os.environ.get("ONEPASS_SHARED", os.path.join(os.path.dirname(REPO), "shared"))
KIT = os.path.join(SHARED, "perf-models")
sys.path.insert(0, os.path.join(REPO, "tools", "fixtures"))
import specs  # noqa: E402  (tools/fixtures: the remote code's files and auto_map)

NLI_LABELS = {0: "entailment", 1: "neutral", 2: "contradiction"}  # the kit's label order
TOKENIZER_FILES = ("vocab.txt", "tokenizer_config.json", "special_tokens_map.json")
EXTERNAL_ABOVE = 4096  # bytes; smaller initializers stay inline, as in the kit's model.onnx files

SPECS = {
    # distilbert-base-uncased's shape with the kit's 3-way NLI head.
    "distilbert-base-shaped": {
        "architecture": "DistilBertForSequenceClassification", "config_class": "DistilBertConfig",
        "shaped_like": "distilbert-base-uncased", "seed": 7105, "id2label": NLI_LABELS,
        "config": {"vocab_size": 30522, "dim": 768, "n_layers": 6, "n_heads": 12,
                   "hidden_dim": 3072, "max_position_embeddings": 512, "activation": "gelu",
                   "sinusoidal_pos_embds": False, "pad_token_id": 0, "dropout": 0.1,
                   "attention_dropout": 0.1, "seq_classif_dropout": 0.2},
        "tokenizer_from": "distilbert-tiny-nli", "token_types": False,
    },
    # electra-base-discriminator's shape with a cross-encoder head (one logit, scored with a
    # sigmoid), as the ms-marco ELECTRA rerankers.
    "electra-base-shaped": {
        "architecture": "ElectraForSequenceClassification", "config_class": "ElectraConfig",
        "shaped_like": "google/electra-base-discriminator (cross-encoder head, num_labels 1)",
        "seed": 7106, "id2label": {0: "LABEL_0"},
        "config": {"vocab_size": 30522, "embedding_size": 768, "hidden_size": 768,
                   "num_hidden_layers": 12, "num_attention_heads": 12, "intermediate_size": 3072,
                   "max_position_embeddings": 512, "type_vocab_size": 2, "hidden_act": "gelu",
                   "layer_norm_eps": 1e-12, "pad_token_id": 0},
        "tokenizer_from": "electra-tiny-rerank", "token_types": True,
    },
    # all-mpnet-base-v2's encoder (microsoft/mpnet-base's shape) with the kit's 3-way NLI head:
    # the same products as the embedder, plus the relative position bias every layer adds.
    "mpnet-base-shaped": {
        "architecture": "MPNetForSequenceClassification", "config_class": "MPNetConfig",
        "shaped_like": "sentence-transformers/all-mpnet-base-v2 (NLI head, num_labels 3)",
        "seed": 7107, "id2label": NLI_LABELS,
        "config": {"vocab_size": 30527, "hidden_size": 768, "num_hidden_layers": 12,
                   "num_attention_heads": 12, "intermediate_size": 3072,
                   "max_position_embeddings": 514, "hidden_act": "gelu", "layer_norm_eps": 1e-5,
                   "relative_attention_num_buckets": 32, "pad_token_id": 1, "bos_token_id": 0,
                   "eos_token_id": 2},
        # MPNet's tokenizer numbers the kit's texts its own way (<s> 0, </s> 2, the BERT
        # vocabulary shifted by 4), so its ids are not the kit's bert-base-shaped ids.
        "tokenizer_from": "mpnet-tiny-nli", "token_types": False, "own_ids": True,
    },
    # answerdotai/ModernBERT-base's shape (ModernBertConfig's defaults: 22 layers, a global one
    # every third, the others attending within 64 tokens) with the kit's 3-way NLI head on the
    # first token. The special ids are its tokenizer's ([PAD] 0, [CLS] 1, [SEP] 2).
    "modernbert-base-shaped": {
        "architecture": "ModernBertForSequenceClassification",
        "config_class": "ModernBertConfig",
        "shaped_like": "answerdotai/ModernBERT-base (NLI head, num_labels 3)",
        "seed": 7108, "id2label": NLI_LABELS,
        "config": {"pad_token_id": 0, "bos_token_id": 1, "eos_token_id": 2, "cls_token_id": 1,
                   "sep_token_id": 2},
        # modernbert-tiny-nli's byte-level BPE: its own ids for the kit's texts.
        "tokenizer_from": "modernbert-tiny-nli", "token_types": False, "own_ids": True,
        "tokenizer_files": ("tokenizer.json", "vocab.json", "merges.txt",
                            "tokenizer_config.json", "special_tokens_map.json"),
    },
    # nomic-ai/nomic-embed-text-v1.5's shape (its config: SwiGLU, rotary base 1000, no biases,
    # the vocabulary padded to 30528) with the kit's 3-way NLI head: the remote code's
    # NomicBertForSequenceClassification (BERT pooler, classifier). Needs --remote-code.
    "nomic-bert-base-shaped": {
        "architecture": "NomicBertForSequenceClassification", "config_class": "NomicBertConfig",
        "shaped_like": "nomic-ai/nomic-embed-text-v1.5 (NLI head, num_labels 3)",
        "seed": 7109, "id2label": NLI_LABELS, "remote_code": specs.NOMIC_REMOTE_CODE,
        "config": {"vocab_size": 30528, "n_embd": 768, "n_head": 12, "n_layer": 12,
                   "n_inner": 3072, "n_positions": 8192, "activation_function": "swiglu",
                   "rotary_emb_fraction": 1.0, "rotary_emb_base": 1000,
                   "rotary_emb_interleaved": False, "qkv_proj_bias": False,
                   "mlp_fc1_bias": False, "mlp_fc2_bias": False, "prenorm": False,
                   "layer_norm_epsilon": 1e-12, "type_vocab_size": 2,
                   "pad_vocab_size_multiple": 64, "max_trained_positions": 2048,
                   "causal": False, "pad_token_id": 0},
        "tokenizer_from": "nomic-bert-tiny-nli", "token_types": True,
    },
    # Alibaba-NLP/gte-base-en-v1.5's shape (its config: rotary positions with base 500000 and
    # fixed NTK scaling, factor 2; GELU gated MLP; no token types) with the kit's 3-way NLI
    # head: the remote code's NewForSequenceClassification (BERT pooler, classifier). Its
    # max_position_embeddings is 512, not 8192: the remote code builds its rotary table for
    # max_position_embeddings · factor positions at init and the exporter keeps all of it in
    # model.onnx; the scaling is the same at every position either way. Needs --remote-code.
    "gte-base-shaped": {
        "architecture": "NewForSequenceClassification", "config_class": "NewConfig",
        "shaped_like": "Alibaba-NLP/gte-base-en-v1.5 (NLI head, num_labels 3)",
        "seed": 7110, "id2label": NLI_LABELS, "remote_code": specs.GTE_REMOTE_CODE,
        "config": dict(specs.GTE, vocab_size=30528, hidden_size=768, num_hidden_layers=12,
                       num_attention_heads=12, intermediate_size=3072,
                       max_position_embeddings=512),
        "tokenizer_from": "gte-tiny-embed", "token_types": False,
    },
}


def load_gen_weights():
    path = os.path.join(KIT, "gen_weights.py")
    spec = importlib.util.spec_from_file_location("gen_weights", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def kind_of(name):
    """The kit's value kinds: LayerNorm weight/bias, embedding tables, other weights, biases."""
    import layer_norms

    if layer_norms.is_layer_norm(name):
        return "ln_weight" if name.endswith(".weight") else "ln_bias"
    if name.endswith(".bias"):
        return "bias"
    return "embedding" if "embeddings" in name else "weight"


def manifest_for(gw, name, spec, model):
    kinds = {"weight": {"center": 0.0, "half_width": 0.02 * 3 ** 0.5},
             "embedding": {"center": 0.0, "half_width": 0.02 * 3 ** 0.5},
             "bias": {"center": 0.0, "half_width": 0.02},
             "ln_weight": {"center": 1.0, "half_width": 0.1},
             "ln_bias": {"center": 0.0, "half_width": 0.02}}
    tensors = [{"name": k, "shape": list(v.shape), "kind": kind_of(k)}
               for k, v in model.state_dict().items()]
    manifest = {"format": gw.MANIFEST_FORMAT, "scheme": gw.SCHEME, "model": name,
                "architecture": spec["architecture"], "seed": spec["seed"], "dtype": "F32",
                "kinds": kinds, "safetensors_metadata": {"format": "pt"},
                "num_parameters": sum(v.numel() for v in model.state_dict().values())}
    header, data_len = gw.header_bytes(dict(manifest, tensors=tensors))
    manifest.update(header_bytes=len(header), file_bytes=8 + len(header) + data_len)
    manifest["tensors"] = tensors
    return manifest


def write_manifest(manifest, path):
    """The kit's layout: one top-level key per line, one tensor per line."""
    lines = []
    for key, value in manifest.items():
        if key == "tensors":
            rows = [" " + json.dumps(t) for t in value]
            lines.append(' "tensors": [\n ' + ",\n ".join(rows) + "\n ]")
        else:
            lines.append(f" {json.dumps(key)}: {json.dumps(value)}")
    with open(path, "w") as f:
        f.write("{\n" + ",\n".join(lines) + "\n}\n")


def kit_cases():
    """The kit's golden texts (bert-base-shaped uses the same 2600-entry WordPiece vocabulary)."""
    with open(os.path.join(KIT, "bert-base-shaped", "golden.json")) as f:
        return json.load(f)


def floats(values):
    import numpy as np

    return [float(np.float32(v)) for v in values]


def run(torch, model, input_names, rows, pad_id):
    length = max(len(r["input_ids"]) for r in rows)
    feeds = []
    for name in input_names:
        fill = pad_id if name == "input_ids" else 0
        feeds.append(torch.tensor([list(r[name]) + [fill] * (length - len(r[name])) for r in rows],
                                  dtype=torch.long))
    with torch.no_grad():
        return model(*feeds)[0], length


def golden(transformers, torch, name, spec, model, tokenizer, input_names, digest):
    kit = kit_cases()
    info = transformers.__dict__.get("_fixture_source", {})
    pad_id = model.config.pad_token_id
    cases, by_id = [], {}
    for source in kit["cases"]:
        args = [source["pair"][0], source["pair"][1]] if "pair" in source else [source["text"]]
        enc = tokenizer(*args, truncation=source["truncation"], max_length=source["max_length"])
        if not spec.get("own_ids") and list(enc["input_ids"]) != source["input_ids"]:
            sys.exit(f"{name}: case {source['id']}: ids differ from the kit's bert-base-shaped")
        case = {k: source[k] for k in ("id", "text", "pair", "truncation", "max_length")
                if k in source}
        case["num_tokens"] = len(enc["input_ids"])
        for n in input_names:
            case[n] = list(enc[n])
        logits, _ = run(torch, model, input_names, [case], pad_id)
        case["logits"] = floats(logits[0].tolist())
        if len(spec["id2label"]) == 1:
            case["probs"] = floats(logits[0].sigmoid().tolist())
        else:
            case["probs"] = floats(logits[0].softmax(-1).tolist())
        case["label"] = spec["id2label"][int(logits[0].argmax())]
        cases.append(case)
        by_id[case["id"]] = case
    ids = kit["batch"]["ids"]
    logits, length = run(torch, model, input_names, [by_id[i] for i in ids], pad_id)
    rows = [{"id": i, "logits": floats(logits[r].tolist())} for r, i in enumerate(ids)]
    worst = max(abs(a - b) for r in rows for a, b in zip(r["logits"], by_id[r["id"]]["logits"]))
    doc = {"model": name, "architecture": spec["architecture"], "shaped_like": spec["shaped_like"],
           "transformers_version": transformers.__version__,
           "transformers_tag": info.get("tag"), "transformers_commit": info.get("commit"),
           "torch_version": torch.__version__, "dtype": "float32", "device": "cpu",
           "weights": "model.safetensors regenerated by gen_weights.py from manifest.json",
           "weights_sha256": digest, "tokenizer_class": type(tokenizer).__name__,
           "inputs": input_names, "id2label": {str(k): v for k, v in spec["id2label"].items()},
           "note": "input ids come from the tiny tokenizer in this folder, so they stay below "
                   "its vocabulary size; the texts are the kit's (shared/perf-models)"}
    if len(spec["id2label"]) == 1:
        doc["score_definition"] = "probs[0] = sigmoid(logits[0])"
    padding = "input_ids = pad_token_id, attention_mask = 0"
    if "token_type_ids" in input_names:
        padding += ", token_type_ids = 0"
    doc["cases"] = cases
    doc["batch"] = {"ids": ids, "padding_side": "right", "pad_token_id": pad_id,
                    "padded_length": length, "padding": padding, "rows": rows,
                    "max_abs_diff_vs_single": worst}
    return doc


def export_onnx(torch, model, input_names, path):
    model.config.return_dict = False  # a tuple (logits,) instead of a ModelOutput
    # torch 1.13's exporter has no symbolic for logical_not (ModernBERT's sliding-window mask);
    # it is ONNX's Not.
    torch.onnx.register_custom_op_symbolic("aten::logical_not", lambda g, x: g.op("Not", x), 14)
    example = tuple(torch.ones(2, 16, dtype=torch.long) for _ in input_names)
    axes = {n: {0: "batch", 1: "sequence"} for n in input_names}
    axes["logits"] = {0: "batch"}
    with torch.no_grad():
        torch.onnx.export(model, example, path, input_names=input_names, output_names=["logits"],
                          dynamic_axes=axes, opset_version=14, do_constant_folding=False)


def externalize(onnx_path, weights_path):
    """Points every initializer above EXTERNAL_ABOVE bytes at its tensor in model.safetensors,
    after checking that its bytes are exactly that tensor's (inline ones are checked too)."""
    import onnx

    with open(weights_path, "rb") as f:
        n = int.from_bytes(f.read(8), "little")
        header = json.loads(f.read(n))
        data = f.read()
    model = onnx.load(onnx_path)
    external = 0
    for t in model.graph.initializer:
        if t.name not in header:
            sys.exit(f"{onnx_path}: initializer {t.name} is not a state_dict tensor")
        begin, end = header[t.name]["data_offsets"]
        if t.data_type != onnx.TensorProto.FLOAT or t.raw_data != data[begin:end]:
            sys.exit(f"{onnx_path}: initializer {t.name} differs from model.safetensors")
        if end - begin > EXTERNAL_ABOVE:
            t.ClearField("raw_data")
            t.data_location = onnx.TensorProto.EXTERNAL
            for key, value in (("location", "model.safetensors"), ("offset", 8 + n + begin),
                               ("length", end - begin)):
                entry = t.external_data.add()
                entry.key, entry.value = key, str(value)
            external += 1
    onnx.save(model, onnx_path)
    return len(model.graph.initializer), external


def make(transformers, torch, gw, name, spec, work_root):
    from safetensors.torch import load_file

    folder = os.path.join(MODELS, name)
    work = os.path.join(work_root, name)
    os.makedirs(folder, exist_ok=True)
    os.makedirs(work, exist_ok=True)
    import generate

    config_cls, model_cls = generate.model_classes(transformers, spec)
    config = config_cls(**spec["config"], id2label=spec["id2label"],
                        label2id={v: k for k, v in spec["id2label"].items()})
    config.architectures = [spec["architecture"]]
    config._attn_implementation = "eager"
    if spec.get("remote_code"):
        config.auto_map = spec["remote_code"]["auto_map"]  # as the Hub repos' config.json
    model = model_cls(config).eval()

    manifest = manifest_for(gw, name, spec, model)
    weights = os.path.join(work, "model.safetensors")
    digest, size, secs = gw.generate(manifest, weights)
    manifest["sha256"] = digest
    tensors = manifest.pop("tensors")
    manifest["tensors"] = tensors  # after sha256, as in the kit
    write_manifest(manifest, os.path.join(folder, "manifest.json"))
    print(f"{name}: {weights}: {size} bytes in {secs:.1f} s, sha256 {digest}")

    config.save_pretrained(folder)
    for f in spec.get("tokenizer_files", TOKENIZER_FILES):
        shutil.copyfile(os.path.join(FIXTURES, spec["tokenizer_from"], f), os.path.join(folder, f))
    tokenizer = getattr(transformers, json.load(open(os.path.join(
        folder, "tokenizer_config.json")))["tokenizer_class"]).from_pretrained(folder)

    model.load_state_dict(load_file(weights), strict=True)
    model.eval()
    input_names = ["input_ids", "attention_mask"] + (["token_type_ids"] if spec["token_types"]
                                                     else [])
    doc = golden(transformers, torch, name, spec, model, tokenizer, input_names, digest)
    with open(os.path.join(folder, "golden.json"), "w") as f:
        json.dump(doc, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print(f"{name}: golden.json, {len(doc['cases'])} cases, batch vs single "
          f"{doc['batch']['max_abs_diff_vs_single']:.3g}")

    onnx_path = os.path.join(folder, "model.onnx")
    export_onnx(torch, model, input_names, onnx_path)
    total, external = externalize(onnx_path, weights)
    print(f"{name}: model.onnx, {os.path.getsize(onnx_path)} bytes, {total} initializers, "
          f"{external} external")
    for f in sorted(os.listdir(folder)):
        shutil.copyfile(os.path.join(folder, f), os.path.join(work, f))
    print(f"{name}: complete folder {work}")


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--transformers", default=os.environ.get("TRANSFORMERS_SRC"),
                        help="transformers source tree; or env TRANSFORMERS_SRC")
    parser.add_argument("--work", default=os.path.join(REPO, "bench", "out", "perf"))
    parser.add_argument("--remote-code", metavar="DIR",
                        help="the Hub repo's modeling files (tools/fixtures/README.md), for "
                             "nomic-bert-base-shaped and gte-base-shaped (one family a run)")
    parser.add_argument("names", nargs="+", choices=sorted(SPECS))
    args = parser.parse_args()
    if not args.transformers:
        parser.error("--transformers (or TRANSFORMERS_SRC) is required")
    import environment

    transformers = environment.setup(args.transformers)
    transformers._fixture_source = environment.source_info(args.transformers)
    if args.remote_code:
        import generate

        modules = sorted({m for name in args.names
                          for m in SPECS[name].get("remote_code", {}).get("modules", [])})
        generate.attach_remote_code(transformers, args.remote_code, modules)
    import torch

    torch.set_num_threads(1)
    gw = load_gen_weights()
    for name in args.names:
        make(transformers, torch, gw, name, SPECS[name], args.work)


if __name__ == "__main__":
    main()
