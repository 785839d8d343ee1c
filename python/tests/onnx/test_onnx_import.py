"""The ONNX importer: a transformer encoder built with onnx.helper becomes the op graph `nctlm model`
builds for the same BERT config; ops outside the supported set stop the import naming the node."""

import json
import os
import random
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.abspath(os.path.join(HERE, "..", "..")))
REPO = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
NCTLM = os.environ.get("NCTLM") or os.path.join(REPO, "build", "bin", "nctlm")

import encoder  # noqa: E402
from onnx import helper  # noqa: E402

from nctlm import onnx_import  # noqa: E402

TMP = tempfile.TemporaryDirectory(prefix="onnx-tests-")


def model_file(name="enc.onnx", **kw):
    path = os.path.join(TMP.name, name)
    encoder.save(encoder.build_encoder(**kw), path)
    return path


def run(*args):
    return subprocess.run([NCTLM, *args], capture_output=True, text=True)


def signature(g):
    """The ops in order with their outputs' shapes and attributes, and the sorted weight shapes."""
    shape = {t["name"]: (t["shape"], t["dtype"], t.get("kind", "activation")) for t in g["tensors"]}
    attrs = lambda o: {k: v for k, v in o.items() if k in ("heads", "kv_heads", "batch", "causal")}
    ops = [(o["op"], shape[o.get("y") or o.get("o")], attrs(o)) for o in g["ops"]]
    return ops, sorted(v[0] for v in shape.values() if v[2] == "weight")


SMALL = dict(layers=2, hidden=256, heads=4, intermediate=512, vocab=1000, max_positions=128)


class Import(unittest.TestCase):
    def test_small_encoder_maps_to_graph_ops(self):
        g = onnx_import.import_model(model_file(**SMALL), {"batch": 2, "sequence": 64})
        kinds = [o["op"] for o in g["ops"]]
        self.assertEqual(kinds[:6], ["embedding", "embedding", "embedding", "add", "add", "layernorm"])
        self.assertEqual(kinds[6:18], ["linear", "linear", "linear", "attention", "linear", "add", "layernorm",
                                       "linear", "gelu", "linear", "add", "layernorm"])
        self.assertEqual(len(kinds), 6 + 2 * 12)
        att = [o for o in g["ops"] if o["op"] == "attention"][0]
        self.assertEqual((att["heads"], att["kv_heads"], att["batch"], att["causal"]), (4, 4, 2, False))
        self.assertEqual(g["tokens"], 128)
        self.assertEqual(g["layers"], 2)
        lin = [o for o in g["ops"] if o["op"] == "linear"][0]
        self.assertIn("b", lin, "MatMul + Add of a bias becomes one linear with its bias")
        shapes = {t["name"]: t["shape"] for t in g["tensors"]}
        self.assertEqual(shapes[lin["y"]], [128, 256], "activations are [rows, features] views")
        self.assertEqual(shapes["input_ids"], [128])

    def test_same_graph_as_nctlm_model_for_bert_base(self):
        onnx_graph = os.path.join(TMP.name, "bert_onnx.json")
        model_graph = os.path.join(TMP.name, "bert_model.json")
        r = run("import-onnx", model_file("bert.onnx"), "--dim", "batch=16", "--dim", "sequence=128", "-o", onnx_graph)
        self.assertEqual(r.returncode, 0, r.stderr)
        r = run("model", "--hf-config", "bert-base-uncased", "--phase", "prefill", "--batch", "16", "--seq", "128",
                "-o", model_graph)
        self.assertEqual(r.returncode, 0, r.stderr)
        a, b = (json.load(open(p)) for p in (onnx_graph, model_graph))
        self.assertEqual(signature(a), signature(b), "the same ops producing the same shapes, in the same order")

    def test_same_graph_as_nctlm_model_on_random_encoders(self):
        rng = random.Random(21)
        for trial in range(3):
            heads = rng.choice([1, 2, 4, 8])
            c = dict(layers=rng.randint(1, 3), hidden=heads * 64 * rng.randint(1, 2), heads=heads,
                     intermediate=128 * rng.randint(2, 8), vocab=rng.randint(100, 5000), max_positions=512)
            batch, seq = rng.randint(1, 4), 128 * rng.randint(1, 2)
            onnx_graph = os.path.join(TMP.name, f"r{trial}_onnx.json")
            model_graph = os.path.join(TMP.name, f"r{trial}_model.json")
            cfg = os.path.join(TMP.name, f"r{trial}_config.json")
            with open(cfg, "w") as f:
                json.dump({"model_type": "bert", "hidden_size": c["hidden"], "num_attention_heads": heads,
                           "intermediate_size": c["intermediate"], "num_hidden_layers": c["layers"],
                           "vocab_size": c["vocab"], "max_position_embeddings": 512, "type_vocab_size": 2}, f)
            r = run("import-onnx", model_file(f"r{trial}.onnx", **c), "--dim", f"batch={batch}",
                    "--dim", f"sequence={seq}", "-o", onnx_graph)
            self.assertEqual(r.returncode, 0, r.stderr)
            r = run("model", "--hf-config", cfg, "--phase", "prefill", "--batch", str(batch), "--seq", str(seq),
                    "-o", model_graph)
            self.assertEqual(r.returncode, 0, r.stderr)
            a, b = (json.load(open(p)) for p in (onnx_graph, model_graph))
            self.assertEqual(signature(a), signature(b), c)

    def test_unsupported_op_names_node_and_type(self):
        extra = helper.make_node("Conv", ["h", "w"], ["conv.out"], name="head/conv")
        path = model_file("conv.onnx", extra_node=extra, **SMALL)
        r = run("import-onnx", path, "--dim", "batch=1", "--dim", "sequence=16")
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("node 'head/conv' (Conv): this op is outside the supported set", r.stderr)
        self.assertEqual(r.stdout, "", "nothing imported")

    def test_missing_or_unknown_dimension_and_bad_file_exit_2(self):
        path = model_file(**SMALL)
        r = run("import-onnx", path, "--dim", "batch=2")
        self.assertEqual(r.returncode, 2)
        self.assertIn("symbolic dimension 'sequence': give it a value with --dim sequence=N", r.stderr)
        r = run("import-onnx", path, "--dim", "batch=2", "--dim", "sequence=8", "--dim", "heads=3")
        self.assertEqual(r.returncode, 2)
        self.assertIn("--dim heads: the model has no such symbolic dimension", r.stderr)
        bad = os.path.join(TMP.name, "bad.onnx")
        with open(bad, "w") as f:
            f.write("not a model")
        r = run("import-onnx", bad)
        self.assertEqual(r.returncode, 2)
        self.assertIn("not a readable ONNX model", r.stderr)

    def test_onnx_and_model_paths_agree_on_the_simulator(self):
        """The two frontends' graphs run within 1 % of each other (2 layers of BERT-base on one trn1 core)."""
        onnx_path = model_file("bert2.onnx", layers=2)
        cfg = os.path.join(TMP.name, "bert2.json")
        with open(os.path.join(REPO, "configs", "models", "bert-base-uncased.json")) as f:
            c = json.load(f)
        c["num_hidden_layers"] = 2
        with open(cfg, "w") as f:
            json.dump(c, f)
        latency = {}
        for name, args in (("onnx", ["import-onnx", onnx_path, "--dim", "batch=4", "--dim", "sequence=128"]),
                           ("model", ["model", "--hf-config", cfg, "--phase", "prefill", "--batch", "4", "--seq", "128"])):
            stats = os.path.join(TMP.name, name + "_stats.json")
            r = run(*args, "--run", "-p", "trn1", "--stats-json", stats, "-q")
            self.assertEqual(r.returncode, 0, r.stderr)
            latency[name] = json.load(open(stats))["results"]["latency_ns"]
        self.assertGreater(latency["model"], 0)
        self.assertLess(abs(latency["onnx"] - latency["model"]) / latency["model"], 0.01, latency)


if __name__ == "__main__":
    unittest.main()
